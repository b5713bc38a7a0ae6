// Q6_K x Q8_32 (cpu-ref: q6_k.cpp). 210-byte blocks of 256: ql[128] @0, qh[64] @128, scales[16] (int8)
// @192, d fp16 @208. For 32-block jj: half h = jj / 4, s = jj % 4; element l (0..31) has its low 4 bits
// in ql[64h + l + 32(s & 1)] (low nibble for s < 2, else high) and its high 2 bits at bits 2s..2s+1
// of qh[32h + l]; code = that 6-bit value - 32. The two 16-element halves have their own scales, so
// the dot's low 128-bit lane (elements 0..15) and high lane (16..31) are summed separately.
#include "kernels/avx2_common.hpp"
#include "kernels/row_dots.hpp"

namespace dense::cpuavx2 {

using namespace detail;

float dot_q6_k_q8_32(const uint8_t* row, const uint8_t* act, int64_t n) {
    const __m256i low4 = _mm256_set1_epi8(0x0F);
    const __m256i three = _mm256_set1_epi8(3);
    const __m256i bias = _mm256_set1_epi8(32);
    float sum = 0.0f;
    for (int64_t b = 0; b < n / 32; ++b) {
        const uint8_t* blk = row + (b / 8) * 210;
        const int jj = static_cast<int>(b % 8), h = jj / 4, s = jj % 4;
        const __m256i ql = load32(blk + 64 * h + 32 * (s & 1));
        const __m256i lo = s < 2 ? _mm256_and_si256(ql, low4) : _mm256_and_si256(_mm256_srli_epi16(ql, 4), low4);
        const __m256i qh = load32(blk + 128 + 32 * h);
        const __m256i hi = _mm256_and_si256(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(2 * s)), three);
        const __m256i codes = _mm256_sub_epi8(_mm256_or_si256(lo, _mm256_slli_epi16(hi, 4)), bias);
        const __m256i p = dot_s8_s8(codes, load32(q832_codes(act, b)));
        const int32_t sub0 = hsum128(_mm256_castsi256_si128(p));
        const int32_t sub1 = hsum128(_mm256_extracti128_si256(p, 1));
        const auto* scales = reinterpret_cast<const int8_t*>(blk + 192);
        const int32_t isum = scales[2 * jj] * sub0 + scales[2 * jj + 1] * sub1;
        sum += (load_fp16(blk + 208) * q832_d(act, n, b)) * to_f(isum);
    }
    return sum;
}

}  // namespace dense::cpuavx2
