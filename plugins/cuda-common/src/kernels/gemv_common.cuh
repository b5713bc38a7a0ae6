// Building blocks of the quantized GEMV against the Q8_32 activation (dense_abi.h), shared by every
// format's dot-product code (gemv_dot_*.cuh). Like decode_common.cuh, everything here compiles two
// ways: under nvcc as device code (dp4a, funnel shifts, byte permutes, shared-memory loads) and under
// a plain C++ compiler as host code with the same integer results, so tests/cuda/gemv_host_test.cpp
// runs the very same per-format code on the CPU against cpu-ref, bit for bit.
//
// The arithmetic contract (what makes the GPU agree with cpu-ref's vec_dot_*_q8_32):
//   - per 32-element activation block the weight format defines ONE float term (written above each
//     cpu-ref vec_dot_*_q8_32) from exact integer sums and fp32 products, each rounded once;
//   - the kernels compute each term bit for bit like cpu-ref (mul/sub/add below are never fused);
//   - only the order in which the terms of a row are added differs (cpu-ref: block order; GPU: per
//     lane, then a fixed shuffle tree, then the K-split warps in order). So GPU and cpu-ref differ
//     by float summation order alone, and the GPU result is deterministic run to run.
#pragma once

#include "decode_common.cuh"

// Two flavours of this code. CUDA's __dp4a and __funnelshift_r are `asm volatile` statements, across
// which the compiler neither merges nor moves loads. For the GEMV that is what it was tuned with; the
// GEMM (gemm_launch.cuh, its own gemm_*.cu files) defines DENSE_GEMV_PURE_ASM = 1 before any include
// and gets dp4a / funnel_r as plain asm (the same instructions, pure register arithmetic), so that
// the C inlined units of its columns share the weight loads and decoding of a step. Plain asm in
// the GEMV itself changes its sm_120 code, hence the two flavours. Everything of the pure flavour
// (these helpers, the Dots, the kernel) lives in the inline namespace pure_asm: the two never meet
// under one name, in one translation unit or across two.
#ifndef DENSE_GEMV_PURE_ASM
#define DENSE_GEMV_PURE_ASM 0
#endif
#if DENSE_GEMV_PURE_ASM
#define DENSE_GEMV_FLAVOR_BEGIN inline namespace pure_asm {
#define DENSE_GEMV_FLAVOR_END }
#else
#define DENSE_GEMV_FLAVOR_BEGIN
#define DENSE_GEMV_FLAVOR_END
#endif

#if defined(__CUDACC__)
#include <cuda_fp16.h>
#endif

#include <cstdint>
#include <cstring>
#include <type_traits>

// constexpr helpers that device code calls (as template arguments, say) must be host+device.
#if defined(__CUDACC__)
#define DENSE_GEMV_CONSTEXPR __host__ __device__ constexpr
#else
#define DENSE_GEMV_CONSTEXPR constexpr
#endif

namespace dense::cuda::gemv {
DENSE_GEMV_FLAVOR_BEGIN

using decode::add;
using decode::mul;
using decode::sub;
using decode::to_f;

// Elements per "step": one 256-element super-block, or eight 32-element blocks of Q8_0 / IQ4_NL.
// Each of the 4 lanes of a row handles one 64-element "unit" (two activation blocks) of a step.
inline constexpr int kStepElems = 256;
inline constexpr int kUnitsPerStep = 4;
inline constexpr int kRowsPerWarp = 8;  // 32 lanes = 8 rows x 4 units

// The fp16 bits h widened to float: on the device by the conversion instruction, on the host by
// decode::fp16_to_f32; both are exact for every finite or infinite input (NaN payloads may differ,
// which no GEMV result can show: a NaN scale makes its terms NaN either way).
DENSE_DECODE_FN float half_to_float(uint32_t h) {
#if defined(__CUDA_ARCH__)
    return __half2float(__ushort_as_half(static_cast<unsigned short>(h & 0xFFFFu)));
#else
    return decode::fp16_to_f32(h & 0xFFFFu);
#endif
}

// sum_k int8(a.byte k) * int8(b.byte k) + c (plain asm in the GEMM's flavor, see the top)
DENSE_DECODE_FN int32_t dp4a(uint32_t a, uint32_t b, int32_t c) {
#if defined(__CUDA_ARCH__) && DENSE_GEMV_PURE_ASM
    int32_t r;
    asm("dp4a.s32.s32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    return r;
#elif defined(__CUDA_ARCH__)
    return __dp4a(static_cast<int>(a), static_cast<int>(b), c);
#else
    int32_t s = c;
    for (int k = 0; k < 4; ++k)
        s += static_cast<int32_t>(static_cast<int8_t>((a >> (8 * k)) & 0xFFu)) *
             static_cast<int32_t>(static_cast<int8_t>((b >> (8 * k)) & 0xFFu));
    return s;
#endif
}

// Byte n of the result = byte (s >> 4n) & 7 of the 8-byte value {y:x}. Callers keep bit 3 of every
// selector nibble clear, so the device instruction's sign-replicate mode never comes into play.
DENSE_DECODE_FN uint32_t byte_perm(uint32_t x, uint32_t y, uint32_t s) {
#if defined(__CUDA_ARCH__)
    return __byte_perm(x, y, s);
#else
    const uint64_t src = (static_cast<uint64_t>(y) << 32) | x;
    uint32_t r = 0;
    for (int n = 0; n < 4; ++n) r |= static_cast<uint32_t>((src >> (8 * ((s >> (4 * n)) & 7u))) & 0xFFu) << (8 * n);
    return r;
#endif
}

// The device's prmt instruction as it is: byte n of the result = byte (s >> 4n) & 7 of {y:x}, but
// where bit 3 of that selector nibble is set, the picked byte's sign bit copied into all 8 bits
// (0x00 or 0xFF). Only the low 16 bits of s are read. byte_perm (above) is CUDA's __byte_perm,
// which clears bit 3 of every nibble with an extra instruction; this one saves it, and callers use
// the sign mode on purpose (iq4_block_dot).
DENSE_DECODE_FN uint32_t byte_perm_signed(uint32_t x, uint32_t y, uint32_t s) {
#if defined(__CUDA_ARCH__)
    uint32_t r;
    asm("prmt.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(y), "r"(s));
    return r;
#else
    const uint64_t src = (static_cast<uint64_t>(y) << 32) | x;
    uint32_t r = 0;
    for (int n = 0; n < 4; ++n) {
        const uint32_t sel = (s >> (4 * n)) & 15u;
        uint32_t b = static_cast<uint32_t>((src >> (8 * (sel & 7u))) & 0xFFu);
        if ((sel & 8u) != 0) b = (b & 0x80u) != 0 ? 0xFFu : 0x00u;
        r |= b << (8 * n);
    }
    return r;
#endif
}

// Low 32 bits of {hi:lo} >> sh (sh in [0, 31]) (plain asm in the GEMM's flavor, see the top).
DENSE_DECODE_FN uint32_t funnel_r(uint32_t lo, uint32_t hi, uint32_t sh) {
#if defined(__CUDA_ARCH__) && DENSE_GEMV_PURE_ASM
    uint32_t r;
    asm("shf.r.wrap.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(lo), "r"(hi), "r"(sh));
    return r;
#elif defined(__CUDA_ARCH__)
    return __funnelshift_r(lo, hi, sh);
#else
    return static_cast<uint32_t>(((static_cast<uint64_t>(hi) << 32) | lo) >> (sh & 31u));
#endif
}

// The 4-byte-aligned word at p.
DENSE_DECODE_FN uint32_t load_aligned_word(const uint8_t* p) {
#if defined(__CUDA_ARCH__)
    return *reinterpret_cast<const uint32_t*>(p);
#else
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
#endif
}

// Host builds only: how many ld_words<A> calls with A >= 4 got an address that is not A-byte
// aligned. On the device such a load faults or reads the wrong bytes; tests/cuda/gemv_host_test.cpp
// runs every format's fast path on aligned blocks and requires this to stay 0, which checks the
// alignment each Dot claims for its fields (sub_align below).
#if !defined(__CUDA_ARCH__)
inline int64_t host_misaligned_loads = 0;
#endif

// The alignment of p + off when p is A-byte aligned (A a power of two, off >= 0).
DENSE_GEMV_CONSTEXPR int sub_align(int A, int off) {
    int a = A;
    while (a > 1 && off % a != 0) a /= 2;
    return a;
}

// N consecutive little-endian 32-bit words starting at byte p, where p is known to be A-byte aligned
// (A < 4: any address at all, read as N + 1 aligned words around it and funnel-shifted; this reads
// up to 3 bytes before p and after the last word, so callers keep that much room around the data;
// A = 4/8/16: direct 4/8/16-byte loads). On the device p points into shared memory. The host build
// runs the same funnel-shift arithmetic, so the host tests cover it.
template <int A, int N>
DENSE_DECODE_FN void ld_words(const uint8_t* p, uint32_t (&out)[N]) {
    if constexpr (A >= 4) {
#if defined(__CUDA_ARCH__)
        if constexpr (A >= 16 && N % 4 == 0) {
            DENSE_DECODE_UNROLL
            for (int i = 0; i < N / 4; ++i) {
                const uint4 v = reinterpret_cast<const uint4*>(p)[i];
                out[4 * i] = v.x;
                out[4 * i + 1] = v.y;
                out[4 * i + 2] = v.z;
                out[4 * i + 3] = v.w;
            }
        } else if constexpr (A >= 8 && N % 2 == 0) {
            DENSE_DECODE_UNROLL
            for (int i = 0; i < N / 2; ++i) {
                const uint2 v = reinterpret_cast<const uint2*>(p)[i];
                out[2 * i] = v.x;
                out[2 * i + 1] = v.y;
            }
        } else {
            DENSE_DECODE_UNROLL
            for (int i = 0; i < N; ++i) out[i] = reinterpret_cast<const uint32_t*>(p)[i];
        }
#else
        if (reinterpret_cast<uintptr_t>(p) % static_cast<uintptr_t>(A) != 0) ++host_misaligned_loads;
        for (int i = 0; i < N; ++i) std::memcpy(&out[i], p + 4 * i, 4);  // x86-64 is little-endian
#endif
    } else {
        const uintptr_t addr = reinterpret_cast<uintptr_t>(p);
        const uint8_t* w = p - (addr & 3u);  // the aligned word holding p
        const uint32_t sh = static_cast<uint32_t>(addr & 3u) * 8u;
        uint32_t prev = load_aligned_word(w);
        DENSE_DECODE_UNROLL
        for (int i = 0; i < N; ++i) {
            const uint32_t next = load_aligned_word(w + 4 * (i + 1));
            out[i] = funnel_r(prev, next, sh);
            prev = next;
        }
    }
}

// N consecutive words starting at a 2-byte-aligned p (A = 2) or a 4-byte-aligned one (A = 4), read as
// 8-byte loads: the N / 2 + 1 aligned 8-byte words from p rounded down to 8 (up to 6 bytes before p,
// and never more than 8 bytes past the last word: callers keep that room, as Q6_K's fields inside
// their block do), then per output word a select of the word pair (p & 4) and, at A = 2, a funnel
// shift by (p & 3) bytes. Half the load instructions of ld_words<2> / ld_words<4> for N or 2N more
// integer operations. Why: the streamed Q6_K GEMV stalled on its 29 32-bit loads per unit (ncu on an
// H100, session 28: long scoreboard 7.6 and lg_throttle 3.1 stalls per issue); with this for ql and
// qh it ran 9-11 % faster at the 27B's Q6_K shapes, bit for bit the same (experiments/norm_gemv.cu,
// docs/perf-notes.md). Q8_0's streamed GEMV stalled the same way (session 29: lg_throttle 6.4).
// p may point into shared memory (the ring kernel).
template <int A = 2, int N>
DENSE_DECODE_FN void ld_words_by8(const uint8_t* p, uint32_t (&out)[N]) {
    static_assert(A == 2 || A == 4, "ld_words_by8: p is 2- or 4-byte aligned (wider: ld_words)");
    const uintptr_t addr = reinterpret_cast<uintptr_t>(p);
#if !defined(__CUDA_ARCH__)
    if (A >= 4 && addr % 4u != 0) ++host_misaligned_loads;  // A = 2 works at any address
#endif
    const uint8_t* base = p - (addr & 7u);
    const bool skip = (addr & 4u) != 0;
    constexpr int kPairs = N / 2 + 1;
    uint32_t w[2 * kPairs];
    DENSE_DECODE_UNROLL
    for (int j = 0; j < kPairs; ++j) {
#if defined(__CUDA_ARCH__)
        const uint2 v = reinterpret_cast<const uint2*>(base)[j];
        w[2 * j] = v.x;
        w[2 * j + 1] = v.y;
#else
        std::memcpy(&w[2 * j], base + 8 * j, 8);  // x86-64 is little-endian
#endif
    }
    if constexpr (A >= 4) {
        DENSE_DECODE_UNROLL
        for (int i = 0; i < N; ++i) out[i] = skip ? w[i + 1] : w[i];
    } else {
        const uint32_t sh = static_cast<uint32_t>(addr & 3u) * 8u;
        uint32_t v[N + 1];
        DENSE_DECODE_UNROLL
        for (int j = 0; j <= N; ++j) v[j] = skip ? w[j + 1] : w[j];
        DENSE_DECODE_UNROLL
        for (int i = 0; i < N; ++i) out[i] = funnel_r(v[i], v[i + 1], sh);
    }
}

// The alignment of every step of a matrix that starts 16-byte aligned and holds whole steps (rows a
// multiple of 256 elements, so row_bytes is a multiple of the step): the largest power of two <= 16
// dividing the step's size. The streamed GEMV (gemv_kernel.cuh, stream_part) only takes such matrices
// and calls Dot::unit at this alignment. Dot::kAlign can be less (Q8_0 and IQ4_NL declare 2 for their
// 16-byte steps): the ring and direct kernels and the GEMMs use kAlign, and the pair launch runs
// small matrices with it whatever their alignment.
DENSE_GEMV_CONSTEXPR int step_align(int step_bytes) {
    int a = 16;
    while (a > 1 && step_bytes % a != 0) a /= 2;
    return a;
}

template <int A>
DENSE_DECODE_FN uint32_t ld_u32(const uint8_t* p) {
    uint32_t w[1];
    ld_words<A>(p, w);
    return w[0];
}

// The fp16 field at p (2-byte aligned), widened exactly.
template <int A>
DENSE_DECODE_FN float ld_fp16(const uint8_t* p) {
    return half_to_float(ld_u32<A>(p));
}

// Bytes 0..3 of the result are 0x00 / 0xFF for bits 0..3 of `nibble` (the multiply spreads bit i
// to bit 8i without carries, since the four shifted copies of a 4-bit value do not overlap).
DENSE_DECODE_FN uint32_t sign_bytes4(uint32_t nibble) {
    return ((nibble * 0x00204081u) & 0x01010101u) * 0xFFu;
}

// Four positive magnitudes (bytes in [1, 255]) with a per-byte 0x00/0xFF sign mask applied:
// (g ^ m) + (m & 1) per byte is -g where m = 0xFF; it never carries into the next byte since g != 0.
DENSE_DECODE_FN uint32_t apply_signs(uint32_t g, uint32_t m) {
    return (g ^ m) + (m & 0x01010101u);
}

// The int8 codebook values of the 8 nibbles of q (nibble i = bits 4i..4i+3), from a 16-entry int8
// table held as 4 little-endian words. Returns elements {nibble 0, 2, 4, 6} in `even` and
// {nibble 1, 3, 5, 7} in `odd` (i.e. the low / high nibbles of the 4 bytes, in byte order).
DENSE_DECODE_FN void lookup16(uint32_t q, const uint32_t (&table)[4], uint32_t& even, uint32_t& odd) {
    uint32_t half[2];
    DENSE_DECODE_UNROLL
    for (int h = 0; h < 2; ++h) {
        const uint32_t sel = (q >> (16 * h)) & 0xFFFFu;                    // 4 nibble selectors
        const uint32_t lo = byte_perm(table[0], table[1], sel & 0x7777u);  // entries 0..7
        const uint32_t hi = byte_perm(table[2], table[3], sel & 0x7777u);  // entries 8..15
        // bit 3 of a nibble picks the high half: selector i + 4 instead of i.
        half[h] = byte_perm(lo, hi, 0x3210u | ((sel & 0x8888u) >> 1));
    }
    // half[0] = values of nibbles 0,1,2,3 and half[1] of 4,5,6,7; de-interleave.
    even = byte_perm(half[0], half[1], 0x6420u);
    odd = byte_perm(half[0], half[1], 0x7531u);
}

// The activation of one unit: two 32-element Q8_32 blocks (8 words of codes each), their d and s.
struct ActUnit {
    uint32_t q[16];
    float d[2];
    float s[2];
};

// The Q8_32 vector as three arrays (codes 16-byte aligned: the GEMV op checks it).
struct ActView {
    const int8_t* q;
    const float* d;
    const float* s;
};

// Block `b` (32 elements) of the activation into words [8k, 8k + 8) of `a`; on the device through
// the read-only data path (every row of the matrix reads the same activation).
DENSE_DECODE_FN void load_act_block(const ActView& act, int64_t b, ActUnit& a, int k) {
#if defined(__CUDA_ARCH__)
    const int4* src = reinterpret_cast<const int4*>(act.q + 32 * b);
    const int4 v0 = __ldg(src);
    const int4 v1 = __ldg(src + 1);
    a.q[8 * k + 0] = static_cast<uint32_t>(v0.x);
    a.q[8 * k + 1] = static_cast<uint32_t>(v0.y);
    a.q[8 * k + 2] = static_cast<uint32_t>(v0.z);
    a.q[8 * k + 3] = static_cast<uint32_t>(v0.w);
    a.q[8 * k + 4] = static_cast<uint32_t>(v1.x);
    a.q[8 * k + 5] = static_cast<uint32_t>(v1.y);
    a.q[8 * k + 6] = static_cast<uint32_t>(v1.z);
    a.q[8 * k + 7] = static_cast<uint32_t>(v1.w);
    a.d[k] = __ldg(act.d + b);
    a.s[k] = __ldg(act.s + b);
#else
    std::memcpy(&a.q[8 * k], act.q + 32 * b, 32);
    a.d[k] = act.d[b];
    a.s[k] = act.s[b];
#endif
}

// Blocks b and b + 1 (b even) of the activation, the unit's pair: 64 code bytes in four 16-byte
// loads, d and s as one 8-byte load each (b even: 8-byte aligned, since the codes are 16-byte
// aligned and n is a multiple of 32).
DENSE_DECODE_FN void load_act_pair(const ActView& act, int64_t b, ActUnit& a) {
#if defined(__CUDA_ARCH__)
    const int4* src = reinterpret_cast<const int4*>(act.q + 32 * b);
    DENSE_DECODE_UNROLL
    for (int i = 0; i < 4; ++i) {
        const int4 v = __ldg(src + i);
        a.q[4 * i + 0] = static_cast<uint32_t>(v.x);
        a.q[4 * i + 1] = static_cast<uint32_t>(v.y);
        a.q[4 * i + 2] = static_cast<uint32_t>(v.z);
        a.q[4 * i + 3] = static_cast<uint32_t>(v.w);
    }
    const float2 d = __ldg(reinterpret_cast<const float2*>(act.d + b));
    const float2 s = __ldg(reinterpret_cast<const float2*>(act.s + b));
    a.d[0] = d.x;
    a.d[1] = d.y;
    a.s[0] = s.x;
    a.s[1] = s.y;
#else
    load_act_block(act, b, a, 0);
    load_act_block(act, b + 1, a, 1);
#endif
}

// A block the unit does not have (past the end of a row whose length is not a multiple of 256):
// zero codes and scales, so its term is never read and its loads never leave the buffer.
DENSE_DECODE_FN void clear_act_block(ActUnit& a, int k) {
    for (int i = 0; i < 8; ++i) a.q[8 * k + i] = 0;
    a.d[k] = 0.0f;
    a.s[k] = 0.0f;
}

// sum of the 4 int8 codes of word a (the per-16 activation sums of Q2_K / Q3_K / Q6_K).
DENSE_DECODE_FN int32_t sum4(uint32_t a, int32_t c) {
    return dp4a(0x01010101u, a, c);
}

// The 8-bit sign mask of an IQ2_XS / IQ3_XXS group from its 7 stored bits: bit 7 makes the number
// of set bits even (the codebook ksigns_iq2xs[i] is exactly i | parity(i) << 7; gemv_host_test.cpp
// checks all 128). Computing it costs a few ALU operations instead of a shared-memory lookup.
DENSE_DECODE_FN uint32_t parity_signs(uint32_t bits7) {
#if defined(__CUDA_ARCH__)
    const uint32_t ones = static_cast<uint32_t>(__popc(bits7));
#else
    const uint32_t ones = static_cast<uint32_t>(__builtin_popcount(bits7));
#endif
    return bits7 | ((ones & 1u) << 7);
}

// Eight grid magnitudes (bytes of g_lo, g_hi; all in [1, 127]) with the signs of an 8-bit mask
// applied: int8 values ready for dp4a.
DENSE_DECODE_FN void signed_grid8(uint32_t g_lo, uint32_t g_hi, uint32_t mask8, uint32_t& lo, uint32_t& hi) {
    lo = apply_signs(g_lo, sign_bytes4(mask8 & 15u));
    hi = apply_signs(g_hi, sign_bytes4((mask8 >> 4) & 15u));
}

// sum_e a_e * sign_e * g_e over 8 grid magnitudes (bytes of g_lo, g_hi, all in [0, 127]) and the
// activation words act[0], act[1], with the signs of an 8-bit mask, plus c: the GEMV's form. For a
// negative byte, g ^ 0xFF read as int8 is -g - 1, so dp4a(g ^ m, a) + dp4a(m01, a), where m01 has
// 0x01 in the negative bytes and m = 0xFF * m01, is the signed dot exactly. Against signed_grid8 + one
// dp4a per word that trades an AND and an add on the integer-ALU pipe (the IQ2 / IQ3 GEMVs' limit,
// docs/perf-notes.md session 19) for a second dp4a on the FMA pipe. The dp4a GEMM keeps
// signed_grid8: there each column would pay the second dp4a, while the signed bytes are decoded once.
DENSE_DECODE_FN int32_t signed_dot8(uint32_t g_lo, uint32_t g_hi, uint32_t mask8, const uint32_t* act, int32_t c) {
    const uint32_t m_lo = ((mask8 & 15u) * 0x00204081u) & 0x01010101u;
    const uint32_t m_hi = (((mask8 >> 4) & 15u) * 0x00204081u) & 0x01010101u;
    c = dp4a(g_lo ^ (m_lo * 0xFFu), act[0], c);
    c = dp4a(m_lo, act[0], c);
    c = dp4a(g_hi ^ (m_hi * 0xFFu), act[1], c);
    return dp4a(m_hi, act[1], c);
}

// The IQ codebooks as the kernels see them: in shared memory on the device (copied once per thread
// block, gemv_kernel.cuh), the generated static arrays on the host. Only the field a format needs is
// set (Dot::kTable says which).
struct IqTables {
    const uint64_t* grid64 = nullptr;    // IQ2_XS (512 entries) or IQ2_S (1024)
    const uint32_t* grid32 = nullptr;    // IQ3_XXS (256) or IQ3_S (512)
    const uint32_t* signed_grid32 = nullptr;  // the streamed IQ3 GEMVs: signed_grid_entry<bits>(grid32, e)
    uint32_t kvalues[4] = {0, 0, 0, 0};  // kvalues_iq4nl as 4 little-endian words (IQ4_NL, IQ4_XS)
};

enum class IqTable { None, Iq2xsGrid, Iq2sGrid, Iq3xxsGrid, Iq3sGrid, Iq4Values, Iq3xxsSignedGrid, Iq3sSignedGrid };

// Entry e of an IQ3 format's signed grid of 2^kIndexBits grid entries (8 for IQ3_XXS, 9 for IQ3_S):
// grid entry e % 2^kIndexBits (four magnitudes in [1, 62]) with the signs of the nibble above it,
// e >> kIndexBits (bit j set: byte j negated), int8 values ready for dp4a. The streamed IQ3 GEMVs look
// a group's half up in it by index and sign nibble at once instead of looking up the magnitudes and
// applying the signs with ~6 integer operations per half: their integer pipe, not DRAM, was their
// limit (ncu, H100, session 29: 446-463 warp instructions per KB read, ~300 is what the issue rate
// allows at the read ceiling). The sign nibble sits ABOVE the index so that the index's low 8 bits are
// a whole byte of the entry number: one byte permute (prmt) puts a stored index byte and a byte that
// holds the sign nibble (and IQ3_S's 9th index bit) side by side, which is the entry number (session
// 42: ~4 instructions a lookup instead of ~10). 16 x 4 bytes per grid entry: 16 KB for IQ3_XXS, 32 KB
// for IQ3_S, computed per thread block from the grid.
template <int kIndexBits>
DENSE_DECODE_FN uint32_t signed_grid_entry(const uint32_t* grid, uint32_t e) {
    return apply_signs(grid[e & ((1u << kIndexBits) - 1u)], sign_bytes4(e >> kIndexBits));
}

// A table index from two bytes: byte 0 = byte j of `w` (a stored index's low 8 bits), byte 1 = byte l
// of `h` (the bits above them, below 0x80), bytes 2 and 3 = the sign of h's byte l, which is 0. One
// prmt: the streamed IQ3 GEMVs' signed-grid entry numbers (h: IQ3_S's 9th index bit and the sign
// nibble, or IQ3_XXS's sign nibble).
template <int j, int l>
DENSE_DECODE_FN uint32_t byte_pair_index(uint32_t w, uint32_t h) {
    static_assert(j >= 0 && j < 4 && l >= 0 && l < 4, "byte numbers");
    constexpr uint32_t hi = 4u + static_cast<uint32_t>(l);
    return byte_perm_signed(w, h, static_cast<uint32_t>(j) | hi << 4 | (8u | hi) << 8 | (8u | hi) << 12);
}

// Byte j (0..3) of w.
DENSE_DECODE_FN uint32_t byte_of(uint32_t w, int j) { return (w >> (8 * j)) & 0xFFu; }

// The codebook a format's streamed GEMV (gemv_kernel.cuh, stream_part) stages, and the unit it calls:
// Dot::kStreamTable and Dot::stream_unit where the format declares them (the IQ3 formats: the same
// terms, bit for bit, from a table the ring kernel has no room for; IQ2_S: the same table, fewer
// operations), else Dot::kTable and Dot::unit.
template <class D, class = void>
struct StreamTableOf {
    static constexpr IqTable value = D::kTable;
    static constexpr bool own_unit = false;
};
template <class D>
struct StreamTableOf<D, std::void_t<decltype(D::kStreamTable)>> {
    static constexpr IqTable value = D::kStreamTable;
    static constexpr bool own_unit = true;
};

template <class Dot, int A>
DENSE_DECODE_FN void stream_unit(const uint8_t* step, int u, const ActUnit& a, const IqTables& t, float (&term)[2]) {
    if constexpr (StreamTableOf<Dot>::own_unit) {
        Dot::template stream_unit<A>(step, u, a, t, term);
    } else {
        Dot::template unit<A>(step, u, a, t, term);
    }
}

// The 4-byte signed sums of the two 16-element halves of one activation block (words 0..3, 4..7),
// against four weight code words each: returns the two dp4a sums.
DENSE_DECODE_FN void dot16x2(const uint32_t (&q)[8], const uint32_t* act, int32_t& lo, int32_t& hi) {
    lo = 0;
    hi = 0;
    DENSE_DECODE_UNROLL
    for (int i = 0; i < 4; ++i) {
        lo = dp4a(q[i], act[i], lo);
        hi = dp4a(q[4 + i], act[4 + i], hi);
    }
}

// Bytes v in [0, 127] minus c in [0, 127] per byte, as int8 (no borrow crosses bytes: setting bit
// 7 first keeps every byte >= c, and flipping it back restores the sign of v - c).
DENSE_DECODE_FN uint32_t sub_bytes(uint32_t v, uint32_t c_bytes) {
    return ((v | 0x80808080u) - c_bytes) ^ 0x80808080u;
}

DENSE_GEMV_FLAVOR_END
}  // namespace dense::cuda::gemv
