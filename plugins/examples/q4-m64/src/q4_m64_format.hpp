// example.q4_m64: a 4-bit format with one fp16 scale and one fp16 minimum per 64 elements.
//
//   block (36 bytes, 64 elements):  offset 0  uint16  d   (fp16 scale)
//                                   offset 2  uint16  m   (fp16 minimum)
//                                   offset 4  uint8   qs[32]
//   element e < 32:  q = qs[e] & 0x0F;   element e >= 32:  q = qs[e - 32] >> 4
//   x = fp16(d) * q + fp16(m)            (one multiply, then one add, both in float)
//
// Shared by the pack (dequantize, GEMV, embedding row) and the converter (quantize), so the two can
// never disagree about the layout. Plain C++20, no dependency beyond the standard library.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>

namespace example_q4m64 {

inline constexpr const char* kTypeName = "example.q4_m64";
inline constexpr uint32_t kBlockElements = 64;
inline constexpr uint32_t kBlockBytes = 36;
inline constexpr int kMaxCode = 15;

struct Block {
    uint16_t d;
    uint16_t m;
    uint8_t qs[32];
};
static_assert(sizeof(Block) == kBlockBytes, "block layout must be packed: 2 + 2 + 32 bytes");

// IEEE binary16 -> binary32, exact for every input (subnormals, infinities, NaN).
inline float half_to_float(uint16_t h) noexcept {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1Fu;
    uint32_t mant = h & 0x3FFu;
    uint32_t bits = 0;
    if (exp == 0x1F) {
        bits = sign | 0x7F800000u | (mant << 13);  // inf / NaN
    } else if (exp != 0) {
        bits = sign | ((exp + 112u) << 23) | (mant << 13);  // rebias 15 -> 127
    } else if (mant == 0) {
        bits = sign;  // +-0
    } else {
        // Subnormal half: value = mant * 2^-24; normalise it for binary32.
        uint32_t e = 113;  // exponent of 2^-14 in binary32 bias, before the shifts below
        while ((mant & 0x400u) == 0) {
            mant <<= 1;
            --e;
        }
        bits = sign | (e << 23) | ((mant & 0x3FFu) << 13);
    }
    return std::bit_cast<float>(bits);
}

// binary32 -> binary16, round to nearest even; values beyond the half range become infinity.
inline uint16_t float_to_half(float f) noexcept {
    const uint32_t x = std::bit_cast<uint32_t>(f);
    const uint32_t sign = (x >> 16) & 0x8000u;
    const uint32_t abs = x & 0x7FFFFFFFu;
    if (abs >= 0x7F800000u) return static_cast<uint16_t>(sign | 0x7C00u | (abs > 0x7F800000u ? 0x200u : 0u));
    const int32_t exp = static_cast<int32_t>(abs >> 23) - 127;
    if (exp > 15) return static_cast<uint16_t>(sign | 0x7C00u);
    uint32_t mant = (abs & 0x7FFFFFu) | 0x800000u;  // with the implicit bit
    int shift = 13;                                  // 23 -> 10 mantissa bits for a normal half
    uint32_t half_exp = 0;
    if (exp < -14) {
        shift = 13 + (-14 - exp);  // subnormal half: shift the implicit bit in too
        if (shift > 24) return static_cast<uint16_t>(sign);  // below half the smallest subnormal
    } else {
        half_exp = static_cast<uint32_t>(exp + 15);
        mant &= 0x7FFFFFu;
    }
    const uint32_t lost = mant & ((1u << shift) - 1u);
    const uint32_t halfway = 1u << (shift - 1);
    uint32_t h = (half_exp << 10) | (mant >> shift);
    if (lost > halfway || (lost == halfway && (h & 1u) != 0)) ++h;  // a carry into the exponent is right
    return static_cast<uint16_t>(sign | h);
}

inline int code_of(const Block& b, int e) noexcept {
    return e < 32 ? (b.qs[e] & 0x0F) : (b.qs[e - 32] >> 4);
}

// Dequantizes n_blocks consecutive blocks into out (64 floats each).
inline void dequantize_blocks(const Block* blocks, float* out, int64_t n_blocks) noexcept {
    for (int64_t i = 0; i < n_blocks; ++i) {
        const float d = half_to_float(blocks[i].d);
        const float m = half_to_float(blocks[i].m);
        for (int e = 0; e < 64; ++e) {
            const float scaled = d * static_cast<float>(code_of(blocks[i], e));
            out[i * 64 + e] = scaled + m;
        }
    }
}

// Quantizes 64 floats: m = min, d = (max - min) / 15, codes rounded to nearest against the fp16
// values actually stored (so the rounding of d and m costs no extra error). Throws on NaN/Inf or a
// range fp16 cannot hold.
inline Block quantize_block(const float* x) {
    float lo = x[0], hi = x[0];
    for (int e = 0; e < 64; ++e) {
        if (!std::isfinite(x[e])) throw std::invalid_argument("q4_m64: cannot quantize a NaN or infinity");
        lo = std::min(lo, x[e]);
        hi = std::max(hi, x[e]);
    }
    Block b{};
    b.m = float_to_half(lo);
    b.d = float_to_half((hi - lo) / static_cast<float>(kMaxCode));
    const float m = half_to_float(b.m);
    const float d = half_to_float(b.d);
    if (!std::isfinite(m) || !std::isfinite(d)) throw std::invalid_argument("q4_m64: values beyond the fp16 range");
    for (int e = 0; e < 64; ++e) {
        int q = 0;
        if (d > 0.0f) q = static_cast<int>(std::lround((x[e] - m) / d));
        q = std::clamp(q, 0, kMaxCode);
        const auto code = static_cast<uint8_t>(q);
        if (e < 32)
            b.qs[e] = static_cast<uint8_t>((b.qs[e] & 0xF0) | code);
        else
            b.qs[e - 32] = static_cast<uint8_t>((b.qs[e - 32] & 0x0F) | (code << 4));
    }
    return b;
}

}  // namespace example_q4m64
