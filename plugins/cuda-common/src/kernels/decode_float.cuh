// F32 / F16 / BF16 (spec section 2): one element per "block"; the value is the float, widened
// exactly. Decoders expose the same shape as the quantized ones (see dequant_kernel.cuh):
// kBlockElems, kBlockBytes, kItemElems and decode(block, item, out[kItemElems]).
#pragma once

#include "decode_common.cuh"

namespace dense::cuda::decode {

struct F32 {
    static constexpr int kBlockElems = 1;
    static constexpr int kBlockBytes = 4;
    static constexpr int kItemElems = 1;
    // A bit copy: no arithmetic touches the value, so NaN payloads and -0 survive.
    DENSE_DECODE_FN static void decode(const uint8_t* block, int /*item*/, float* out) {
        out[0] = bits_to_f32(load_u32(block));
    }
};

struct F16 {
    static constexpr int kBlockElems = 1;
    static constexpr int kBlockBytes = 2;
    static constexpr int kItemElems = 1;
    DENSE_DECODE_FN static void decode(const uint8_t* block, int /*item*/, float* out) { out[0] = load_fp16(block); }
};

struct BF16 {
    static constexpr int kBlockElems = 1;
    static constexpr int kBlockBytes = 2;
    static constexpr int kItemElems = 1;
    DENSE_DECODE_FN static void decode(const uint8_t* block, int /*item*/, float* out) {
        out[0] = bf16_to_f32(load_u16(block));
    }
};

}  // namespace dense::cuda::decode
