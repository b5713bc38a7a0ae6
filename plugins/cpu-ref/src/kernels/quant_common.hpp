// Byte-level helpers shared by the per-format kernels (internal to dense_cpuref_kernels).
//
// Every block is read through these little-endian loads instead of packed C structs: the layouts in
// spec/quant-formats.md are given as byte offsets, and reading bytes keeps us free of alignment and
// aliasing questions (blocks inside a GGUF mapping start at arbitrary offsets).
#pragma once

#include "core/half.hpp"

#include <bit>
#include <cstddef>
#include <cstdint>

namespace dense::cpuref::detail {

inline uint16_t load_le16(const uint8_t* p) noexcept {
    return static_cast<uint16_t>(static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8));
}

inline uint32_t load_le32(const uint8_t* p) noexcept {
    return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) | (static_cast<uint32_t>(p[2]) << 16) |
           (static_cast<uint32_t>(p[3]) << 24);
}

inline void store_le16(uint8_t* p, uint16_t v) noexcept {
    p[0] = static_cast<uint8_t>(v & 0xFFu);
    p[1] = static_cast<uint8_t>(v >> 8);
}

inline void store_le32(uint8_t* p, uint32_t v) noexcept {
    for (int k = 0; k < 4; ++k) p[k] = static_cast<uint8_t>((v >> (8 * k)) & 0xFFu);
}

// An fp16 field widened exactly to float (spec section 0).
inline float load_fp16(const uint8_t* p) noexcept {
    return fp16_to_fp32(load_le16(p));
}

inline float load_f32(const uint8_t* p) noexcept {
    return std::bit_cast<float>(load_le32(p));
}

// A stored byte reinterpreted as int8 (two's complement; well defined since C++20).
inline int32_t as_i8(uint8_t b) noexcept {
    return static_cast<int8_t>(b);
}

inline int lo4(uint8_t x) noexcept {
    return x & 0x0F;
}
inline int hi4(uint8_t x) noexcept {
    return x >> 4;
}

// Integers entering the float arithmetic: conversion is exact for everything the decoders produce
// (|v| < 2^24); the dot products convert their int32 block sums the same way llama.cpp does.
inline float to_f(int32_t v) noexcept {
    return static_cast<float>(v);
}

// ---- Q8_K activation block (spec section 5): float32 d, int8 qs[256], int16 bsums[16] ---------
namespace q8k {
inline constexpr std::size_t kBlockBytes = 292;
inline constexpr int kBlockElements = 256;
inline float d(const uint8_t* b) noexcept {
    return load_f32(b);
}
inline int32_t q(const uint8_t* b, int e) noexcept {
    return as_i8(b[4 + e]);
}
inline int32_t bsum(const uint8_t* b, int k) noexcept {
    return static_cast<int16_t>(load_le16(b + 260 + 2 * k));
}
}  // namespace q8k

// ---- Q8_0 block (spec section 2; also the activation of Q8_0 and IQ4_NL): fp16 d, int8 qs[32] ---
namespace q80 {
inline constexpr std::size_t kBlockBytes = 34;
inline constexpr int kBlockElements = 32;
inline float d(const uint8_t* b) noexcept {
    return load_fp16(b);
}
inline int32_t q(const uint8_t* b, int e) noexcept {
    return as_i8(b[2 + e]);
}
}  // namespace q80

// ---- Q8_32 activation (dense_abi.h, DENSE_TYPE_Q8_32): struct-of-arrays over the WHOLE vector of
// n elements: int8 codes[n] @0, float d[n/32] @n, float s[n/32] @n + n/8. Accessors take the vector's
// base and its element count, since the scale arrays sit after all the codes.
namespace q832 {
inline constexpr int kBlockElements = 32;
inline int32_t q(const uint8_t* base, int64_t e) noexcept {
    return as_i8(base[e]);
}
inline float d(const uint8_t* base, int64_t n, int64_t b) noexcept {
    return load_f32(base + n + 4 * b);
}
inline float s(const uint8_t* base, int64_t n, int64_t b) noexcept {
    return load_f32(base + n + n / 8 + 4 * b);
}
// Sum of the codes of elements [e0, e0 + len): the per-16 sums the Q2_K/Q3_K/Q6_K dots need.
inline int32_t code_sum(const uint8_t* base, int64_t e0, int len) noexcept {
    int32_t sum = 0;
    for (int e = 0; e < len; ++e) sum += q(base, e0 + e);
    return sum;
}
}  // namespace q832

// ---- the 6-bit scale/min packing of Q4_K and Q5_K (spec 3.3) -----------------------------------
struct ScaleMin {
    int scale;  // 0..63
    int min;    // 0..63
};

inline ScaleMin k_scale_min(const uint8_t* s12, int j) noexcept {
    if (j < 4) return {s12[j] & 63, s12[j + 4] & 63};
    return {(s12[j + 4] & 0x0F) | ((s12[j - 4] >> 6) << 4), (s12[j + 4] >> 4) | ((s12[j] >> 6) << 4)};
}

// A grid entry's byte j (spec section 0: byte j = (entry >> 8j) & 0xFF).
inline int grid_byte(uint64_t entry, int j) noexcept {
    return static_cast<int>((entry >> (8 * j)) & 0xFFu);
}

// +1.0f or -1.0f for bit j of an 8-bit sign mask; multiplying by it is exact.
inline float sign_of(uint32_t mask, int j) noexcept {
    return ((mask >> j) & 1u) ? -1.0f : 1.0f;
}
inline int32_t isign_of(uint32_t mask, int j) noexcept {
    return ((mask >> j) & 1u) ? -1 : 1;
}

}  // namespace dense::cpuref::detail
