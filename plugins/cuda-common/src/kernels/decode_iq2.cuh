// IQ2_XS (spec 4.1) and IQ2_S (spec 4.2): 256 elements in 32 groups of 8; magnitudes from a grid of
// 8-byte entries, signs from a per-group mask, one 4-bit scale per 16 elements.
//   db = (d * (0.5 + nib)) * 0.25;   y = (db * grid_byte) * (sign bit ? -1 : 1)
#pragma once

#include "decode_common.cuh"
#include "iq_tables.cuh"

namespace dense::cuda::decode {

// Scale of group G (0..31) from the shared IQ2 scale bytes: groups 0,1 of a sub-block use the low
// nibble, groups 2,3 the high one.
DENSE_DECODE_FN float iq2_group_scale(float d, const uint8_t* scales, int G) {
    const uint8_t s = scales[G / 4];
    const uint32_t nib = (G % 4) < 2 ? lo4(s) : hi4(s);
    return mul(mul(d, add(0.5f, to_f(static_cast<int32_t>(nib)))), 0.25f);
}

DENSE_DECODE_FN void iq2_expand_group(float db, uint64_t grid, uint32_t sign_mask, float* out) {
    DENSE_DECODE_UNROLL
    for (int j = 0; j < 8; ++j) out[j] = apply_sign(mul(db, to_f(grid_byte(grid, j))), sign_mask, j);
}

// IQ2_XS: 74 bytes = fp16 d, u16 qs[32] (9-bit grid index | 7 sign bits << 9), scales[8].
struct IQ2_XS {
    static constexpr int kBlockElems = 256;
    static constexpr int kBlockBytes = 74;
    static constexpr int kItemElems = 8;  // one item = one group of 8

    DENSE_DECODE_FN static uint32_t word(const uint8_t* block, int G) { return load_u16(block + 2 + 2 * G); }
    DENSE_DECODE_FN static uint64_t grid(const uint8_t* block, int G) {
        return dense_iq2xs_grid[word(block, G) & 511u];  // 9-bit grid index
    }
    DENSE_DECODE_FN static uint32_t signs(const uint8_t* block, int G) {
        return dense_ksigns_iq2xs[word(block, G) >> 9];  // 7 stored sign bits, parity-completed
    }

    DENSE_DECODE_FN static void decode(const uint8_t* block, int G, float* out) {
        const float db = iq2_group_scale(load_fp16(block), block + 66, G);
        iq2_expand_group(db, grid(block, G), signs(block, G), out);
    }
};

// IQ2_S: 82 bytes = fp16 d, qs[32] (low 8 index bits), signs[32], qh[8] (2 high index bits per
// group), scales[8].
struct IQ2_S {
    static constexpr int kBlockElems = 256;
    static constexpr int kBlockBytes = 82;
    static constexpr int kItemElems = 8;

    DENSE_DECODE_FN static uint64_t grid(const uint8_t* block, int G) {
        const uint32_t high = (block[66 + G / 4] >> (2 * (G % 4))) & 3u;
        return dense_iq2s_grid[block[2 + G] | (high << 8)];
    }
    DENSE_DECODE_FN static uint32_t signs(const uint8_t* block, int G) { return block[34 + G]; }

    DENSE_DECODE_FN static void decode(const uint8_t* block, int G, float* out) {
        const float db = iq2_group_scale(load_fp16(block), block + 74, G);
        iq2_expand_group(db, grid(block, G), signs(block, G), out);
    }
};

}  // namespace dense::cuda::decode
