// Q4_K against Q8_32 (cpu-ref vec_dot_q4_k_q8_32). 144 bytes = fp16 d @0, fp16 dmin @2, scales[12] @4
// (eight 6-bit scale/min pairs, spec 3.3), qs[128] @16. Element e of sub-block j = e/32 is the low
// nibble of qs[32(j/2) + e%32] for even j, the high nibble for odd j; so unit u (sub-blocks 2u, 2u+1)
// reads the 32 bytes qs[32u..32u+31] once for both of its blocks.
//   term = (d * da) * float(sc_j * sum q*qa) - (dmin * float(m_j)) * sa
// The Dot interface is described in gemv_dot_q8_0.cuh.
#pragma once

#include "gemv_common.cuh"

namespace dense::cuda::gemv {
DENSE_GEMV_FLAVOR_BEGIN

struct KScaleMin6 {
    int32_t scale;  // 0..63
    int32_t min;    // 0..63
};

// The scale and min of sub-block j (0..7) from the 12 packed bytes of Q4_K / Q5_K as 3 words
// (decode::k_scale_min, on words): j < 4: low 6 bits of bytes j and j+4; j >= 4: the nibbles of byte
// j+4 plus the top 2 bits of bytes j-4 and j.
DENSE_DECODE_FN KScaleMin6 k_scale_min_words(const uint32_t (&sc)[3], int j) {
    const uint32_t sh = 8u * static_cast<uint32_t>(j & 3);
    const uint32_t b0 = sc[0] >> sh, b1 = sc[1] >> sh, b2 = sc[2] >> sh;  // bytes j&3, 4 + (j&3), 8 + (j&3)
    // Branch-free (the 4 lanes of a row take different j): both cases, then a select.
    const uint32_t lo_scale = b0 & 63u, lo_min = b1 & 63u;
    const uint32_t hi_scale = (b2 & 15u) | (((b0 >> 6) & 3u) << 4);
    const uint32_t hi_min = ((b2 >> 4) & 15u) | (((b1 >> 6) & 3u) << 4);
    const bool high = j >= 4;
    return {static_cast<int32_t>(high ? hi_scale : lo_scale), static_cast<int32_t>(high ? hi_min : lo_min)};
}

// The two terms of a Q4_K / Q5_K unit from the 5-bit-or-less codes q[k][i] (4 per word).
DENSE_DECODE_FN void k_min_terms(float d, float dmin, const uint32_t (&sc)[3], int u, const uint32_t (&q)[2][8],
                                 const ActUnit& a, float (&term)[2]) {
    DENSE_DECODE_UNROLL
    for (int k = 0; k < 2; ++k) {
        const KScaleMin6 sm = k_scale_min_words(sc, 2 * u + k);
        int32_t isum = 0;
        DENSE_DECODE_UNROLL
        for (int i = 0; i < 8; ++i) isum = dp4a(q[k][i], a.q[8 * k + i], isum);
        term[k] = sub(mul(mul(d, a.d[k]), to_f(sm.scale * isum)), mul(mul(dmin, to_f(sm.min)), a.s[k]));
    }
}

struct Q4_KDot {
    static constexpr int kBlockElems = 256;
    static constexpr int kBlockBytes = 144;
    static constexpr int kStepBytes = kBlockBytes;
    static constexpr int kAlign = 16;  // 144 = 16 * 9
    static constexpr IqTable kTable = IqTable::None;
    // The unit reads only its own step, in 8/16-byte aligned fields: the GEMV may read it from
    // global memory directly (gemv_kernel.cuh, gemv_direct_kernel).
    static constexpr bool kDirectLoads = true;

    template <int A>
    DENSE_DECODE_FN static void unit(const uint8_t* step, int u, const ActUnit& a, const IqTables&, float (&term)[2]) {
        uint32_t head[4];  // d | dmin << 16, then the 12 scale bytes
        ld_words<A>(step, head);
        uint32_t qs[8];
        ld_words<sub_align(A, 16)>(step + 16 + 32 * u, qs);
        const uint32_t sc[3] = {head[1], head[2], head[3]};
        uint32_t q[2][8];
        DENSE_DECODE_UNROLL
        for (int i = 0; i < 8; ++i) {
            q[0][i] = qs[i] & 0x0F0F0F0Fu;
            q[1][i] = (qs[i] >> 4) & 0x0F0F0F0Fu;
        }
        k_min_terms(half_to_float(head[0]), half_to_float(head[0] >> 16), sc, u, q, a, term);
    }
};

DENSE_GEMV_FLAVOR_END
}  // namespace dense::cuda::gemv
