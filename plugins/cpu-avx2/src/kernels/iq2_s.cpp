// IQ2_S x Q8_32 (cpu-ref: iq2_s.cpp). 82-byte blocks of 256: d fp16 @0, qs[32] @2 (low 8 bits of each
// group's 10-bit iq2s_grid index), signs[32] @34 (one 8-bit mask per group), qh[8] @66 (per
// sub-block: bits 2l, 2l + 1 are group l's index bits 8 and 9), scales[8] @74 (as IQ2_XS: ls = 2 nib
// + 1, the low nibble for groups 0 and 1, the high one for 2 and 3).
//
// As IQ2_XS (iq2_xs.cpp): a gather of the sub-block's four 8-byte grid entries, the sign bytes
// applied to the activation, per-lane ls, the lanes summed; terms ((d * 0.125) * da) * float(isum).
#include "kernels/grid_common.hpp"
#include "kernels/row_group.hpp"

namespace dense::cpuavx2 {

using namespace detail;

namespace {

struct Iq2S : NoTail {
    static constexpr uint64_t kUnitBytes = 82;
    static DENSE_AVX2_INLINE __m256 terms(const uint8_t* blk, const uint8_t* act, int64_t n, int64_t sb) noexcept {
        const uint8_t* a = q832_codes(act, 8 * sb);
        const __m128i high_shift = _mm_setr_epi32(0, 2, 4, 6);
        __m256i dots[8];
        for (int ib = 0; ib < 8; ++ib) {
            uint32_t low_bytes, masks;
            std::memcpy(&low_bytes, blk + 2 + 4 * ib, 4);
            std::memcpy(&masks, blk + 34 + 4 * ib, 4);
            const __m128i low = _mm_cvtepu8_epi32(_mm_cvtsi32_si128(static_cast<int>(low_bytes)));
            const __m128i high = _mm_and_si128(_mm_srlv_epi32(_mm_set1_epi32(blk[66 + ib]), high_shift), _mm_set1_epi32(3));
            const __m128i index = _mm_or_si128(low, _mm_slli_epi32(high, 8));
            const __m256i mags = _mm256_i32gather_epi64(reinterpret_cast<const long long*>(dense_iq2s_grid), index, 8);
            dots[ib] = _mm256_mullo_epi32(dot_u8_s8(mags, apply_sign_masks(load32(a + 32 * ib), masks)),
                                          iq2_lane_scales(blk[74 + ib]));
        }
        const __m256 dd = _mm256_mul_ps(_mm256_set1_ps(load_fp16(blk) * 0.125f), q832_d8(act, n, sb));
        return _mm256_mul_ps(dd, _mm256_cvtepi32_ps(hsum8(dots)));
    }
};

}  // namespace

void dot_rows_iq2_s_q8_32(const RowsArgs& args) { dot_rows<Iq2S>(args); }

}  // namespace dense::cpuavx2
