// IQ4_XS x Q8_32 (cpu-ref: iq4_xs.cpp). 136-byte blocks of 256: d fp16 @0, scales_h @2, scales_l[4]
// @4, qs[128] @8 (sub-block ib: 16 bytes, element p < 16 the low nibble of byte p, p >= 16 the high
// nibble of byte p - 16), nibbles index kvalues_iq4nl.
//
// Per super-block: per sub-block a 16-entry byte shuffle turns the nibbles into codebook values and
// one signed dot gives eight partial sums; the eight sub-blocks' sums, scales and activation scales
// then sit in the eight lanes of one vector each, so the per-block float terms (d * da) * float(ls *
// t) are formed together (row_group.hpp adds them to each row's sum in block order).
#include "kernels/row_group.hpp"

#include "dense_quant_tables.h"

namespace dense::cpuavx2 {

using namespace detail;

namespace {

struct Iq4Xs : NoTail {
    static constexpr uint64_t kUnitBytes = 136;
    static DENSE_AVX2_INLINE __m256 terms(const uint8_t* blk, const uint8_t* act, int64_t n, int64_t sb) noexcept {
        const __m128i table = _mm_loadu_si128(reinterpret_cast<const __m128i*>(dense_kvalues_iq4nl));
        const __m128i low4 = _mm_set1_epi8(0x0F);
        const uint8_t* a = q832_codes(act, 8 * sb);
        __m256i dots[8];
        for (int ib = 0; ib < 8; ++ib) {
            const __m128i q = load16(blk + 8 + 16 * ib);
            const __m128i lo = _mm_shuffle_epi8(table, _mm_and_si128(q, low4));
            const __m128i hi = _mm_shuffle_epi8(table, _mm_and_si128(_mm_srli_epi16(q, 4), low4));
            dots[ib] = dot_s8_s8(_mm256_set_m128i(hi, lo), load32(a + 32 * ib));
        }
        return iq4_xs_terms(blk, act, n, sb, hsum8(dots));
    }
};

}  // namespace

void dot_rows_iq4_xs_q8_32(const RowsArgs& args) { dot_rows<Iq4Xs>(args); }

}  // namespace dense::cpuavx2
