// ARGMAX (ABI 1.12): the greedy choice over a token step's logits, so that only the chosen index
// crosses the bus. Two chained kernels: up to kArgmaxParts blocks each take the best of a share of
// x (every block reads its loads in one or two rounds from L2, where the LM head just left the
// logits), then one block takes the best of their bests. One block reading the 27B's 248,320 logits
// (~1 MB) alone took ~12-15 us in the token step (H100, session 43: its rounds of L2 loads, then one
// SM's read rate); the two passes take 6.5 us where the one block took 14.7 (tiny model's profile,
// 151,936 logits, H100, session 44; tiny tg128 +3 %). Exact: the reduction only compares, and its order of
// combining cannot change the answer (the largest value, ties to the lowest index), which is what
// cpu-ref's sequential loop gives.
#include "kernels/act_common.cuh"
#include "kernels/act_launchers.hpp"
#include "kernels/launch_chain.cuh"

#include <cstdint>
#include <math_constants.h>

namespace dense::cuda::act {
namespace {

constexpr int kPartThreads = 256;
constexpr int kLoadsInFlight = 4;
// Elements a block takes at least: with fewer, a block's launch and reduction cost more than its loads.
constexpr int64_t kElementsPerPart = 2048;
static_assert(kArgmaxParts % 32 == 0 && kArgmaxParts <= 1024, "the final block has one thread a part");

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

// The best of the block's candidates, in thread 0 (the other threads' results are unspecified).
template <int kThreads>
__device__ Best block_best(Best best) {
    for (int o = 16; o > 0; o >>= 1) {
        const Best other{__shfl_xor_sync(kFullMask, best.v, o), __shfl_xor_sync(kFullMask, best.i, o)};
        best = better(best, other);
    }
    __shared__ Best per_warp[kThreads / 32];
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    if (lane == 0) per_warp[warp] = best;
    __syncthreads();
    if (warp == 0) {
        best = lane < kThreads / 32 ? per_warp[lane] : per_warp[0];
        for (int o = 16; o > 0; o >>= 1) {
            const Best other{__shfl_xor_sync(kFullMask, best.v, o), __shfl_xor_sync(kFullMask, best.i, o)};
            best = better(best, other);
        }
    }
    return best;
}

// Pass 1: block b's best over the grid-strided elements it reads; index n where it has no candidate.
// kLoadsInFlight 16-byte loads a thread a round, all issued before the first compare (past the end a
// load is skipped and its value is NaN, which consider() never takes).
__global__ void __launch_bounds__(kPartThreads) argmax_parts_kernel(const float* __restrict__ x, int64_t n,
                                                                     float* __restrict__ part_v,
                                                                     int64_t* __restrict__ part_i) {
    wait_for_producers();  // launch_chain.cuh: the logits are the kernel before's output
    allow_consumers();

    Best best{-CUDART_INF_F, n};  // index n: none yet (every real index is lower)
    const bool vec = reinterpret_cast<uintptr_t>(x) % 16 == 0;
    const int64_t n4 = vec ? n / 4 : 0;
    const auto* x4 = reinterpret_cast<const float4*>(x);
    const int64_t first = static_cast<int64_t>(blockIdx.x) * kPartThreads + threadIdx.x;
    const int64_t stride = static_cast<int64_t>(gridDim.x) * kPartThreads;
    const float4 none = make_float4(CUDART_NAN_F, CUDART_NAN_F, CUDART_NAN_F, CUDART_NAN_F);
    for (int64_t k = first; k < n4; k += kLoadsInFlight * stride) {
        float4 a[kLoadsInFlight];
#pragma unroll
        for (int j = 0; j < kLoadsInFlight; ++j) {
            const int64_t kj = k + j * stride;
            a[j] = kj < n4 ? __ldg(x4 + kj) : none;
        }
#pragma unroll
        for (int j = 0; j < kLoadsInFlight; ++j) {
            const int64_t i = 4 * (k + j * stride);
            consider(best, a[j].x, i);
            consider(best, a[j].y, i + 1);
            consider(best, a[j].z, i + 2);
            consider(best, a[j].w, i + 3);
        }
    }
    // The elements past the last whole float4 (all of x when it is not 16-byte aligned), the same way.
    for (int64_t k = 4 * n4 + first; k < n; k += kLoadsInFlight * stride) {
        float a[kLoadsInFlight];
#pragma unroll
        for (int j = 0; j < kLoadsInFlight; ++j) {
            const int64_t i = k + j * stride;
            a[j] = i < n ? __ldg(x + i) : CUDART_NAN_F;
        }
#pragma unroll
        for (int j = 0; j < kLoadsInFlight; ++j) consider(best, a[j], k + j * stride);
    }
    best = block_best<kPartThreads>(best);
    if (threadIdx.x == 0) {
        part_v[blockIdx.x] = best.v;
        part_i[blockIdx.x] = best.i;
    }
}

// Pass 2: the best of the parts' bests (a part without a candidate has index n and never wins over
// one with a candidate), then std::max_element's rules for NaN.
__global__ void __launch_bounds__(kArgmaxParts) argmax_final_kernel(const float* __restrict__ x, int64_t n,
                                                                     const float* __restrict__ part_v,
                                                                     const int64_t* __restrict__ part_i, int parts,
                                                                     int32_t* __restrict__ out) {
    wait_for_producers();
    allow_consumers();

    Best best{-CUDART_INF_F, n};
    if (static_cast<int>(threadIdx.x) < parts) best = {part_v[threadIdx.x], part_i[threadIdx.x]};
    best = block_best<kArgmaxParts>(best);
    if (threadIdx.x == 0) {
        // std::max_element keeps index 0 when x[0] is NaN (nothing compares larger than it), and an
        // all-NaN x has no candidate: 0 as well.
        const bool first_nan = isnan(__ldg(x));
        *out = static_cast<int32_t>(first_nan || best.i == n ? 0 : best.i);
    }
}

}  // namespace

cudaError_t launch_argmax(const float* x, int64_t n, int32_t* out, void* workspace, cudaStream_t stream) {
    if (n <= 0 || workspace == nullptr) return cudaErrorInvalidValue;
    const int64_t want = (n + kElementsPerPart - 1) / kElementsPerPart;
    const int parts = static_cast<int>(want < kArgmaxParts ? want : kArgmaxParts);
    auto* part_i = static_cast<int64_t*>(workspace);
    auto* part_v = reinterpret_cast<float*>(part_i + kArgmaxParts);
    (void)launch_chained(argmax_parts_kernel, dim3(static_cast<unsigned>(parts)), dim3(kPartThreads), 0, stream, x, n,
                         part_v, part_i);
    if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
    (void)launch_chained(argmax_final_kernel, dim3(1), dim3(kArgmaxParts), 0, stream, x, n,
                         static_cast<const float*>(part_v), static_cast<const int64_t*>(part_i), parts, out);
    return cudaGetLastError();
}

}  // namespace dense::cuda::act
