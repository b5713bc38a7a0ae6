// IQ3_XXS (spec 4.3) and IQ3_S (spec 4.4): 256 elements in 32 groups of 8; each group takes two
// 4-byte grid entries (elements 0..3 and 4..7) and an 8-bit sign mask.
//   y = (db * grid_byte) * (sign bit ? -1 : 1)
#pragma once

#include "decode_common.cuh"
#include "iq_tables.cuh"

namespace dense::cuda::decode {

DENSE_DECODE_FN void iq3_expand_group(float db, uint32_t g1, uint32_t g2, uint32_t sign_mask, float* out) {
    DENSE_DECODE_UNROLL
    for (int j = 0; j < 8; ++j) {
        const uint32_t entry = j < 4 ? g1 : g2;
        const uint32_t magnitude = (entry >> (8 * (j % 4))) & 0xFFu;
        out[j] = apply_sign(mul(db, to_f(static_cast<int32_t>(magnitude))), sign_mask, j);
    }
}

// IQ3_XXS: 98 bytes = fp16 d, qs[64] (8-bit grid indices, 2 per group), then one u32 per 32-element
// sub-block: 4 x 7 sign bits (parity-completed through ksigns_iq2xs) and a 4-bit scale on top.
struct IQ3_XXS {
    static constexpr int kBlockElems = 256;
    static constexpr int kBlockBytes = 98;
    static constexpr int kItemElems = 8;

    DENSE_DECODE_FN static uint32_t aux(const uint8_t* block, int ib) { return load_u32(block + 66 + 4 * ib); }
    // db = (d * (0.5 + scale4)) * 0.5
    DENSE_DECODE_FN static float sub_scale(float d, uint32_t a) {
        return mul(mul(d, add(0.5f, to_f(static_cast<int32_t>(a >> 28)))), 0.5f);
    }

    DENSE_DECODE_FN static void decode(const uint8_t* block, int G, float* out) {
        const int ib = G / 4;
        const int l = G % 4;
        const uint32_t a = aux(block, ib);
        const uint8_t* qs = block + 2 + 8 * ib + 2 * l;
        iq3_expand_group(sub_scale(load_fp16(block), a), dense_iq3xxs_grid[qs[0]], dense_iq3xxs_grid[qs[1]],
                         dense_ksigns_iq2xs[(a >> (7 * l)) & 127u], out);
    }
};

// IQ3_S: 110 bytes = fp16 d, qs[64] (low 8 index bits), qh[8] (9th index bits), signs[32],
// scales[4] (one nibble per sub-block).  db = d * (1 + 2*nib).
struct IQ3_S {
    static constexpr int kBlockElems = 256;
    static constexpr int kBlockBytes = 110;
    static constexpr int kItemElems = 8;

    DENSE_DECODE_FN static float sub_scale(const uint8_t* block, int ib) {
        const uint32_t nib = (block[106 + ib / 2] >> (4 * (ib % 2))) & 15u;
        return mul(load_fp16(block), to_f(static_cast<int32_t>(1u + 2u * nib)));
    }

    DENSE_DECODE_FN static void decode(const uint8_t* block, int G, float* out) {
        const int ib = G / 4;
        const int l = G % 4;
        const uint32_t qh = block[66 + ib];
        const uint8_t* qs = block + 2 + 8 * ib + 2 * l;
        const uint32_t i1 = qs[0] | (((qh >> (2 * l)) & 1u) << 8);
        const uint32_t i2 = qs[1] | (((qh >> (2 * l + 1)) & 1u) << 8);
        iq3_expand_group(sub_scale(block, ib), dense_iq3s_grid[i1], dense_iq3s_grid[i2], block[74 + G], out);
    }
};

}  // namespace dense::cuda::decode
