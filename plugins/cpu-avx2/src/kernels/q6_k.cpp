// Q6_K x Q8_32 (cpu-ref: q6_k.cpp). 210-byte blocks of 256: ql[128] @0, qh[64] @128, scales[16] (int8)
// @192, d fp16 @208. For 32-block jj: half h = jj / 4, s = jj % 4; element l (0..31) has its low 4 bits
// in ql[64h + l + 32(s & 1)] (low nibble for s < 2, else high) and its high 2 bits at bits 2s..2s+1
// of qh[32h + l]; code = that 6-bit value - 32. The unsigned 6-bit values go into the dot as they are
// (no per-byte sign handling), and each block loses 32 x (scale x activation code sum) of its two
// sub-blocks, computed once per call for the activation (SubBlockSums): the same integer sums,
// session 23, 1.12x on one EPYC core without AVX-512. The two 16-element halves have their own
// scales: the dot's lanes 0..3 (elements 0..15) are multiplied by one and lanes 4..7 by the other
// before the lanes are summed (integers: exact). Then the eight blocks' terms (d * da) * float(isum)
// in lanes, added to the row's sum in block order.
#include "kernels/row_group.hpp"

namespace dense::cpuavx2 {

using namespace detail;

namespace {

struct Q6K : NoTail {
    static constexpr uint64_t kUnitBytes = 210;
    using Context = SubBlockSums<32>;
    static DENSE_AVX2_INLINE __m256 terms(const Context& c, const uint8_t* blk, int64_t sb) noexcept {
        const __m256i low4 = _mm256_set1_epi8(0x0F);
        const __m256i three = _mm256_set1_epi8(3);
        const uint8_t* a = q832_codes(c.act(), 8 * sb);
        const __m128i scales = load16(blk + 192);
        __m256i dots[8];
        for (int jj = 0; jj < 8; ++jj) {
            const int h = jj / 4, s = jj % 4;
            const __m256i ql = load32(blk + 64 * h + 32 * (s & 1));
            const __m256i lo = s < 2 ? _mm256_and_si256(ql, low4) : _mm256_and_si256(_mm256_srli_epi16(ql, 4), low4);
            const __m256i qh = load32(blk + 128 + 32 * h);
            const __m256i hi = _mm256_and_si256(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(2 * s)), three);
            // The unsigned code + 32 (0..63): a pair of products stays within 2 * 63 * 127 (int16).
            const __m256i codes = _mm256_or_si256(lo, _mm256_slli_epi16(hi, 4));
            const __m256i sc = _mm256_cvtepi8_epi32(half_block_scales(scales, jj));
            dots[jj] = _mm256_mullo_epi32(dot_u8_s8(codes, load32(a + 32 * jj)), sc);
        }
        // Per block: 32 x (its two sub-blocks' scale x activation code sum) off, for the + 32.
        const __m256i isum = _mm256_sub_epi32(hsum8(dots), sub_block_weighted_sums(scales, c.unit(sb)));
        const __m256 dd = _mm256_mul_ps(_mm256_set1_ps(load_fp16(blk + 208)), q832_d8(c.act(), c.n(), sb));
        return _mm256_mul_ps(dd, _mm256_cvtepi32_ps(isum));
    }
};

}  // namespace

void dot_rows_q6_k_q8_32(const RowsArgs& args) { dot_rows<Q6K>(args); }

}  // namespace dense::cpuavx2
