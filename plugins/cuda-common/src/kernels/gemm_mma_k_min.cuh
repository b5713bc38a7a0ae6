// The Mma decoder (gemm_mma.cuh) of the two formats with 6-bit scales and mins per 32-block, Q4_K and
// Q5_K: one struct, the high bit of Q5_K's elements being the only difference. Block j = 2u + k of
// a super-block is nibble k of qs[32u .. 32u + 31] (the Dot's unit u), for Q5_K with bit j of qh[e]
// as bit 4 of element e; its term is k_min_terms' expression (gemv_dot_q4_k.cuh):
//   sub(mul(mul(d, da), to_f(scale_j * isum)), mul(mul(dmin, to_f(min_j)), sa))
// with mul(dmin, to_f(min_j)) formed first, as there.
#pragma once

#include "kernels/gemm_mma.cuh"
#include "kernels/gemv_dot_q4_k.cuh"

namespace dense::cuda::gemv {
DENSE_GEMV_FLAVOR_BEGIN

// StepBytes: the super-block's size; QsAt: where its nibbles start; HighBits: Q5_K's qh[32] at 16.
template <int StepBytes, int QsAt, bool HighBits>
struct KMinMma {
    static constexpr int kStepBytes = StepBytes;
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
        const uint8_t* qs = step + QsAt + 32 * u;
        const uint32_t w0 = ldg_u32(qs + 4 * t), w1 = ldg_u32(qs + 16 + 4 * t);
        [[maybe_unused]] const uint32_t h0 = HighBits ? ldg_u32(step + 16 + 4 * t) : 0u;
        [[maybe_unused]] const uint32_t h1 = HighBits ? ldg_u32(step + 32 + 4 * t) : 0u;
#pragma unroll
        for (int k = 0; k < 2; ++k) {
            const int j = 2 * u + k;
            if constexpr (HighBits) {
                lo[k] = ((w0 >> (4 * k)) & 0x0F0F0F0Fu) | (((h0 >> j) & 0x01010101u) << 4);
                hi[k] = ((w1 >> (4 * k)) & 0x0F0F0F0Fu) | (((h1 >> j) & 0x01010101u) << 4);
            } else {
                lo[k] = (w0 >> (4 * k)) & 0x0F0F0F0Fu;
                hi[k] = (w1 >> (4 * k)) & 0x0F0F0F0Fu;
            }
            const KScaleMin6 sm = k_scale_min_words(r.sc, j);
            bk[k] = {r.d, sm.scale, mul(r.dmin, to_f(sm.min))};
        }
    }
    __device__ __forceinline__ static float term(const Blk& b, int32_t isum, int32_t, float da, float sa) {
        return sub(mul(mul(b.d, da), to_f(b.scale * isum)), mul(b.dm, sa));
    }
    // d * scale is exact (an fp16 times a 6-bit integer); the min's product dm is the term's own.
    __device__ __forceinline__ static float fast(const Blk& b, int32_t isum, int32_t, float da, float sa, float acc) {
        return fma_rn(mul(mul(b.d, to_f(b.scale)), da), to_f(isum), fma_rn(-b.dm, sa, acc));
    }
};

DENSE_GEMV_FLAVOR_END
}  // namespace dense::cuda::gemv
