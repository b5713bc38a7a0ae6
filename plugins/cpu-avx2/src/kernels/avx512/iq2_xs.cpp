// IQ2_XS x Q8_32 with AVX-512 VNNI (the AVX2 version and the block layout: ../iq2_xs.cpp). Per pair of
// sub-blocks (64 elements): their eight 16-bit group words give eight 9-bit indices, whose 8-byte grid
// entries (scalar loads, or one gather on Intel: vnni_common.hpp, Lookup) are the 64 magnitudes in element
// order, and eight 7-bit sign fields, which become the eight sign bytes by parity (parity_signs64) and
// negate the activation codes they mark (apply_signs64); one vpdpbusd gives each 4-element lane's sum
// (magnitudes <= 43, unsigned), multiplied by its group's ls (iq2_group_scales). The block sums and the
// float terms are the AVX2 version's, bit for bit.
#include "kernels/avx512/vnni_common.hpp"

#include "dense_quant_tables.h"

namespace dense::cpuavx2 {

using namespace detail;

namespace {

template <Lookup L>
struct Iq2XsVnni : NoTail {
    static constexpr uint64_t kUnitBytes = 74;
    static DENSE_AVX2_INLINE __m256 terms(const uint8_t* blk, const uint8_t* act, int64_t n, int64_t sb) noexcept {
        const uint8_t* a = q832_codes(act, 8 * sb);
        const __m512i ls = iq2_group_scales(blk + 66);
        __m512i d[4];
        // Unrolled: the pieces' sums stay in registers (vnni_common.hpp, reduce_block_pairs).
#pragma GCC unroll 4
        for (int p = 0; p < 4; ++p) {
            const __m256i groups = _mm256_cvtepu16_epi32(load16(blk + 2 + 16 * p));
            __m512i mags;
            if constexpr (L == Lookup::Whole) {
                mags = gather8_u64(dense_iq2xs_grid, _mm256_and_si256(groups, _mm256_set1_epi32(511)));
            } else {
                uint16_t g[8];
                std::memcpy(g, blk + 2 + 16 * p, 16);
                mags = load8_u64(dense_iq2xs_grid, [&](int k) { return g[k] & 511; });
            }
            const __m512i signed_codes = apply_signs64(load64(a + 64 * p), parity_signs64(_mm256_srli_epi32(groups, 9)));
            d[p] = _mm512_mullo_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), mags, signed_codes), sub_block_lanes(ls, p));
        }
        const __m256 dd = _mm256_mul_ps(_mm256_set1_ps(load_fp16(blk) * 0.125f), q832_d8(act, n, sb));
        return _mm256_mul_ps(dd, _mm256_cvtepi32_ps(reduce_block_pairs(d)));
    }
};

}  // namespace

void dot_rows_iq2_xs_q8_32_vnni512(const RowsArgs& args) { dot_rows<Iq2XsVnni<Lookup::Split>>(args); }
void dot_rows_iq2_xs_q8_32_vnni512_gather(const RowsArgs& args) { dot_rows<Iq2XsVnni<Lookup::Whole>>(args); }

}  // namespace dense::cpuavx2
