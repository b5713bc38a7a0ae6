// Q2_K x Q8_32 with AVX-512 VNNI (the AVX2 version and the block layout: ../q2_k.cpp). Per 64-element
// piece p (blocks 2p and 2p + 1, both in half h = p / 2): qs[32h..32h+31] in both halves of a vector,
// shifted by 4(p % 2) and 4(p % 2) + 2 and masked, gives the 64 codes (0..3, unsigned) in element
// order, and one vpdpbusd against the 64 activation codes. Each lane (four elements of one 16-element
// sub-block) is multiplied by its sub-block's scale, and each sub-block's activation code sum
// (SubBlockSums) by its min: the same isum and msum per block as the AVX2 version (exact
// integers), then the same float terms.
#include "kernels/avx512/vnni_common.hpp"

namespace dense::cpuavx2 {

using namespace detail;

namespace {

struct Q2KVnni : NoTail {
    static constexpr uint64_t kUnitBytes = 84;
    using Context = SubBlockSums<1>;
    static DENSE_AVX2_INLINE __m256 terms(const Context& c, const uint8_t* blk, int64_t sb) noexcept {
        const __m512i three = _mm512_set1_epi8(3);
        const __m128i scale_bytes = load16(blk);
        const __m512i scales = _mm512_and_si512(_mm512_cvtepu8_epi32(scale_bytes), _mm512_set1_epi32(0x0F));
        const uint8_t* a = q832_codes(c.act(), 8 * sb);
        __m512i d[4];
        // Unrolled: the pieces' sums stay in registers (vnni_common.hpp, reduce_block_pairs).
#pragma GCC unroll 4
        for (int p = 0; p < 4; ++p) {
            const int h = p / 2, odd = p % 2;
            const __m512i codes = _mm512_and_si512(_mm512_srlv_epi16(load32_twice(blk + 16 + 32 * h), half_shifts(4 * odd, 4 * odd + 2)), three);
            d[p] = _mm512_mullo_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), codes, load64(a + 64 * p)), sub_block_lanes(scales, p));
        }
        const __m256 da = q832_d8(c.act(), c.n(), sb);
        const __m256 x = _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(load_fp16(blk + 80)), da), _mm256_cvtepi32_ps(reduce_block_pairs(d)));
        const __m256 y = _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(load_fp16(blk + 82)), da), _mm256_cvtepi32_ps(sub_block_weighted_sums(q2_k_mins(scale_bytes), c.unit(sb))));
        return _mm256_sub_ps(x, y);
    }
};

}  // namespace

void dot_rows_q2_k_q8_32_vnni512(const RowsArgs& args) { dot_rows<Q2KVnni>(args); }

}  // namespace dense::cpuavx2
