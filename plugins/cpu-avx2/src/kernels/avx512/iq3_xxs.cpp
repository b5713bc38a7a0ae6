// IQ3_XXS x Q8_32 with AVX-512 VNNI (the AVX2 version and the block layout: ../iq3_xxs.cpp). Per pair
// of sub-blocks (64 elements): their sixteen 8-bit indices gather the 64 magnitudes in element order;
// their eight 7-bit sign fields (four in each sub-block's word) become the eight sign bytes by
// parity (parity_signs64), which negate the activation codes they mark (apply_signs64); one vpdpbusd
// then gives the two blocks' partial sums (magnitudes <= 62, unsigned). Scales and float terms as the
// AVX2 version, so the result is bit for bit the same.
#include "kernels/avx512/vnni_common.hpp"
#include "kernels/grid_common.hpp"

#include "dense_quant_tables.h"

namespace dense::cpuavx2 {

using namespace detail;

namespace {

template <Lookup L>
struct Iq3XxsVnni : NoTail {
    static constexpr uint64_t kUnitBytes = 98;
    static DENSE_AVX2_INLINE __m256 terms(const uint8_t* blk, const uint8_t* act, int64_t n, int64_t sb) noexcept {
        const uint8_t* a = q832_codes(act, 8 * sb);
        const __m256i words = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 66));
        const __m256i field_shift = _mm256_setr_epi32(0, 7, 14, 21, 0, 7, 14, 21);
        __m512i d[4];
        // Unrolled: the pieces' sums stay in registers (vnni_common.hpp, reduce_block_pairs).
#pragma GCC unroll 4
        for (int p = 0; p < 4; ++p) {
            const __m512i mags = gather16_u32<L>(dense_iq3xxs_grid, _mm512_cvtepu8_epi32(load16(blk + 2 + 16 * p)));
            // Words 2p (lanes 0-3) and 2p + 1 (lanes 4-7), each shifted to its four fields.
            const __m256i pair = _mm256_permutevar8x32_epi32(words, _mm256_setr_epi32(2 * p, 2 * p, 2 * p, 2 * p, 2 * p + 1,
                                                                                      2 * p + 1, 2 * p + 1, 2 * p + 1));
            const __m256i fields = _mm256_and_si256(_mm256_srlv_epi32(pair, field_shift), _mm256_set1_epi32(127));
            d[p] = _mm512_dpbusd_epi32(_mm512_setzero_si512(), mags, apply_signs64(load64(a + 64 * p), parity_signs64(fields)));
        }
        return iq3_xxs_terms(blk, act, n, sb, reduce_block_pairs(d));
    }
};

}  // namespace

void dot_rows_iq3_xxs_q8_32_vnni512(const RowsArgs& args) { dot_rows<Iq3XxsVnni<Lookup::Split>>(args); }
void dot_rows_iq3_xxs_q8_32_vnni512_gather(const RowsArgs& args) { dot_rows<Iq3XxsVnni<Lookup::Whole>>(args); }

}  // namespace dense::cpuavx2
