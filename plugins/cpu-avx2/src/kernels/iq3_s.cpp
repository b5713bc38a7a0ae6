// IQ3_S x Q8_32 (cpu-ref: iq3_s.cpp). 110-byte blocks of 256: d fp16 @0, qs[64] @2 (low 8 bits of
// 9-bit iq3s_grid indices, two per group of 8 elements), qh[8] @66 (bit k of qh[ib]: the 9th bit of
// sub-block ib's index k), signs[32] @74 (one 8-bit mask per group), scales[4] @106 (a nibble per
// sub-block, even ib low; ls = 1 + 2 scale).
//
// Per sub-block: the eight 9-bit indices (qs bytes | qh bits << 8) gather the 32 magnitudes in
// element order; the activation's signs are flipped where the groups' sign bytes say
// (apply_sign_masks), so an unsigned x signed dot gives the block's integer sum exactly (magnitudes
// <= 15). Terms (d * da) * float(ls * t) for the eight sub-blocks together.
#include "kernels/grid_common.hpp"
#include "kernels/row_group.hpp"

namespace dense::cpuavx2 {

using namespace detail;

namespace {

struct Iq3S : NoTail {
    static constexpr uint64_t kUnitBytes = 110;
    static DENSE_AVX2_INLINE __m256 terms(const uint8_t* blk, const uint8_t* act, int64_t n, int64_t sb) noexcept {
        const uint8_t* a = q832_codes(act, 8 * sb);
        const __m256i bit_of_k = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        __m256i dots[8];
        for (int ib = 0; ib < 8; ++ib) {
            const __m256i low = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(blk + 2 + 8 * ib)));
            const __m256i high = _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(blk[66 + ib]), bit_of_k), _mm256_set1_epi32(1));
            const __m256i index = _mm256_or_si256(low, _mm256_slli_epi32(high, 8));
            const __m256i mags = _mm256_i32gather_epi32(reinterpret_cast<const int*>(dense_iq3s_grid), index, 4);
            uint32_t sign_bytes;
            std::memcpy(&sign_bytes, blk + 74 + 4 * ib, 4);
            dots[ib] = dot_u8_s8(mags, apply_sign_masks(load32(a + 32 * ib), sign_bytes));
        }
        return iq3_s_terms(blk, act, n, sb, hsum8(dots));
    }
};

}  // namespace

void dot_rows_iq3_s_q8_32(const RowsArgs& args) { dot_rows<Iq3S>(args); }

}  // namespace dense::cpuavx2
