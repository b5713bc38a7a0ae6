// Shared pieces of the AVX-512 VNNI row dots. Only for files compiled with -mavx512f -mavx512bw
// -mavx512vl -mavx512vnni (and the AVX2 flags): call them only where the CPU has all four.
//
// vpdpbusd multiplies unsigned bytes by signed bytes and adds each group of four products to an int32
// lane in one instruction (no int16 step, no saturation: four products of at most 255 * 128 fit), so
// a 64-element piece of a dot costs one instruction instead of AVX2's two per 32 elements.
#pragma once

#include "kernels/row_group.hpp"

#include "dense_quant_tables.h"

#include <vector>

namespace dense::cpuavx2::DENSE_CPUAVX2_DETAIL {

inline __m512i load64(const uint8_t* p) noexcept { return _mm512_loadu_si512(p); }

// Four vectors d[p] whose int32 lanes 0..7 are partial sums of 32-element block 2p and lanes 8..15 of
// block 2p + 1 -> lane j = block j's sum (exact integer additions). Kernels whose loop over the four
// pieces GCC left rolled kept d[] in a stack array and reloaded it here; `#pragma GCC unroll 4` keeps
// it in registers (one thread of the Intel build machine, session 45: IQ2_XS +6 %, IQ2_S / IQ3_XXS
// +12-15 %, Q2_K / Q3_K ~+20 %; IQ3_S lost ~10 % and stays rolled).
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

// kvalues_iq4nl + 128 (-127..113 -> 1..241) in every 128-bit lane: IQ4_XS / IQ4_NL codes looked up
// by one byte shuffle per lane come out unsigned for vpdpbusd (OffsetActivation takes the 128 off).
inline __m512i iq4nl_values_plus128() noexcept {
    return _mm512_xor_si512(_mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(dense_kvalues_iq4nl))),
                            _mm512_set1_epi8(static_cast<char>(0x80)));
}

// Shift counts for _mm512_srlv_epi16 that leave 128-bit lanes 0 and 2 alone and shift lanes 1 and 3
// down a nibble: 16 bytes of nibbles held twice in lanes (0, 1) and (2, 3) give their low nibbles,
// then their high ones (after a mask), in element order (IQ4_XS, IQ4_NL).
inline __m512i odd_lane_nibble_shifts() noexcept {
    return _mm512_setr_epi64(0, 0, 0x0004000400040004, 0x0004000400040004, 0, 0, 0x0004000400040004, 0x0004000400040004);
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

// The grid formats (IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S): 64 activation codes with the signs of their 64
// elements applied, bit e of `signs` for element e (the groups' eight sign bytes as one little-endian
// word): one masked subtraction from zero. Codes are in [-127, 127] (Q8_32), so it never overflows.
inline __m512i apply_signs64(__m512i codes, uint64_t signs) noexcept {
    return _mm512_mask_sub_epi8(codes, _cvtu64_mask64(signs), _mm512_setzero_si512(), codes);
}

// The eight sign bytes of eight 7-bit sign fields (one per 32-bit lane) whose parity gives the 8th
// sign (IQ2_XS, IQ3_XXS): field | parity << 7, which is ksigns_iq2xs[field], computed instead of
// looked up; byte k of the result is lane k's.
inline uint64_t parity_signs64(__m256i fields) noexcept {
    __m256i parity = _mm256_xor_si256(fields, _mm256_srli_epi32(fields, 4));
    parity = _mm256_xor_si256(parity, _mm256_srli_epi32(parity, 2));
    parity = _mm256_xor_si256(parity, _mm256_srli_epi32(parity, 1));
    const __m256i bytes = _mm256_or_si256(fields, _mm256_slli_epi32(_mm256_and_si256(parity, _mm256_set1_epi32(1)), 7));
    return static_cast<uint64_t>(_mm_cvtsi128_si64(_mm256_cvtepi32_epi8(bytes)));
}

// How the grid formats look their codebook entries up: the fastest way differs by CPU (one thread,
// GB/s of weights, `bench --cpu-rows`). On the AMD Zen 5 build machine of sessions 11-23 one 16-entry
// gather was slower than two of 8 (IQ3_S: 3.3 against 4.0), sixteen scalar loads slower still (2.7),
// and eight scalar loads of IQ2's 8-byte entries beat two 4-entry gathers (IQ2_XS 2.6 -> 3.7): that is
// Lookup::Split. On the Intel Xeon build machine of session 45 one whole-vector gather won for every
// grid format (IQ2_XS 1.9 -> 2.9, IQ2_S 2.3 -> 3.8, IQ3_XXS 3.2 -> 3.7, IQ3_S 4.0 -> 4.4; perf-notes session 45):
// Lookup::Whole. pack_entry.cpp ranks the two impls per CPU vendor; both give the same bits.
enum class Lookup { Split, Whole };

// Sixteen 4-byte grid entries (IQ3_XXS, IQ3_S) in index order.
template <Lookup L>
inline __m512i gather16_u32(const uint32_t* grid, __m512i index) noexcept {
    const int* g = reinterpret_cast<const int*>(grid);
    if constexpr (L == Lookup::Whole) {
        return _mm512_i32gather_epi32(index, g, 4);
    } else {
        return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_i32gather_epi32(g, _mm512_castsi512_si256(index), 4)),
                                  _mm256_i32gather_epi32(g, _mm512_extracti64x4_epi64(index, 1), 4), 1);
    }
}

// Eight 8-byte grid entries (IQ2_XS, IQ2_S) in index order: gather8_u64 (Lookup::Whole) from the
// indices in the int32 lanes of `index`, load8_u64 (Lookup::Split) one scalar load per index(k).
inline __m512i gather8_u64(const uint64_t* grid, __m256i index) noexcept {
    return _mm512_i32gather_epi64(index, reinterpret_cast<const long long*>(grid), 8);
}
template <class Index>
inline __m512i load8_u64(const uint64_t* grid, Index index) noexcept {
    const auto e = [&](int k) { return static_cast<long long>(grid[index(k)]); };
    return _mm512_setr_epi64(e(0), e(1), e(2), e(3), e(4), e(5), e(6), e(7));
}

// IQ2_XS / IQ2_S: the per-group scales ls = 2 nib + 1 of a super-block's eight scale bytes at s8,
// sixteen int32 in the order sub_block_lanes takes them (sub-block k: its low nibble, for groups 0 and
// 1, at 2k; its high one, for groups 2 and 3, at 2k + 1).
inline __m512i iq2_group_scales(const uint8_t* s8) noexcept {
    const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(s8));
    const __m128i low4 = _mm_set1_epi8(0x0F);
    const __m128i nibs = _mm_unpacklo_epi8(_mm_and_si128(bytes, low4), _mm_and_si128(_mm_srli_epi16(bytes, 4), low4));
    return _mm512_add_epi32(_mm512_slli_epi32(_mm512_cvtepu8_epi32(nibs), 1), _mm512_set1_epi32(1));
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

}  // namespace dense::cpuavx2::DENSE_CPUAVX2_DETAIL
