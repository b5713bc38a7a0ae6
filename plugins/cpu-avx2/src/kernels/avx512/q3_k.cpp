// Q3_K x Q8_32 with AVX-512 VNNI (the AVX2 version and the block layout: ../q3_k.cpp). Per 64-element
// piece p (blocks 2p and 2p + 1, both in half h = p / 2): qs[32h..32h+31] in both halves of a vector,
// shifted by 4(p % 2) and 4(p % 2) + 2, gives the low 2 bits, and hmask in both halves, shifted by
// 2p and 2p + 1, the high bit: the unsigned codes u = code + 4 (0..7) in element order, and one
// vpdpbusd against the 64 activation codes. Each lane (four elements of one 16-element sub-block) is
// multiplied by its sub-block's scale, and each block's sum loses 4 x (scale x activation code sum) of
// its two sub-blocks (SubBlockSums): the block sums of the AVX2 version (exact integers), then
// the same float terms.
#include "kernels/avx512/vnni_common.hpp"

namespace dense::cpuavx2 {

using namespace detail;

namespace {

struct Q3KVnni : NoTail {
    static constexpr uint64_t kUnitBytes = 110;
    using Context = SubBlockSums<4>;
    static DENSE_AVX2_INLINE __m256 terms(const Context& c, const uint8_t* blk, int64_t sb) noexcept {
        const __m512i three = _mm512_set1_epi8(3);
        const __m512i one = _mm512_set1_epi8(1);
        const __m128i scale_bytes = q3_k_scales(blk + 96);
        const __m512i scales = _mm512_cvtepi8_epi32(scale_bytes);
        const __m512i hmask = load32_twice(blk);
        const uint8_t* a = q832_codes(c.act(), 8 * sb);
        __m512i d[4];
        // Unrolled: the pieces' sums stay in registers (vnni_common.hpp, reduce_block_pairs).
#pragma GCC unroll 4
        for (int p = 0; p < 4; ++p) {
            const int h = p / 2, odd = p % 2;
            const __m512i low = _mm512_and_si512(_mm512_srlv_epi16(load32_twice(blk + 32 + 32 * h), half_shifts(4 * odd, 4 * odd + 2)), three);
            const __m512i high = _mm512_and_si512(_mm512_srlv_epi16(hmask, half_shifts(2 * p, 2 * p + 1)), one);
            const __m512i u = _mm512_or_si512(low, _mm512_slli_epi16(high, 2));
            d[p] = _mm512_mullo_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), u, load64(a + 64 * p)), sub_block_lanes(scales, p));
        }
        const __m256 dd = _mm256_mul_ps(_mm256_set1_ps(load_fp16(blk + 108)), q832_d8(c.act(), c.n(), sb));
        const __m256i offset = sub_block_weighted_sums(scale_bytes, c.unit(sb));
        return _mm256_mul_ps(dd, _mm256_cvtepi32_ps(_mm256_sub_epi32(reduce_block_pairs(d), offset)));
    }
};

}  // namespace

void dot_rows_q3_k_q8_32_vnni512(const RowsArgs& args) { dot_rows<Q3KVnni>(args); }

}  // namespace dense::cpuavx2
