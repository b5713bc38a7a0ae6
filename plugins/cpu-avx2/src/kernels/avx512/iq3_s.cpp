// IQ3_S x Q8_32 with AVX-512 VNNI (the AVX2 version and the block layout: ../iq3_s.cpp). Per pair of
// sub-blocks (64 elements): their sixteen 9-bit indices (qs bytes | qh bits << 8) gather the 64
// magnitudes in element order; the groups' eight sign bytes, as one word, negate the activation codes
// they mark (apply_signs64); one vpdpbusd then gives the two blocks' partial sums (magnitudes <= 15,
// unsigned). Scales and float terms as the AVX2 version, so the result is bit for bit the same.
#include "kernels/avx512/vnni_common.hpp"
#include "kernels/grid_common.hpp"

#include "dense_quant_tables.h"

namespace dense::cpuavx2 {

using namespace detail;

namespace {

template <Lookup L>
struct Iq3SVnni : NoTail {
    static constexpr uint64_t kUnitBytes = 110;
    static DENSE_AVX2_INLINE __m256 terms(const uint8_t* blk, const uint8_t* act, int64_t n, int64_t sb) noexcept {
        const uint8_t* a = q832_codes(act, 8 * sb);
        const __m512i bit_of_k = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        __m512i d[4];
        for (int p = 0; p < 4; ++p) {
            const __m512i low = _mm512_cvtepu8_epi32(load16(blk + 2 + 16 * p));
            uint16_t qh;
            uint64_t signs;
            std::memcpy(&qh, blk + 66 + 2 * p, 2);
            std::memcpy(&signs, blk + 74 + 8 * p, 8);
            const __m512i high = _mm512_and_si512(_mm512_srlv_epi32(_mm512_set1_epi32(qh), bit_of_k), _mm512_set1_epi32(1));
            const __m512i mags = gather16_u32<L>(dense_iq3s_grid, _mm512_or_si512(low, _mm512_slli_epi32(high, 8)));
            d[p] = _mm512_dpbusd_epi32(_mm512_setzero_si512(), mags, apply_signs64(load64(a + 64 * p), signs));
        }
        return iq3_s_terms(blk, act, n, sb, reduce_block_pairs(d));
    }
};

}  // namespace

void dot_rows_iq3_s_q8_32_vnni512(const RowsArgs& args) { dot_rows<Iq3SVnni<Lookup::Split>>(args); }
void dot_rows_iq3_s_q8_32_vnni512_gather(const RowsArgs& args) { dot_rows<Iq3SVnni<Lookup::Whole>>(args); }

}  // namespace dense::cpuavx2
