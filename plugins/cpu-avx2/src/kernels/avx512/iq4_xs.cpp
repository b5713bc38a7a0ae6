// IQ4_XS x Q8_32 with AVX-512 VNNI (the AVX2 version and the block layout: ../iq4_xs.cpp). Per pair of
// sub-blocks: their 32 bytes of nibbles spread over a 64-byte vector in element order (low nibbles of
// sub-block 2p, its high nibbles, the same for 2p + 1), one 16-entry shuffle per 128-bit lane turns
// them into codebook values + 128 (unsigned), and one vpdpbusd against the 64 activation codes gives
// the partial sums; the +128 comes off each block's sum (OffsetActivation). Scales and float terms as
// the AVX2 version, so the result is bit for bit the same.
#include "kernels/avx512/vnni_common.hpp"

#include "dense_quant_tables.h"

namespace dense::cpuavx2 {

using namespace detail;

namespace {

struct Iq4XsVnni : NoTail {
    static constexpr uint64_t kUnitBytes = 136;
    using Context = OffsetActivation;
    static DENSE_AVX2_INLINE __m256 terms(const Context& c, const uint8_t* blk, int64_t sb) noexcept {
        const __m512i table = iq4nl_values_plus128();
        const __m512i spread = _mm512_setr_epi64(0, 1, 0, 1, 2, 3, 2, 3);
        const __m512i shifts = odd_lane_nibble_shifts();
        const __m512i low4 = _mm512_set1_epi8(0x0F);
        const uint8_t* a = q832_codes(c.act(), 8 * sb);
        __m512i d[4];
        for (int p = 0; p < 4; ++p) {
            const __m512i q = _mm512_permutexvar_epi64(spread, _mm512_castsi256_si512(load32(blk + 8 + 32 * p)));
            const __m512i nib = _mm512_and_si512(_mm512_srlv_epi16(q, shifts), low4);
            d[p] = _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_shuffle_epi8(table, nib), load64(a + 64 * p));
        }
        return iq4_xs_terms(blk, c.act(), c.n(), sb, _mm256_sub_epi32(reduce_block_pairs(d), c.bias(sb)));
    }
};

}  // namespace

void dot_rows_iq4_xs_q8_32_vnni512(const RowsArgs& args) { dot_rows<Iq4XsVnni>(args); }

}  // namespace dense::cpuavx2
