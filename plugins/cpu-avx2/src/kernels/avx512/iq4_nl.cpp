// IQ4_NL x Q8_32 with AVX-512 VNNI (the AVX2 version and the block layout: ../iq4_nl.cpp). Per pair of
// blocks: each block's 16 bytes of nibbles in two 128-bit lanes of one vector (low nibbles, then high
// ones: its 32 elements in order), one 16-entry shuffle per lane turns them into codebook values + 128
// (unsigned), one vpdpbusd against the 64 activation codes, and 128 x each block's activation code
// sum taken off (OffsetActivation), as the IQ4_XS kernel: the AVX2 version's integer sums, then the
// same float terms; the blocks past the last whole unit as the AVX2 version (block32_tails.hpp).
#include "kernels/avx512/vnni_common.hpp"
#include "kernels/block32_tails.hpp"

namespace dense::cpuavx2 {

using namespace detail;

namespace {

struct Iq4NlVnni : Iq4NlTail {
    static constexpr uint64_t kUnitBytes = 8 * 18;
    using Context = OffsetActivation;
    static DENSE_AVX2_INLINE __m256 terms(const Context& c, const uint8_t* unit, int64_t u) noexcept {
        const __m512i table = iq4nl_values_plus128();
        const __m512i shifts = odd_lane_nibble_shifts();
        const __m512i low4 = _mm512_set1_epi8(0x0F);
        const uint8_t* a = q832_codes(c.act(), 8 * u);
        __m512i d[4];
        for (int p = 0; p < 4; ++p) {
            const __m256i first = _mm256_broadcastsi128_si256(load16(unit + 18 * (2 * p) + 2));
            const __m256i second = _mm256_broadcastsi128_si256(load16(unit + 18 * (2 * p + 1) + 2));
            const __m512i q = _mm512_inserti64x4(_mm512_castsi256_si512(first), second, 1);
            const __m512i nib = _mm512_and_si512(_mm512_srlv_epi16(q, shifts), low4);
            d[p] = _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_shuffle_epi8(table, nib), load64(a + 64 * p));
        }
        const __m256i isum = _mm256_sub_epi32(reduce_block_pairs(d), c.bias(u));
        return _mm256_mul_ps(_mm256_mul_ps(block32_scales(unit, 18), q832_d8(c.act(), c.n(), u)), _mm256_cvtepi32_ps(isum));
    }
};

}  // namespace

void dot_rows_iq4_nl_q8_32_vnni512(const RowsArgs& args) { dot_rows<Iq4NlVnni>(args); }

}  // namespace dense::cpuavx2
