// IQ2_S x Q8_32 with AVX-512 VNNI (the AVX2 version and the block layout: ../iq2_s.cpp). Per pair of
// sub-blocks (64 elements): their eight 10-bit indices (qs bytes | two qh bits each << 8) pick the
// eight 8-byte grid entries (scalar loads or one gather, as IQ2_XS) that are the 64 magnitudes in
// element order; the groups' eight sign bytes, as one word, negate the activation codes they mark (apply_signs64); one
// vpdpbusd gives each 4-element lane's sum (magnitudes <= 43, unsigned), multiplied by its group's ls
// (iq2_group_scales). The block sums and the float terms are the AVX2 version's, bit for bit.
#include "kernels/avx512/vnni_common.hpp"

#include "dense_quant_tables.h"

namespace dense::cpuavx2 {

using namespace detail;

namespace {

template <Lookup L>
struct Iq2SVnni : NoTail {
    static constexpr uint64_t kUnitBytes = 82;
    static DENSE_AVX2_INLINE __m256 terms(const uint8_t* blk, const uint8_t* act, int64_t n, int64_t sb) noexcept {
        const uint8_t* a = q832_codes(act, 8 * sb);
        const __m512i ls = iq2_group_scales(blk + 74);
        __m512i d[4];
        // Unrolled: the pieces' sums stay in registers (vnni_common.hpp, reduce_block_pairs).
#pragma GCC unroll 4
        for (int p = 0; p < 4; ++p) {
            uint16_t qh;
            uint64_t signs;
            std::memcpy(&qh, blk + 66 + 2 * p, 2);
            std::memcpy(&signs, blk + 34 + 8 * p, 8);
            // Index k = qs[k] | (bits 2k, 2k + 1 of qh) << 8.
            __m512i mags;
            if constexpr (L == Lookup::Whole) {
                const __m256i qs = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(blk + 2 + 8 * p)));
                const __m256i hi = _mm256_and_si256(
                    _mm256_srlv_epi32(_mm256_set1_epi32(qh), _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14)), _mm256_set1_epi32(3));
                mags = gather8_u64(dense_iq2s_grid, _mm256_or_si256(qs, _mm256_slli_epi32(hi, 8)));
            } else {
                const uint8_t* qs = blk + 2 + 8 * p;
                mags = load8_u64(dense_iq2s_grid, [&](int k) { return qs[k] | ((qh >> (2 * k)) & 3) << 8; });
            }
            d[p] = _mm512_mullo_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), mags, apply_signs64(load64(a + 64 * p), signs)),
                                      sub_block_lanes(ls, p));
        }
        const __m256 dd = _mm256_mul_ps(_mm256_set1_ps(load_fp16(blk) * 0.125f), q832_d8(act, n, sb));
        return _mm256_mul_ps(dd, _mm256_cvtepi32_ps(reduce_block_pairs(d)));
    }
};

}  // namespace

void dot_rows_iq2_s_q8_32_vnni512(const RowsArgs& args) { dot_rows<Iq2SVnni<Lookup::Split>>(args); }
void dot_rows_iq2_s_q8_32_vnni512_gather(const RowsArgs& args) { dot_rows<Iq2SVnni<Lookup::Whole>>(args); }

}  // namespace dense::cpuavx2
