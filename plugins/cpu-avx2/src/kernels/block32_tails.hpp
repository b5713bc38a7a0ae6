// The 32-element formats (IQ4_NL, Q8_0): the blocks of a row past its last whole 256-element unit,
// added one by one in block order (row_group.hpp's tail()), as cpu-ref adds them. Shared by each
// format's AVX2 and AVX-512 kernels (whose units then agree bit for bit too). Only for files compiled
// with -mavx2 -mf16c.
#pragma once

#include "kernels/row_group.hpp"

#include "dense_quant_tables.h"

namespace dense::cpuavx2::DENSE_CPUAVX2_DETAIL {

// An IQ4_NL block's 32 codebook values, elements 0..15 in the low half.
inline __m256i iq4_nl_values(const uint8_t* blk) noexcept {
    const __m128i table = _mm_loadu_si128(reinterpret_cast<const __m128i*>(dense_kvalues_iq4nl));
    const __m128i low4 = _mm_set1_epi8(0x0F);
    const __m128i q = load16(blk + 2);
    const __m128i lo = _mm_shuffle_epi8(table, _mm_and_si128(q, low4));
    const __m128i hi = _mm_shuffle_epi8(table, _mm_and_si128(_mm_srli_epi16(q, 4), low4));
    return _mm256_set_m128i(hi, lo);
}

struct Iq4NlTail {
    static float tail(const uint8_t* row, const uint8_t* act, int64_t n, float sum) noexcept {
        for (int64_t b = n / 256 * 8; b < n / 32; ++b) {
            const uint8_t* blk = row + 18 * b;
            const int32_t isum = hsum(dot_s8_s8(iq4_nl_values(blk), load32(q832_codes(act, b))));
            sum += (load_fp16(blk) * q832_d(act, n, b)) * to_f(isum);
        }
        return sum;
    }
};

struct Q80Tail {
    static float tail(const uint8_t* row, const uint8_t* act, int64_t n, float sum) noexcept {
        for (int64_t b = n / 256 * 8; b < n / 32; ++b) {
            const uint8_t* blk = row + 34 * b;
            const int32_t isum = hsum(dot_s8_s8(load32(blk + 2), load32(q832_codes(act, b))));
            sum += (load_fp16(blk) * q832_d(act, n, b)) * to_f(isum);
        }
        return sum;
    }
};

// The fp16 scales d of a unit's eight blocks of `block_bytes` (d at each block's start), as lanes.
inline __m256 block32_scales(const uint8_t* unit, int block_bytes) noexcept {
    const int s = block_bytes;
    return _mm256_setr_ps(load_fp16(unit), load_fp16(unit + s), load_fp16(unit + 2 * s), load_fp16(unit + 3 * s),
                          load_fp16(unit + 4 * s), load_fp16(unit + 5 * s), load_fp16(unit + 6 * s), load_fp16(unit + 7 * s));
}

}  // namespace dense::cpuavx2::DENSE_CPUAVX2_DETAIL
