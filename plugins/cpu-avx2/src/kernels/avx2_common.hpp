// Shared pieces of the AVX2 row dots (row_dots.hpp). Only for files compiled with -mavx2 -mf16c.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

namespace dense::cpuavx2::detail {

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

// The 6-bit scale and min of sub-block j of Q4_K / Q5_K (spec 3.3).
struct ScaleMin {
    int scale;
    int min;
};
inline ScaleMin k_scale_min(const uint8_t* s12, int j) noexcept {
    if (j < 4) return {s12[j] & 63, s12[j + 4] & 63};
    return {(s12[j + 4] & 0x0F) | ((s12[j - 4] >> 6) << 4), (s12[j + 4] >> 4) | ((s12[j] >> 6) << 4)};
}

}  // namespace dense::cpuavx2::detail
