// Q4_K (spec 3.3): 256 elements, 144 bytes = fp16 d, fp16 dmin, scales[12], qs[128] (nibbles).
// y = (d*sc(j)) * q - (dmin*m(j)) with j = e/32.
#pragma once

#include "decode_common.cuh"
#include "decode_k_scale_min.cuh"

namespace dense::cuda::decode {

struct Q4_K {
    static constexpr int kBlockElems = 256;
    static constexpr int kBlockBytes = 144;
    static constexpr int kItemElems = 8;

    DENSE_DECODE_FN static float d(const uint8_t* block) { return load_fp16(block); }
    DENSE_DECODE_FN static float dmin(const uint8_t* block) { return load_fp16(block + 2); }
    DENSE_DECODE_FN static KScaleMin scale_min(const uint8_t* block, int j) { return k_scale_min(block + 4, j); }

    // 4-bit code of element e (0..15): 64-element chunks, low nibbles first, then high nibbles.
    DENSE_DECODE_FN static uint32_t code(const uint8_t* block, int e) {
        const uint8_t q = block[16 + 32 * (e / 64) + e % 32];
        return (e % 64) < 32 ? lo4(q) : hi4(q);
    }

    DENSE_DECODE_FN static void decode(const uint8_t* block, int item, float* out) {
        const int e0 = 8 * item;
        const KScaleMin sm = scale_min(block, e0 / 32);
        const float d1 = mul(d(block), to_f(sm.scale));
        const float m1 = mul(dmin(block), to_f(sm.min));
        DENSE_DECODE_UNROLL
        for (int j = 0; j < 8; ++j) out[j] = sub(mul(d1, to_f(static_cast<int32_t>(code(block, e0 + j)))), m1);
    }
};

}  // namespace dense::cuda::decode
