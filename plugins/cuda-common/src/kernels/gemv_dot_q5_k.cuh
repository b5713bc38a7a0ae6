// Q5_K against Q8_32 (cpu-ref vec_dot_q5_k_q8_32). 176 bytes = fp16 d @0, fp16 dmin @2, scales[12] @4
// (the Q4_K packing), qh[32] @16 (bit j of qh[l] is the 5th bit of element 32j + l), qs[128] @48
// (nibbles laid out as Q4_K). Unit u reads qs[32u..32u+31] and all of qh.
//   term = (d * da) * float(sc_j * sum q*qa) - (dmin * float(m_j)) * sa,   q = nibble + 16 * bit
// The Dot interface is described in gemv_dot_q8_0.cuh.
#pragma once

#include "gemv_dot_q4_k.cuh"

namespace dense::cuda::gemv {
DENSE_GEMV_FLAVOR_BEGIN

struct Q5_KDot {
    static constexpr int kBlockElems = 256;
    static constexpr int kBlockBytes = 176;
    static constexpr int kStepBytes = kBlockBytes;
    static constexpr int kAlign = 16;  // 176 = 16 * 11
    static constexpr IqTable kTable = IqTable::None;
    // The unit reads only its own step, in 8/16-byte aligned fields: the GEMV may read it from
    // global memory directly (gemv_kernel.cuh, gemv_direct_kernel).
    static constexpr bool kDirectLoads = true;

    template <int A>
    DENSE_DECODE_FN static void unit(const uint8_t* step, int u, const ActUnit& a, const IqTables&, float (&term)[2]) {
        uint32_t head[4], qh[8], qs[8];
        ld_words<A>(step, head);
        ld_words<sub_align(A, 16)>(step + 16, qh);
        ld_words<sub_align(A, 16)>(step + 48 + 32 * u, qs);
        const uint32_t sc[3] = {head[1], head[2], head[3]};
        const uint32_t j0 = static_cast<uint32_t>(2 * u);
        uint32_t q[2][8];
        DENSE_DECODE_UNROLL
        for (int i = 0; i < 8; ++i) {
            q[0][i] = (qs[i] & 0x0F0F0F0Fu) | (((qh[i] >> j0) & 0x01010101u) << 4);
            q[1][i] = ((qs[i] >> 4) & 0x0F0F0F0Fu) | (((qh[i] >> (j0 + 1)) & 0x01010101u) << 4);
        }
        k_min_terms(half_to_float(head[0]), half_to_float(head[0] >> 16), sc, u, q, a, term);
    }
};

DENSE_GEMV_FLAVOR_END
}  // namespace dense::cuda::gemv
