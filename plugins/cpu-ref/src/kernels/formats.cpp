// The dispatch table by dense_type_id and the checked entry points of formats.hpp.
#include "kernels/formats.hpp"

#include "kernels/format_impls.hpp"

#include <stdexcept>
#include <string>
#include <vector>

namespace dense::cpuref {
namespace {

using namespace detail;

// A weight format; d_at / dmin_at: byte offsets of its fp16 scale fields (-1 = none); `quantize` set
// if it is also an activation format.
constexpr FormatKernels weight(dense_type_id type, const char* name, uint32_t block_elements, uint32_t block_bytes,
                               dense_type_id act, DequantizeFn dequantize, VecDotFn dot, int16_t d_at = -1,
                               int16_t dmin_at = -1, QuantizeFn quantize = nullptr, VecDotFn dot_q8_32 = nullptr) {
    return {type, name, block_elements, block_bytes, true, act, dequantize, dot, quantize, {d_at, dmin_at}, dot_q8_32};
}

// An activation-only format: never a weight, never in a model file.
constexpr FormatKernels activation(dense_type_id type, const char* name, uint32_t block_elements,
                                   uint32_t block_bytes, DequantizeFn dequantize, QuantizeFn quantize) {
    return {type, name, block_elements, block_bytes, false, DENSE_TYPE_NONE, dequantize, nullptr, quantize, {-1, -1},
            nullptr};
}

// Ascending type id. Sizes: spec section 1; scale offsets: spec sections 2-4; Q8_32: dense_abi.h.
constexpr FormatKernels kFormats[] = {
    weight(DENSE_TYPE_F32, "f32", 1, 4, DENSE_TYPE_F32, dequantize_f32, vec_dot_f32_f32, -1, -1, quantize_f32),
    weight(DENSE_TYPE_F16, "f16", 1, 2, DENSE_TYPE_F16, dequantize_f16, vec_dot_f16_f16, -1, -1, quantize_f16),
    weight(DENSE_TYPE_Q8_0, "q8_0", 32, 34, DENSE_TYPE_Q8_0, dequantize_q8_0, vec_dot_q8_0_q8_0, 0, -1, quantize_q8_0,
           vec_dot_q8_0_q8_32),
    weight(DENSE_TYPE_Q2_K, "q2_k", 256, 84, DENSE_TYPE_Q8_K, dequantize_q2_k, vec_dot_q2_k_q8_k, 80, 82, nullptr,
           vec_dot_q2_k_q8_32),
    weight(DENSE_TYPE_Q3_K, "q3_k", 256, 110, DENSE_TYPE_Q8_K, dequantize_q3_k, vec_dot_q3_k_q8_k, 108, -1, nullptr,
           vec_dot_q3_k_q8_32),
    weight(DENSE_TYPE_Q4_K, "q4_k", 256, 144, DENSE_TYPE_Q8_K, dequantize_q4_k, vec_dot_q4_k_q8_k, 0, 2, nullptr,
           vec_dot_q4_k_q8_32),
    weight(DENSE_TYPE_Q5_K, "q5_k", 256, 176, DENSE_TYPE_Q8_K, dequantize_q5_k, vec_dot_q5_k_q8_k, 0, 2, nullptr,
           vec_dot_q5_k_q8_32),
    weight(DENSE_TYPE_Q6_K, "q6_k", 256, 210, DENSE_TYPE_Q8_K, dequantize_q6_k, vec_dot_q6_k_q8_k, 208, -1, nullptr,
           vec_dot_q6_k_q8_32),
    // Activation only: no weight dot product, never in a model file.
    activation(DENSE_TYPE_Q8_K, "q8_k", 256, 292, dequantize_q8_k, quantize_q8_k),
    weight(DENSE_TYPE_IQ2_XS, "iq2_xs", 256, 74, DENSE_TYPE_Q8_K, dequantize_iq2_xs, vec_dot_iq2_xs_q8_k, 0, -1, nullptr,
           vec_dot_iq2_xs_q8_32),
    weight(DENSE_TYPE_IQ3_XXS, "iq3_xxs", 256, 98, DENSE_TYPE_Q8_K, dequantize_iq3_xxs, vec_dot_iq3_xxs_q8_k, 0, -1,
           nullptr, vec_dot_iq3_xxs_q8_32),
    weight(DENSE_TYPE_IQ4_NL, "iq4_nl", 32, 18, DENSE_TYPE_Q8_0, dequantize_iq4_nl, vec_dot_iq4_nl_q8_0, 0, -1, nullptr,
           vec_dot_iq4_nl_q8_32),
    weight(DENSE_TYPE_IQ3_S, "iq3_s", 256, 110, DENSE_TYPE_Q8_K, dequantize_iq3_s, vec_dot_iq3_s_q8_k, 0, -1, nullptr,
           vec_dot_iq3_s_q8_32),
    weight(DENSE_TYPE_IQ2_S, "iq2_s", 256, 82, DENSE_TYPE_Q8_K, dequantize_iq2_s, vec_dot_iq2_s_q8_k, 0, -1, nullptr,
           vec_dot_iq2_s_q8_32),
    weight(DENSE_TYPE_IQ4_XS, "iq4_xs", 256, 136, DENSE_TYPE_Q8_K, dequantize_iq4_xs, vec_dot_iq4_xs_q8_k, 0, -1, nullptr,
           vec_dot_iq4_xs_q8_32),
    weight(DENSE_TYPE_BF16, "bf16", 1, 2, DENSE_TYPE_BF16, dequantize_bf16, vec_dot_bf16_bf16, -1, -1, quantize_bf16),
    // dense-rt's GPU activation format (struct-of-arrays over the whole vector, see q8_32.cpp).
    activation(DENSE_TYPE_Q8_32, "q8_32", 32, 40, dequantize_q8_32, quantize_q8_32),
};

std::string type_label(dense_type_id type) {
    const FormatKernels* f = find_format(type);
    return f != nullptr ? std::string(f->name) + " (id " + std::to_string(type) + ")" : "id " + std::to_string(type);
}

// n must be a non-negative multiple of the block size.
void check_count(const FormatKernels& f, int64_t n, const char* what) {
    if (n < 0 || n % f.block_elements != 0)
        throw std::invalid_argument(std::string(what) + ": element count " + std::to_string(n) + " of type " +
                                    type_label(f.type) + " is not a non-negative multiple of its block size " +
                                    std::to_string(f.block_elements));
}

const FormatKernels& weight_format(dense_type_id type, const char* what) {
    const FormatKernels& f = format(type);
    if (f.vec_dot == nullptr)
        throw std::invalid_argument(std::string(what) + ": type " + type_label(type) +
                                    " is an activation-only format, not a weight format");
    return f;
}

}  // namespace

std::span<const FormatKernels> all_formats() noexcept {
    return kFormats;
}

const FormatKernels* find_format(dense_type_id type) noexcept {
    for (const auto& f : kFormats)
        if (f.type == type) return &f;
    return nullptr;
}

const FormatKernels& format(dense_type_id type) {
    const FormatKernels* f = find_format(type);
    if (f == nullptr)
        throw std::invalid_argument("cpu-ref kernels: type id " + std::to_string(type) + " is not implemented");
    return *f;
}

uint64_t row_bytes(dense_type_id type, int64_t n) {
    const FormatKernels& f = format(type);
    check_count(f, n, "row_bytes");
    uint64_t bytes = 0;
    if (__builtin_mul_overflow(static_cast<uint64_t>(n / f.block_elements), static_cast<uint64_t>(f.block_bytes),
                               &bytes))
        throw std::invalid_argument("row_bytes: " + std::to_string(n) + " elements of " + type_label(type) +
                                    " overflow 64 bits");
    return bytes;
}

void dequantize_row(dense_type_id type, const void* blocks, float* out, int64_t n) {
    const FormatKernels& f = format(type);
    check_count(f, n, "dequantize_row");
    f.dequantize(blocks, out, n);
}

float vec_dot(dense_type_id type, const void* blocks, const void* act_blocks, int64_t n) {
    const FormatKernels& f = weight_format(type, "vec_dot");
    check_count(f, n, "vec_dot");
    return f.vec_dot(blocks, act_blocks, n);
}

void gemv(dense_type_id type, const void* weights, int64_t in, int64_t rows, const void* act, float* y) {
    const FormatKernels& f = weight_format(type, "gemv");
    check_count(f, in, "gemv");
    if (rows < 0) throw std::invalid_argument("gemv: negative row count " + std::to_string(rows));
    const uint64_t stride = row_bytes(type, in);
    const auto* w = static_cast<const uint8_t*>(weights);
    for (int64_t r = 0; r < rows; ++r) y[r] = f.vec_dot(w + static_cast<uint64_t>(r) * stride, act, in);
}

bool has_vec_dot(dense_type_id type, dense_type_id act_type) noexcept {
    const FormatKernels* f = find_format(type);
    if (f == nullptr || f->vec_dot == nullptr) return false;
    return act_type == f->act_type || (act_type == DENSE_TYPE_Q8_32 && f->vec_dot_q8_32 != nullptr);
}

namespace {

VecDotFn dot_for(const FormatKernels& f, dense_type_id act_type, const char* what) {
    if (act_type == f.act_type) return f.vec_dot;
    if (act_type == DENSE_TYPE_Q8_32 && f.vec_dot_q8_32 != nullptr) return f.vec_dot_q8_32;
    throw std::invalid_argument(std::string(what) + ": no dot product of " + type_label(f.type) + " with activation " +
                                type_label(act_type));
}

}  // namespace

float vec_dot_act(dense_type_id type, dense_type_id act_type, const void* blocks, const void* act_blocks, int64_t n) {
    const FormatKernels& f = weight_format(type, "vec_dot_act");
    const VecDotFn dot = dot_for(f, act_type, "vec_dot_act");
    check_count(f, n, "vec_dot_act");
    check_count(format(act_type), n, "vec_dot_act (activation)");
    return dot(blocks, act_blocks, n);
}

void gemv_act(dense_type_id type, dense_type_id act_type, const void* weights, int64_t in, int64_t rows,
              const void* act, float* y) {
    const FormatKernels& f = weight_format(type, "gemv_act");
    const VecDotFn dot = dot_for(f, act_type, "gemv_act");
    check_count(f, in, "gemv_act");
    check_count(format(act_type), in, "gemv_act (activation)");
    if (rows < 0) throw std::invalid_argument("gemv_act: negative row count " + std::to_string(rows));
    const uint64_t stride = row_bytes(type, in);
    const auto* w = static_cast<const uint8_t*>(weights);
    for (int64_t r = 0; r < rows; ++r) y[r] = dot(w + static_cast<uint64_t>(r) * stride, act, in);
}

void quantize_activation(dense_type_id act_type, const float* x, void* out, int64_t n) {
    const FormatKernels& f = format(act_type);
    if (f.quantize == nullptr)
        throw std::invalid_argument("quantize_activation: type " + type_label(act_type) +
                                    " is not an activation format");
    check_count(f, n, "quantize_activation");
    f.quantize(x, out, n);
}

void gemv_f64_reference(dense_type_id type, const void* weights, int64_t in, int64_t rows, const float* x, double* y) {
    const FormatKernels& f = format(type);
    check_count(f, in, "gemv_f64_reference");
    if (rows < 0) throw std::invalid_argument("gemv_f64_reference: negative row count " + std::to_string(rows));
    const uint64_t stride = row_bytes(type, in);
    const auto* w = static_cast<const uint8_t*>(weights);
    std::vector<float> row(static_cast<std::size_t>(in));
    for (int64_t r = 0; r < rows; ++r) {
        f.dequantize(w + static_cast<uint64_t>(r) * stride, row.data(), in);
        double acc = 0.0;
        for (int64_t i = 0; i < in; ++i)
            acc += static_cast<double>(row[static_cast<std::size_t>(i)]) * static_cast<double>(x[i]);
        y[r] = acc;
    }
}

}  // namespace dense::cpuref
