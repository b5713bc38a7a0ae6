// IQ4_NL (spec 2) and IQ4_XS (spec 4.5): 4-bit indices into the non-linear kvalues_iq4nl table.
#pragma once

#include "decode_common.cuh"
#include "iq_tables.cuh"

namespace dense::cuda::decode {

DENSE_DECODE_FN float iq4nl_value(uint32_t n) { return to_f(dense_kvalues_iq4nl[n]); }

// IQ4_NL: 32 elements, 18 bytes = fp16 d, qs[16]. Element e < 16 is the low nibble of qs[e], element
// e >= 16 the high nibble of qs[e - 16].  y[e] = d * kvalues[n].
struct IQ4_NL {
    static constexpr int kBlockElems = 32;
    static constexpr int kBlockBytes = 18;
    static constexpr int kItemElems = 8;

    DENSE_DECODE_FN static uint32_t index(const uint8_t* block, int e) {
        return e < 16 ? lo4(block[2 + e]) : hi4(block[2 + e - 16]);
    }

    DENSE_DECODE_FN static void decode(const uint8_t* block, int item, float* out) {
        const float d = load_fp16(block);
        DENSE_DECODE_UNROLL
        for (int j = 0; j < 8; ++j) out[j] = mul(d, iq4nl_value(index(block, 8 * item + j)));
    }
};

// IQ4_XS: 256 elements, 136 bytes = fp16 d, u16 scales_h, scales_l[4], qs[128]. Eight sub-blocks
// of 32 with a 6-bit scale each; dl = d * (ls - 32), y = dl * kvalues[n].
struct IQ4_XS {
    static constexpr int kBlockElems = 256;
    static constexpr int kBlockBytes = 136;
    static constexpr int kItemElems = 8;

    // 6-bit scale of sub-block ib (0..63, before the -32).
    DENSE_DECODE_FN static int32_t sub_scale(const uint8_t* block, int ib) {
        const uint32_t lo = (block[4 + ib / 2] >> (4 * (ib % 2))) & 15u;
        const uint32_t hi = (load_u16(block + 2) >> (2 * ib)) & 3u;
        return static_cast<int32_t>(lo | (hi << 4));
    }

    // Index of element p (0..31) of sub-block ib.
    DENSE_DECODE_FN static uint32_t index(const uint8_t* block, int ib, int p) {
        const uint8_t* qs = block + 8 + 16 * ib;
        return p < 16 ? lo4(qs[p]) : hi4(qs[p - 16]);
    }

    DENSE_DECODE_FN static void decode(const uint8_t* block, int item, float* out) {
        const int ib = item / 4;
        const int p0 = (item % 4) * 8;
        const float dl = mul(load_fp16(block), to_f(sub_scale(block, ib) - 32));
        DENSE_DECODE_UNROLL
        for (int j = 0; j < 8; ++j) out[j] = mul(dl, iq4nl_value(index(block, ib, p0 + j)));
    }
};

}  // namespace dense::cuda::decode
