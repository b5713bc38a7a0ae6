// Q6_K against Q8_32 (cpu-ref vec_dot_q6_k_q8_32). 210 bytes = ql[128] @0 (low 4 bits), qh[64] @128
// (high 2 bits), int8 scales[16] @192, fp16 d @208. Element e: h = e/128, r = e%128, s = r/32,
// l = r%32: low4 = nibble (s < 2 ? low : high) of ql[64h + 32(s&1) + l], high2 = (qh[32h + l] >> 2s)
// & 3, q = (low4 | high2 << 4) - 32. Unit u (h = u/2, s = 2(u%2) + k for its blocks k) reads
// ql[64h..64h+63] (block k: bytes 32k..32k+31, nibble u%2), qh[32h..32h+31] and scales 4u..4u+3.
//   term = (d * da) * float(sc_j0 * sum16_0(q*qa) + sc_j1 * sum16_1(q*qa))
// The Dot interface is described in gemv_dot_q8_0.cuh.
#pragma once

#include "gemv_common.cuh"

namespace dense::cuda::gemv {
DENSE_GEMV_FLAVOR_BEGIN

struct Q6_KDot {
    static constexpr int kBlockElems = 256;
    static constexpr int kBlockBytes = 210;
    static constexpr int kStepBytes = kBlockBytes;
    static constexpr int kAlign = 2;  // 210 = 2 * 105
    static constexpr IqTable kTable = IqTable::None;
    // The streamed GEMV reads it through bulk copies (gemv_kernel.cuh, StreamBulkOf: measured faster).
    static constexpr bool kStreamBulk = true;

    template <int A>
    DENSE_DECODE_FN static void unit(const uint8_t* step, int u, const ActUnit& a, const IqTables&, float (&term)[2]) {
        const int h = u >> 1;
        uint32_t ql[16], qh[8];
#if !DENSE_GEMV_PURE_ASM
        if constexpr (A < 8) {
            // 8-byte loads (gemv_common.cuh, ld_words_by8): the reads stay inside the block (ql up to
            // byte 136, qh up to 200 of 210). The GEMM keeps ld_words: the same words.
            ld_words_by8(step + 64 * h, ql);
            ld_words_by8(step + 128 + 32 * h, qh);
        } else
#endif
        {
            ld_words<sub_align(A, 64)>(step + 64 * h, ql);
            ld_words<sub_align(A, 128)>(step + 128 + 32 * h, qh);
        }
        const uint32_t scales = ld_u32<sub_align(A, 4)>(step + 192 + 4 * u);  // int8 scales 4u..4u+3
        // d is bytes 208..209, the high half of the word at 206 (no read past the block where the
        // step is 4-byte aligned; at A = 2 the funnel-shift load of a block that starts at 2 mod 4
        // reads the word after it too: up to 4 bytes past a matrix, device_api.cpp kReadSlack).
        const float d = half_to_float(ld_u32<sub_align(A, 206)>(step + 206) >> 16);
        const uint32_t nib_shift = 4u * static_cast<uint32_t>(u & 1);
        DENSE_DECODE_UNROLL
        for (int k = 0; k < 2; ++k) {
            const uint32_t hshift = 2u * static_cast<uint32_t>(2 * (u & 1) + k);
            uint32_t q[8];
            DENSE_DECODE_UNROLL
            for (int i = 0; i < 8; ++i) {
                const uint32_t v = ((ql[8 * k + i] >> nib_shift) & 0x0F0F0F0Fu) | (((qh[i] >> hshift) & 0x03030303u) << 4);
#if DENSE_GEMV_PURE_ASM
                q[i] = sub_bytes(v, 0x20202020u);
#else
                q[i] = v;  // the unsigned 6-bit codes; the 32 is taken off the sums below
#endif
            }
            int32_t s0, s1;
            dot16x2(q, &a.q[8 * k], s0, s1);
#if !DENSE_GEMV_PURE_ASM
            // sum (v - 32) * qa = sum v * qa - 32 * sum qa, exact in integers: the activation's sums
            // cost a dp4a per 4 codes, where taking 32 off each byte cost two integer-pipe (ALU)
            // instructions, and the GEMV is short of those, not of dp4a (sm_90 SASS, session 19;
            // the dp4a GEMM keeps sub_bytes: its columns share the codes, not the sums).
            int32_t a0 = 0, a1 = 0;  // the activation sums of the two 16-element halves
            DENSE_DECODE_UNROLL
            for (int i = 0; i < 4; ++i) {
                a0 = sum4(a.q[8 * k + i], a0);
                a1 = sum4(a.q[8 * k + 4 + i], a1);
            }
            s0 -= 32 * a0;
            s1 -= 32 * a1;
#endif
            const auto sc0 = static_cast<int32_t>(static_cast<int8_t>(byte_of(scales, 2 * k)));
            const auto sc1 = static_cast<int32_t>(static_cast<int8_t>(byte_of(scales, 2 * k + 1)));
            term[k] = mul(mul(d, a.d[k]), to_f(sc0 * s0 + sc1 * s1));
        }
    }
};

DENSE_GEMV_FLAVOR_END
}  // namespace dense::cuda::gemv
