// F32 -> Q8_32 (dense_abi.h), bit-exact with cpu-ref's quantize_q8_32 (plugins/cpu-ref/src/kernels/
// q8_32.cpp states the rules). One warp per 32-element block, one element per lane:
//   - the block's finiteness (__all_sync) and amax = max |x| (shuffle tree of fmaxf: a max of
//     non-negative floats is exact and order-free, so it equals the sequential one);
//   - d = amax / 127 and q = round-half-away(x / d) with IEEE divisions (__fdiv_rn: never the
//     reciprocal approximation), clamped to [-127, 127];
//   - s = d * float(sum q), the integer sum exact (|sum| <= 4064);
//   - a block with a NaN or Inf: q = 0, d = s = NaN with the fixed bits 0x7FC00000; d == 0 (all zero,
//     or amax / 127 underflows): q = 0, d = s = +0.
// Subnormals are kept (no flush to zero: the pack is built without fast math), as on the CPU.
#include "kernels/gemv_launchers.hpp"
#include "target_tuning.hpp"

#include <cuda_runtime.h>

#include <cstdint>

namespace dense::cuda {
namespace {

__global__ void __launch_bounds__(tuning::kQuantizeThreads)
    quantize_q8_32_kernel(const float* __restrict__ x, uint8_t* __restrict__ out, int64_t n) {
    const int lane = static_cast<int>(threadIdx.x & 31);
    const int64_t n_blocks = n / 32;
    const int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x / 32);
    float* const d_out = reinterpret_cast<float*>(out + n);
    float* const s_out = reinterpret_cast<float*>(out + n + n / 8);
    for (int64_t b = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32; b < n_blocks; b += warps) {
        const float v = x[32 * b + lane];
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
        out[32 * b + lane] = static_cast<uint8_t>(static_cast<int8_t>(q));
        if (lane == 0) {
            float dd = 0.0f, ss = 0.0f;
            if (!finite) {
                dd = ss = __uint_as_float(0x7FC00000u);
            } else if (d != 0.0f) {
                dd = d;
                ss = __fmul_rn(d, __int2float_rn(sum));
            }
            d_out[b] = dd;
            s_out[b] = ss;
        }
    }
}

}  // namespace

cudaError_t launch_quantize_q8_32(const float* x, void* out, int64_t n, cudaStream_t stream) {
    if (n <= 0) return cudaSuccess;
    constexpr int kWarpsPerBlock = tuning::kQuantizeThreads / 32;
    const int64_t n_blocks = n / 32;
    const int64_t wanted = (n_blocks + kWarpsPerBlock - 1) / kWarpsPerBlock;
    const int64_t cap = 65535;  // grid-stride beyond that
    const auto grid = static_cast<unsigned>(wanted < cap ? wanted : cap);
    quantize_q8_32_kernel<<<grid, tuning::kQuantizeThreads, 0, stream>>>(x, static_cast<uint8_t*>(out), n);
    return cudaGetLastError();
}

}  // namespace dense::cuda
