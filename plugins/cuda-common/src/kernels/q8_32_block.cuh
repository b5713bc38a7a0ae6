// The GPU's F32 -> Q8_32 rounding (dense_abi.h), in two thread layouts with one rule:
//   - quantize_q8_32_block: one block per full warp, one element per lane (QUANTIZE_ACT,
//     quantize_act.cu, SWIGLU's quantized copy and the long-row norm);
//   - quantize_q8_32_octets: one block per 4 lanes, 8 consecutive elements per lane, so a warp
//     quantizes 8 blocks at once with 2-level shuffle trees instead of 8 blocks one after another
//     with 5-level ones (RMS_NORM and GATED_RMS_NORM registered with act_type Q8_32: their quantized
//     copy sits on the token step's critical path, one block of threads per norm row). SWIGLU with
//     8 elements per thread measured slower (session 21), so it keeps the warp-wide layout.
// Every quantity of the rule below is order-free (a max, an and, an exact integer sum) or computed
// per element, so both layouts write the same bits, and the fused and the separate paths agree bit
// for bit by construction.
// Bit-exact with cpu-ref's quantize_q8_32 (plugins/cpu-ref/src/kernels/q8_32.cpp states the rules):
//   - the block's finiteness (__all_sync) and amax = max |x| (shuffle tree of fmaxf: a max of
//     non-negative floats is exact and order-free, so it equals the sequential one);
//   - d = amax / 127 and q = round-half-away(x / d) with IEEE divisions (__fdiv_rn: never the
//     reciprocal approximation), clamped to [-127, 127];
//   - s = d * float(sum q), the integer sum exact (|sum| <= 4064);
//   - a block with a NaN or Inf: q = 0, d = s = NaN with the fixed bits 0x7FC00000; d == 0 (all zero,
//     or amax / 127 underflows): q = 0, d = s = +0.
// Subnormals are kept (no flush to zero: the pack is built without fast math), as on the CPU.
#pragma once

#include "kernels/q8_32_out.hpp"

#include <cuda_runtime.h>

#include <cstdint>

namespace dense::cuda {

// One element's code: round-half-away(v / d) clamped to [-127, 127] (IEEE division, never the
// reciprocal approximation); 0 in a block with a NaN or Inf, or with d == 0.
__device__ __forceinline__ int q8_32_code(float v, float d, bool finite) {
    int q = 0;
    if (finite && d != 0.0f) {
        float r = roundf(__fdiv_rn(v, d));  // half away from zero; exact for any float
        r = r > 127.0f ? 127.0f : (r < -127.0f ? -127.0f : r);
        q = static_cast<int>(r);
    }
    return q;
}

// Block b's d and s (the rules above) from d = amax / 127 and the exact sum of its codes.
__device__ __forceinline__ void store_q8_32_scales(bool finite, float d, int sum, int64_t b, const Q8_32Out& out) {
    float dd = 0.0f, ss = 0.0f;
    if (!finite) {
        dd = ss = __uint_as_float(0x7FC00000u);
    } else if (d != 0.0f) {
        dd = d;
        ss = __fmul_rn(d, __int2float_rn(sum));
    }
    reinterpret_cast<float*>(out.base + out.n)[b] = dd;
    reinterpret_cast<float*>(out.base + out.n + out.n / 8)[b] = ss;
}

// Every lane of the warp calls this with its value v of block b (lane i holds element 32 b + i).
__device__ __forceinline__ void quantize_q8_32_block(float v, int64_t b, const Q8_32Out& out) {
    const int lane = static_cast<int>(threadIdx.x & 31);
    const bool finite = __all_sync(0xFFFFFFFFu, isfinite(v));
    float amax = fabsf(v);
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) amax = fmaxf(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, o));
    const float d = __fdiv_rn(amax, 127.0f);
    const int q = q8_32_code(v, d, finite);
    int sum = q;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xFFFFFFFFu, sum, o);
    out.base[32 * b + lane] = static_cast<uint8_t>(static_cast<int8_t>(q));
    if (lane == 0) store_q8_32_scales(finite, d, sum, b, out);
}

// Lane L of the warp holds elements [8 (L % 4), 8 (L % 4) + 8) of block b in v (lanes 4g .. 4g + 3
// hold one block). Every lane of the warp calls this (the shuffles take the full mask); `valid` false
// (the same for the 4 lanes of a group) means the group holds no block and stores nothing.
// out.base is 4-byte aligned (the handlers check it), so each lane stores its 8 codes as two words.
__device__ __forceinline__ void quantize_q8_32_octets(const float (&v)[8], bool valid, int64_t b, const Q8_32Out& out) {
    const int part = static_cast<int>(threadIdx.x & 3u);
    int finite = 1;
    float amax = 0.0f;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
        finite &= isfinite(v[j]) ? 1 : 0;
        amax = fmaxf(amax, fabsf(v[j]));
    }
    finite &= __shfl_xor_sync(0xFFFFFFFFu, finite, 1);
    finite &= __shfl_xor_sync(0xFFFFFFFFu, finite, 2);
    amax = fmaxf(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, 1));
    amax = fmaxf(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, 2));
    const float d = __fdiv_rn(amax, 127.0f);
    uint32_t word[2] = {0u, 0u};
    int sum = 0;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
        const int q = q8_32_code(v[j], d, finite != 0);
        sum += q;
        word[j / 4] |= static_cast<uint32_t>(static_cast<uint8_t>(static_cast<int8_t>(q))) << (8 * (j % 4));
    }
    sum += __shfl_xor_sync(0xFFFFFFFFu, sum, 1);
    sum += __shfl_xor_sync(0xFFFFFFFFu, sum, 2);
    if (!valid) return;
    uint32_t* codes = reinterpret_cast<uint32_t*>(out.base + 32 * b + 8 * part);  // little endian: code j at byte j
    codes[0] = word[0];
    codes[1] = word[1];
    if (part == 0) store_q8_32_scales(finite != 0, d, sum, b, out);
}

}  // namespace dense::cuda
