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
