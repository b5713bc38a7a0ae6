// Shared pieces of the GEMV tests (gemv_host_test.cpp, gemv_gpu_test.cpp): the Q8_32 activation as
// bytes, cpu-ref's per-block terms, and the float summation-order bound between two sums of the same
// terms.
#pragma once

#include "cpu-ref/quant_test_support.hpp"

#include <cmath>
#include <cstring>
#include <vector>

namespace dense::test::cuda {

// A Q8_32 vector: codes[n], d[n/32], s[n/32] (dense_abi.h).
struct Q832 {
    int64_t n = 0;
    std::vector<uint8_t> bytes;
};

inline Q832 quantize_q8_32(const std::vector<float>& x) {
    Q832 a;
    a.n = static_cast<int64_t>(x.size());
    a.bytes.resize(quant::act_bytes(DENSE_TYPE_Q8_32, a.n));
    cpuref::quantize_activation(DENSE_TYPE_Q8_32, x.data(), a.bytes.data(), a.n);
    return a;
}

// A Q8_32 vector of `len` elements (one weight block's worth) equal to `act` on activation block
// `b` (placed at block `slot`) and zero everywhere else: codes 0, d = s = 0.
inline Q832 isolate_block(const Q832& act, int64_t b, int len, int slot) {
    Q832 one;
    one.n = len;
    one.bytes.assign(quant::act_bytes(DENSE_TYPE_Q8_32, len), 0);
    std::memcpy(one.bytes.data() + 32 * slot, act.bytes.data() + 32 * b, 32);
    std::memcpy(one.bytes.data() + len + 4 * slot, act.bytes.data() + act.n + 4 * b, 4);
    std::memcpy(one.bytes.data() + len + len / 8 + 4 * slot, act.bytes.data() + act.n + act.n / 8 + 4 * b, 4);
    return one;
}

// The term of activation block b of a weight row as cpu-ref computes it: vec_dot_act over the one
// weight block holding b against an activation that is zero except on b. cpu-ref adds that weight
// block's terms to 0.0f in order; the others are exactly +-0 (d = 0, integer sums 0), so the sum is
// the term itself, up to the sign of a zero.
inline float cpuref_term(const cpuref::FormatKernels& f, const uint8_t* row, const Q832& act, int64_t b) {
    const int per_block = static_cast<int>(f.block_elements / 32);
    const uint8_t* block = row + (b / per_block) * f.block_bytes;
    const Q832 one = isolate_block(act, b, static_cast<int>(f.block_elements), static_cast<int>(b % per_block));
    return cpuref::vec_dot_act(f.type, DENSE_TYPE_Q8_32, block, one.bytes.data(), f.block_elements);
}

// sum_b |term_b| of one row.
inline double abs_term_sum(const cpuref::FormatKernels& f, const uint8_t* row, const Q832& act) {
    double s = 0.0;
    for (int64_t b = 0; b < act.n / 32; ++b) s += std::fabs(static_cast<double>(cpuref_term(f, row, act, b)));
    return s;
}

// The summation-order bound. GPU and cpu-ref add the same n bit-identical terms T_b in different
// orders. A sum in which every term passes through at most m floating-point additions satisfies
// |fl(sum) - sum| <= gamma_m * sum |T_b|, gamma_m = m u / (1 - m u), u = 2^-24 (Higham, Accuracy
// and Stability of Numerical Algorithms, section 4.2). cpu-ref adds in block order starting from
// 0.0f: m = n. The kernel (gemv_kernel.cuh): at most 2 * ceil(steps / ks) additions in a lane, 2 in
// the shuffle tree, ks - 1 across K slices (2 for a streamed matrix's tree of 4); ks <= 8, so
// m <= 2 * steps + 9 covers every split. So
//   |gpu - cpu| <= (gamma_n + gamma_(2 steps + 9)) * sum |T_b|.
inline double gamma_bound(double m) {
    const double u = 0x1p-24;
    return m * u / (1.0 - m * u);
}
inline double order_bound(int64_t in, double abs_sum) {
    const auto n = static_cast<double>(in / 32);
    const auto steps = static_cast<double>((in + 255) / 256);
    return (gamma_bound(n) + gamma_bound(2.0 * steps + 9.0)) * abs_sum;
}

}  // namespace dense::test::cuda
