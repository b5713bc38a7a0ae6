// Q5_K x Q8_32 with AVX-512 VNNI (the AVX2 version and the block layout: ../q5_k.cpp). Per 64-element
// group g (blocks 2g and 2g + 1): its 32 bytes of nibbles in both halves of one vector, the high half
// shifted down a nibble, masked (as the Q4_K kernel), plus bit 2g (low half) or 2g + 1 (high half) of
// the 32 qh bytes as the 5th bit: the 64 codes (0..31, unsigned) in element order, and one vpdpbusd
// against the 64 activation codes. Scales, mins and float terms as the AVX2 version, so the result is
// bit for bit the same.
#include "kernels/avx512/vnni_common.hpp"

namespace dense::cpuavx2 {

using namespace detail;

namespace {

struct Q5KVnni : NoTail {
    static constexpr uint64_t kUnitBytes = 176;
    static DENSE_AVX2_INLINE __m256 terms(const uint8_t* blk, const uint8_t* act, int64_t n, int64_t sb) noexcept {
        const __m512i low4 = _mm512_set1_epi8(0x0F);
        const __m512i one = _mm512_set1_epi8(1);
        const __m512i qh = load32_twice(blk + 16);
        const uint8_t* a = q832_codes(act, 8 * sb);
        __m512i d[4];
        for (int g = 0; g < 4; ++g) {
            const __m512i nib = _mm512_and_si512(_mm512_srlv_epi16(load32_twice(blk + 48 + 32 * g), half_shifts(0, 4)), low4);
            const __m512i bit = _mm512_and_si512(_mm512_srlv_epi16(qh, half_shifts(2 * g, 2 * g + 1)), one);
            d[g] = _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_or_si512(nib, _mm512_slli_epi16(bit, 4)), load64(a + 64 * g));
        }
        return k_quant_terms(blk, act, n, sb, reduce_block_pairs(d));
    }
};

}  // namespace

void dot_rows_q5_k_q8_32_vnni512(const RowsArgs& args) { dot_rows<Q5KVnni>(args); }

}  // namespace dense::cpuavx2
