// What ATTN_DECODE's two partition kernels share: ops_attention.cu (fp32 FMAs, any cache type and
// head size) and ops_attention_mma.cu (tensor cores, F16 cache, head size a multiple of 32 up to 256).
// Both take the same grid, plan, workspace layout and merge kernel, so which one ran is invisible
// outside the bits of the last place of the results.
#pragma once

#include "kernels/act_common.cuh"
#include "kernels/act_launchers.hpp"

#include <cuda_fp16.h>

#include <type_traits>

namespace dense::cuda::act::attn {

// Cache element -> float (F16 exactly widened).
__device__ __forceinline__ float cache_value(uint16_t h) {
    return __half2float(__ushort_as_half(h));
}
__device__ __forceinline__ float cache_value(float f) {
    return f;
}

// Workspace layout for `partitions` partitions: o [P][hq][d], then m [P][hq], then l [P][hq].
struct Partials {
    float* o;
    float* m;
    float* l;
};
__device__ __forceinline__ Partials partials(const AttnArgs& a, int partitions) {
    Partials w;
    w.o = a.workspace;
    w.m = w.o + static_cast<int64_t>(partitions) * a.hq * a.d;
    w.l = w.m + static_cast<int64_t>(partitions) * a.hq;
    return w;
}

// The arguments of token t: its q, gate, output rows, n_kv word and partials.
__device__ __forceinline__ AttnArgs for_token(AttnArgs a, const AttnPlan& plan, int64_t t) {
    if (t == 0) return a;
    a.q += t * a.q_tstride;
    if (a.gate != nullptr) a.gate += t * a.gate_tstride;
    a.out += t * a.out_tstride;
    a.n_kv += t;
    if (a.workspace != nullptr) a.workspace += t * static_cast<int64_t>(plan.workspace_bytes / sizeof(float));
    return a;
}

__device__ __forceinline__ bool n_kv_valid(int64_t n, int64_t n_ctx) {
    return n >= 1 && n <= n_ctx;
}

// What one block of the partition grid does: partition `part` of the history for the query heads
// [first, first + nh) of KV head blockIdx.y. grouped_work is the grid's plain assignment (grid.z runs
// over head blocks and tokens); block_work adds the spread (ops_attention.cu's header says why): a
// one-token call whose history leaves most partitions unused gives block x query head x % group of
// partition x / group alone. part >= split.used: nothing (the whole block returns).
struct BlockWork {
    int64_t part;
    int64_t first;
    int nh;
};
__device__ __forceinline__ BlockWork grouped_work(const AttnPlan& plan, int64_t token, int64_t group) {
    BlockWork w;
    w.part = blockIdx.x;
    w.first = static_cast<int64_t>(blockIdx.z - token * plan.head_blocks) * plan.heads_per_block;
    w.nh = static_cast<int>(group - w.first < plan.heads_per_block ? group - w.first : plan.heads_per_block);
    return w;
}
__device__ __forceinline__ BlockWork block_work(const AttnArgs& all, const AttnPlan& plan, int64_t token,
                                                const AttnSplit& split, int64_t group) {
    BlockWork w = grouped_work(plan, token, group);
    if (all.tokens == 1 && plan.head_blocks == 1 && static_cast<int64_t>(split.used) * group <= plan.partitions) {
        const int grp = static_cast<int>(group);  // <= 8 here: a 32-bit division
        w.part = static_cast<int>(blockIdx.x) / grp;
        w.first = static_cast<int>(blockIdx.x) - w.part * grp;
        w.nh = 1;
    }
    return w;
}

// n_kv outside [1, n_ctx]: block (0, g, z) fills its (grouped) heads' rows of dst with NaN; every
// block then returns without touching K/V or the workspace.
__device__ __forceinline__ void fill_nan_rows(const AttnArgs& a, const AttnPlan& plan, int64_t token, int64_t group) {
    const BlockWork w = grouped_work(plan, token, group);
    if (blockIdx.x != 0) return;
    for (int64_t i = threadIdx.x; i < w.nh * a.d; i += blockDim.x)
        a.out[(static_cast<int64_t>(blockIdx.y) * group + w.first) * a.d + i] = __int_as_float(0x7FC00000);
}

// Calls launch(std::integral_constant<int, k>{}) for the L2 prefetch distance k in tiles: 0, 1 or 2
// (anything else: 1), so each partition kernel is instantiated for the three distances once.
template <class Launch>
void with_prefetch_tiles(int tiles, Launch&& launch) {
    switch (tiles) {
        case 0:
            launch(std::integral_constant<int, 0>{});
            break;
        case 2:
            launch(std::integral_constant<int, 2>{});
            break;
        default:
            launch(std::integral_constant<int, 1>{});
            break;
    }
}

// Asks L2 for the K and V rows (head g) of positions [t0, min(t0 + positions, end)): every 128-byte
// line that starts inside a row, one per thread per round. Addresses stay inside the rows read anyway.
template <class E>
__device__ __forceinline__ void prefetch_rows_l2(const AttnArgs& a, const E* kc, const E* vc, int64_t g, int64_t t0,
                                                 int64_t end, int positions) {
    if (t0 >= end) return;
    const int n_pos = static_cast<int>(end - t0 < positions ? end - t0 : positions);
    const int64_t row_bytes = a.d * static_cast<int64_t>(sizeof(E));
    const int lines = static_cast<int>((row_bytes + 127) / 128);  // per row
    const int per_cache = n_pos * lines;
    for (int i = static_cast<int>(threadIdx.x); i < 2 * per_cache; i += static_cast<int>(blockDim.x)) {
        const bool is_v = i >= per_cache;
        const int r = is_v ? i - per_cache : i;
        const int pos = r / lines, line = r - pos * lines;
        const char* row = reinterpret_cast<const char*>((is_v ? vc : kc) + ((t0 + pos) * a.hkv + g) * a.d);
        asm volatile("prefetch.global.L2 [%0];" ::"l"(row + 128 * static_cast<int64_t>(line)));
    }
}

// The single pass's final rows (dst = o / l, times sigmoid(gate)) or a partition's partials, from the
// block's shared o [nh][d], l [nh] and m [nh].
__device__ __forceinline__ void write_block_result(const AttnArgs& a, const AttnPlan& plan, const AttnSplit& split,
                                                   int64_t part, int64_t h0, int nh, const float* o, const float* m,
                                                   const float* l) {
    const int64_t d = a.d;
    if (split.used == 1) {
        for (int64_t i = threadIdx.x; i < nh * d; i += blockDim.x) {
            const int64_t hh = i / d, e = i - hh * d;
            float v = o[i] / l[hh];
            if (a.gate != nullptr) v *= sigmoid_f(a.gate[(h0 + hh) * a.gate_stride + e]);
            a.out[h0 * d + i] = v;
        }
        return;
    }
    const Partials w = partials(a, plan.partitions);
    const int64_t row = part * a.hq + h0;  // (partition, first head)
    for (int64_t i = threadIdx.x; i < nh * d; i += blockDim.x) w.o[row * d + i] = o[i];
    if (threadIdx.x < static_cast<unsigned>(nh)) {
        w.m[row + threadIdx.x] = m[threadIdx.x];
        w.l[row + threadIdx.x] = l[threadIdx.x];
    }
}

// The tensor-core kernel (ops_attention_mma.cu): whether it takes this call, and its launch on the
// partition grid (the merge kernel is launched by the caller, as for the fp32 kernel).
bool mma_kernel_applies(const AttnArgs& a, const AttnPlan& plan);
void launch_mma_partitions(const dim3& grid, const AttnArgs& a, const AttnPlan& plan, int prefetch_tiles,
                           cudaStream_t stream);

}  // namespace dense::cuda::act::attn
