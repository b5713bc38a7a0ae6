// IQ2_XS and IQ2_S against Q8_32 (cpu-ref vec_dot_iq2_xs_q8_32 / vec_dot_iq2_s_q8_32). 256 elements
// in 32 groups of 8: magnitudes from a grid of 8-byte entries (staged in shared memory), an 8-bit
// sign mask, a 4-bit scale per 16 elements (groups 0,1 of a sub-block use the low nibble of its
// scale byte, groups 2,3 the high one; ls = 2*nib + 1). Unit u = sub-blocks ib = 2u, 2u+1 = groups
// 8u..8u+7; group l of block k dots elements 8l..8l+7 (activation words 8k + 2l, 8k + 2l + 1).
//   term = ((d * 0.125) * da) * float(sum_G ls_G * sum_e qa * grid * sign)
// The Dot interface is described in gemv_dot_q8_0.cuh.
#pragma once

#include "gemv_common.cuh"

namespace dense::cuda::gemv {
DENSE_GEMV_FLAVOR_BEGIN

// sum_e qa * grid * sign over one group of 8: grid entry g (8 magnitudes), 8-bit sign mask.
DENSE_DECODE_FN int32_t iq_group8_dot(uint64_t g, uint32_t mask8, const uint32_t* act) {
#if DENSE_GEMV_PURE_ASM
    uint32_t lo, hi;
    signed_grid8(static_cast<uint32_t>(g), static_cast<uint32_t>(g >> 32), mask8, lo, hi);
    return dp4a(hi, act[1], dp4a(lo, act[0], 0));
#else
    return signed_dot8(static_cast<uint32_t>(g), static_cast<uint32_t>(g >> 32), mask8, act, 0);
#endif
}

// IQ2_XS: 74 bytes = fp16 d @0, u16 qs[32] @2 (9-bit grid index | 7 sign bits << 9), scales[8] @66.
struct IQ2_XSDot {
    static constexpr int kBlockElems = 256;
    static constexpr int kBlockBytes = 74;
    static constexpr int kStepBytes = kBlockBytes;
    static constexpr int kAlign = 2;
    static constexpr IqTable kTable = IqTable::Iq2xsGrid;

    template <int A>
    DENSE_DECODE_FN static void unit(const uint8_t* step, int u, const ActUnit& a, const IqTables& t, float (&term)[2]) {
        const float d = ld_fp16<A>(step);
        uint32_t qs[4];  // the 8 u16 words of groups 8u..8u+7
        ld_words<sub_align(A, 2)>(step + 2 + 16 * u, qs);
        DENSE_DECODE_UNROLL
        for (int k = 0; k < 2; ++k) {
            const uint32_t sbyte = step[66 + 2 * u + k];
            int32_t isum = 0;
            DENSE_DECODE_UNROLL
            for (int l = 0; l < 4; ++l) {
                const uint32_t w = (qs[2 * k + (l >> 1)] >> (16 * (l & 1))) & 0xFFFFu;
                const int32_t tg = iq_group8_dot(t.grid64[w & 511u], parity_signs(w >> 9), &a.q[8 * k + 2 * l]);
                const uint32_t nib = l < 2 ? (sbyte & 15u) : (sbyte >> 4);
                isum += static_cast<int32_t>(2u * nib + 1u) * tg;
            }
            term[k] = mul(mul(mul(d, 0.125f), a.d[k]), to_f(isum));
        }
    }
};

// Byte l = the 2 high index bits of IQ2_S group l (bits 2l, 2l+1 of the sub-block's qh byte), for all
// four groups at once: the even groups' fields and the odd ones' are spread by one multiply each
// (field l's copy shifted by 6l lands on byte l; with every other field masked off, no two shifted
// copies overlap, so nothing carries; gemv_host_test.cpp checks every qh byte).
DENSE_DECODE_FN uint32_t iq2s_index_high_bytes(uint32_t qh) {
    return (((qh & 0x33u) * 0x00041041u) & 0x00030003u) | (((qh & 0xCCu) * 0x00041041u) & 0x03000300u);
}

// IQ2_S: 82 bytes = fp16 d @0, qs[32] @2 (low 8 index bits), signs[32] @34 (full masks), qh[8] @66
// (2 high index bits per group), scales[8] @74.
struct IQ2_SDot {
    static constexpr int kBlockElems = 256;
    static constexpr int kBlockBytes = 82;
    static constexpr int kStepBytes = kBlockBytes;
    static constexpr int kAlign = 2;
    static constexpr IqTable kTable = IqTable::Iq2sGrid;

    template <int A>
    DENSE_DECODE_FN static void unit(const uint8_t* step, int u, const ActUnit& a, const IqTables& t, float (&term)[2]) {
        const float d = ld_fp16<A>(step);
        uint32_t qs[2], sg[2];  // groups 8u..8u+7: index low bytes, sign masks
        ld_words<sub_align(A, 2)>(step + 2 + 8 * u, qs);
        ld_words<sub_align(A, 2)>(step + 34 + 8 * u, sg);
        DENSE_DECODE_UNROLL
        for (int k = 0; k < 2; ++k) {
            const uint32_t qh = step[66 + 2 * u + k];
            const uint32_t sbyte = step[74 + 2 * u + k];
            int32_t isum = 0;
            DENSE_DECODE_UNROLL
            for (int l = 0; l < 4; ++l) {
                const uint32_t index = byte_of(qs[k], l) | (((qh >> (2 * l)) & 3u) << 8);
                const int32_t tg = iq_group8_dot(t.grid64[index], byte_of(sg[k], l), &a.q[8 * k + 2 * l]);
                const uint32_t nib = l < 2 ? (sbyte & 15u) : (sbyte >> 4);
                isum += static_cast<int32_t>(2u * nib + 1u) * tg;
            }
            term[k] = mul(mul(mul(d, 0.125f), a.d[k]), to_f(isum));
        }
    }

    // The streamed GEMV's unit: the same terms, each 10-bit index put together by one prmt
    // (byte_pair_index) from its low byte and a byte holding its 2 high bits, those 4 bytes spread from
    // the sub-block's qh byte at once (iq2s_index_high_bytes): integer work only, no more shared-memory
    // gathers than unit's (the IQ2 kernels' L1/TEX pipe runs at ~78 %: session 42, where a sign-mask
    // table made them 30 % slower). The table is unit's grid. A unit of its own rather than a change to
    // unit for the reason IQ3_XXSDot::stream_unit gives: the ring and GEMM kernels that call unit keep
    // the code they were measured with (only the streamed GEMV was measured with this one, session 43).
    static constexpr IqTable kStreamTable = IqTable::Iq2sGrid;
    template <int A>
    DENSE_DECODE_FN static void stream_unit(const uint8_t* step, int u, const ActUnit& a, const IqTables& t, float (&term)[2]) {
        const float d = ld_fp16<A>(step);
        uint32_t qs[2], sg[2];
        ld_words<sub_align(A, 2)>(step + 2 + 8 * u, qs);
        ld_words<sub_align(A, 2)>(step + 34 + 8 * u, sg);
        DENSE_DECODE_UNROLL
        for (int k = 0; k < 2; ++k) {
            const uint32_t high = iq2s_index_high_bytes(step[66 + 2 * u + k]);
            const uint32_t sbyte = step[74 + 2 * u + k];
            const int32_t t01 = iq_group8_dot(t.grid64[byte_pair_index<1, 1>(qs[k], high)], byte_of(sg[k], 1), &a.q[8 * k + 2]) +
                                iq_group8_dot(t.grid64[byte_pair_index<0, 0>(qs[k], high)], byte_of(sg[k], 0), &a.q[8 * k]);
            const int32_t t23 = iq_group8_dot(t.grid64[byte_pair_index<3, 3>(qs[k], high)], byte_of(sg[k], 3), &a.q[8 * k + 6]) +
                                iq_group8_dot(t.grid64[byte_pair_index<2, 2>(qs[k], high)], byte_of(sg[k], 2), &a.q[8 * k + 4]);
            const int32_t isum = static_cast<int32_t>(2u * (sbyte & 15u) + 1u) * t01 + static_cast<int32_t>(2u * (sbyte >> 4) + 1u) * t23;
            term[k] = mul(mul(mul(d, 0.125f), a.d[k]), to_f(isum));
        }
    }
};

DENSE_GEMV_FLAVOR_END
}  // namespace dense::cuda::gemv
