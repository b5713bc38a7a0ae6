// Q8_0 (spec section 2): 32 elements, 34 bytes = fp16 d, int8 qs[32].  y[e] = qs[e] * d.
#pragma once

#include "decode_common.cuh"

namespace dense::cuda::decode {

struct Q8_0 {
    static constexpr int kBlockElems = 32;
    static constexpr int kBlockBytes = 34;
    static constexpr int kItemElems = 8;  // decode() yields elements [8*item, 8*item + 8)

    DENSE_DECODE_FN static float scale(const uint8_t* block) { return load_fp16(block); }
    DENSE_DECODE_FN static int32_t code(const uint8_t* block, int e) { return as_i8(block[2 + e]); }

    DENSE_DECODE_FN static void decode(const uint8_t* block, int item, float* out) {
        const float d = scale(block);
        DENSE_DECODE_UNROLL
        for (int j = 0; j < 8; ++j) out[j] = mul(to_f(code(block, 8 * item + j)), d);
    }
};

}  // namespace dense::cuda::decode
