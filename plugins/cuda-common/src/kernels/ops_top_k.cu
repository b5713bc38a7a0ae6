// TOP_K (ABI 1.15): the k best logits of a sampled token step, so that k (id, logit) pairs cross the
// bus instead of the vocabulary's logits (~1 MB on the 27B), and the host's top-p, min-p, temperature
// and draw run on them.
//
// Exact and deterministic: each element becomes one 64-bit key whose order is the contract's order
// (below), all keys are distinct, and the kernels only sort keys, so the answer cannot depend on how
// the work is split. Two kernels, chained like every launch here:
//   1. one block per kTopKBlockElements elements sorts that many keys in shared memory (bitonic,
//      descending) and writes its best k to the workspace;
//   2. one block merges the blocks' lists: the running best k plus as many new keys as fill the
//      tile, sorted, the first k kept, until every list is in (for 248,320 logits and k = 64: 61
//      lists of 64, one tile). It writes each key's index and reads its value back from x, so the
//      stored bits come back (a -0.0 stays -0.0 although its key is +0.0's).
// The logits were written by the LM head just before, so they are read from L2.
#include "kernels/act_launchers.hpp"
#include "kernels/launch_chain.cuh"

#include <dense/abi/dense_abi.h>

#include <cstdint>
#include <math_constants.h>

namespace dense::cuda::act {
namespace {

constexpr int kTopKThreads = 1024;
constexpr int kTile = static_cast<int>(kTopKBlockElements);  // keys a block sorts at once
static_assert(kTile == 4 * kTopKThreads, "each thread loads 4 elements and handles 2 pairs per stage");

// The key of x[i]: 0 for a NaN or -inf (no candidate; every other key is larger). Else the value's
// bits mapped to an unsigned order (negative: all bits flipped; positive: the sign bit set), with -0.0
// taken as +0.0 so that the two tie, in the high word; the index, reversed so the lower one is
// larger, in the low word.
__device__ __forceinline__ uint64_t key_of(float v, uint32_t i) {
    if (isnan(v) || v == -CUDART_INF_F) return 0;
    const uint32_t u = __float_as_uint(v == 0.0f ? 0.0f : v);
    const uint32_t ordered = (u & 0x80000000u) != 0 ? ~u : (u | 0x80000000u);
    return (static_cast<uint64_t>(ordered) << 32) | static_cast<uint64_t>(0xFFFFFFFFu - i);
}

// Sorts the kTile keys of `a` descending, with every thread of the block (a bitonic network: the
// same compare-exchanges whatever the data). Starts and ends with a barrier.
__device__ void sort_descending(uint64_t* a) {
    for (int size = 2; size <= kTile; size <<= 1) {
        for (int stride = size >> 1; stride > 0; stride >>= 1) {
            __syncthreads();
            for (int p = static_cast<int>(threadIdx.x); p < kTile / 2; p += kTopKThreads) {
                // Pair p's lower element: (p / stride) * 2 * stride + p % stride, for a power of two.
                const int i = ((p & ~(stride - 1)) << 1) | (p & (stride - 1));
                const int j = i + stride;
                const bool descending = (i & size) == 0;
                const uint64_t x = a[i], y = a[j];
                if (descending ? x < y : x > y) {
                    a[i] = y;
                    a[j] = x;
                }
            }
        }
    }
    __syncthreads();
}

// Block b: the best k keys of x[b * kTile, (b + 1) * kTile) into best[b * k, (b + 1) * k).
__global__ void __launch_bounds__(kTopKThreads) top_k_blocks_kernel(const float* __restrict__ x, int64_t n, int k,
                                                                    uint64_t* __restrict__ best) {
    wait_for_producers();  // launch_chain.cuh: the logits are the kernel before's output
    allow_consumers();
    __shared__ uint64_t keys[kTile];
    const int64_t first = static_cast<int64_t>(blockIdx.x) * kTile;
    for (int t = static_cast<int>(threadIdx.x); t < kTile; t += kTopKThreads) {
        const int64_t i = first + t;
        keys[t] = i < n ? key_of(__ldg(x + i), static_cast<uint32_t>(i)) : 0;
    }
    sort_descending(keys);
    if (static_cast<int>(threadIdx.x) < k) best[blockIdx.x * static_cast<int64_t>(k) + threadIdx.x] = keys[threadIdx.x];
}

// One block: the best k of the `lists` * k keys in `best`, as ids and the values x stores there.
__global__ void __launch_bounds__(kTopKThreads) top_k_merge_kernel(const float* __restrict__ x,
                                                                   const uint64_t* __restrict__ best, int64_t lists,
                                                                   int k, int32_t* __restrict__ ids,
                                                                   float* __restrict__ values) {
    wait_for_producers();  // the blocks' lists (and, through them, the logits) are complete
    allow_consumers();
    __shared__ uint64_t tile[kTile];
    const int64_t total = lists * k;
    // tile[0, k): the best so far (none yet: key 0); the rest of the tile takes new keys.
    for (int t = static_cast<int>(threadIdx.x); t < k; t += kTopKThreads) tile[t] = 0;
    int64_t next = 0;
    do {
        for (int t = static_cast<int>(threadIdx.x) + k; t < kTile; t += kTopKThreads) {
            const int64_t i = next + (t - k);
            tile[t] = i < total ? best[i] : 0;
        }
        sort_descending(tile);  // its first barrier orders the loads above after the last tile's reads
        next += kTile - k;
    } while (next < total);
    if (static_cast<int>(threadIdx.x) < k) {
        const uint64_t key = tile[threadIdx.x];
        const auto id = static_cast<uint32_t>(0xFFFFFFFFu - static_cast<uint32_t>(key));
        ids[threadIdx.x] = key == 0 ? -1 : static_cast<int32_t>(id);
        values[threadIdx.x] = key == 0 ? -CUDART_INF_F : __ldg(x + id);
    }
}

}  // namespace

cudaError_t launch_top_k(const float* x, int64_t n, int64_t k, int32_t* ids, float* values, void* workspace,
                         cudaStream_t stream) {
    if (n <= 0 || k < 1 || k > DENSE_TOP_K_MAX || workspace == nullptr) return cudaErrorInvalidValue;
    const int64_t blocks = (n + kTile - 1) / kTile;
    auto* best = static_cast<uint64_t*>(workspace);
    (void)launch_chained(top_k_blocks_kernel, dim3(static_cast<unsigned>(blocks)), dim3(kTopKThreads), 0, stream, x,
                         n, static_cast<int>(k), best);
    (void)launch_chained(top_k_merge_kernel, dim3(1), dim3(kTopKThreads), 0, stream, x,
                         static_cast<const uint64_t*>(best), blocks, static_cast<int>(k), ids, values);
    return cudaGetLastError();
}

}  // namespace dense::cuda::act
