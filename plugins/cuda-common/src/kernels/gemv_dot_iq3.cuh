// IQ3_XXS and IQ3_S against Q8_32 (cpu-ref vec_dot_iq3_xxs_q8_32 / vec_dot_iq3_s_q8_32). 256 elements
// in 32 groups of 8; each group takes two 4-byte grid entries (elements 0..3 and 4..7, staged in
// shared memory) and an 8-bit sign mask; one scale per 32-element sub-block. Unit u = sub-blocks
// ib = 2u, 2u+1; group l of block k dots activation words 8k + 2l, 8k + 2l + 1.
// The Dot interface is described in gemv_dot_q8_0.cuh.
#pragma once

#include "gemv_common.cuh"

namespace dense::cuda::gemv {
DENSE_GEMV_FLAVOR_BEGIN

// sum_e qa * grid * sign over one group: grid entries g1 (elements 0..3), g2 (4..7).
DENSE_DECODE_FN int32_t iq3_group_dot(uint32_t g1, uint32_t g2, uint32_t mask8, const uint32_t* act, int32_t c) {
#if DENSE_GEMV_PURE_ASM
    uint32_t lo, hi;
    signed_grid8(g1, g2, mask8, lo, hi);
    return dp4a(hi, act[1], dp4a(lo, act[0], c));
#else
    return signed_dot8(g1, g2, mask8, act, c);
#endif
}

// sum_e qa * grid * sign over one sub-block of 32 elements from the signed grid (signed_grid_entry):
// the index bytes of groups 0, 1 in lo, of groups 2, 3 in hi; byte l of `first` / `second` the
// upper bytes of group l's two entry numbers; activation words act[0..7].
DENSE_DECODE_FN int32_t signed_grid_dot32(const uint32_t* grid, uint32_t lo, uint32_t hi, uint32_t first, uint32_t second,
                                          const uint32_t* act) {
    int32_t s = dp4a(grid[byte_pair_index<0, 0>(lo, first)], act[0], 0);
    s = dp4a(grid[byte_pair_index<1, 0>(lo, second)], act[1], s);
    s = dp4a(grid[byte_pair_index<2, 1>(lo, first)], act[2], s);
    s = dp4a(grid[byte_pair_index<3, 1>(lo, second)], act[3], s);
    s = dp4a(grid[byte_pair_index<0, 2>(hi, first)], act[4], s);
    s = dp4a(grid[byte_pair_index<1, 2>(hi, second)], act[5], s);
    s = dp4a(grid[byte_pair_index<2, 3>(hi, first)], act[6], s);
    return dp4a(grid[byte_pair_index<3, 3>(hi, second)], act[7], s);
}

// IQ3_XXS: 98 bytes = fp16 d @0, qs[64] @2 (8-bit grid indices, 2 per group), u32 per sub-block @66
// (four 7-bit sign fields, parity-completed; the 4-bit scale on top, ls = 2*scale + 1).
//   term = ((d * 0.25) * da) * float(ls * sum_e qa * grid * sign)
struct IQ3_XXSDot {
    static constexpr int kBlockElems = 256;
    static constexpr int kBlockBytes = 98;
    static constexpr int kStepBytes = kBlockBytes;
    static constexpr int kAlign = 2;
    static constexpr IqTable kTable = IqTable::Iq3xxsGrid;
    // The streamed GEMV reads it through bulk copies (gemv_kernel.cuh, StreamBulkOf: measured faster).
    static constexpr bool kStreamBulk = true;

    template <int A>
    DENSE_DECODE_FN static void unit(const uint8_t* step, int u, const ActUnit& a, const IqTables& t, float (&term)[2]) {
        const float d = ld_fp16<A>(step);
        uint32_t qs[4], aux[2];  // indices of sub-blocks 2u, 2u+1 (8 bytes each); their scale/sign words
        ld_words<sub_align(A, 2)>(step + 2 + 16 * u, qs);
        ld_words<sub_align(A, 2)>(step + 66 + 8 * u, aux);
        DENSE_DECODE_UNROLL
        for (int k = 0; k < 2; ++k) {
            int32_t tsum = 0;
            DENSE_DECODE_UNROLL
            for (int l = 0; l < 4; ++l) {
                const uint32_t w = qs[2 * k + (l >> 1)];  // bytes 2l, 2l+1 of the block's 8
                const uint32_t g1 = t.grid32[byte_of(w, 2 * (l & 1))];
                const uint32_t g2 = t.grid32[byte_of(w, 2 * (l & 1) + 1)];
                tsum = iq3_group_dot(g1, g2, parity_signs((aux[k] >> (7 * l)) & 127u), &a.q[8 * k + 2 * l], tsum);
            }
            const int32_t ls = 2 * static_cast<int32_t>(aux[k] >> 28) + 1;
            term[k] = mul(mul(mul(d, 0.25f), a.d[k]), to_f(ls * tsum));
        }
    }

    // The streamed GEMV's unit: the same terms (the same integer sums), each half-group's signed
    // values looked up at once in the signed grid (gemv_common.cuh, signed_grid_entry, entry = index
    // byte | sign nibble << 8). The sign masks of a sub-block's four groups are formed once as the bytes
    // of one word, whose low nibbles (the groups' first halves) and high nibbles (second halves) are
    // then the entry numbers' upper bytes: a lookup is one prmt (byte_pair_index), the address, the
    // load and the dp4a. It repeats unit's structure on purpose: with one template body for both,
    // ptxas rescheduled the ring and GEMM kernels that use unit (sm_90 cubins: 6-373 instructions of
    // each kernel differ), which were tuned and measured as they are.
    static constexpr IqTable kStreamTable = IqTable::Iq3xxsSignedGrid;
    template <int A>
    DENSE_DECODE_FN static void stream_unit(const uint8_t* step, int u, const ActUnit& a, const IqTables& t, float (&term)[2]) {
        const float d = ld_fp16<A>(step);
        uint32_t qs[4], aux[2];
        ld_words<sub_align(A, 2)>(step + 2 + 16 * u, qs);
        ld_words<sub_align(A, 2)>(step + 66 + 8 * u, aux);
        DENSE_DECODE_UNROLL
        for (int k = 0; k < 2; ++k) {
            uint32_t masks = 0;  // byte l: group l's 8-bit sign mask
            DENSE_DECODE_UNROLL
            for (int l = 0; l < 4; ++l) masks |= parity_signs((aux[k] >> (7 * l)) & 127u) << (8 * l);
            const uint32_t first = masks & 0x0F0F0F0Fu;
            const uint32_t second = (masks >> 4) & 0x0F0F0F0Fu;
            const int32_t tsum = signed_grid_dot32(t.signed_grid32, qs[2 * k], qs[2 * k + 1], first, second, &a.q[8 * k]);
            const int32_t ls = 2 * static_cast<int32_t>(aux[k] >> 28) + 1;
            term[k] = mul(mul(mul(d, 0.25f), a.d[k]), to_f(ls * tsum));
        }
    }
};

// The upper bytes of an IQ3_S sub-block's 8 signed-grid entry numbers (entry = index | sign nibble
// << 9, so an upper byte is the 9th index bit | sign nibble << 1), formed at once from its qh byte and
// its sign word: byte l of `first` for the first half of group l (qh bit 2l, the low nibble of sign
// byte l), byte l of `second` for its second half (qh bit 2l + 1, the high nibble). The 9th bits are
// spread by one multiply, bit 2l -> bit 8l: of the shifted copies, those that collide (at bits 6, 12
// and 18) carry only into bits 7, 13 and 19, which the mask drops (gemv_host_test.cpp checks every
// qh byte).
DENSE_DECODE_FN void iq3s_entry_upper_bytes(uint32_t qh, uint32_t signs, uint32_t& first, uint32_t& second) {
    first = ((signs << 1) & 0x1E1E1E1Eu) | (((qh & 0x55u) * 0x00041041u) & 0x01010101u);
    second = ((signs >> 3) & 0x1E1E1E1Eu) | ((((qh >> 1) & 0x55u) * 0x00041041u) & 0x01010101u);
}

// IQ3_S: 110 bytes = fp16 d @0, qs[64] @2 (low 8 bits of 9-bit indices), qh[8] @66 (bit 2l / 2l+1 of
// qh[ib]: 9th bit of group l's first / second index), signs[32] @74, scales[4] @106 (nibble per
// sub-block, even ib low).   term = (d * da) * float((1 + 2*scale) * sum_e qa * grid * sign)
struct IQ3_SDot {
    static constexpr int kBlockElems = 256;
    static constexpr int kBlockBytes = 110;
    static constexpr int kStepBytes = kBlockBytes;
    static constexpr int kAlign = 2;
    static constexpr IqTable kTable = IqTable::Iq3sGrid;
    // The streamed GEMV reads it through bulk copies (gemv_kernel.cuh, StreamBulkOf: measured faster).
    static constexpr bool kStreamBulk = true;

    template <int A>
    DENSE_DECODE_FN static void unit(const uint8_t* step, int u, const ActUnit& a, const IqTables& t, float (&term)[2]) {
        const float d = ld_fp16<A>(step);
        uint32_t qs[4], sg[2];
        ld_words<sub_align(A, 2)>(step + 2 + 16 * u, qs);
        ld_words<sub_align(A, 2)>(step + 74 + 8 * u, sg);
        const uint32_t scale_byte = step[106 + u];
        DENSE_DECODE_UNROLL
        for (int k = 0; k < 2; ++k) {
            const uint32_t qh = step[66 + 2 * u + k];
            int32_t tsum = 0;
            DENSE_DECODE_UNROLL
            for (int l = 0; l < 4; ++l) {
                const uint32_t w = qs[2 * k + (l >> 1)];
                const uint32_t i1 = byte_of(w, 2 * (l & 1)) | (((qh >> (2 * l)) & 1u) << 8);
                const uint32_t i2 = byte_of(w, 2 * (l & 1) + 1) | (((qh >> (2 * l + 1)) & 1u) << 8);
                tsum = iq3_group_dot(t.grid32[i1], t.grid32[i2], byte_of(sg[k], l), &a.q[8 * k + 2 * l], tsum);
            }
            const int32_t ls = 1 + 2 * static_cast<int32_t>((scale_byte >> (4 * k)) & 15u);
            term[k] = mul(mul(d, a.d[k]), to_f(ls * tsum));
        }
    }

    // The streamed GEMV's unit: the same terms, by the signed grid (see IQ3_XXSDot::stream_unit and
    // iq3s_entry_upper_bytes).
    static constexpr IqTable kStreamTable = IqTable::Iq3sSignedGrid;
    template <int A>
    DENSE_DECODE_FN static void stream_unit(const uint8_t* step, int u, const ActUnit& a, const IqTables& t, float (&term)[2]) {
        const float d = ld_fp16<A>(step);
        uint32_t qs[4], sg[2];
        ld_words<sub_align(A, 2)>(step + 2 + 16 * u, qs);
        ld_words<sub_align(A, 2)>(step + 74 + 8 * u, sg);
        const uint32_t scale_byte = step[106 + u];
        DENSE_DECODE_UNROLL
        for (int k = 0; k < 2; ++k) {
            uint32_t first, second;
            iq3s_entry_upper_bytes(step[66 + 2 * u + k], sg[k], first, second);
            const int32_t tsum = signed_grid_dot32(t.signed_grid32, qs[2 * k], qs[2 * k + 1], first, second, &a.q[8 * k]);
            const int32_t ls = 1 + 2 * static_cast<int32_t>((scale_byte >> (4 * k)) & 15u);
            term[k] = mul(mul(d, a.d[k]), to_f(ls * tsum));
        }
    }
};

DENSE_GEMV_FLAVOR_END
}  // namespace dense::cuda::gemv
