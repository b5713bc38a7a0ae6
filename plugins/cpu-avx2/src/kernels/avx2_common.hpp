// Shared pieces of the AVX2 row dots (row_dots.hpp). Only for files compiled with -mavx2 -mf16c.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

// A format's per-unit function is called from row_group.hpp's loop over eight rows; left to itself
// the compiler keeps it a call (one per row and unit), which costs more than the multi-row layout saves.
#define DENSE_AVX2_INLINE inline __attribute__((always_inline))
#define DENSE_AVX2_INLINE_LAMBDA __attribute__((always_inline))

// The helpers below (and those of row_group.hpp, grid_common.hpp, avx512/vnni_common.hpp) are compiled
// into the AVX2 kernel files and into the AVX-512 ones, under different target flags. An inline
// function that a file does not inline is emitted there as a weak symbol, and the linker keeps one
// copy for the whole pack: were the names the same, an AVX2 kernel could end up calling the copy
// built for AVX-512 (which may use EVEX-only instructions) and fault on a CPU without it. So their
// namespace carries the ISA, and so does every mangled name (Highway's HWY_NAMESPACE does the same);
// `detail` names it in the kernel files.
#ifdef __AVX512F__
#define DENSE_CPUAVX2_DETAIL detail_avx512
#else
#define DENSE_CPUAVX2_DETAIL detail_avx2
#endif
namespace dense::cpuavx2 {
namespace DENSE_CPUAVX2_DETAIL {}
namespace detail = DENSE_CPUAVX2_DETAIL;
}  // namespace dense::cpuavx2

namespace dense::cpuavx2::DENSE_CPUAVX2_DETAIL {

// fp16 -> fp32 (exact, as cpu-ref's load_fp16).
inline float load_fp16(const uint8_t* p) noexcept {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return _cvtsh_ss(h);
}

inline float load_f32(const uint8_t* p) noexcept {
    float v;
    std::memcpy(&v, p, 4);
    return v;
}

// The Q8_32 activation's pieces for block b of an n-element vector.
inline const uint8_t* q832_codes(const uint8_t* act, int64_t b) noexcept { return act + 32 * b; }
inline float q832_d(const uint8_t* act, int64_t n, int64_t b) noexcept { return load_f32(act + n + 4 * b); }
inline float q832_s(const uint8_t* act, int64_t n, int64_t b) noexcept { return load_f32(act + n + n / 8 + 4 * b); }

// The eight activation scales d of super-block sb (blocks 8sb..8sb+7) as float lanes.
inline __m256 q832_d8(const uint8_t* act, int64_t n, int64_t sb) noexcept {
    return _mm256_loadu_ps(reinterpret_cast<const float*>(act + n + 32 * sb));
}

inline __m256i load32(const uint8_t* p) noexcept { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
inline __m128i load16(const uint8_t* p) noexcept { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); }

// Per 32-bit lane: the sum of four products of unsigned bytes u and signed bytes s (pairs summed in
// int16 first: exact while each product pair stays within int16, which the callers' ranges ensure).
inline __m256i dot_u8_s8(__m256i u, __m256i s) noexcept {
    return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));
}

// The same for two signed byte vectors: |w| * (a with w's sign). |w| <= 128 and |a| <= 127, so a
// pair stays within 2 * 128 * 127 = 32512.
inline __m256i dot_s8_s8(__m256i w, __m256i a) noexcept { return dot_u8_s8(_mm256_abs_epi8(w), _mm256_sign_epi8(a, w)); }

inline int32_t hsum128(__m128i v) noexcept {
    v = _mm_add_epi32(v, _mm_shuffle_epi32(v, 0x4E));
    v = _mm_add_epi32(v, _mm_shuffle_epi32(v, 0xB1));
    return _mm_cvtsi128_si32(v);
}

inline int32_t hsum(__m256i v) noexcept {
    return hsum128(_mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1)));
}

inline float to_f(int32_t v) noexcept { return static_cast<float>(v); }

// Lane k = the sum of v[k]'s eight lanes: eight horizontal sums in nine instructions.
inline __m256i hsum8(const __m256i v[8]) noexcept {
    const __m256i a01 = _mm256_hadd_epi32(v[0], v[1]), a23 = _mm256_hadd_epi32(v[2], v[3]);
    const __m256i a45 = _mm256_hadd_epi32(v[4], v[5]), a67 = _mm256_hadd_epi32(v[6], v[7]);
    const __m256i b0 = _mm256_hadd_epi32(a01, a23), b1 = _mm256_hadd_epi32(a45, a67);
    return _mm256_add_epi32(_mm256_permute2x128_si256(b0, b1, 0x20), _mm256_permute2x128_si256(b0, b1, 0x31));
}

// sum += terms[0]; sum += terms[1]; ... in lane order: the float additions of cpu-ref's block loop,
// one per 32-element block, in the same order (so the same rounding).
inline float add_in_order(float sum, __m256 terms) noexcept {
    alignas(32) float t[8];
    _mm256_store_ps(t, terms);
    for (float v : t) sum += v;
    return sum;
}

// Transposes an 8 x 8 float matrix held as eight row vectors: afterwards m[j] lane i = the old m[i]
// lane j. Plain data movement (no arithmetic): the values stay bit for bit.
inline void transpose8(__m256 m[8]) noexcept {
    const __m256 t0 = _mm256_unpacklo_ps(m[0], m[1]), t1 = _mm256_unpackhi_ps(m[0], m[1]);
    const __m256 t2 = _mm256_unpacklo_ps(m[2], m[3]), t3 = _mm256_unpackhi_ps(m[2], m[3]);
    const __m256 t4 = _mm256_unpacklo_ps(m[4], m[5]), t5 = _mm256_unpackhi_ps(m[4], m[5]);
    const __m256 t6 = _mm256_unpacklo_ps(m[6], m[7]), t7 = _mm256_unpackhi_ps(m[6], m[7]);
    const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
    const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
    m[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
    m[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
    m[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
    m[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
    m[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
    m[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
    m[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
    m[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

// Formats with sixteen 16-element sub-blocks per super-block (Q2_K, Q3_K, Q6_K): the scale bytes of
// 32-block jj's two halves (sub-blocks 2jj and 2jj + 1) in bytes 0..3 and 4..7, for a dot whose
// lanes 0..3 cover elements 0..15 and lanes 4..7 elements 16..31 (widen with cvtepi8/cvtepu8_epi32).
inline __m128i half_block_scales(__m128i scales16, int jj) noexcept {
    const __m128i pair = _mm_setr_epi8(0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0);
    return _mm_shuffle_epi8(scales16, _mm_add_epi8(pair, _mm_set1_epi8(static_cast<char>(2 * jj))));
}

// The sixteen signed 6-bit scales of a Q3_K super-block as int8 (spec 3.2): scale j = (low4 | high2 << 4)
// - 32, low4 = the low nibble of s[j] (j < 8) or the high nibble of s[j - 8], high2 = bits 2(j / 4)..
// 2(j / 4) + 1 of s[8 + j % 4]. Reads exactly the 12 bytes (the last block of a matrix ends there).
inline __m128i q3_k_scales(const uint8_t* s) noexcept {
    uint32_t tail;
    std::memcpy(&tail, s + 8, 4);
    const __m128i v = _mm_insert_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(s)), static_cast<int>(tail), 2);
    const __m128i m15 = _mm_set1_epi8(0x0F), m3 = _mm_set1_epi8(3);
    const __m128i low4 = _mm_unpacklo_epi64(_mm_and_si128(v, m15), _mm_and_si128(_mm_srli_epi16(v, 4), m15));
    const __m128i hb = _mm_shuffle_epi8(v, _mm_setr_epi8(8, 9, 10, 11, 8, 9, 10, 11, 8, 9, 10, 11, 8, 9, 10, 11));
    // Bytes 4j'..4j'+3 (16-bit words 2j', 2j'+1) take their bits from a shift by 2j'.
    __m128i h = _mm_blend_epi16(hb, _mm_srli_epi16(hb, 2), 0x0C);
    h = _mm_blend_epi16(h, _mm_srli_epi16(hb, 4), 0x30);
    h = _mm_blend_epi16(h, _mm_srli_epi16(hb, 6), 0xC0);
    const __m128i high2 = _mm_slli_epi16(_mm_and_si128(h, m3), 4);
    return _mm_sub_epi8(_mm_or_si128(low4, high2), _mm_set1_epi8(32));
}

// Q2_K: the sixteen 4-bit mins of a super-block (the high nibbles of its scale bytes) as int8.
inline __m128i q2_k_mins(__m128i scale_bytes) noexcept {
    return _mm_and_si128(_mm_srli_epi16(scale_bytes, 4), _mm_set1_epi8(0x0F));
}

// The eight 6-bit scales and mins of a Q4_K / Q5_K super-block (12 bytes at s12, spec 3.3), as
// int32 lanes j = 0..7 (k_scale_min below, for all j at once). Reads 16 bytes from s12 (the block
// continues past the 12).
struct ScalesMins {
    __m256i scales;
    __m256i mins;
};
inline ScalesMins k_scales_mins(const uint8_t* s12) noexcept {
    const __m128i s = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s12));
    const __m128i m63 = _mm_set1_epi8(63), m15 = _mm_set1_epi8(0x0F), m3 = _mm_set1_epi8(3);
    const auto pick = [&](int8_t a0, int8_t a1, int8_t a2, int8_t a3, int8_t a4, int8_t a5, int8_t a6, int8_t a7) {
        return _mm_shuffle_epi8(s, _mm_setr_epi8(a0, a1, a2, a3, a4, a5, a6, a7, -1, -1, -1, -1, -1, -1, -1, -1));
    };
    // High two bits of a byte, moved to bits 4..5: ((b >> 6) & 3) << 4.
    const auto top2 = [&](__m128i b) { return _mm_slli_epi16(_mm_and_si128(_mm_srli_epi16(b, 6), m3), 4); };
    const __m128i lo_sc = _mm_and_si128(pick(0, 1, 2, 3, 8, 9, 10, 11),
                                        _mm_setr_epi8(63, 63, 63, 63, 15, 15, 15, 15, 0, 0, 0, 0, 0, 0, 0, 0));
    const __m128i sc = _mm_or_si128(lo_sc, top2(pick(-1, -1, -1, -1, 0, 1, 2, 3)));
    const __m128i m_src = pick(4, 5, 6, 7, 8, 9, 10, 11);
    const __m128i lo_m = _mm_blend_epi16(_mm_and_si128(m_src, m63),
                                         _mm_and_si128(_mm_srli_epi16(m_src, 4), m15), 0x0C);
    const __m128i mn = _mm_or_si128(lo_m, top2(pick(-1, -1, -1, -1, 4, 5, 6, 7)));
    return {_mm256_cvtepu8_epi32(sc), _mm256_cvtepu8_epi32(mn)};
}

// The 6-bit scale and min of sub-block j of Q4_K / Q5_K (spec 3.3).
struct ScaleMin {
    int scale;
    int min;
};
inline ScaleMin k_scale_min(const uint8_t* s12, int j) noexcept {
    if (j < 4) return {s12[j] & 63, s12[j + 4] & 63};
    return {(s12[j + 4] & 0x0F) | ((s12[j - 4] >> 6) << 4), (s12[j + 4] >> 4) | ((s12[j] >> 6) << 4)};
}

// The eight per-block float terms of a Q4_K / Q5_K super-block (d, dmin fp16 at blk, the scales at
// blk + 4) from its eight integer block sums, each as cpu-ref forms it:
// (d * da) * float(sc * isum) - (dmin * float(m)) * sa.
inline __m256 k_quant_terms(const uint8_t* blk, const uint8_t* act, int64_t n, int64_t sb, __m256i isum) noexcept {
    const ScalesMins sm = k_scales_mins(blk + 4);
    const __m256 da = q832_d8(act, n, sb);
    const __m256 sa = _mm256_loadu_ps(reinterpret_cast<const float*>(act + n + n / 8 + 32 * sb));
    const __m256 x = _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(load_fp16(blk)), da),
                                   _mm256_cvtepi32_ps(_mm256_mullo_epi32(sm.scales, isum)));
    const __m256 y = _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(load_fp16(blk + 2)), _mm256_cvtepi32_ps(sm.mins)), sa);
    return _mm256_sub_ps(x, y);
}

// The eight per-block float terms of an IQ4_XS super-block (d fp16 at blk, scales_h at blk + 2,
// scales_l[4] at blk + 4) from its eight integer block sums t, as cpu-ref forms them:
// (d * da) * float((ls - 32) * t), ls = the low 4 bits from scales_l, the high 2 from scales_h.
inline __m256 iq4_xs_terms(const uint8_t* blk, const uint8_t* act, int64_t n, int64_t sb, __m256i t) noexcept {
    uint32_t scales_l;
    uint16_t scales_h;
    std::memcpy(&scales_l, blk + 4, 4);
    std::memcpy(&scales_h, blk + 2, 2);
    const __m256i lo = _mm256_and_si256(
        _mm256_srlv_epi32(_mm256_set1_epi32(static_cast<int>(scales_l)), _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28)),
        _mm256_set1_epi32(15));
    const __m256i hi = _mm256_and_si256(
        _mm256_srlv_epi32(_mm256_set1_epi32(scales_h), _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14)), _mm256_set1_epi32(3));
    const __m256i ls = _mm256_sub_epi32(_mm256_or_si256(lo, _mm256_slli_epi32(hi, 4)), _mm256_set1_epi32(32));
    const __m256 dd = _mm256_mul_ps(_mm256_set1_ps(load_fp16(blk)), q832_d8(act, n, sb));
    return _mm256_mul_ps(dd, _mm256_cvtepi32_ps(_mm256_mullo_epi32(ls, t)));
}

}  // namespace dense::cpuavx2::DENSE_CPUAVX2_DETAIL
