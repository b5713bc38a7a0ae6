// Building blocks every format decoder uses: little-endian byte loads, exact fp16/bf16 widening,
// and float arithmetic with exactly one IEEE round-to-nearest per operation.
//
// The decode_*.cuh headers compile two ways:
//   - under nvcc as DENSE_DECODE_FN functions (the kernels), with CUDA's __f*_rn
//     intrinsics for the arithmetic;
//   - under a plain C++ compiler as inline host functions, so tests/cuda can run the very same
//     decoding code on the CPU against cpu-ref, without a GPU (tests/cuda/decode_host_test.cpp).
//
// Why the __f*_rn intrinsics: spec/quant-formats.md defines each dequantized value as a chain of
// fp32 operations in a fixed order. nvcc contracts a*b-c into an FMA by default (one rounding
// instead of two), which changes the last bit. The intrinsics are never contracted, so these
// helpers stay bit-exact in any kernel that reuses them, whatever its -fmad setting. (The host
// build relies on x86-64's default of no FMA contraction in ISO C++ mode.)
//
// Blocks are read byte by byte: quant blocks are 18, 34, 74, 82, 98, 110, ... bytes long, so a
// block inside a tensor has no useful alignment.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define DENSE_DECODE_FN __device__ __forceinline__
#define DENSE_DECODE_UNROLL _Pragma("unroll")
#else
#define DENSE_DECODE_FN inline
#define DENSE_DECODE_UNROLL
#endif

namespace dense::cuda::decode {

DENSE_DECODE_FN uint32_t load_u16(const uint8_t* p) {
    return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8);
}

DENSE_DECODE_FN uint32_t load_u32(const uint8_t* p) {
    return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) | (static_cast<uint32_t>(p[2]) << 16) |
           (static_cast<uint32_t>(p[3]) << 24);
}

DENSE_DECODE_FN int32_t as_i8(uint8_t b) { return static_cast<int32_t>(static_cast<int8_t>(b)); }

DENSE_DECODE_FN uint32_t lo4(uint32_t x) { return x & 0x0Fu; }
DENSE_DECODE_FN uint32_t hi4(uint32_t x) { return (x >> 4) & 0x0Fu; }

DENSE_DECODE_FN float bits_to_f32(uint32_t bits) {
#if defined(__CUDA_ARCH__)
    return __uint_as_float(bits);
#else
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
#endif
}

DENSE_DECODE_FN uint32_t f32_to_bits(float f) {
#if defined(__CUDA_ARCH__)
    return __float_as_uint(f);
#else
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    return bits;
#endif
}

// Integers the decoders produce are small (|v| < 2^24), so the conversion is exact.
DENSE_DECODE_FN float to_f(int32_t v) {
#if defined(__CUDA_ARCH__)
    return __int2float_rn(v);
#else
    return static_cast<float>(v);
#endif
}
DENSE_DECODE_FN float to_f(uint32_t v) { return to_f(static_cast<int32_t>(v)); }

// One rounding each, never fused (see the top of this file).
DENSE_DECODE_FN float mul(float a, float b) {
#if defined(__CUDA_ARCH__)
    return __fmul_rn(a, b);
#else
    return a * b;
#endif
}
DENSE_DECODE_FN float sub(float a, float b) {
#if defined(__CUDA_ARCH__)
    return __fsub_rn(a, b);
#else
    return a - b;
#endif
}
DENSE_DECODE_FN float add(float a, float b) {
#if defined(__CUDA_ARCH__)
    return __fadd_rn(a, b);
#else
    return a + b;
#endif
}

// IEEE binary16 bits -> binary32, exact for every input (zeros, subnormals, normals, infinities,
// and NaNs with their payload, as the spec's fp16() says). Integer code, identical on both
// compilers: a subnormal is mant * 2^-24, which float represents exactly.
DENSE_DECODE_FN float fp16_to_f32(uint32_t h) {
    const uint32_t sign = (h & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1Fu;
    const uint32_t mant = h & 0x03FFu;
    if (exp == 0x1Fu) return bits_to_f32(sign | 0x7F800000u | (mant << 13));
    if (exp != 0) return bits_to_f32(sign | ((exp + (127u - 15u)) << 23) | (mant << 13));
    return bits_to_f32(sign | f32_to_bits(mul(to_f(mant), 0x1p-24f)));
}

// bfloat16 bits are the high half of a binary32.
DENSE_DECODE_FN float bf16_to_f32(uint32_t b) { return bits_to_f32(b << 16); }

// An fp16 field at byte p.
DENSE_DECODE_FN float load_fp16(const uint8_t* p) { return fp16_to_f32(load_u16(p)); }

// value * (bit j of an 8-bit sign mask set ? -1 : +1), as the spec writes it.
DENSE_DECODE_FN float apply_sign(float v, uint32_t mask, int j) { return mul(v, ((mask >> j) & 1u) ? -1.0f : 1.0f); }

// Byte j of a packed grid entry (spec section 0).
DENSE_DECODE_FN uint32_t grid_byte(uint64_t entry, int j) { return static_cast<uint32_t>((entry >> (8 * j)) & 0xFFu); }

}  // namespace dense::cuda::decode
