// IQ4_NL x Q8_32 (cpu-ref: iq4_nl.cpp). 18-byte blocks of 32: d fp16 @0, qs[16] @2 (element e < 16
// the low nibble of byte e, e >= 16 the high nibble of byte e - 16), nibbles index kvalues_iq4nl.
// Per block: a 16-entry byte shuffle turns the nibbles into codebook values, one signed dot gives
// the integer sum, and the term (d * da) * float(isum) is added to the row's sum, as cpu-ref does.
// row_group.hpp takes eight blocks (one 256-element unit) of eight rows at a time; blocks past the
// last whole unit are added one by one (tail).
#include "kernels/row_group.hpp"

#include "dense_quant_tables.h"

namespace dense::cpuavx2 {

using namespace detail;

namespace {

// The block's 32 codebook values, elements 0..15 in the low half.
__m256i block_values(const uint8_t* blk) noexcept {
    const __m128i table = _mm_loadu_si128(reinterpret_cast<const __m128i*>(dense_kvalues_iq4nl));
    const __m128i low4 = _mm_set1_epi8(0x0F);
    const __m128i q = load16(blk + 2);
    const __m128i lo = _mm_shuffle_epi8(table, _mm_and_si128(q, low4));
    const __m128i hi = _mm_shuffle_epi8(table, _mm_and_si128(_mm_srli_epi16(q, 4), low4));
    return _mm256_set_m128i(hi, lo);
}

struct Iq4Nl {
    static constexpr uint64_t kUnitBytes = 8 * 18;
    static DENSE_AVX2_INLINE __m256 terms(const uint8_t* unit, const uint8_t* act, int64_t n, int64_t u) noexcept {
        const uint8_t* a = q832_codes(act, 8 * u);
        __m256i dots[8];
        for (int j = 0; j < 8; ++j) dots[j] = dot_s8_s8(block_values(unit + 18 * j), load32(a + 32 * j));
        const __m256 d = _mm256_setr_ps(load_fp16(unit), load_fp16(unit + 18), load_fp16(unit + 36), load_fp16(unit + 54),
                                        load_fp16(unit + 72), load_fp16(unit + 90), load_fp16(unit + 108), load_fp16(unit + 126));
        return _mm256_mul_ps(_mm256_mul_ps(d, q832_d8(act, n, u)), _mm256_cvtepi32_ps(hsum8(dots)));
    }
    static float tail(const uint8_t* row, const uint8_t* act, int64_t n, float sum) noexcept {
        for (int64_t b = n / 256 * 8; b < n / 32; ++b) {
            const uint8_t* blk = row + 18 * b;
            const int32_t isum = hsum(dot_s8_s8(block_values(blk), load32(q832_codes(act, b))));
            sum += (load_fp16(blk) * q832_d(act, n, b)) * to_f(isum);
        }
        return sum;
    }
};

}  // namespace

void dot_rows_iq4_nl_q8_32(const RowsArgs& args) { dot_rows<Iq4Nl>(args); }

}  // namespace dense::cpuavx2
