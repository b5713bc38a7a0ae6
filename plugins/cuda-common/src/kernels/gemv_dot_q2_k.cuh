// Q2_K against Q8_32 (cpu-ref vec_dot_q2_k_q8_32). 84 bytes = scales[16] @0 (lo4 scale, hi4 min per
// 16 elements), qs[64] @16 (2-bit codes), fp16 d @80, fp16 dmin @82. Element e: h = e/128,
// s = (e%128)/32, l = e%32, code = (qs[32h + l] >> 2s) & 3. Unit u (elements 64u..64u+63) reads
// qs[32h..32h+31] with h = u/2 and bit pairs s = 2(u%2) + k for its blocks k = 0, 1, whose 16-element
// sub-blocks j = 4u + 2k + {0, 1} take scale bytes 4u..4u+3.
//   isum = sc_j0 * sum16_0(q*qa) + sc_j1 * sum16_1(q*qa);  msum = m_j0 * sum16_0(qa) + m_j1 * sum16_1(qa)
//   term = (d * da) * float(isum) - (dmin * da) * float(msum)
// The Dot interface is described in gemv_dot_q8_0.cuh.
#pragma once

#include "gemv_common.cuh"

namespace dense::cuda::gemv {
DENSE_GEMV_FLAVOR_BEGIN

struct Q2_KDot {
    static constexpr int kBlockElems = 256;
    static constexpr int kBlockBytes = 84;
    static constexpr int kStepBytes = kBlockBytes;
    static constexpr int kAlign = 4;  // 84 = 4 * 21
    static constexpr IqTable kTable = IqTable::None;

    template <int A>
    DENSE_DECODE_FN static void unit(const uint8_t* step, int u, const ActUnit& a, const IqTables&, float (&term)[2]) {
        const uint32_t scales = ld_u32<sub_align(A, 4)>(step + 4 * u);  // bytes j = 4u .. 4u+3
        const uint32_t dd = ld_u32<sub_align(A, 80)>(step + 80);        // d | dmin << 16
        const float d = half_to_float(dd);
        const float dmin = half_to_float(dd >> 16);
        uint32_t qs[8];
        ld_words<sub_align(A, 16)>(step + 16 + 32 * (u >> 1), qs);
        DENSE_DECODE_UNROLL
        for (int k = 0; k < 2; ++k) {
            const uint32_t shift = 2u * static_cast<uint32_t>(2 * (u & 1) + k);
            uint32_t q[8];
            DENSE_DECODE_UNROLL
            for (int i = 0; i < 8; ++i) q[i] = (qs[i] >> shift) & 0x03030303u;
            int32_t s0, s1;
            dot16x2(q, &a.q[8 * k], s0, s1);
            int32_t a0 = 0, a1 = 0;  // per-16 sums of the activation codes
            DENSE_DECODE_UNROLL
            for (int i = 0; i < 4; ++i) {
                a0 = sum4(a.q[8 * k + i], a0);
                a1 = sum4(a.q[8 * k + 4 + i], a1);
            }
            const uint32_t b0 = byte_of(scales, 2 * k), b1 = byte_of(scales, 2 * k + 1);
            const int32_t isum = static_cast<int32_t>(b0 & 15u) * s0 + static_cast<int32_t>(b1 & 15u) * s1;
            const int32_t msum = static_cast<int32_t>(b0 >> 4) * a0 + static_cast<int32_t>(b1 >> 4) * a1;
            term[k] = sub(mul(mul(d, a.d[k]), to_f(isum)), mul(mul(dmin, a.d[k]), to_f(msum)));
        }
    }
};

DENSE_GEMV_FLAVOR_END
}  // namespace dense::cuda::gemv
