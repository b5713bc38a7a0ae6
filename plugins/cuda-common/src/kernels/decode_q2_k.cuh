// Q2_K (spec 3.1): 256 elements, 84 bytes = scales[16] (lo4 scale, hi4 min per 16 elements),
// qs[64] (2-bit), fp16 d, fp16 dmin.  y = (d*sc) * q - (dmin*m).
#pragma once

#include "decode_common.cuh"

namespace dense::cuda::decode {

struct Q2_K {
    static constexpr int kBlockElems = 256;
    static constexpr int kBlockBytes = 84;
    static constexpr int kItemElems = 8;

    DENSE_DECODE_FN static float d(const uint8_t* block) { return load_fp16(block + 80); }
    DENSE_DECODE_FN static float dmin(const uint8_t* block) { return load_fp16(block + 82); }

    // 2-bit code of element e (0..3).
    DENSE_DECODE_FN static uint32_t code(const uint8_t* block, int e) {
        const int h = e / 128;
        const int s = (e % 128) / 32;
        return (block[16 + 32 * h + e % 32] >> (2 * s)) & 3u;
    }

    DENSE_DECODE_FN static void decode(const uint8_t* block, int item, float* out) {
        const int e0 = 8 * item;
        const uint8_t sc = block[e0 / 16];  // a group of 8 never straddles a 16-element sub-block
        const float dl = mul(d(block), to_f(static_cast<int32_t>(lo4(sc))));
        const float ml = mul(dmin(block), to_f(static_cast<int32_t>(hi4(sc))));
        DENSE_DECODE_UNROLL
        for (int j = 0; j < 8; ++j) out[j] = sub(mul(dl, to_f(static_cast<int32_t>(code(block, e0 + j)))), ml);
    }
};

}  // namespace dense::cuda::decode
