// IQ2_XS x Q8_32 (cpu-ref: iq2_xs.cpp). 74-byte blocks of 256: d fp16 @0, qs[32] uint16 LE @2 (one
// per group of 8 elements: a 9-bit iq2xs_grid index, then 7 sign bits whose parity gives the 8th),
// scales[8] @66 (per sub-block: the low nibble for groups 0 and 1, the high one for 2 and 3; ls = 2
// nib + 1 per group).
//
// Per sub-block: one gather of its four 8-byte grid entries gives the 32 magnitudes in element order;
// the sign fields index ksigns_iq2xs and flip the activation's signs (apply_sign_masks), so an
// unsigned x signed dot gives each 4-element lane's integer sum exactly (magnitudes <= 43). Lanes 0-3
// (groups 0, 1) are multiplied by their ls, lanes 4-7 (groups 2, 3) by theirs, and the lanes summed:
// the block's sum of ls * t over its groups, exact. Terms ((d * 0.125) * da) * float(isum) for the
// eight sub-blocks together.
#include "kernels/grid_common.hpp"
#include "kernels/row_group.hpp"

namespace dense::cpuavx2 {

using namespace detail;

namespace {

struct Iq2Xs : NoTail {
    static constexpr uint64_t kUnitBytes = 74;
    static DENSE_AVX2_INLINE __m256 terms(const uint8_t* blk, const uint8_t* act, int64_t n, int64_t sb) noexcept {
        const uint8_t* a = q832_codes(act, 8 * sb);
        __m256i dots[8];
        for (int ib = 0; ib < 8; ++ib) {
            uint16_t qs[4];
            std::memcpy(qs, blk + 2 + 8 * ib, 8);
            const __m128i index = _mm_and_si128(_mm_cvtepu16_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(qs))),
                                                _mm_set1_epi32(511));
            const __m256i mags = _mm256_i32gather_epi64(reinterpret_cast<const long long*>(dense_iq2xs_grid), index, 8);
            const uint32_t masks = parity_sign_masks(qs[0] >> 9, qs[1] >> 9, qs[2] >> 9, qs[3] >> 9);
            dots[ib] = _mm256_mullo_epi32(dot_u8_s8(mags, apply_sign_masks(load32(a + 32 * ib), masks)),
                                          iq2_lane_scales(blk[66 + ib]));
        }
        const __m256 dd = _mm256_mul_ps(_mm256_set1_ps(load_fp16(blk) * 0.125f), q832_d8(act, n, sb));
        return _mm256_mul_ps(dd, _mm256_cvtepi32_ps(hsum8(dots)));
    }
};

}  // namespace

void dot_rows_iq2_xs_q8_32(const RowsArgs& args) { dot_rows<Iq2Xs>(args); }

}  // namespace dense::cpuavx2
