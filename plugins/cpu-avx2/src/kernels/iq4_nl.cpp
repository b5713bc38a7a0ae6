// IQ4_NL x Q8_32 (cpu-ref: iq4_nl.cpp). 18-byte blocks of 32: d fp16 @0, qs[16] @2 (element e < 16
// the low nibble of byte e, e >= 16 the high nibble of byte e - 16), nibbles index kvalues_iq4nl.
// Per block: a 16-entry byte shuffle turns the nibbles into codebook values, one signed dot gives
// the integer sum, and the term (d * da) * float(isum) is added to the row's sum, as cpu-ref does.
// row_group.hpp takes eight blocks (one 256-element unit) of eight rows at a time; blocks past the
// last whole unit are added one by one (block32_tails.hpp).
#include "kernels/block32_tails.hpp"

namespace dense::cpuavx2 {

using namespace detail;

namespace {

struct Iq4Nl : Iq4NlTail {
    static constexpr uint64_t kUnitBytes = 8 * 18;
    static DENSE_AVX2_INLINE __m256 terms(const uint8_t* unit, const uint8_t* act, int64_t n, int64_t u) noexcept {
        const uint8_t* a = q832_codes(act, 8 * u);
        __m256i dots[8];
        for (int j = 0; j < 8; ++j) dots[j] = dot_s8_s8(iq4_nl_values(unit + 18 * j), load32(a + 32 * j));
        return _mm256_mul_ps(_mm256_mul_ps(block32_scales(unit, 18), q832_d8(act, n, u)), _mm256_cvtepi32_ps(hsum8(dots)));
    }
};

}  // namespace

void dot_rows_iq4_nl_q8_32(const RowsArgs& args) { dot_rows<Iq4Nl>(args); }

}  // namespace dense::cpuavx2
