// The rows of a GEMV against a Q8_32 activation (dense_abi.h: n int8 codes, then n/32 float scales d,
// then n/32 float s = d * sum of the block's codes), per weight format, one file each.
//
// Every function writes exactly what cpu-ref's vec_dot_<format>_q8_32 returns for each row (plugins/
// cpu-ref/src/kernels/<format>.cpp): the integer sum of each 32-element block is computed with AVX2
// (exact), then the block's float terms are formed and added to one float accumulator per row in
// cpu-ref's order, with the same operations (no FMA contraction); row_group.hpp does eight rows at a
// time without changing that order. So the CPU rows of a row split equal the reference bit for bit.
// Plain functions, compiled with -mavx2 -mf16c: call them only where the CPU has AVX2 and F16C.
#pragma once

#include <cstdint>

namespace dense::cpuavx2 {

// `count` rows of `stride` bytes from `rows`, against the n-element activation `act`: out[r] = row r
// . act, or out[r] += it when `accumulate`.
struct RowsArgs {
    const uint8_t* rows;
    uint64_t stride;
    int64_t count;
    const uint8_t* act;
    int64_t n;
    float* out;
    bool accumulate;
};

using RowsDot = void (*)(const RowsArgs& args);

void dot_rows_iq4_xs_q8_32(const RowsArgs& args);
void dot_rows_iq4_nl_q8_32(const RowsArgs& args);
void dot_rows_iq3_xxs_q8_32(const RowsArgs& args);
void dot_rows_iq3_s_q8_32(const RowsArgs& args);
void dot_rows_iq2_xs_q8_32(const RowsArgs& args);
void dot_rows_iq2_s_q8_32(const RowsArgs& args);
void dot_rows_q2_k_q8_32(const RowsArgs& args);
void dot_rows_q3_k_q8_32(const RowsArgs& args);
void dot_rows_q4_k_q8_32(const RowsArgs& args);
void dot_rows_q5_k_q8_32(const RowsArgs& args);
void dot_rows_q6_k_q8_32(const RowsArgs& args);
void dot_rows_q8_0_q8_32(const RowsArgs& args);

// The same results with AVX-512 VNNI integer dots (kernels/avx512/), one per format. Compiled with -mavx512f -mavx512bw -mavx512vl -mavx512vnni: call them only
// where the CPU has all four (pack_entry.cpp checks).
void dot_rows_iq4_xs_q8_32_vnni512(const RowsArgs& args);
void dot_rows_q4_k_q8_32_vnni512(const RowsArgs& args);
void dot_rows_q5_k_q8_32_vnni512(const RowsArgs& args);
void dot_rows_q6_k_q8_32_vnni512(const RowsArgs& args);
void dot_rows_q3_k_q8_32_vnni512(const RowsArgs& args);
void dot_rows_q2_k_q8_32_vnni512(const RowsArgs& args);
void dot_rows_iq3_s_q8_32_vnni512(const RowsArgs& args);
void dot_rows_iq3_xxs_q8_32_vnni512(const RowsArgs& args);
void dot_rows_iq2_xs_q8_32_vnni512(const RowsArgs& args);
void dot_rows_iq2_s_q8_32_vnni512(const RowsArgs& args);
void dot_rows_iq4_nl_q8_32_vnni512(const RowsArgs& args);
void dot_rows_q8_0_q8_32_vnni512(const RowsArgs& args);

// The grid formats' VNNI dots with each codebook lookup one whole-vector gather instead of split
// gathers or scalar loads (vnni_common.hpp, Lookup): the same results; which is faster depends on the
// CPU (pack_entry.cpp ranks them).
void dot_rows_iq3_s_q8_32_vnni512_gather(const RowsArgs& args);
void dot_rows_iq3_xxs_q8_32_vnni512_gather(const RowsArgs& args);
void dot_rows_iq2_xs_q8_32_vnni512_gather(const RowsArgs& args);
void dot_rows_iq2_s_q8_32_vnni512_gather(const RowsArgs& args);

}  // namespace dense::cpuavx2
