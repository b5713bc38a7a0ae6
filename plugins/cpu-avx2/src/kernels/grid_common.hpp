// Shared pieces of the grid formats' row dots (IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S): their sign masks, IQ2's
// per-group scales and IQ3's float terms (also used by the AVX-512 kernels). Only for files compiled with -mavx2 -mf16c.
#pragma once

#include "kernels/avx2_common.hpp"

#include "dense_quant_tables.h"

namespace dense::cpuavx2::DENSE_CPUAVX2_DETAIL {

// The 32 activation codes of a grid-format sub-block with the signs of its four 8-bit sign masks
// applied (byte g of `masks` holds elements 8g .. 8g + 7, bit e for element 8g + e): each mask byte
// is spread over its 8 bytes and tested bit by bit, and a code is negated where its bit is set.
// Codes are in [-127, 127] (Q8_32), so the negation never overflows.
inline __m256i apply_sign_masks(__m256i codes, uint32_t masks) noexcept {
    const __m256i spread = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
                                            2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
    const __m256i bits = _mm256_set1_epi64x(static_cast<long long>(0x8040201008040201ull));
    const __m256i set = _mm256_and_si256(_mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(masks)), spread), bits);
    const __m256i negate = _mm256_cmpeq_epi8(set, bits);  // 0xFF where the element's bit is set
    return _mm256_sign_epi8(codes, _mm256_or_si256(negate, _mm256_set1_epi8(1)));  // -1 or +1 per byte
}

// The four 8-bit sign masks of four 7-bit sign fields whose parity gives the 8th sign (IQ2_XS,
// IQ3_XXS: the codebook ksigns_iq2xs), packed as apply_sign_masks takes them.
inline uint32_t parity_sign_masks(uint32_t f0, uint32_t f1, uint32_t f2, uint32_t f3) noexcept {
    return dense_ksigns_iq2xs[f0] | dense_ksigns_iq2xs[f1] << 8 | dense_ksigns_iq2xs[f2] << 16 |
           static_cast<uint32_t>(dense_ksigns_iq2xs[f3]) << 24;
}

// IQ2_XS / IQ2_S: the per-group scales ls = 2 nib + 1 of one sub-block's scale byte, for a dot whose
// lanes 0-3 cover groups 0 and 1 (the low nibble) and lanes 4-7 groups 2 and 3 (the high one).
inline __m256i iq2_lane_scales(uint32_t scale_byte) noexcept {
    return _mm256_blend_epi32(_mm256_set1_epi32(static_cast<int>(2 * (scale_byte & 15) + 1)),
                              _mm256_set1_epi32(static_cast<int>(2 * (scale_byte >> 4) + 1)), 0xF0);
}

// IQ3_S: the eight per-block float terms (d * da) * float(ls * t) of a super-block (d fp16 at blk,
// scales[4] at blk + 106: a nibble per sub-block, ls = 1 + 2 nib) from its eight integer block sums t.
inline __m256 iq3_s_terms(const uint8_t* blk, const uint8_t* act, int64_t n, int64_t sb, __m256i t) noexcept {
    uint32_t scales;
    std::memcpy(&scales, blk + 106, 4);
    const __m256i nib = _mm256_and_si256(
        _mm256_srlv_epi32(_mm256_set1_epi32(static_cast<int>(scales)), _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28)),
        _mm256_set1_epi32(15));
    const __m256i ls = _mm256_add_epi32(_mm256_slli_epi32(nib, 1), _mm256_set1_epi32(1));
    const __m256 dd = _mm256_mul_ps(_mm256_set1_ps(load_fp16(blk)), q832_d8(act, n, sb));
    return _mm256_mul_ps(dd, _mm256_cvtepi32_ps(_mm256_mullo_epi32(ls, t)));
}

// IQ3_XXS: the same from the eight sub-block words at blk + 66 (the 4-bit scale on top, ls = 2 scale
// + 1): ((d * 0.25) * da) * float(ls * t).
inline __m256 iq3_xxs_terms(const uint8_t* blk, const uint8_t* act, int64_t n, int64_t sb, __m256i t) noexcept {
    const __m256i words = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 66));
    const __m256i ls = _mm256_add_epi32(_mm256_slli_epi32(_mm256_srli_epi32(words, 28), 1), _mm256_set1_epi32(1));
    const __m256 dd = _mm256_mul_ps(_mm256_set1_ps(load_fp16(blk) * 0.25f), q832_d8(act, n, sb));
    return _mm256_mul_ps(dd, _mm256_cvtepi32_ps(_mm256_mullo_epi32(ls, t)));
}

}  // namespace dense::cpuavx2::DENSE_CPUAVX2_DETAIL
