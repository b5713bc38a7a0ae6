// IQ3_XXS x Q8_32 (cpu-ref: iq3_xxs.cpp). 98-byte blocks of 256: d fp16 @0, qs[64] @2 (8-bit
// iq3xxs_grid indices, two per group of 8 elements: 4 magnitudes each), one uint32 per sub-block @66
// (four 7-bit sign fields whose parity gives the 8th sign; the 4-bit scale on top, ls = 2 scale + 1).
//
// Per sub-block: one gather of its eight grid entries gives the 32 magnitudes in element order
// (entry k holds elements 4k .. 4k + 3); the four sign fields index ksigns_iq2xs (the 8-bit masks with
// the parity bit) and flip the activation's signs, so an unsigned x signed dot gives the block's integer
// sum exactly (magnitudes <= 62, codes in [-127, 127]: a pair stays far inside int16). The eight
// sub-blocks' sums then sit in the lanes of one vector, and the terms ((d * 0.25) * da) * float(ls * t)
// are formed together (row_group.hpp adds them to each row's sum in block order).
#include "kernels/grid_common.hpp"
#include "kernels/row_group.hpp"

namespace dense::cpuavx2 {

using namespace detail;

namespace {

struct Iq3Xxs : NoTail {
    static constexpr uint64_t kUnitBytes = 98;
    static DENSE_AVX2_INLINE __m256 terms(const uint8_t* blk, const uint8_t* act, int64_t n, int64_t sb) noexcept {
        const uint8_t* a = q832_codes(act, 8 * sb);
        uint32_t words[8];
        std::memcpy(words, blk + 66, 32);
        __m256i dots[8];
        for (int ib = 0; ib < 8; ++ib) {
            const __m256i index = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(blk + 2 + 8 * ib)));
            const __m256i mags = _mm256_i32gather_epi32(reinterpret_cast<const int*>(dense_iq3xxs_grid), index, 4);
            const uint32_t w = words[ib];
            const uint32_t masks = parity_sign_masks(w & 127, (w >> 7) & 127, (w >> 14) & 127, (w >> 21) & 127);
            dots[ib] = dot_u8_s8(mags, apply_sign_masks(load32(a + 32 * ib), masks));
        }
        return iq3_xxs_terms(blk, act, n, sb, hsum8(dots));
    }
};

}  // namespace

void dot_rows_iq3_xxs_q8_32(const RowsArgs& args) { dot_rows<Iq3Xxs>(args); }

}  // namespace dense::cpuavx2
