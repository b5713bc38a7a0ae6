// GEMM of Q5_K weights against Q8_32 activations: the tensor-core kernel (gemm_mma.cuh) with the
// Mma decoder below, or the dp4a GEMM (gemm_launch.cuh, gemv_dot_q5_k.cuh) when it does not apply
// (DENSE_CUDA_GEMM=dp4a, unaligned weights). Its own translation unit: the pure-asm flavour of the
// GEMV code (gemv_common.cuh says why).
#define DENSE_GEMV_PURE_ASM 1
#include "kernels/gemv_dot_q5_k.cuh"
#include "kernels/gemm_mma.cuh"
#include "kernels/gemv_launchers.hpp"

namespace dense::cuda {
namespace gemv {
inline namespace pure_asm {

// Q5_K for the mma kernel (gemm_mma.cuh): Q4_K's nibbles (qs at 48) plus bit j of qh[e] as bit 4
// of element e of block j; the term is Q4_K's (k_min_terms).
struct Q5_KMma {
    static constexpr int kStepBytes = 176;
    static constexpr int kAlign = 16;
    static constexpr bool kK16 = false;
    static constexpr bool kNeedS = true;
    static constexpr bool kPartialSteps = false;
    static constexpr IqTable kTable = IqTable::None;
    struct Row {
        float d, dmin;
        uint32_t sc[3];
    };
    struct Blk {
        float d;
        int32_t scale;
        float dm;  // mul(dmin, to_f(min))
    };
    __device__ __forceinline__ static Row head(const uint8_t* step) {
        const uint4 h = *reinterpret_cast<const uint4*>(step);
        return {half_to_float(h.x), half_to_float(h.x >> 16), {h.y, h.z, h.w}};
    }
    __device__ __forceinline__ static void unit(const uint8_t* step, const Row& r, int u, int t, const IqTables&, int,
                                                uint32_t (&lo)[2], uint32_t (&hi)[2], Blk (&bk)[2]) {
        const uint8_t* qs = step + 48 + 32 * u;
        const uint32_t w0 = ldg_u32(qs + 4 * t), w1 = ldg_u32(qs + 16 + 4 * t);
        const uint32_t h0 = ldg_u32(step + 16 + 4 * t), h1 = ldg_u32(step + 32 + 4 * t);
#pragma unroll
        for (int k = 0; k < 2; ++k) {
            const int j = 2 * u + k;
            lo[k] = ((w0 >> (4 * k)) & 0x0F0F0F0Fu) | (((h0 >> j) & 0x01010101u) << 4);
            hi[k] = ((w1 >> (4 * k)) & 0x0F0F0F0Fu) | (((h1 >> j) & 0x01010101u) << 4);
            const KScaleMin6 sm = k_scale_min_words(r.sc, j);
            bk[k] = {r.d, sm.scale, mul(r.dmin, to_f(sm.min))};
        }
    }
    __device__ __forceinline__ static float term(const Blk& b, int32_t isum, int32_t, float da, float sa) {
        return sub(mul(mul(b.d, da), to_f(b.scale * isum)), mul(b.dm, sa));
    }
};

}  // namespace pure_asm
}  // namespace gemv

cudaError_t launch_gemm_q5_k(const GemmLaunch& call, cudaStream_t stream) {
    return gemv::launch_gemm_auto<gemv::Q5_KMma, gemv::Q5_KDot>(call, stream);
}

}  // namespace dense::cuda
