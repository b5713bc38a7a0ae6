// SWIGLU, CHECK_FINITE and GDN_GATES: one thread per element, grid-stride loops, fp32 with the
// accurate expf/log1pf. Each output is a handful of correctly rounded or <= 2-ulp operations, so the
// relative error against cpu-ref's double evaluation is a few 1e-7 (the tests allow 2e-6 for SWIGLU
// and beta, 1e-5 for decay, whose exponent argument softplus(a + dt) * A carries the rounding of the
// sum a + dt, amplified by |A| and by d exp/dx = exp).
#include "kernels/launch_chain.cuh"
#include "kernels/act_common.cuh"

#include <cstdint>
#include "kernels/act_launchers.hpp"
#include "kernels/q8_32_block.cuh"

namespace dense::cuda::act {
namespace {

// With a quantized copy (n % 32 == 0), the 32 lanes of a warp hold one aligned 32-element block in
// every round of the loop (the block size and the grid stride are multiples of 32), and all lanes of
// a warp run the same number of rounds, as the warp-wide quantizer needs.
__global__ void swiglu_kernel(const float* __restrict__ gate, const float* __restrict__ up, float* __restrict__ y,
                              int64_t n, Q8_32Out quantized) {
    wait_for_producers();  // launch_chain.cuh: nothing an earlier kernel writes is touched before
    allow_consumers();

    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
        const float v = silu_f(gate[i]) * up[i];
        y[i] = v;
        if (quantized.base != nullptr) quantize_q8_32_block(v, i / 32, quantized);
    }
}

// Every thread scans its elements; a warp vote keeps the store to one per warp that saw a bad value.
// All threads of a warp reach the vote (the loop bound is per thread, the vote is after it).
__global__ void check_finite_kernel(const float* __restrict__ x, int64_t n, int32_t* status) {
    wait_for_producers();  // launch_chain.cuh: nothing an earlier kernel writes is touched before
    allow_consumers();

    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    bool bad = false;
    for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        bad = bad || !is_finite_bits(x[i]);
    if (__any_sync(kFullMask, bad) && (threadIdx.x & 31u) == 0) *status = 1;
}

__device__ __forceinline__ bool finite4(float4 v) {
    return is_finite_bits(v.x) && is_finite_bits(v.y) && is_finite_bits(v.z) && is_finite_bits(v.w);
}

// The same check for a 16-byte aligned x, at memory speed: 16-byte loads, four independent loads in
// flight per thread per iteration (a read-only stream; bench/bandwidth_probe.hpp also uses this op
// as its pure-read kernel). The n % 4 tail is read by the first threads.
__global__ void check_finite_vec_kernel(const float4* __restrict__ x4, int64_t n4, const float* __restrict__ tail,
                                        int n_tail, int32_t* status) {
    wait_for_producers();  // launch_chain.cuh: nothing an earlier kernel writes is touched before
    allow_consumers();

    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    bool ok = true;
    for (; i + 3 * stride < n4; i += 4 * stride) {
        const float4 a = __ldg(x4 + i), b = __ldg(x4 + i + stride), c = __ldg(x4 + i + 2 * stride),
                     d = __ldg(x4 + i + 3 * stride);
        ok = ok && finite4(a) && finite4(b) && finite4(c) && finite4(d);
    }
    for (; i < n4; i += stride) ok = ok && finite4(__ldg(x4 + i));
    const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (t < n_tail) ok = ok && is_finite_bits(tail[t]);
    if (__any_sync(kFullMask, !ok) && (threadIdx.x & 31u) == 0) *status = 1;
}

// Outputs may not alias the inputs (the op layer checks), but each thread reads all four inputs of
// its head before writing either output anyway.
__global__ void gdn_gates_kernel(GdnGatesArgs a) {
    wait_for_producers();  // launch_chain.cuh: nothing an earlier kernel writes is touched before
    allow_consumers();

    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    const int64_t n = a.heads * a.tokens;  // element i is head i % heads of token i / heads
    for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
        const int64_t h = i % a.heads;
        const float b = a.b[i], x = a.a[i] + a.dt_bias[h], A = a.A[h];
        a.beta[i] = sigmoid_f(b);
        a.decay[i] = expf(softplus_f(x) * A);
    }
}

}  // namespace

cudaError_t launch_swiglu(const float* gate, const float* up, float* y, int64_t n, Q8_32Out quantized,
                          cudaStream_t stream) {
    if (n <= 0) return cudaSuccess;
    (void)launch_chained(swiglu_kernel, grid_for(n, kEltThreads, kEltMaxBlocks), kEltThreads, 0, stream, gate, up, y, n, quantized);
    return cudaGetLastError();
}

cudaError_t launch_check_finite(const float* x, int64_t n, int32_t* status, cudaStream_t stream) {
    if (n <= 0) return cudaSuccess;
    if (reinterpret_cast<uintptr_t>(x) % 16 == 0) {
        const int64_t n4 = n / 4;
        // Four float4 per thread per iteration: a grid of ~(n4 / 4) threads, capped (grid-stride).
        (void)launch_chained(check_finite_vec_kernel, grid_for((n4 + 3) / 4, kEltThreads, kEltMaxBlocks), kEltThreads, 0, stream, reinterpret_cast<const float4*>(x), n4, x + 4 * n4, static_cast<int>(n - 4 * n4), status);
    } else {
        (void)launch_chained(check_finite_kernel, grid_for(n, kEltThreads, kEltMaxBlocks), kEltThreads, 0, stream, x, n, status);
    }
    return cudaGetLastError();
}

cudaError_t launch_gdn_gates(const GdnGatesArgs& a, cudaStream_t stream) {
    if (a.heads <= 0 || a.tokens <= 0) return cudaSuccess;
    (void)launch_chained(gdn_gates_kernel, grid_for(a.heads * a.tokens, kEltThreads, kEltMaxBlocks), kEltThreads, 0,
                         stream, a);
    return cudaGetLastError();
}

}  // namespace dense::cuda::act
