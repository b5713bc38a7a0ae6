// IQ4_NL and IQ4_XS against Q8_32 (cpu-ref vec_dot_iq4_nl_q8_32 / vec_dot_iq4_xs_q8_32). The 4-bit
// indices go through the kvalues_iq4nl codebook with byte permutes (lookup16), 8 values per word.
// The Dot interface is described in gemv_dot_q8_0.cuh.
#pragma once

#include "gemv_common.cuh"

namespace dense::cuda::gemv {
DENSE_GEMV_FLAVOR_BEGIN

// 16 bytes of IQ4 nibbles (element e < 16: low nibble of byte e; e >= 16: high nibble of byte e-16)
// dotted with the 8 code words of one activation block. The integer sum is exact, so how it is
// formed never changes a term; the two flavours form it for what each runs best:
//   - the GEMV (one activation column): kvalues_iq4nl has its 8 negative entries first and its 8
//     positive ones last, so the device's prmt with its sign mode (byte_perm_signed) looks up 4
//     indices from the raw nibbles in one instruction per half: over entries 0..7, an index < 8
//     gives its value and an index >= 8 the sign of a negative byte, -1; over entries 8..15 stored
//     plus one, with bit 3 of every index flipped, an index >= 8 gives value + 1 and an index < 8 the
//     sign of a positive byte, 0. Both products are summed, so value = (-1) + (value + 1) cancels
//     exactly. The values come out in the nibbles' order (element 4i, 16+4i, 4i+1, 17+4i, ...), so
//     the activation bytes are put in that order instead (two permutes per 8 elements). In sm_90
//     SASS this is 13 instructions per 8 elements against ~20 with lookup16: at the H200's bandwidth
//     the IQ4_XS GEMV needed more of the integer pipe than it can sustain (docs/perf-notes.md,
//     session 19). gemv_host_test.cpp checks every index at every position, so a codebook without
//     that sign pattern would fail there.
//   - the dp4a GEMM (DENSE_GEMV_PURE_ASM): lookup16 decodes the weights into element order once and
//     the C columns of the GEMM share that decode, where the sign split would cost each column.
DENSE_DECODE_FN int32_t iq4_block_dot(const uint32_t (&qs)[4], const uint32_t* act, const uint32_t (&table)[4]) {
#if DENSE_GEMV_PURE_ASM
    int32_t isum = 0;
    DENSE_DECODE_UNROLL
    for (int i = 0; i < 4; ++i) {
        uint32_t lo, hi;  // elements 4i..4i+3 and 16+4i..16+4i+3
        lookup16(qs[i], table, lo, hi);
        isum = dp4a(lo, act[i], isum);
        isum = dp4a(hi, act[4 + i], isum);
    }
    return isum;
#else
    // Entries 8..15 plus one: each is in [2, 114], so no byte carries into the next.
    const uint32_t hi0 = table[2] + 0x01010101u;
    const uint32_t hi1 = table[3] + 0x01010101u;
    int32_t neg = 0;  // the products with entries 0..7 (and -1 for every index >= 8)
    int32_t pos = 0;  // the products with entries 8..15 plus one (and 0 for every index < 8)
    DENSE_DECODE_UNROLL
    for (int i = 0; i < 4; ++i) {
        const uint32_t a01 = byte_perm(act[i], act[4 + i], 0x5140u);  // elements 4i, 16+4i, 4i+1, 17+4i
        const uint32_t a23 = byte_perm(act[i], act[4 + i], 0x7362u);  // elements 4i+2, 18+4i, 4i+3, 19+4i
        const uint32_t flipped = qs[i] ^ 0x88888888u;
        neg = dp4a(byte_perm_signed(table[0], table[1], qs[i]), a01, neg);
        pos = dp4a(byte_perm_signed(hi0, hi1, flipped), a01, pos);
        neg = dp4a(byte_perm_signed(table[0], table[1], qs[i] >> 16), a23, neg);
        pos = dp4a(byte_perm_signed(hi0, hi1, flipped >> 16), a23, pos);
    }
    return neg + pos;
#endif
}

// IQ4_NL: a step is 8 blocks of 18 bytes (fp16 d, qs[16]); unit u = blocks 2u, 2u+1.
//   term = (dw * da) * float(sum qa * kvalues[n])
struct IQ4_NLDot {
    static constexpr int kBlockElems = 32;
    static constexpr int kBlockBytes = 18;
    static constexpr int kStepBytes = 8 * kBlockBytes;
    static constexpr int kAlign = 2;
    static constexpr IqTable kTable = IqTable::Iq4Values;

    template <int A>
    DENSE_DECODE_FN static void unit(const uint8_t* step, int u, const ActUnit& a, const IqTables& t, float (&term)[2]) {
        if constexpr (A >= 8) {
            // An 8-byte-aligned step (the streamed GEMV's: gemv_common.cuh, step_align): the unit's
            // 36 bytes start 4-byte aligned at 36u, 9 whole words: block 2u's d in the low half of
            // word 0 and its nibbles from byte 2, block 2u+1's d in the high half of word 4 and its
            // nibbles in words 5..8, aligned. 5 8-byte loads instead of 10 4-byte ones, all inside
            // the step: bytes [36u - 4 (u & 1), + 40), so [104, 144) for the last unit.
            uint32_t w[9];
            ld_words_by8<4>(step + 36 * u, w);
            uint32_t qs0[4], qs1[4];
            DENSE_DECODE_UNROLL
            for (int i = 0; i < 4; ++i) {
                qs0[i] = byte_perm(w[i], w[i + 1], 0x5432u);
                qs1[i] = w[5 + i];
            }
            term[0] = mul(mul(half_to_float(w[0]), a.d[0]), to_f(iq4_block_dot(qs0, &a.q[0], t.kvalues)));
            term[1] = mul(mul(half_to_float(w[4] >> 16), a.d[1]), to_f(iq4_block_dot(qs1, &a.q[8], t.kvalues)));
        } else {
            DENSE_DECODE_UNROLL
            for (int k = 0; k < 2; ++k) {
                uint32_t w[5];  // d in the low half of word 0, nibbles in bytes 2..17
                ld_words<sub_align(A, 2)>(step + kBlockBytes * (2 * u + k), w);
                uint32_t qs[4];
                DENSE_DECODE_UNROLL
                for (int i = 0; i < 4; ++i) qs[i] = byte_perm(w[i], w[i + 1], 0x5432u);
                const int32_t isum = iq4_block_dot(qs, &a.q[8 * k], t.kvalues);
                term[k] = mul(mul(half_to_float(w[0]), a.d[k]), to_f(isum));
            }
        }
    }
};

// IQ4_XS: 136 bytes = fp16 d @0, u16 scales_h @2, scales_l[4] @4, qs[128] @8 (16 per sub-block);
// unit u = sub-blocks 2u, 2u+1.   term = (d * da) * float((ls - 32) * sum qa * kvalues[n])
struct IQ4_XSDot {
    static constexpr int kBlockElems = 256;
    static constexpr int kBlockBytes = 136;
    static constexpr int kStepBytes = kBlockBytes;
    static constexpr int kAlign = 8;  // 136 = 8 * 17
    static constexpr IqTable kTable = IqTable::Iq4Values;
    // The unit reads only its own step, in 8/16-byte aligned fields: the GEMV may read it from
    // global memory directly (gemv_kernel.cuh, gemv_direct_kernel).
    static constexpr bool kDirectLoads = true;

    template <int A>
    DENSE_DECODE_FN static void unit(const uint8_t* step, int u, const ActUnit& a, const IqTables& t, float (&term)[2]) {
        uint32_t head[2];  // d | scales_h << 16, then scales_l[0..3]
        ld_words<A>(step, head);
        const float d = half_to_float(head[0]);
        const uint32_t scales_l = byte_of(head[1], u);  // sub-blocks 2u (low nibble) and 2u+1 (high)
        uint32_t qs[8];                                  // 16 bytes per sub-block, at 8 + 32u
        ld_words<sub_align(A, 8)>(step + 8 + 32 * u, qs);
        DENSE_DECODE_UNROLL
        for (int k = 0; k < 2; ++k) {
            const int ib = 2 * u + k;
            const uint32_t ls = ((scales_l >> (4 * k)) & 15u) | (((head[0] >> (16 + 2 * ib)) & 3u) << 4);
            const uint32_t q4[4] = {qs[4 * k], qs[4 * k + 1], qs[4 * k + 2], qs[4 * k + 3]};
            const int32_t t32 = iq4_block_dot(q4, &a.q[8 * k], t.kvalues);
            term[k] = mul(mul(d, a.d[k]), to_f((static_cast<int32_t>(ls) - 32) * t32));
        }
    }
};

DENSE_GEMV_FLAVOR_END
}  // namespace dense::cuda::gemv
