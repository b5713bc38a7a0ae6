// Q6_K (spec 3.5): 256 elements, 210 bytes = ql[128] (low 4 bits), qh[64] (high 2 bits),
// int8 scales[16], fp16 d.  y = (d * scales[e/16]) * q with q = (low4 | high2 << 4) - 32.
#pragma once

#include "decode_common.cuh"

namespace dense::cuda::decode {

struct Q6_K {
    static constexpr int kBlockElems = 256;
    static constexpr int kBlockBytes = 210;
    static constexpr int kItemElems = 8;

    DENSE_DECODE_FN static float d(const uint8_t* block) { return load_fp16(block + 208); }
    DENSE_DECODE_FN static int32_t sub_scale(const uint8_t* block, int k) { return as_i8(block[192 + k]); }

    // Signed 6-bit code of element e (-32..31).
    DENSE_DECODE_FN static int32_t code(const uint8_t* block, int e) {
        const int h = e / 128;
        const int r = e % 128;
        const int s = r / 32;
        const int l = r % 32;
        const uint8_t lowbyte = block[64 * h + l + (s & 1) * 32];
        const uint32_t low4 = s < 2 ? lo4(lowbyte) : hi4(lowbyte);
        const uint32_t high2 = (block[128 + 32 * h + l] >> (2 * s)) & 3u;
        return static_cast<int32_t>(low4 | (high2 << 4)) - 32;
    }

    DENSE_DECODE_FN static void decode(const uint8_t* block, int item, float* out) {
        const int e0 = 8 * item;
        const float dl = mul(d(block), to_f(sub_scale(block, e0 / 16)));
        DENSE_DECODE_UNROLL
        for (int j = 0; j < 8; ++j) out[j] = mul(dl, to_f(code(block, e0 + j)));
    }
};

}  // namespace dense::cuda::decode
