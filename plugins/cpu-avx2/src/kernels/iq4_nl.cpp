// IQ4_NL x Q8_32 (cpu-ref: iq4_nl.cpp). 18-byte blocks of 32: d fp16 @0, qs[16] @2 (element e < 16
// the low nibble of byte e, e >= 16 the high nibble of byte e - 16), nibbles index kvalues_iq4nl.
// Per block: a 16-entry byte shuffle turns the nibbles into codebook values, one signed dot gives
// the integer sum, and the term (d * da) * float(isum) is added to the row's sum, as cpu-ref does.
#include "kernels/avx2_common.hpp"
#include "kernels/row_dots.hpp"

#include "dense_quant_tables.h"

namespace dense::cpuavx2 {

using namespace detail;

float dot_iq4_nl_q8_32(const uint8_t* row, const uint8_t* act, int64_t n) {
    const __m128i table = _mm_loadu_si128(reinterpret_cast<const __m128i*>(dense_kvalues_iq4nl));
    const __m128i low4 = _mm_set1_epi8(0x0F);
    float sum = 0.0f;
    for (int64_t b = 0; b < n / 32; ++b) {
        const uint8_t* blk = row + 18 * b;
        const __m128i q = load16(blk + 2);
        const __m128i lo = _mm_shuffle_epi8(table, _mm_and_si128(q, low4));
        const __m128i hi = _mm_shuffle_epi8(table, _mm_and_si128(_mm_srli_epi16(q, 4), low4));
        const int32_t isum = hsum(dot_s8_s8(_mm256_set_m128i(hi, lo), load32(q832_codes(act, b))));
        sum += (load_fp16(blk) * q832_d(act, n, b)) * to_f(isum);
    }
    return sum;
}

}  // namespace dense::cpuavx2
