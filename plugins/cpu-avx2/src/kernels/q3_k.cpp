// Q3_K x Q8_32 (cpu-ref: q3_k.cpp). 110-byte blocks of 256: hmask[32] @0, qs[64] @32, scales[12] @96
// (sixteen packed signed 6-bit scales), d fp16 @108. For 32-block jj: h = jj / 4, s = jj % 4;
// element l (0..31) has its low 2 bits at bits 2s..2s+1 of qs[32h + l] and its high bit at bit jj of
// hmask[l]; code = low - 4 when that bit is clear, else low (-4..3). The dot takes the unsigned
// low | bit << 2 (code + 4), and each block loses 4 x (scale x activation code sum) of its two
// sub-blocks (SubBlockSums, once per call): the same integer sums. The two 16-element halves have
// their own scales (sub-blocks 2jj and 2jj + 1): the dot's lanes 0..3 are multiplied by one, lanes
// 4..7 by the other, before the lanes are summed (integers: exact). Then the eight blocks' terms
// (d * da) * float(isum) in lanes, added to the row's sum in block order, as cpu-ref does.
#include "kernels/row_group.hpp"

namespace dense::cpuavx2 {

using namespace detail;

namespace {

struct Q3K : NoTail {
    static constexpr uint64_t kUnitBytes = 110;
    using Context = SubBlockSums<4>;
    static DENSE_AVX2_INLINE __m256 terms(const Context& c, const uint8_t* blk, int64_t sb) noexcept {
        const __m256i three = _mm256_set1_epi8(3);
        const __m256i one = _mm256_set1_epi8(1);
        const uint8_t* a = q832_codes(c.act(), 8 * sb);
        const __m128i scales = q3_k_scales(blk + 96);
        const __m256i hmask = load32(blk);
        __m256i dots[8];
        for (int jj = 0; jj < 8; ++jj) {
            const int h = jj / 4, s = jj % 4;
            const __m256i low = _mm256_and_si256(_mm256_srl_epi16(load32(blk + 32 + 32 * h), _mm_cvtsi32_si128(2 * s)), three);
            // Bit jj of each byte (a 16-bit shift by jj <= 7 brings each byte's own bit to its bit 0).
            const __m256i high = _mm256_and_si256(_mm256_srl_epi16(hmask, _mm_cvtsi32_si128(jj)), one);
            // The unsigned code + 4 (0..7).
            const __m256i codes = _mm256_or_si256(low, _mm256_slli_epi16(high, 2));
            const __m256i sc = _mm256_cvtepi8_epi32(half_block_scales(scales, jj));
            dots[jj] = _mm256_mullo_epi32(dot_u8_s8(codes, load32(a + 32 * jj)), sc);
        }
        // Per block: 4 x (its two sub-blocks' scale x activation code sum) off, for the + 4.
        const __m256i isum = _mm256_sub_epi32(hsum8(dots), sub_block_weighted_sums(scales, c.unit(sb)));
        const __m256 dd = _mm256_mul_ps(_mm256_set1_ps(load_fp16(blk + 108)), q832_d8(c.act(), c.n(), sb));
        return _mm256_mul_ps(dd, _mm256_cvtepi32_ps(isum));
    }
};

}  // namespace

void dot_rows_q3_k_q8_32(const RowsArgs& args) { dot_rows<Q3K>(args); }

}  // namespace dense::cpuavx2
