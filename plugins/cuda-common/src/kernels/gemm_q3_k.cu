// GEMM of Q3_K weights against Q8_32 activations: the tensor-core kernel (gemm_mma.cuh) with the
// Mma decoder below, or the dp4a GEMM (gemm_launch.cuh, gemv_dot_q3_k.cuh) when it does not apply
// (DENSE_CUDA_GEMM=dp4a). Its own translation unit: the pure-asm flavour of the GEMV code
// (gemv_common.cuh says why).
#define DENSE_GEMV_PURE_ASM 1
#include "kernels/gemv_dot_q3_k.cuh"
#include "kernels/gemm_mma_choice.cuh"
#include "kernels/gemv_launchers.hpp"

namespace dense::cuda {
namespace gemv {
inline namespace pure_asm {

// Q3_K: 110 bytes = hmask[32] @0, qs[64] @32, scales[12] @96, fp16 d @108 (2-byte aligned). Block
// j = 2u + k (h = u / 2, bit pair s = 2 (u % 2) + k): element e = ((qs[32h + e] >> 2s) & 3) |
// ((hmask[e] >> j) & 1) << 2, minus 4. Per-16 signed scales (q3_k_scale), so the term takes the two
// 16-element sums (two m16n8k16): mul(mul(d, da), to_f(sc_4u+2k * s0 + sc_4u+2k+1 * s1)), the Dot's.
// Thread t's hmask words (elements 4t.., 16+4t.. of every block) are the same for the whole step:
// read with the row's head.
struct Q3_KMma {
    static constexpr int kStepBytes = 110;
    static constexpr int kAlign = 2;
    static constexpr bool kK16 = true;
    static constexpr bool kNeedS = false;
    static constexpr bool kPartialSteps = false;
    static constexpr IqTable kTable = IqTable::None;
    struct Row {
        float d;
        uint32_t sc[3];
        uint32_t hm0, hm1;  // hmask bytes 4t..4t+3, 16+4t..16+4t+3
    };
    struct Blk {
        float d;
        int32_t sc0, sc1;
    };
    __device__ __forceinline__ static Row head(const uint8_t* step) {
        const int t = static_cast<int>(threadIdx.x & 3u);  // the lane's t (gemm_mma_kernel)
        Row r;
        r.d = half_to_float(*reinterpret_cast<const uint16_t*>(step + 108));
        r.sc[0] = ld_u32_a2(step + 96);
        r.sc[1] = ld_u32_a2(step + 100);
        r.sc[2] = ld_u32_a2(step + 104);
        r.hm0 = ld_u32_a2(step + 4 * t);
        r.hm1 = ld_u32_a2(step + 16 + 4 * t);
        return r;
    }
    __device__ __forceinline__ static void unit(const uint8_t* step, const Row& r, int u, int t, const IqTables&, int,
                                                uint32_t (&lo)[2], uint32_t (&hi)[2], Blk (&bk)[2]) {
        const uint8_t* qs = step + 32 + 32 * (u >> 1);
        const uint32_t q0 = ld_u32_a2(qs + 4 * t), q1 = ld_u32_a2(qs + 16 + 4 * t);
#pragma unroll
        for (int k = 0; k < 2; ++k) {
            const uint32_t shift = 2u * static_cast<uint32_t>(2 * (u & 1) + k);
            const uint32_t hbit = static_cast<uint32_t>(2 * u + k);
            lo[k] = sub_bytes(((q0 >> shift) & 0x03030303u) | (((r.hm0 >> hbit) & 0x01010101u) << 2), 0x04040404u);
            hi[k] = sub_bytes(((q1 >> shift) & 0x03030303u) | (((r.hm1 >> hbit) & 0x01010101u) << 2), 0x04040404u);
            const int j = 4 * u + 2 * k;
            bk[k] = {r.d, q3_k_scale(r.sc, j), q3_k_scale(r.sc, j + 1)};
        }
    }
    __device__ __forceinline__ static float term(const Blk& b, int32_t s0, int32_t s1, float da, float) {
        return mul(mul(b.d, da), to_f(b.sc0 * s0 + b.sc1 * s1));
    }
    __device__ __forceinline__ static float fast(const Blk& b, int32_t s0, int32_t s1, float da, float, float acc) {
        return fma_rn(mul(b.d, da), to_f(b.sc0 * s0 + b.sc1 * s1), acc);
    }
};

}  // namespace pure_asm
}  // namespace gemv

cudaError_t launch_gemm_q3_k(const GemmLaunch& call, cudaStream_t stream) {
    return gemv::launch_gemm_auto<gemv::Q3_KMma, gemv::Q3_KDot>(call, stream);
}

}  // namespace dense::cuda
