// Q2_K x Q8_32 (cpu-ref: q2_k.cpp). 84-byte blocks of 256: scales[16] @0 (low nibble the scale, high
// nibble the min of 16-element sub-block j), qs[64] @16, d fp16 @80, dmin fp16 @82. For 32-block jj:
// h = jj / 4, s = jj % 4; element l (0..31) is bits 2s..2s+1 of qs[32h + l] (0..3). Per block, with
// its two 16-element halves (sub-blocks 2jj, 2jj + 1) in lanes 0..3 and 4..7 of the dots:
//   isum = sc_0 * sum16_0(q * qa) + sc_1 * sum16_1(q * qa),  msum = m_0 * sum16_0(qa) + m_1 * sum16_1(qa)
//   term = (d * da) * float(isum) - (dmin * da) * float(msum)
// formed for the eight blocks in lanes and added to the row's sum in block order, as cpu-ref does.
// The sum16(qa) come once per call (SubBlockSums) and msum from them in two multiplies per super-
// block, instead of a dot of each block against ones (session 23: 1.28x on one EPYC core).
#include "kernels/row_group.hpp"

namespace dense::cpuavx2 {

using namespace detail;

namespace {

struct Q2K : NoTail {
    static constexpr uint64_t kUnitBytes = 84;
    using Context = SubBlockSums<1>;
    static DENSE_AVX2_INLINE __m256 terms(const Context& c, const uint8_t* blk, int64_t sb) noexcept {
        const __m256i three = _mm256_set1_epi8(3);
        const __m256i low4 = _mm256_set1_epi32(0x0F);
        const uint8_t* a = q832_codes(c.act(), 8 * sb);
        const __m128i scales = load16(blk);
        __m256i dots[8];
        for (int jj = 0; jj < 8; ++jj) {
            const int h = jj / 4, s = jj % 4;
            const __m256i codes = _mm256_and_si256(_mm256_srl_epi16(load32(blk + 16 + 32 * h), _mm_cvtsi32_si128(2 * s)), three);
            const __m256i sm = _mm256_cvtepu8_epi32(half_block_scales(scales, jj));
            dots[jj] = _mm256_mullo_epi32(dot_u8_s8(codes, load32(a + 32 * jj)), _mm256_and_si256(sm, low4));
        }
        // msum per block: its two sub-blocks' min x activation code sum (the mins: high nibbles, 0..15).
        const __m256i isum = hsum8(dots), msum = sub_block_weighted_sums(q2_k_mins(scales), c.unit(sb));
        const __m256 da = q832_d8(c.act(), c.n(), sb);
        const __m256 x = _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(load_fp16(blk + 80)), da), _mm256_cvtepi32_ps(isum));
        const __m256 y = _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(load_fp16(blk + 82)), da), _mm256_cvtepi32_ps(msum));
        return _mm256_sub_ps(x, y);
    }
};

}  // namespace

void dot_rows_q2_k_q8_32(const RowsArgs& args) { dot_rows<Q2K>(args); }

}  // namespace dense::cpuavx2
