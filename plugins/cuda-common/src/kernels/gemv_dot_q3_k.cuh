// Q3_K against Q8_32 (cpu-ref vec_dot_q3_k_q8_32). 110 bytes = hmask[32] @0, qs[64] @32 (low 2 bits),
// scales[12] @96 (sixteen signed 6-bit scales), fp16 d @108. Element e: h = e/128, s = (e%128)/32,
// l = e%32, q = ((qs[32h + l] >> 2s) & 3) - (hmask[l] bit e/32 set ? 0 : 4). Unit u reads
// qs[32h..32h+31] (h = u/2), all of hmask, and bit pairs s = 2(u%2) + k for its blocks k = 0, 1,
// whose 16-element sub-blocks are j = 4u + 2k + {0, 1}.
//   term = (d * da) * float(sc_j0 * sum16_0(q*qa) + sc_j1 * sum16_1(q*qa))
// The Dot interface is described in gemv_dot_q8_0.cuh.
#pragma once

#include "gemv_common.cuh"

namespace dense::cuda::gemv {
DENSE_GEMV_FLAVOR_BEGIN

// Signed 6-bit scale (-32..31) of 16-element sub-block j from the 12 scale bytes as 3 words:
// low 4 bits in byte j & 7 (low nibble for j < 8, high nibble for j >= 8), high 2 bits in byte
// 8 + j%4 at bit 2(j/4).
DENSE_DECODE_FN int32_t q3_k_scale(const uint32_t (&sc)[3], int j) {
    const int jj = j & 7;
    const uint32_t low4 = ((jj < 4 ? sc[0] : sc[1]) >> (8 * (jj & 3) + 4 * (j >> 3))) & 15u;
    const uint32_t high2 = (sc[2] >> (8 * (j & 3) + 2 * (j >> 2))) & 3u;
    return static_cast<int32_t>(low4 | (high2 << 4)) - 32;
}

struct Q3_KDot {
    static constexpr int kBlockElems = 256;
    static constexpr int kBlockBytes = 110;
    static constexpr int kStepBytes = kBlockBytes;
    static constexpr int kAlign = 2;  // 110 = 2 * 55
    static constexpr IqTable kTable = IqTable::None;

    template <int A>
    DENSE_DECODE_FN static void unit(const uint8_t* step, int u, const ActUnit& a, const IqTables&, float (&term)[2]) {
        uint32_t hm[8], qs[8], sc[3];
        ld_words<A>(step, hm);
        ld_words<sub_align(A, 32)>(step + 32 + 32 * (u >> 1), qs);
        ld_words<sub_align(A, 96)>(step + 96, sc);
        // d is bytes 108..109, the high half of the word at 106 (no read past the block).
        const float d = half_to_float(ld_u32<sub_align(A, 106)>(step + 106) >> 16);
        DENSE_DECODE_UNROLL
        for (int k = 0; k < 2; ++k) {
            const uint32_t shift = 2u * static_cast<uint32_t>(2 * (u & 1) + k);
            const uint32_t hbit = static_cast<uint32_t>(2 * u + k);
            uint32_t q[8];
            DENSE_DECODE_UNROLL
            for (int i = 0; i < 8; ++i) {
                const uint32_t v = ((qs[i] >> shift) & 0x03030303u) | (((hm[i] >> hbit) & 0x01010101u) << 2);
                q[i] = sub_bytes(v, 0x04040404u);  // low + 4*hb - 4
            }
            int32_t s0, s1;
            dot16x2(q, &a.q[8 * k], s0, s1);
            const int j = 4 * u + 2 * k;
            const int32_t isum = q3_k_scale(sc, j) * s0 + q3_k_scale(sc, j + 1) * s1;
            term[k] = mul(mul(d, a.d[k]), to_f(isum));
        }
    }
};

DENSE_GEMV_FLAVOR_END
}  // namespace dense::cuda::gemv
