// F32, F16, BF16: one element per "block" (spec section 2).
//
// Their activation format is the weight's own type, as in llama.cpp's CPU backend (and in the core
// type table): F32 weights take F32 activations; F16 / BF16 weights take the activation rounded to
// F16 / BF16 (round to nearest even, quantize_f16 / quantize_bf16 below). The dot product multiplies
// in float (exact for two fp16 or two bf16 values: 11x11 / 8x8 significant bits fit in 24) and
// accumulates in double, like llama.cpp's generic ggml_vec_dot_f16/bf16/f32; only the final sum is
// rounded to float.
#include "kernels/format_impls.hpp"
#include "kernels/quant_common.hpp"

#include <cstring>

namespace dense::cpuref::detail {
namespace {

const uint8_t* bytes(const void* p) noexcept {
    return static_cast<const uint8_t*>(p);
}

float f16_at(const uint8_t* p, int64_t i) noexcept {
    return fp16_to_fp32(load_le16(p + 2 * i));
}
float bf16_at(const uint8_t* p, int64_t i) noexcept {
    return bf16_to_fp32(load_le16(p + 2 * i));
}
float f32_at(const uint8_t* p, int64_t i) noexcept {
    return load_f32(p + 4 * i);
}

template <float (*Load)(const uint8_t*, int64_t)>
float dot_in_double(const void* w, const void* a, int64_t n) noexcept {
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) {
        const float product = Load(bytes(w), i) * Load(bytes(a), i);  // rounded to float, as llama.cpp
        sum += static_cast<double>(product);
    }
    return static_cast<float>(sum);
}

}  // namespace

void dequantize_f32(const void* blocks, float* out, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] = f32_at(bytes(blocks), i);
}
void dequantize_f16(const void* blocks, float* out, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] = f16_at(bytes(blocks), i);
}
void dequantize_bf16(const void* blocks, float* out, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] = bf16_at(bytes(blocks), i);
}

float vec_dot_f32_f32(const void* w, const void* a, int64_t n) {
    return dot_in_double<f32_at>(w, a, n);
}
float vec_dot_f16_f16(const void* w, const void* a, int64_t n) {
    return dot_in_double<f16_at>(w, a, n);
}
float vec_dot_bf16_bf16(const void* w, const void* a, int64_t n) {
    return dot_in_double<bf16_at>(w, a, n);
}

void quantize_f32(const float* x, void* out, int64_t n) {
    if (n > 0) std::memcpy(out, x, static_cast<std::size_t>(n) * sizeof(float));
}
void quantize_f16(const float* x, void* out, int64_t n) {
    auto* o = static_cast<uint8_t*>(out);
    for (int64_t i = 0; i < n; ++i) store_le16(o + 2 * i, fp32_to_fp16(x[i]));
}
void quantize_bf16(const float* x, void* out, int64_t n) {
    auto* o = static_cast<uint8_t*>(out);
    for (int64_t i = 0; i < n; ++i) store_le16(o + 2 * i, fp32_to_bf16(x[i]));
}

}  // namespace dense::cpuref::detail
