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
// Why the software prefetch: one thread reading rows front to back, with only the hardware
// prefetchers ahead of it, kept too few cache-line misses in flight: the read-bound formats ran at a
// plain sequential read's ~8 GB/s a core, well under what the core can take (docs/perf-notes.md,
// session 46). So while a row's run of units is decoded, the run read next (the next row's, or the
// next pass's, or the next eight rows' first) is prefetched into L1 a few lines per unit, spread over
// the run so the requests stay ahead of the decode without bunching up. Prefetches never fault and
// change no value, so the results stay cpu-ref's bit for bit.
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
#include <vector>

namespace dense::cpuavx2::DENSE_CPUAVX2_DETAIL {

// Prefetches one unit's bytes into L1, a line at a time. Straight-line code on purpose: GCC deleted
// a loop with a run-time trip count whose body was only prefetches (it has no side effects to keep),
// and the result was a silent no-op (session 46).
template <uint64_t kUnitBytes>
DENSE_AVX2_INLINE void prefetch_unit(const uint8_t* unit) noexcept {
#pragma GCC unroll 8
    for (uint64_t offset = 0; offset < kUnitBytes; offset += 64)
        _mm_prefetch(reinterpret_cast<const char*>(unit + offset), _MM_HINT_T0);
}

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
        const auto unit_at = [&](int64_t row, int64_t u) {
            return a.rows + static_cast<uint64_t>(row) * a.stride + static_cast<uint64_t>(u) * Format::kUnitBytes;
        };
        // The first unit of the run read after row i's run of the pass at unit u0 (the loops below, in
        // their order), or nullptr after the last.
        const auto next_run = [&](int i, int64_t u0) -> const uint8_t* {
            if (i + 1 < rows) return unit_at(r + i + 1, u0);
            if (u0 + kPass < units) return unit_at(r, u0 + kPass);
            if (r + 8 < a.count) return unit_at(r + 8, 0);
            return nullptr;
        };
        __m256 sum = _mm256_setzero_ps();
        for (int64_t u0 = 0; u0 < units; u0 += kPass) {
            const int64_t pass = std::min<int64_t>(kPass, units - u0);
            for (int i = 0; i < rows; ++i) {
                const uint8_t* unit = unit_at(r + i, u0);
                // Unit k of the next run while unit k of this one is decoded (a shorter next run's
                // lines past its end are harmless; a longer one's last units are left to the hardware).
                const uint8_t* next = next_run(i, u0);
                for (int64_t k = 0; k < pass; ++k) {
                    if (next != nullptr) prefetch_unit<Format::kUnitBytes>(next + k * Format::kUnitBytes);
                    buf[i][k] = terms(unit + k * Format::kUnitBytes, u0 + k);
                }
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

// Per call, for the formats with sixteen 16-element sub-blocks (Q2_K, Q3_K, Q6_K): Factor times the
// sum of each sub-block's activation codes, sixteen int32 per 256-element unit (also for the AVX-512
// kernels). A kernel that multiplies unsigned codes u where the format's
// signed code is u - Factor takes Factor x sum_k scale_k x (sub-block k's code sum) off each block's
// sum to get the signed dot back, exactly; Q2_K (Factor 1) multiplies it by each sub-block's min.
template <int Factor>
class SubBlockSums {
public:
    SubBlockSums(const uint8_t* act, int64_t n) : act_(act), n_(n), sums_(static_cast<size_t>(n / 16)) {
        const __m256i ones8 = _mm256_set1_epi8(1), ones16 = _mm256_set1_epi16(1);
        for (int64_t i = 0; i < n / 64; ++i) {
            // Four sums of 4 codes per 16: eight per 32 bytes, then adjacent pairs twice.
            const __m256i q0 = _mm256_madd_epi16(_mm256_maddubs_epi16(ones8, load32(act + 64 * i)), ones16);
            const __m256i q1 = _mm256_madd_epi16(_mm256_maddubs_epi16(ones8, load32(act + 64 * i + 32)), ones16);
            // Per 128-bit lane, hadd adds neighbours: e = sums of 8 elements [0-7, 8-15, 32-39, 40-47 |
            // 16-23, 24-31, 48-55, 56-63], then s = sums of 16 [0-15, 32-47, .. | 16-31, 48-63, ..].
            const __m256i e = _mm256_hadd_epi32(q0, q1);
            const __m256i s = _mm256_hadd_epi32(e, e);
            alignas(32) int32_t l[8];
            _mm256_store_si256(reinterpret_cast<__m256i*>(l), s);
            sums_[4 * i + 0] = Factor * l[0];
            sums_[4 * i + 1] = Factor * l[4];
            sums_[4 * i + 2] = Factor * l[1];
            sums_[4 * i + 3] = Factor * l[5];
        }
    }
    const uint8_t* act() const noexcept { return act_; }
    int64_t n() const noexcept { return n_; }
    const int32_t* unit(int64_t u) const noexcept { return sums_.data() + 16 * u; }

private:
    const uint8_t* act_;
    int64_t n_;
    std::vector<int32_t> sums_;
};

// Eight per-block values from sixteen per-sub-block int8 factors f (scales or mins) and a unit's
// sixteen SubBlockSums: lane j = f[2j] * sums[2j] + f[2j + 1] * sums[2j + 1] (exact integers).
inline __m256i sub_block_weighted_sums(__m128i f16, const int32_t* sums) noexcept {
    const __m256i lo = _mm256_mullo_epi32(_mm256_cvtepi8_epi32(f16), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(sums)));
    const __m256i hi = _mm256_mullo_epi32(_mm256_cvtepi8_epi32(_mm_srli_si128(f16, 8)),
                                          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(sums + 8)));
    // hadd pairs within 128-bit lanes: blocks [0, 1, 4, 5 | 2, 3, 6, 7]; the permute puts them in order.
    return _mm256_permute4x64_epi64(_mm256_hadd_epi32(lo, hi), 0xD8);
}

// tail() of the super-block formats: a row is whole 256-element units, nothing is left over.
struct NoTail {
    static float tail(const uint8_t*, const uint8_t*, int64_t, float sum) noexcept { return sum; }
};

}  // namespace dense::cpuavx2::DENSE_CPUAVX2_DETAIL
