// Q8_0 against Q8_32 (cpu-ref vec_dot_q8_0_q8_32): a step is 8 blocks of 34 bytes, unit u = blocks
// 2u and 2u+1.   term = (dw * da) * float(sum qw*qa)
//
// Every Dot (this file and the other gemv_dot_*.cuh) has the same shape, which gemv_kernel.cuh and
// tests/cuda/gemv_host_test.cpp rely on:
//   kBlockElems, kBlockBytes  the weight block (spec/quant-formats.md)
//   kStepBytes                bytes of one 256-element step (one super-block, or 8 small blocks)
//   kAlign                    alignment of every step start when the matrix starts 16-byte aligned
//                             (the largest power of two <= 16 dividing kStepBytes)
//   kTable                    the codebook the kernel stages in shared memory for it
//   unit<A>(step, u, act, tables, term)
//                             the two float terms of activation blocks 2u, 2u+1 of the step at
//                             `step` (A-byte aligned), exactly as cpu-ref computes them
#pragma once

#include "gemv_common.cuh"

namespace dense::cuda::gemv {
DENSE_GEMV_FLAVOR_BEGIN

struct Q8_0Dot {
    static constexpr int kBlockElems = 32;
    static constexpr int kBlockBytes = 34;
    static constexpr int kStepBytes = 8 * kBlockBytes;
    static constexpr int kAlign = 2;  // blocks are only 2-byte aligned (steps: step_align, 16)
    static constexpr IqTable kTable = IqTable::None;
    // The streamed GEMV reads it through bulk copies (gemv_kernel.cuh, StreamBulkOf: measured faster).
    static constexpr bool kStreamBulk = true;

    template <int A>
    DENSE_DECODE_FN static void unit(const uint8_t* step, int u, const ActUnit& a, const IqTables&, float (&term)[2]) {
        if constexpr (A >= 8) {
            // An 8-byte-aligned step (the streamed GEMV's: gemv_common.cuh, step_align): the unit's
            // 68 bytes start 4-byte aligned at 68u, so they are 17 whole words: block 2u's d in the
            // low half of word 0 and its codes from byte 2, block 2u+1's d in the high half of word 8
            // and its codes in words 9..16, aligned. Read by 9 8-byte loads instead of 20 4-byte ones
            // (ncu, H100, session 29: this GEMV stalled on lg_throttle, 6.4 per issue). They stay
            // inside the step: bytes [68u - 4 (u & 1), + 72), so [200, 272) for the last unit.
            uint32_t w[17];
            ld_words_by8<4>(step + 68 * u, w);
            int32_t isum0 = 0;
            int32_t isum1 = 0;
            DENSE_DECODE_UNROLL
            for (int i = 0; i < 8; ++i) isum0 = dp4a(byte_perm(w[i], w[i + 1], 0x5432u), a.q[i], isum0);
            DENSE_DECODE_UNROLL
            for (int i = 0; i < 8; ++i) isum1 = dp4a(w[9 + i], a.q[8 + i], isum1);
            term[0] = mul(mul(half_to_float(w[0]), a.d[0]), to_f(isum0));
            term[1] = mul(mul(half_to_float(w[8] >> 16), a.d[1]), to_f(isum1));
        } else {
            DENSE_DECODE_UNROLL
            for (int k = 0; k < 2; ++k) {
                // 9 words from the block start: d in the low half of word 0, codes in bytes 2..33 (the
                // last word reaches 2 bytes into the next block, or into the staging slot's padding).
                uint32_t w[9];
                ld_words<sub_align(A, 2)>(step + kBlockBytes * (2 * u + k), w);
                int32_t isum = 0;
                DENSE_DECODE_UNROLL
                for (int i = 0; i < 8; ++i) isum = dp4a(byte_perm(w[i], w[i + 1], 0x5432u), a.q[8 * k + i], isum);
                term[k] = mul(mul(half_to_float(w[0]), a.d[k]), to_f(isum));
            }
        }
    }
};

DENSE_GEMV_FLAVOR_END
}  // namespace dense::cuda::gemv
