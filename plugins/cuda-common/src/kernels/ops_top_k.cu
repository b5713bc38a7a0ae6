// TOP_K (ABI 1.15): the k best logits of a sampled token step, so that k (id, logit) pairs cross the
// bus instead of the vocabulary's logits (~1 MB on the 27B), and the host's top-p, min-p, temperature
// and draw run on them.
//
// Exact and deterministic: each element becomes one 64-bit key whose order is the contract's order
// (key_of below), all keys are distinct, and the answer is the first k of a sort of keys, so it cannot
// depend on how the work is split or in which order atomics land. Three chained kernels:
//   1. group maxima: x split into kTopKGroups groups, one block each writes its group's largest key;
//   2. filter: T = the smallest of those maxima is a lower bound of the k-th best key (k <= 64 groups
//      each hold a key >= T, all distinct), so only keys >= T can be among the k best. Every block
//      appends those to a list in the workspace (an atomic counter; for random logits ~0.1 % of them,
//      ~300 of the 27B's 248,320);
//   3. one block ranks the list (a short one: each key's place is the number of keys above it) or
//      sorts it (bitonic, in shared memory) and writes the first k: each key's index,
//      and its value read back from x, so the stored bits come back (a -0.0 stays -0.0 although its
//      key is +0.0's). If more keys passed than the list holds (a group has no candidate, so T is 0;
//      or logits in ascending order), it walks x itself in tiles with a running best k instead: slow
//      (milliseconds) but exact, for inputs no language model's head writes.
// Why not sort everything: session 40's first version sorted every 4,096 keys (61 blocks) and then
// the blocks' lists; on an H100 that took 46 + 41 us a token (78 bitonic stages a sort, bound by
// one SM's issue rate), where this reads the logits twice from L2 and sorts ~512 keys.
#include "kernels/act_common.cuh"
#include "kernels/act_launchers.hpp"
#include "kernels/launch_chain.cuh"

#include <dense/abi/dense_abi.h>

#include <algorithm>
#include <cstdint>
#include <math_constants.h>

namespace dense::cuda::act {
namespace {

constexpr int kThreads = 1024;                                   // kernels 1 and 3
constexpr int kFilterThreads = 256;                              // kernel 2
constexpr int kGroups = static_cast<int>(kTopKGroups);           // >= DENSE_TOP_K_MAX
constexpr int kListCapacity = static_cast<int>(kTopKListCapacity);  // keys kernel 3 sorts at once
static_assert(kGroups >= DENSE_TOP_K_MAX, "T must stand for at least k distinct keys");
static_assert(kGroups <= 2 * 32, "kernel 2 reduces the maxima with one warp, two a lane");
static_assert(kListCapacity == 4 * kThreads, "a sort has 2 pairs per thread per stage");
static_assert(kThreads >= DENSE_TOP_K_MAX, "a list too long to rank holds at least k keys");

// The workspace: the groups' maxima, the list's length, the list.
struct Workspace {
    uint64_t* maxima;
    unsigned* count;
    uint64_t* list;
};
__device__ __forceinline__ Workspace workspace_of(void* base) {
    auto* b = static_cast<unsigned char*>(base);
    return {reinterpret_cast<uint64_t*>(b), reinterpret_cast<unsigned*>(b + kTopKCountOffset),
            reinterpret_cast<uint64_t*>(b + kTopKListOffset)};
}

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

__device__ __forceinline__ uint64_t warp_max(uint64_t v) {
    for (int o = 16; o > 0; o >>= 1) {
        const uint64_t other = __shfl_xor_sync(kFullMask, v, o);
        v = other > v ? other : v;
    }
    return v;
}

// Sorts the first `size` keys of `a` (a power of two, 2..kListCapacity) descending with every thread
// of the block (a bitonic network: the same compare-exchanges whatever the data). Starts and ends
// with a barrier.
__device__ void sort_descending(uint64_t* a, int size) {
    for (int run = 2; run <= size; run <<= 1) {
        for (int stride = run >> 1; stride > 0; stride >>= 1) {
            __syncthreads();
            for (int p = static_cast<int>(threadIdx.x); p < size / 2; p += kThreads) {
                // Pair p's lower element: (p / stride) * 2 * stride + p % stride, for a power of two.
                const int i = ((p & ~(stride - 1)) << 1) | (p & (stride - 1));
                const int j = i + stride;
                const bool descending = (i & run) == 0;
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

// Kernel 1, block g: the largest key of x[g n / groups, (g + 1) n / groups) (0 for none) into
// maxima[g]; block 0 also empties the list.
__global__ void __launch_bounds__(kThreads) top_k_group_max_kernel(const float* __restrict__ x, int64_t n,
                                                                   void* workspace) {
    wait_for_producers();  // launch_chain.cuh: the logits are the kernel before's output
    allow_consumers();
    const Workspace ws = workspace_of(workspace);
    const int64_t first = n * blockIdx.x / kGroups, end = n * (blockIdx.x + 1) / kGroups;
    uint64_t best = 0;
    for (int64_t i = first + threadIdx.x; i < end; i += kThreads) {
        const uint64_t key = key_of(__ldg(x + i), static_cast<uint32_t>(i));
        best = key > best ? key : best;
    }
    best = warp_max(best);
    __shared__ uint64_t per_warp[kThreads / 32];
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    if (lane == 0) per_warp[warp] = best;
    __syncthreads();
    if (warp != 0) return;
    best = warp_max(per_warp[lane]);
    if (lane == 0) {
        ws.maxima[blockIdx.x] = best;
        if (blockIdx.x == 0) *ws.count = 0;
    }
}

// Kernel 2: every key >= T (the smallest group maximum) appended to the list, one atomic a warp and round.
__global__ void __launch_bounds__(kFilterThreads) top_k_filter_kernel(const float* __restrict__ x, int64_t n,
                                                                      void* workspace) {
    wait_for_producers();  // the maxima and the emptied counter are kernel 1's
    allow_consumers();
    const Workspace ws = workspace_of(workspace);
    __shared__ uint64_t threshold;
    const unsigned lane = threadIdx.x & 31u;
    if (threadIdx.x < 32) {
        uint64_t a = ws.maxima[lane], b = lane + 32 < kGroups ? ws.maxima[lane + 32] : ~uint64_t{0};
        uint64_t t = a < b ? a : b;
        for (int o = 16; o > 0; o >>= 1) {
            const uint64_t other = __shfl_xor_sync(kFullMask, t, o);
            t = other < t ? other : t;
        }
        if (lane == 0) threshold = t;
    }
    __syncthreads();
    const uint64_t t = threshold;
    const int64_t stride = static_cast<int64_t>(gridDim.x) * kFilterThreads;
    // Whole warps go round together (the bound is the warp's first index), so the ballot has every lane.
    for (int64_t base = static_cast<int64_t>(blockIdx.x) * kFilterThreads + (threadIdx.x & ~31u); base < n;
         base += stride) {
        const int64_t i = base + lane;
        const uint64_t key = i < n ? key_of(__ldg(x + i), static_cast<uint32_t>(i)) : 0;
        const bool pass = key != 0 && key >= t;
        const unsigned passing = __ballot_sync(kFullMask, pass);
        if (passing == 0) continue;
        unsigned at = 0;
        if (lane == 0) at = atomicAdd(ws.count, static_cast<unsigned>(__popc(passing)));
        at = __shfl_sync(kFullMask, at, 0) + static_cast<unsigned>(__popc(passing & ((1u << lane) - 1u)));
        if (pass && at < static_cast<unsigned>(kListCapacity)) ws.list[at] = key;
    }
}

// Kernel 3 (one block): the first k of the sorted list, or of x itself where the list overflowed.
__global__ void __launch_bounds__(kThreads) top_k_pick_kernel(const float* __restrict__ x, int64_t n, int k,
                                                              void* workspace, int32_t* __restrict__ ids,
                                                              float* __restrict__ values) {
    wait_for_producers();  // the list is kernel 2's
    allow_consumers();
    const Workspace ws = workspace_of(workspace);
    __shared__ uint64_t keys[kListCapacity];
    __shared__ uint64_t ranked[DENSE_TOP_K_MAX];
    const unsigned count = *ws.count;
    const uint64_t* best = keys;  // the first k of the answer, whichever way it was found
    if (count <= static_cast<unsigned>(kThreads)) {
        // A short list (the usual case, ~300 keys): a key's place is how many keys beat it (all keys
        // are distinct, so the places are 0..count-1 once each): one pass over shared memory, every
        // thread reading the same key at once, instead of a sort's ~45 barrier-separated stages
        // (11 us on an H100 for ~300 keys, session 41's ncu).
        const int t = static_cast<int>(threadIdx.x);
        const uint64_t mine = t < static_cast<int>(count) ? ws.list[t] : 0;
        keys[t] = mine;
        if (t < k) ranked[t] = 0;  // places no key takes (fewer than k keys passed)
        __syncthreads();
        if (t < static_cast<int>(count)) {
            int place = 0;
            for (int j = 0; j < static_cast<int>(count); ++j) place += keys[j] > mine ? 1 : 0;
            if (place < k) ranked[place] = mine;
        }
        __syncthreads();
        best = ranked;
    } else if (count <= static_cast<unsigned>(kListCapacity)) {
        int size = 2;
        while (size < static_cast<int>(count)) size <<= 1;
        for (int t = static_cast<int>(threadIdx.x); t < size; t += kThreads)
            keys[t] = t < static_cast<int>(count) ? ws.list[t] : 0;
        sort_descending(keys, size);  // more than kThreads >= k keys: no slot of the first k is empty
    } else {
        // keys[0, k): the best so far (none yet); the rest of the tile takes the next keys of x.
        for (int t = static_cast<int>(threadIdx.x); t < k; t += kThreads) keys[t] = 0;
        for (int64_t next = 0; next < n; next += kListCapacity - k) {
            for (int t = static_cast<int>(threadIdx.x) + k; t < kListCapacity; t += kThreads) {
                const int64_t i = next + (t - k);
                keys[t] = i < n ? key_of(__ldg(x + i), static_cast<uint32_t>(i)) : 0;
            }
            sort_descending(keys, kListCapacity);  // its first barrier orders these loads after the last tile's reads
        }
    }
    if (static_cast<int>(threadIdx.x) < k) {
        const uint64_t key = best[threadIdx.x];
        const auto id = static_cast<uint32_t>(0xFFFFFFFFu - static_cast<uint32_t>(key));
        ids[threadIdx.x] = key == 0 ? -1 : static_cast<int32_t>(id);
        values[threadIdx.x] = key == 0 ? -CUDART_INF_F : __ldg(x + id);
    }
}

}  // namespace

cudaError_t launch_top_k(const float* x, int64_t n, int64_t k, int32_t* ids, float* values, void* workspace,
                         cudaStream_t stream) {
    if (n <= 0 || k < 1 || k > DENSE_TOP_K_MAX || workspace == nullptr) return cudaErrorInvalidValue;
    // Kernel 2: ~4 logits a thread (a 1 MB vocabulary is 248 blocks of 256), up to two waves of a big GPU.
    const int64_t filter_blocks = std::min<int64_t>(264, (n + 4 * kFilterThreads - 1) / (4 * kFilterThreads));
    (void)launch_chained(top_k_group_max_kernel, dim3(kGroups), dim3(kThreads), 0, stream, x, n, workspace);
    (void)launch_chained(top_k_filter_kernel, dim3(static_cast<unsigned>(filter_blocks)), dim3(kFilterThreads), 0,
                         stream, x, n, workspace);
    (void)launch_chained(top_k_pick_kernel, dim3(1), dim3(kThreads), 0, stream, x, n, static_cast<int>(k), workspace,
                         ids, values);
    return cudaGetLastError();
}

}  // namespace dense::cuda::act
