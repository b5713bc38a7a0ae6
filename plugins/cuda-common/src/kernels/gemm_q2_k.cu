// GEMM of Q2_K weights against Q8_32 activations: the tensor-core kernel (gemm_mma.cuh) with the
// Mma decoder below, or the dp4a GEMM (gemm_launch.cuh, gemv_dot_q2_k.cuh) when it does not apply
// (DENSE_CUDA_GEMM=dp4a, weights not 4-byte aligned). Its own translation unit: the pure-asm flavour
// of the GEMV code (gemv_common.cuh says why).
#define DENSE_GEMV_PURE_ASM 1
#include "kernels/gemv_dot_q2_k.cuh"
#include "kernels/gemm_mma_choice.cuh"
#include "kernels/gemv_launchers.hpp"

namespace dense::cuda {
namespace gemv {
inline namespace pure_asm {

// Q2_K: 84 bytes = scales[16] @0 (lo4 scale, hi4 min per 16 elements), qs[64] @16, fp16 d @80, fp16
// dmin @82 (4-byte aligned). Block j = 2u + k (h = u / 2, bit pair s = 2 (u % 2) + k): code e =
// (qs[32h + e] >> 2s) & 3; its 16-element halves take scale bytes 4u + 2k and 4u + 2k + 1.
// The Dot's two integer sums are dot products of the block's activation codes with per-element
// int8 weights, so each is one m16n8k32 (kDualA): isum = sc_0 * sum16_0(q*qa) + sc_1 * sum16_1(q*qa)
// = sum_e (sc(e) * q(e)) * qa(e) with sc * q <= 15 * 3 (the first A: the codes times their half's
// scale, bytes without carries), msum = m_0 * sum16_0(qa) + m_1 * sum16_1(qa) = sum_e m(e) * qa(e)
// (the second A: each half's min in every byte). Both are the exact integers the Dot forms; its term
// sub(mul(mul(d, da), to_f(isum)), mul(mul(dmin, da), to_f(msum))).
struct Q2_KMma {
    static constexpr int kStepBytes = 84;
    static constexpr int kAlign = 4;
    static constexpr bool kK16 = false;
    static constexpr bool kDualA = true;
    static constexpr bool kNeedS = false;
    static constexpr bool kPartialSteps = false;
    static constexpr IqTable kTable = IqTable::None;
    struct Row {
        float d, dmin;
    };
    using Blk = Row;
    __device__ __forceinline__ static Row head(const uint8_t* step) {
        const uint32_t dd = ldg_u32(step + 80);  // d | dmin << 16
        return {half_to_float(dd), half_to_float(dd >> 16)};
    }
    __device__ __forceinline__ static void unit(const uint8_t* step, const Row& r, int u, int t, const IqTables&, int,
                                                uint32_t (&lo)[2], uint32_t (&hi)[2], uint32_t (&lo2)[2],
                                                uint32_t (&hi2)[2], Blk (&bk)[2]) {
        const uint32_t scales = ldg_u32(step + 4 * u);  // bytes 4u .. 4u + 3
        const uint8_t* qs = step + 16 + 32 * (u >> 1);
        const uint32_t q0 = ldg_u32(qs + 4 * t), q1 = ldg_u32(qs + 16 + 4 * t);
#pragma unroll
        for (int k = 0; k < 2; ++k) {
            const uint32_t shift = 2u * static_cast<uint32_t>(2 * (u & 1) + k);
            const uint32_t b0 = byte_of(scales, 2 * k), b1 = byte_of(scales, 2 * k + 1);
            lo[k] = ((q0 >> shift) & 0x03030303u) * (b0 & 15u);
            hi[k] = ((q1 >> shift) & 0x03030303u) * (b1 & 15u);
            lo2[k] = (b0 >> 4) * 0x01010101u;
            hi2[k] = (b1 >> 4) * 0x01010101u;
            bk[k] = r;
        }
    }
    __device__ __forceinline__ static float term(const Blk& b, int32_t isum, int32_t msum, float da, float) {
        return sub(mul(mul(b.d, da), to_f(isum)), mul(mul(b.dmin, da), to_f(msum)));
    }
    // da * (d isum - dmin msum): both sums share the activation's scale.
    __device__ __forceinline__ static float fast(const Blk& b, int32_t isum, int32_t msum, float da, float, float acc) {
        return fma_rn(da, fma_rn(b.d, to_f(isum), -mul(b.dmin, to_f(msum))), acc);
    }
};

}  // namespace pure_asm
}  // namespace gemv

cudaError_t launch_gemm_q2_k(const GemmLaunch& call, cudaStream_t stream) {
    return gemv::launch_gemm_auto<gemv::Q2_KMma, gemv::Q2_KDot>(call, stream);
}

}  // namespace dense::cuda
