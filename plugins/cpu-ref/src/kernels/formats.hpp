// The cpu-ref kernels: exact dequantization and reference dot products for every format the runtime
// stores (spec/quant-formats.md), looked up by dense_type_id. This is the numerical oracle of the
// project: the pack wraps it, GPU and fast-CPU tests compare against it.
//
// Depends only on the ABI headers (type ids) and the generated IQ tables, never on the runtime
// core. Errors (unknown type, element count not a multiple of the block size, negative sizes) throw
// std::invalid_argument; the pack boundary turns them into a status code.
//
// Activation formats (what `vec_dot` / `gemv` consume, as in llama.cpp's CPU backend):
//   K-quants and IQ2_XS/IQ2_S/IQ3_XXS/IQ3_S/IQ4_XS -> Q8_K;   Q8_0, IQ4_NL -> Q8_0;
//   F32 -> F32;   F16 -> F16 (activation rounded to fp16);   BF16 -> BF16 (rounded to bf16).
// Every quantized weight format also has a dot product against Q8_32 (DENSE_TYPE_Q8_32, the CUDA
// packs' activation format; `vec_dot_act` / `gemv_act`): the oracle of the GPU GEMV kernels.
#pragma once

#include <dense/abi/dense_abi.h>

#include <cstddef>
#include <cstdint>
#include <span>

namespace dense::cpuref {

using DequantizeFn = void (*)(const void* blocks, float* out, int64_t n);
using VecDotFn = float (*)(const void* weight_blocks, const void* act_blocks, int64_t n);
using QuantizeFn = void (*)(const float* x, void* out, int64_t n);

// Everything the kernels know about one format.
struct FormatKernels {
    dense_type_id type;
    const char* name;  // ggml's name: "q4_k", "f32", ...
    uint32_t block_elements;
    uint32_t block_bytes;
    bool storable;            // may be a weight (false: activation-only Q8_K)
    dense_type_id act_type;   // activation format of vec_dot; DENSE_TYPE_NONE if not a weight
    DequantizeFn dequantize;  // always set
    VecDotFn vec_dot;         // null for activation-only formats
    QuantizeFn quantize;      // set for formats that serve as an activation format
    // Byte offsets inside a block of the fp16 scale fields (d, dmin), -1 = absent. Random bytes there
    // can be NaN/Inf; tests use this to make random blocks with finite scales.
    int16_t fp16_field_offsets[2];
    // Dot product against the Q8_32 activation; null for the float formats and activation formats.
    VecDotFn vec_dot_q8_32;
};

// All formats the kernels implement (the 15 storable ones and Q8_K), in ascending type id.
std::span<const FormatKernels> all_formats() noexcept;

// nullptr if the type is not implemented.
const FormatKernels* find_format(dense_type_id type) noexcept;

// Throws std::invalid_argument naming the type if it is not implemented.
const FormatKernels& format(dense_type_id type);

// Bytes of n elements of `type`. Throws if n < 0, n is not a multiple of the block size, or overflow.
uint64_t row_bytes(dense_type_id type, int64_t n);

// out[0..n) = exact values of n elements of `type` (bit-exact with the spec).
void dequantize_row(dense_type_id type, const void* blocks, float* out, int64_t n);

// Dot product of n weight elements of `type` with n activation elements in the type's activation
// format (FormatKernels::act_type), computed as in spec section 7 (exact integer block sums).
float vec_dot(dense_type_id type, const void* blocks, const void* act_blocks, int64_t n);

// y[r] = vec_dot(row r, act) for `rows` contiguous rows of `in` elements each (row stride =
// row_bytes(type, in)); `act` holds `in` elements in the activation format.
void gemv(dense_type_id type, const void* weights, int64_t in, int64_t rows, const void* act, float* y);

// The dot product / GEMV of weight `type` against activation format `act_type`, which is either the
// type's own act_type (then the same as vec_dot / gemv) or DENSE_TYPE_Q8_32. Throws
// std::invalid_argument for any other pairing.
float vec_dot_act(dense_type_id type, dense_type_id act_type, const void* blocks, const void* act_blocks, int64_t n);
void gemv_act(dense_type_id type, dense_type_id act_type, const void* weights, int64_t in, int64_t rows,
              const void* act, float* y);

// True if vec_dot_act(type, act_type, ...) is implemented.
bool has_vec_dot(dense_type_id type, dense_type_id act_type) noexcept;

// x[0..n) -> n elements of activation format `act_type` (Q8_K, Q8_0, Q8_32, F32, F16 or BF16):
//   Q8_32: dense-rt's GPU activation format (q8_32.cpp: d = amax/127, q = round-half-away(x/d));
//   Q8_K: the reference quantizer of spec 5 (signed max, negative d, round half to even);
//   Q8_0: the scalar reference quantizer of spec 6 (round half away from zero, fp16 d);
//   F16 / BF16: round to nearest even; F32: copy.
void quantize_activation(dense_type_id act_type, const float* x, void* out, int64_t n);

// The float64 oracle: each row dequantized exactly, then sum_i double(w_i) * double(x_i) in double.
void gemv_f64_reference(dense_type_id type, const void* weights, int64_t in, int64_t rows, const float* x, double* y);

}  // namespace dense::cpuref
