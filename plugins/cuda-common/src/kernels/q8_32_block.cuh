// One Q8_32 block (dense_abi.h) quantized by one full warp, one element per lane — the single
// definition of the GPU's F32 -> Q8_32 rounding, shared by QUANTIZE_ACT (quantize_act.cu) and the
// ops that write a quantized copy of their output (RMS_NORM, GATED_RMS_NORM and SWIGLU registered
// with act_type Q8_32), so the fused and the separate paths agree bit for bit by construction.
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

// Every lane of the warp calls this with its value v of block b (lane i holds element 32 b + i).
__device__ __forceinline__ void quantize_q8_32_block(float v, int64_t b, const Q8_32Out& out) {
    const int lane = static_cast<int>(threadIdx.x & 31);
    const bool finite = __all_sync(0xFFFFFFFFu, isfinite(v));
    float amax = fabsf(v);
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) amax = fmaxf(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, o));
    const float d = __fdiv_rn(amax, 127.0f);
    int q = 0;
    if (finite && d != 0.0f) {
        float r = roundf(__fdiv_rn(v, d));  // half away from zero; exact for any float
        r = r > 127.0f ? 127.0f : (r < -127.0f ? -127.0f : r);
        q = static_cast<int>(r);
    }
    int sum = q;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xFFFFFFFFu, sum, o);
    out.base[32 * b + lane] = static_cast<uint8_t>(static_cast<int8_t>(q));
    if (lane == 0) {
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
}

}  // namespace dense::cuda
