// IQ4_XS x Q8_32 (cpu-ref: iq4_xs.cpp). 136-byte blocks of 256: d fp16 @0, scales_h @2, scales_l[4]
// @4, qs[128] @8 (sub-block ib: 16 bytes, element p < 16 the low nibble of byte p, p >= 16 the high
// nibble of byte p - 16), nibbles index kvalues_iq4nl. Per 32-block: a 16-entry byte shuffle turns
// the nibbles into the codebook values, then one signed dot.
#include "kernels/avx2_common.hpp"
#include "kernels/row_dots.hpp"

#include "dense_quant_tables.h"

namespace dense::cpuavx2 {

using namespace detail;

float dot_iq4_xs_q8_32(const uint8_t* row, const uint8_t* act, int64_t n) {
    const __m128i table = _mm_loadu_si128(reinterpret_cast<const __m128i*>(dense_kvalues_iq4nl));
    const __m128i low4 = _mm_set1_epi8(0x0F);
    float sum = 0.0f;
    for (int64_t b = 0; b < n / 32; ++b) {
        const uint8_t* blk = row + (b / 8) * 136;
        const int ib = static_cast<int>(b % 8);
        const __m128i q = load16(blk + 8 + 16 * ib);
        const __m128i lo = _mm_shuffle_epi8(table, _mm_and_si128(q, low4));
        const __m128i hi = _mm_shuffle_epi8(table, _mm_and_si128(_mm_srli_epi16(q, 4), low4));
        const __m256i w = _mm256_set_m128i(hi, lo);
        const int32_t t = hsum(dot_s8_s8(w, load32(q832_codes(act, b))));
        uint16_t scales_h;
        std::memcpy(&scales_h, blk + 2, 2);
        const int ls = (((blk[4 + ib / 2] >> (4 * (ib % 2))) & 15) | (((scales_h >> (2 * ib)) & 3) << 4)) - 32;
        sum += (load_fp16(blk) * q832_d(act, n, b)) * to_f(ls * t);
    }
    return sum;
}

}  // namespace dense::cpuavx2
