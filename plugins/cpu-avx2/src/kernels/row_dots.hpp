// One output row of a GEMV against a Q8_32 activation (dense_abi.h: n int8 codes, then n/32 float
// scales d, then n/32 float s = d * sum of the block's codes), per weight format, one file each.
//
// Every function returns exactly what cpu-ref's vec_dot_<format>_q8_32 returns (plugins/cpu-ref/src/
// kernels/<format>.cpp): the integer sum of each 32-element block is computed with AVX2 (exact), then
// the block's float terms are formed and added to one float accumulator in cpu-ref's order, with the
// same operations (no FMA contraction). So the CPU rows of a row split equal the reference bit for bit.
// Plain functions, compiled with -mavx2 -mf16c: call them only where the CPU has AVX2 and F16C.
#pragma once

#include <cstdint>

namespace dense::cpuavx2 {

using RowDot = float (*)(const uint8_t* row, const uint8_t* act, int64_t n);

float dot_iq4_xs_q8_32(const uint8_t* row, const uint8_t* act, int64_t n);
float dot_iq4_nl_q8_32(const uint8_t* row, const uint8_t* act, int64_t n);
float dot_q2_k_q8_32(const uint8_t* row, const uint8_t* act, int64_t n);
float dot_q3_k_q8_32(const uint8_t* row, const uint8_t* act, int64_t n);
float dot_q4_k_q8_32(const uint8_t* row, const uint8_t* act, int64_t n);
float dot_q5_k_q8_32(const uint8_t* row, const uint8_t* act, int64_t n);
float dot_q6_k_q8_32(const uint8_t* row, const uint8_t* act, int64_t n);
float dot_q8_0_q8_32(const uint8_t* row, const uint8_t* act, int64_t n);

}  // namespace dense::cpuavx2
