// GEMM of Q6_K weights against Q8_32 activations: the tensor-core kernel (gemm_mma.cuh) with the
// Mma decoder below, or the dp4a GEMM (gemm_launch.cuh, gemv_dot_q6_k.cuh) when it does not apply
// (DENSE_CUDA_GEMM=dp4a, unaligned weights). Its own translation unit: the pure-asm flavour of the
// GEMV code (gemv_common.cuh says why).
#define DENSE_GEMV_PURE_ASM 1
#include "kernels/gemv_dot_q6_k.cuh"
#include "kernels/gemm_mma_choice.cuh"
#include "kernels/gemv_launchers.hpp"

namespace dense::cuda {
namespace gemv {
inline namespace pure_asm {

// Q6_K: 210 bytes = ql[128], qh[64] @128, int8 scales[16] @192, fp16 d @208 (2-byte aligned).
// Block j = 2u + k (h = u / 2, s = 2 (u % 2) + k): element e = (nibble u % 2 of ql[64h + 32k + e])
// | ((qh[128 + 32h + e] >> 2s) & 3) << 4, minus 32. Per-16 scales: the term needs the two 16-element
// sums (two m16n8k16 mma): mul(mul(d, da), to_f(sc_2j * s0 + sc_2j+1 * s1)), the Dot's expression.
struct Q6_KMma {
    static constexpr int kStepBytes = 210;
    static constexpr int kAlign = 2;
    static constexpr bool kK16 = true;
    static constexpr bool kNeedS = false;
    static constexpr bool kPartialSteps = false;
    static constexpr IqTable kTable = IqTable::None;
    struct Row {
        float d;
    };
    struct Blk {
        float d;
        int32_t sc0, sc1;
    };
    __device__ __forceinline__ static Row head(const uint8_t* step) {
        return {half_to_float(*reinterpret_cast<const uint16_t*>(step + 208))};
    }
    __device__ __forceinline__ static void unit(const uint8_t* step, const Row& r, int u, int t, const IqTables&, int,
                                                uint32_t (&lo)[2], uint32_t (&hi)[2], Blk (&bk)[2]) {
        const int h = u >> 1;
        const uint32_t nib = 4u * static_cast<uint32_t>(u & 1);
        const uint32_t qh0 = ld_u32_a2(step + 128 + 32 * h + 4 * t), qh1 = ld_u32_a2(step + 144 + 32 * h + 4 * t);
#pragma unroll
        for (int k = 0; k < 2; ++k) {
            const uint32_t hs = 2u * static_cast<uint32_t>(2 * (u & 1) + k);
            const uint8_t* ql = step + 64 * h + 32 * k + 4 * t;
            const uint32_t l0 = ld_u32_a2(ql), l1 = ld_u32_a2(ql + 16);
            lo[k] = sub_bytes(((l0 >> nib) & 0x0F0F0F0Fu) | (((qh0 >> hs) & 0x03030303u) << 4), 0x20202020u);
            hi[k] = sub_bytes(((l1 >> nib) & 0x0F0F0F0Fu) | (((qh1 >> hs) & 0x03030303u) << 4), 0x20202020u);
            const uint32_t sc = *reinterpret_cast<const uint16_t*>(step + 192 + 4 * u + 2 * k);
            bk[k] = {r.d, static_cast<int32_t>(static_cast<int8_t>(sc & 0xFFu)),
                     static_cast<int32_t>(static_cast<int8_t>(sc >> 8))};
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

cudaError_t launch_gemm_q6_k(const GemmLaunch& call, cudaStream_t stream) {
    return gemv::launch_gemm_auto<gemv::Q6_KMma, gemv::Q6_KDot>(call, stream);
}

}  // namespace dense::cuda
