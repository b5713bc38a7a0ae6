// ARGMAX (ABI 1.12): the greedy choice over a token step's logits, so that only the chosen index
// crosses the bus. One block: the logits were written by the LM head just before, so they are in L2;
// a grid would need a second pass or a counter that survives between launches (the two-pass form is
// experiments/patches/s43-argmax-two-pass.patch, not yet measured). Exact: the reduction only
// compares, and its order of combining cannot change the answer (the largest value, ties to the
// lowest index), which is what cpu-ref's sequential loop gives.
#include "kernels/act_common.cuh"
#include "kernels/act_launchers.hpp"
#include "kernels/launch_chain.cuh"

#include <cstdint>
#include <math_constants.h>

namespace dense::cuda::act {
namespace {

constexpr int kArgmaxThreads = 1024;
constexpr int kLoadsInFlight = 8;

// A candidate: value v at index i; i == none for "no candidate yet" (v is then -inf).
struct Best {
    float v;
    int64_t i;
};

// The better of a and b: the larger value, on a tie the lower index (a NaN is never a candidate).
__device__ __forceinline__ Best better(Best a, Best b) {
    return (b.v > a.v || (b.v == a.v && b.i < a.i)) ? b : a;
}

__device__ __forceinline__ void consider(Best& best, float v, int64_t i) {
    if (!isnan(v) && (v > best.v || (v == best.v && i < best.i))) best = {v, i};
}

__global__ void __launch_bounds__(kArgmaxThreads) argmax_kernel(const float* __restrict__ x, int64_t n,
                                                                 int32_t* __restrict__ out) {
    wait_for_producers();  // launch_chain.cuh: the logits are the kernel before's output
    allow_consumers();

    Best best{-CUDART_INF_F, n};  // index n: none yet (every real index is lower)
    const bool vec = reinterpret_cast<uintptr_t>(x) % 16 == 0;
    const int64_t n4 = vec ? n / 4 : 0;
    const auto* x4 = reinterpret_cast<const float4*>(x);
    // kLoadsInFlight 16-byte loads a thread a round, all issued before the first compare, so a round
    // costs one L2 round trip: 2 loads a round made 31 rounds for the 27B's 248,320 logits, 8 make 8
    // (H100, session 43: the node 16.7 -> 14.7 us in the tiny model's profile; one SM's read rate from
    // L2 is then the likely limit). Past the end a load is skipped and its value is NaN, which
    // consider() never takes.
    const float4 none = make_float4(CUDART_NAN_F, CUDART_NAN_F, CUDART_NAN_F, CUDART_NAN_F);
    for (int64_t k = threadIdx.x; k < n4; k += kLoadsInFlight * kArgmaxThreads) {
        float4 a[kLoadsInFlight];
#pragma unroll
        for (int j = 0; j < kLoadsInFlight; ++j) {
            const int64_t kj = k + j * kArgmaxThreads;
            a[j] = kj < n4 ? __ldg(x4 + kj) : none;
        }
#pragma unroll
        for (int j = 0; j < kLoadsInFlight; ++j) {
            const int64_t i = 4 * (k + j * kArgmaxThreads);
            consider(best, a[j].x, i);
            consider(best, a[j].y, i + 1);
            consider(best, a[j].z, i + 2);
            consider(best, a[j].w, i + 3);
        }
    }
    // The elements past the last whole float4 (all of x when it is not 16-byte aligned), the same way.
    for (int64_t k = 4 * n4 + threadIdx.x; k < n; k += kLoadsInFlight * kArgmaxThreads) {
        float a[kLoadsInFlight];
#pragma unroll
        for (int j = 0; j < kLoadsInFlight; ++j) {
            const int64_t i = k + j * kArgmaxThreads;
            a[j] = i < n ? __ldg(x + i) : CUDART_NAN_F;
        }
#pragma unroll
        for (int j = 0; j < kLoadsInFlight; ++j) consider(best, a[j], k + j * kArgmaxThreads);
    }

    for (int o = 16; o > 0; o >>= 1) {
        const Best other{__shfl_xor_sync(kFullMask, best.v, o), __shfl_xor_sync(kFullMask, best.i, o)};
        best = better(best, other);
    }
    __shared__ Best per_warp[kArgmaxThreads / 32];
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    if (lane == 0) per_warp[warp] = best;
    __syncthreads();
    if (warp != 0) return;
    best = per_warp[lane];
    for (int o = 16; o > 0; o >>= 1) {
        const Best other{__shfl_xor_sync(kFullMask, best.v, o), __shfl_xor_sync(kFullMask, best.i, o)};
        best = better(best, other);
    }
    if (lane == 0) {
        // std::max_element keeps index 0 when x[0] is NaN (nothing compares larger than it), and an
        // all-NaN x has no candidate: 0 as well.
        const bool first_nan = isnan(__ldg(x));
        *out = static_cast<int32_t>(first_nan || best.i == n ? 0 : best.i);
    }
}

}  // namespace

cudaError_t launch_argmax(const float* x, int64_t n, int32_t* out, cudaStream_t stream) {
    if (n <= 0) return cudaErrorInvalidValue;
    (void)launch_chained(argmax_kernel, dim3(1), dim3(kArgmaxThreads), 0, stream, x, n, out);
    return cudaGetLastError();
}

}  // namespace dense::cuda::act
