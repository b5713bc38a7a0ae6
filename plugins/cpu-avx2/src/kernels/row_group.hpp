// The rows of a GEMV call, eight at a time, with each row's float sum formed exactly as cpu-ref forms
// it. Only for files compiled with -mavx2 -mf16c.
//
// Why eight rows: cpu-ref adds one float term per 32-element block to a single accumulator, in block
// order, and we must match it bit for bit. One row at a time, those adds are one long dependency
// chain (8 dependent adds per super-block, 3-4 cycles each) that bounds the row at ~30 cycles per
// super-block however fast the integer work is. So each row's terms (one vector per 256-element unit,
// lane = block) are first written to a small buffer, reading the row front to back as before; then,
// per unit, the eight rows' vectors are transposed so that vector j holds block j of every row (lane
// = row), and `sum += t[j]` for j = 0..7 adds, in every lane, that row's terms in block order: the
// same additions as cpu-ref, eight rows per instruction, off the integer work's critical path.
//
// A format supplies (as a struct of static functions, see iq4_xs.cpp):
//   kUnitBytes                       bytes of one 256-element unit of a row (a super-block, or eight
//                                    32-element blocks)
//   terms(unit, act, n, u) -> __m256 the eight 32-element blocks' float terms of unit u, lane = block
//   tail(row, act, n, sum) -> float  adds the blocks past the last whole unit (n % 256 != 0: the
//                                    32-element formats only) to sum in block order; else returns sum
// or, for kernels that prepare something from the activation once per call (the AVX-512 ones: its
// blocks' code sums), a type `Context` constructed from (act, n) and terms(context, unit, u) instead.
#pragma once

#include "kernels/avx2_common.hpp"
#include "kernels/row_dots.hpp"

#include <algorithm>

namespace dense::cpuavx2::DENSE_CPUAVX2_DETAIL {

template <class Format>
void dot_rows(const RowsArgs& a) noexcept {
    // Units per pass: the buffer (8 rows x kPass vectors, 8 KiB) stays in L1 between the two phases.
    constexpr int64_t kPass = 32;
    const int64_t units = a.n / 256;
    alignas(32) __m256 buf[8][kPass];
    const auto context = [&] {
        if constexpr (requires { typename Format::Context; })
            return typename Format::Context(a.act, a.n);
        else
            return 0;
    }();
    const auto terms = [&](const uint8_t* unit, int64_t u) DENSE_AVX2_INLINE_LAMBDA {
        if constexpr (requires { typename Format::Context; })
            return Format::terms(context, unit, u);
        else
            return Format::terms(unit, a.act, a.n, u);
    };
    for (int64_t r = 0; r < a.count; r += 8) {
        const int rows = static_cast<int>(std::min<int64_t>(8, a.count - r));
        const uint8_t* base = a.rows + static_cast<uint64_t>(r) * a.stride;
        __m256 sum = _mm256_setzero_ps();
        for (int64_t u0 = 0; u0 < units; u0 += kPass) {
            const int64_t pass = std::min<int64_t>(kPass, units - u0);
            for (int i = 0; i < rows; ++i) {
                const uint8_t* unit = base + i * a.stride + static_cast<uint64_t>(u0) * Format::kUnitBytes;
                for (int64_t k = 0; k < pass; ++k) buf[i][k] = terms(unit + k * Format::kUnitBytes, u0 + k);
            }
            for (int i = rows; i < 8; ++i)
                for (int64_t k = 0; k < pass; ++k) buf[i][k] = _mm256_setzero_ps();  // lanes never read back
            for (int64_t k = 0; k < pass; ++k) {
                __m256 t[8] = {buf[0][k], buf[1][k], buf[2][k], buf[3][k], buf[4][k], buf[5][k], buf[6][k], buf[7][k]};
                transpose8(t);
                for (int j = 0; j < 8; ++j) sum = _mm256_add_ps(sum, t[j]);
            }
        }
        alignas(32) float s[8];
        _mm256_store_ps(s, sum);
        for (int i = 0; i < rows; ++i) {
            const float v = Format::tail(base + i * a.stride, a.act, a.n, s[i]);
            a.out[r + i] = a.accumulate ? a.out[r + i] + v : v;
        }
    }
}

// tail() of the super-block formats: a row is whole 256-element units, nothing is left over.
struct NoTail {
    static float tail(const uint8_t*, const uint8_t*, int64_t, float sum) noexcept { return sum; }
};

}  // namespace dense::cpuavx2::DENSE_CPUAVX2_DETAIL
