// GEMM of IQ2_XS and IQ2_S weights against Q8_32 activations: the tensor-core kernel (gemm_mma.cuh)
// with the Mma decoders below, or the dp4a GEMM (gemm_launch.cuh, gemv_dot_iq2.cuh) when it does not
// apply (DENSE_CUDA_GEMM=dp4a). Its own translation unit: the pure-asm flavour of the GEMV code
// (gemv_common.cuh says why).
#define DENSE_GEMV_PURE_ASM 1
#include "kernels/gemv_dot_iq2.cuh"
#include "kernels/gemm_mma_choice.cuh"
#include "kernels/gemv_launchers.hpp"

namespace dense::cuda {
namespace gemv {
inline namespace pure_asm {

// Both formats: a 32-element sub-block is 4 groups of 8, each an 8-byte grid entry with an 8-bit
// sign mask; groups 0, 1 (elements 0..15) take the low nibble of the sub-block's scale byte, groups
// 2, 3 the high one. The A words of thread t are elements 4t..4t+3 = half t & 1 of group t >> 1 and
// 16+4t..16+4t+3 = half t & 1 of group 2 + (t >> 1): the grid (shared memory, staged by the kernel
// as the GEMV's) read as 32-bit halves, the signs applied as in signed_grid8. The scales differ per
// 16 elements, so the term takes the two per-16 sums (two m16n8k16, kK16): the Dot's
// isum = sum_G ls_G * tg_G is exactly ls_lo * s0 + ls_hi * s1, and its term
// mul(mul(mul(d, 0.125f), da), to_f(isum)) (mul(d, 0.125f) formed per row).
__device__ __forceinline__ uint32_t iq2_signed_half(const IqTables& tb, uint32_t index, uint32_t mask8, int t) {
    const uint32_t h = static_cast<uint32_t>(t & 1);
    return apply_signs(reinterpret_cast<const uint32_t*>(tb.grid64)[2 * index + h], sign_bytes4((mask8 >> (4 * h)) & 15u));
}

struct Iq2Blk {
    float dq;  // mul(d, 0.125f)
    int32_t ls0, ls1;
};

__device__ __forceinline__ Iq2Blk iq2_blk(float dq, uint32_t sbyte) {
    return {dq, static_cast<int32_t>(2u * (sbyte & 15u) + 1u), static_cast<int32_t>(2u * (sbyte >> 4) + 1u)};
}

// What the two IQ2 decoders share: flags, the per-row mul(d, 0.125f), the block and its term.
struct Iq2MmaCommon {
    static constexpr int kAlign = 2;
    static constexpr bool kK16 = true;
    static constexpr bool kNeedS = false;
    static constexpr bool kPartialSteps = false;
    struct Row {
        float dq;
    };
    using Blk = Iq2Blk;
    __device__ __forceinline__ static Row head(const uint8_t* step) {
        return {mul(half_to_float(*reinterpret_cast<const uint16_t*>(step)), 0.125f)};
    }
    __device__ __forceinline__ static float term(const Blk& b, int32_t s0, int32_t s1, float da, float) {
        return mul(mul(b.dq, da), to_f(b.ls0 * s0 + b.ls1 * s1));
    }
    __device__ __forceinline__ static float fast(const Blk& b, int32_t s0, int32_t s1, float da, float, float acc) {
        return fma_rn(mul(b.dq, da), to_f(b.ls0 * s0 + b.ls1 * s1), acc);
    }
};

// IQ2_XS: 74 bytes = fp16 d @0, u16 qs[32] @2 (9-bit grid index | 7 parity-completed sign bits << 9;
// group l of sub-block ib at 2 + 8 ib + 2 l), scales[8] @66.
struct IQ2_XSMma : Iq2MmaCommon {
    static constexpr int kStepBytes = 74;
    static constexpr IqTable kTable = IqTable::Iq2xsGrid;
    __device__ __forceinline__ static void unit(const uint8_t* step, const Row& r, int u, int t, const IqTables& tb, int,
                                                uint32_t (&lo)[2], uint32_t (&hi)[2], Blk (&bk)[2]) {
        const int l = t >> 1;
        const uint32_t scales = *reinterpret_cast<const uint16_t*>(step + 66 + 2 * u);  // sub-blocks 2u, 2u + 1
#pragma unroll
        for (int k = 0; k < 2; ++k) {
            const int ib = 2 * u + k;
            const auto* qs = reinterpret_cast<const uint16_t*>(step + 2 + 8 * ib);
            const uint32_t w1 = qs[l], w2 = qs[2 + l];
            lo[k] = iq2_signed_half(tb, w1 & 511u, parity_signs(w1 >> 9), t);
            hi[k] = iq2_signed_half(tb, w2 & 511u, parity_signs(w2 >> 9), t);
            bk[k] = iq2_blk(r.dq, byte_of(scales, k));
        }
    }
};

// IQ2_S: 82 bytes = fp16 d @0, qs[32] @2 (low 8 index bits; group l of sub-block ib at 2 + 4 ib + l),
// signs[32] @34 (same order), qh[8] @66 (bits 2l, 2l + 1 of qh[ib]: group l's index bits 8, 9),
// scales[8] @74.
struct IQ2_SMma : Iq2MmaCommon {
    static constexpr int kStepBytes = 82;
    static constexpr IqTable kTable = IqTable::Iq2sGrid;
    __device__ __forceinline__ static void unit(const uint8_t* step, const Row& r, int u, int t, const IqTables& tb, int,
                                                uint32_t (&lo)[2], uint32_t (&hi)[2], Blk (&bk)[2]) {
        const int l = t >> 1;
        const uint32_t qh2 = *reinterpret_cast<const uint16_t*>(step + 66 + 2 * u);      // qh[2u], qh[2u + 1]
        const uint32_t scales = *reinterpret_cast<const uint16_t*>(step + 74 + 2 * u);  // sub-blocks 2u, 2u + 1
#pragma unroll
        for (int k = 0; k < 2; ++k) {
            const int ib = 2 * u + k;
            const uint8_t* qs = step + 2 + 4 * ib;
            const uint8_t* sg = step + 34 + 4 * ib;
            const uint32_t qh = byte_of(qh2, k);
            const uint32_t i1 = qs[l] | (((qh >> (2 * l)) & 3u) << 8);
            const uint32_t i2 = qs[2 + l] | (((qh >> (2 * (2 + l))) & 3u) << 8);
            lo[k] = iq2_signed_half(tb, i1, sg[l], t);
            hi[k] = iq2_signed_half(tb, i2, sg[2 + l], t);
            bk[k] = iq2_blk(r.dq, byte_of(scales, k));
        }
    }
};

}  // namespace pure_asm
}  // namespace gemv

cudaError_t launch_gemm_iq2_xs(const GemmLaunch& call, cudaStream_t stream) {
    return gemv::launch_gemm_auto<gemv::IQ2_XSMma, gemv::IQ2_XSDot>(call, stream);
}

cudaError_t launch_gemm_iq2_s(const GemmLaunch& call, cudaStream_t stream) {
    return gemv::launch_gemm_auto<gemv::IQ2_SMma, gemv::IQ2_SDot>(call, stream);
}

}  // namespace dense::cuda
