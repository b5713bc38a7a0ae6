// Shared pieces of the AVX-512 VNNI row dots. Only for files compiled with -mavx512f -mavx512bw
// -mavx512vl -mavx512vnni (and the AVX2 flags): call them only where the CPU has all four.
//
// vpdpbusd multiplies unsigned bytes by signed bytes and adds each group of four products to an int32
// lane in one instruction (no int16 step, no saturation: four products of at most 255 * 128 fit), so
// a 64-element piece of a dot costs one instruction instead of AVX2's two per 32 elements.
#pragma once

#include "kernels/row_group.hpp"

#include <vector>

namespace dense::cpuavx2::detail {

inline __m512i load64(const uint8_t* p) noexcept { return _mm512_loadu_si512(p); }

// Four vectors d[p] whose int32 lanes 0..7 are partial sums of 32-element block 2p and lanes 8..15 of
// block 2p + 1 -> lane j = block j's sum (exact integer additions).
DENSE_AVX2_INLINE __m256i reduce_block_pairs(const __m512i d[4]) noexcept {
    // 128-bit lanes [2p, 2p, 2p+1, 2p+1] -> [0, 1, 2, 3] and [4, 5, 6, 7], four partial ints each.
    const __m512i s01 = _mm512_add_epi32(_mm512_shuffle_i64x2(d[0], d[1], _MM_SHUFFLE(2, 0, 2, 0)),
                                         _mm512_shuffle_i64x2(d[0], d[1], _MM_SHUFFLE(3, 1, 3, 1)));
    const __m512i s23 = _mm512_add_epi32(_mm512_shuffle_i64x2(d[2], d[3], _MM_SHUFFLE(2, 0, 2, 0)),
                                         _mm512_shuffle_i64x2(d[2], d[3], _MM_SHUFFLE(3, 1, 3, 1)));
    // Per 128-bit lane k: ints 0 and 1 become the sums of blocks k and k + 4.
    const __m512i u = _mm512_add_epi32(_mm512_unpacklo_epi32(s01, s23), _mm512_unpackhi_epi32(s01, s23));
    const __m512i v = _mm512_add_epi32(u, _mm512_shuffle_epi32(u, _MM_PERM_BADC));
    const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 0, 0, 0, 0, 0, 0, 0, 0);
    return _mm512_castsi512_si256(_mm512_permutexvar_epi32(order, v));
}

// The 32 bytes at p in both 256-bit halves of a vector (a 64-element piece whose two 32-element
// blocks take their bits from the same bytes, each half then shifted its own way).
inline __m512i load32_twice(const uint8_t* p) noexcept { return _mm512_broadcast_i64x4(load32(p)); }

// Shift counts for _mm512_srlv_epi16: every 16-bit word of the low half (bytes 0..31) by `lo`, of the
// high half (bytes 32..63) by `hi`. Each byte's own bits land in its low bits (callers mask), so
// 16-bit shifts serve for bytes.
inline __m512i half_shifts(int lo, int hi) noexcept {
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_set1_epi16(static_cast<short>(lo))),
                              _mm256_set1_epi16(static_cast<short>(hi)), 1);
}

// The formats with sixteen 16-element sub-blocks (Q2_K, Q3_K, Q6_K): for 64-element piece p (blocks
// 2p and 2p + 1), whose vpdpbusd lanes 4k..4k+3 cover sub-block 4p + k, lane i = v[4p + i / 4] of
// the sixteen per-sub-block int32 values v (the scales).
inline __m512i sub_block_lanes(__m512i v, int p) noexcept {
    const __m512i spread = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
    return _mm512_permutexvar_epi32(_mm512_add_epi32(spread, _mm512_set1_epi32(4 * p)), v);
}

// Lane j = v[2j] + v[2j + 1]: sixteen per-sub-block values -> eight per-block values (exact).
inline __m256i sub_block_pair_sums(__m512i v) noexcept { return _mm512_cvtepi64_epi32(_mm512_add_epi32(v, _mm512_srli_epi64(v, 32))); }

// Per call: Factor times the sum of each 16-element sub-block's activation codes, sixteen int32 per
// 256-element unit. A kernel that feeds vpdpbusd unsigned codes u where the format's signed code is
// u - Factor (Q6_K: 32, Q3_K: 4) takes sum_k scale_k * this_k off each block's sum to get the signed
// dot back, exactly; Q2_K (Factor 1) multiplies it by each sub-block's min.
template <int Factor>
class ActivationSixteens {
public:
    ActivationSixteens(const uint8_t* act, int64_t n) : act_(act), n_(n), sums_(static_cast<size_t>(n / 16)) {
        const __m512i ones = _mm512_set1_epi8(1);
        for (int64_t i = 0; i < n / 64; ++i) {
            const __m512i quads = _mm512_dpbusd_epi32(_mm512_setzero_si512(), ones, load64(act + 64 * i));
            const __m256i pairs = sub_block_pair_sums(quads);
            const __m128i sixteens = _mm256_cvtepi64_epi32(_mm256_add_epi32(pairs, _mm256_srli_epi64(pairs, 32)));
            _mm_storeu_si128(reinterpret_cast<__m128i*>(sums_.data() + 4 * i), _mm_mullo_epi32(sixteens, _mm_set1_epi32(Factor)));
        }
    }
    const uint8_t* act() const noexcept { return act_; }
    int64_t n() const noexcept { return n_; }
    // The sixteen sub-blocks of 256-element unit u.
    __m512i sums(int64_t unit) const noexcept { return _mm512_loadu_si512(sums_.data() + 16 * unit); }

private:
    const uint8_t* act_;
    int64_t n_;
    std::vector<int32_t> sums_;
};

// Per call: 128 times the sum of each 32-element block's activation codes, eight blocks (one 256-
// element unit) per vector. A kernel that feeds vpdpbusd its signed weights offset by +128 (so they
// are unsigned) subtracts this from each block's sum to get the signed dot back, exactly.
class OffsetActivation {
public:
    OffsetActivation(const uint8_t* act, int64_t n) : act_(act), n_(n), bias_(static_cast<size_t>(n / 256 * 8)) {
        const __m512i k128 = _mm512_set1_epi8(static_cast<char>(0x80));
        for (int64_t u = 0; u < n / 256; ++u) {
            __m512i d[4];
            for (int p = 0; p < 4; ++p) d[p] = _mm512_dpbusd_epi32(_mm512_setzero_si512(), k128, load64(act + 256 * u + 64 * p));
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(bias_.data() + 8 * u), reduce_block_pairs(d));
        }
    }
    const uint8_t* act() const noexcept { return act_; }
    int64_t n() const noexcept { return n_; }
    __m256i bias(int64_t unit) const noexcept {
        return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bias_.data() + 8 * unit));
    }

private:
    const uint8_t* act_;
    int64_t n_;
    std::vector<int32_t> bias_;  // eight per unit
};

}  // namespace dense::cpuavx2::detail
