// Per-format kernel functions, one .cpp per format family; formats.cpp puts them in the dispatch
// table. Internal: callers use formats.hpp, which checks the type and the element count first.
//
// Contract shared by all of them: `n` is an element count, a non-negative multiple of the format's
// block size (checked by formats.cpp); blocks are raw little-endian bytes at any alignment.
//   dequantize_<w>(blocks, out, n):  out[0..n) = the exact values of spec/quant-formats.md.
//   vec_dot_<w>_<a>(w, a, n):         sum over the row of weight x activation, computed as in spec
//                                     section 7 (exact integer sums, float scales per block).
//   quantize_<a>(x, out, n):          the reference activation quantizer.
#pragma once

#include <cstdint>

namespace dense::cpuref::detail {

// float_types.cpp: F32 / F16 / BF16 (activation = the same type, see formats.hpp).
void dequantize_f32(const void* blocks, float* out, int64_t n);
void dequantize_f16(const void* blocks, float* out, int64_t n);
void dequantize_bf16(const void* blocks, float* out, int64_t n);
float vec_dot_f32_f32(const void* w, const void* a, int64_t n);
float vec_dot_f16_f16(const void* w, const void* a, int64_t n);
float vec_dot_bf16_bf16(const void* w, const void* a, int64_t n);
void quantize_f32(const float* x, void* out, int64_t n);
void quantize_f16(const float* x, void* out, int64_t n);
void quantize_bf16(const float* x, void* out, int64_t n);

// q8_0.cpp
void dequantize_q8_0(const void* blocks, float* out, int64_t n);
float vec_dot_q8_0_q8_0(const void* w, const void* a, int64_t n);
void quantize_q8_0(const float* x, void* out, int64_t n);

// q8_k.cpp (activation-only format)
void dequantize_q8_k(const void* blocks, float* out, int64_t n);
void quantize_q8_k(const float* x, void* out, int64_t n);

// iq4_nl.cpp
void dequantize_iq4_nl(const void* blocks, float* out, int64_t n);
float vec_dot_iq4_nl_q8_0(const void* w, const void* a, int64_t n);

// K-quants: q2_k.cpp .. q6_k.cpp
void dequantize_q2_k(const void* blocks, float* out, int64_t n);
float vec_dot_q2_k_q8_k(const void* w, const void* a, int64_t n);
void dequantize_q3_k(const void* blocks, float* out, int64_t n);
float vec_dot_q3_k_q8_k(const void* w, const void* a, int64_t n);
void dequantize_q4_k(const void* blocks, float* out, int64_t n);
float vec_dot_q4_k_q8_k(const void* w, const void* a, int64_t n);
void dequantize_q5_k(const void* blocks, float* out, int64_t n);
float vec_dot_q5_k_q8_k(const void* w, const void* a, int64_t n);
void dequantize_q6_k(const void* blocks, float* out, int64_t n);
float vec_dot_q6_k_q8_k(const void* w, const void* a, int64_t n);

// IQ types: iq2_xs.cpp, iq2_s.cpp, iq3_xxs.cpp, iq3_s.cpp, iq4_xs.cpp
void dequantize_iq2_xs(const void* blocks, float* out, int64_t n);
float vec_dot_iq2_xs_q8_k(const void* w, const void* a, int64_t n);
void dequantize_iq2_s(const void* blocks, float* out, int64_t n);
float vec_dot_iq2_s_q8_k(const void* w, const void* a, int64_t n);
void dequantize_iq3_xxs(const void* blocks, float* out, int64_t n);
float vec_dot_iq3_xxs_q8_k(const void* w, const void* a, int64_t n);
void dequantize_iq3_s(const void* blocks, float* out, int64_t n);
float vec_dot_iq3_s_q8_k(const void* w, const void* a, int64_t n);
void dequantize_iq4_xs(const void* blocks, float* out, int64_t n);
float vec_dot_iq4_xs_q8_k(const void* w, const void* a, int64_t n);

// q8_32.cpp (activation-only, dense_abi.h) and, in each weight format's file, its dot product
// against it: one float term per 32-element activation block, summed in block order (the terms are
// written out above each function; the CUDA GEMV kernels compute the same terms bit for bit).
void quantize_q8_32(const float* x, void* out, int64_t n);
void dequantize_q8_32(const void* blocks, float* out, int64_t n);
float vec_dot_q8_0_q8_32(const void* w, const void* a, int64_t n);
float vec_dot_iq4_nl_q8_32(const void* w, const void* a, int64_t n);
float vec_dot_q2_k_q8_32(const void* w, const void* a, int64_t n);
float vec_dot_q3_k_q8_32(const void* w, const void* a, int64_t n);
float vec_dot_q4_k_q8_32(const void* w, const void* a, int64_t n);
float vec_dot_q5_k_q8_32(const void* w, const void* a, int64_t n);
float vec_dot_q6_k_q8_32(const void* w, const void* a, int64_t n);
float vec_dot_iq2_xs_q8_32(const void* w, const void* a, int64_t n);
float vec_dot_iq2_s_q8_32(const void* w, const void* a, int64_t n);
float vec_dot_iq3_xxs_q8_32(const void* w, const void* a, int64_t n);
float vec_dot_iq3_s_q8_32(const void* w, const void* a, int64_t n);
float vec_dot_iq4_xs_q8_32(const void* w, const void* a, int64_t n);

}  // namespace dense::cpuref::detail
