// Q3_K (spec 3.2): 256 elements, 110 bytes = hmask[32], qs[64] (low 2 bits), scales[12] (sixteen
// signed 6-bit scales), fp16 d.  y = (d*sc) * q with q = low - (hmask bit ? 0 : 4).
#pragma once

#include "decode_common.cuh"

namespace dense::cuda::decode {

struct Q3_K {
    static constexpr int kBlockElems = 256;
    static constexpr int kBlockBytes = 110;
    static constexpr int kItemElems = 8;

    DENSE_DECODE_FN static float d(const uint8_t* block) { return load_fp16(block + 108); }

    // Signed scale of 16-element sub-block j (-32..31).
    DENSE_DECODE_FN static int32_t sub_scale(const uint8_t* block, int j) {
        const uint8_t* s = block + 96;
        const uint32_t low4 = j < 8 ? (s[j] & 0x0Fu) : (s[j - 8] >> 4);
        const uint32_t high2 = (s[8 + j % 4] >> (2 * (j / 4))) & 3u;
        return static_cast<int32_t>(low4 | (high2 << 4)) - 32;
    }

    // Signed 3-bit code of element e (-4..3). A SET hmask bit means "no offset".
    DENSE_DECODE_FN static int32_t code(const uint8_t* block, int e) {
        const int h = e / 128;
        const int s = (e % 128) / 32;
        const int l = e % 32;
        const int32_t low = static_cast<int32_t>((block[32 + 32 * h + l] >> (2 * s)) & 3u);
        const uint32_t hb = (block[l] >> (e / 32)) & 1u;
        return low - (hb != 0 ? 0 : 4);
    }

    DENSE_DECODE_FN static void decode(const uint8_t* block, int item, float* out) {
        const int e0 = 8 * item;
        const float dl = mul(d(block), to_f(sub_scale(block, e0 / 16)));
        DENSE_DECODE_UNROLL
        for (int j = 0; j < 8; ++j) out[j] = mul(dl, to_f(code(block, e0 + j)));
    }
};

}  // namespace dense::cuda::decode
