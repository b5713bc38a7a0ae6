// The free-order GEMM's K split (kernels/gemm_mma_wide.cuh) and the workspace it needs: computed alike
// by the op's workspace query (gemm_ops.cpp) and by the launch, so the launch finds what it planned.
// Plain C++ (no CUDA header): tests/cuda/gemm_free_order_plan_test.cpp runs it on every machine.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <initializer_list>

namespace dense::cuda {

// DENSE_CUDA_GEMM_FREE_SPLITS=N (1..16): the free-order GEMM's K split forced, for A/B measurements
// (read on every call, by the workspace query and the launch alike); unset or 0: the plan's choice.
inline int gemm_free_order_forced_splits() {
    const char* v = std::getenv("DENSE_CUDA_GEMM_FREE_SPLITS");
    if (v == nullptr) return 0;
    const int n = std::atoi(v);
    return n >= 1 && n <= 16 ? n : 0;
}

// The free-order GEMM's K split for `out` rows x `in` x `cols` columns on a device of `sm_count`
// multiprocessors (gemm_mma_wide.cuh), and the workspace its partial sums need (0 for one split).
// Blocks of 128 rows x 64 columns run two to a multiprocessor (the kernel's launch bound); the split
// count aims at 8 * sm_count blocks (four rounds of two an SM, so the last round's imbalance is a
// small part), within three limits: at most 8 splits, at least two 256-element steps a split, and at
// most 32 MiB of partial sums (cols * out * 4 bytes a split; at least one split). Measured on an H100
// (docs/perf-notes.md, session 32, pp512 in 64-token chunks): 1 split 651 tok/s, 2 881, 4 1230, 8
// 1312, the session's first rule (3-6 splits, filling whole waves) 1214. DENSE_CUDA_GEMM_FREE_SPLITS=N
// overrides the choice (measurements only; then at most 16 and steps / 2, without the memory limit).
struct GemmFreeOrderPlan {
    int splits = 1;
    uint64_t workspace_bytes = 0;
};
inline GemmFreeOrderPlan gemm_free_order_plan(int64_t out, int64_t in, int64_t cols, int sm_count, int forced_splits = 0) {
    GemmFreeOrderPlan plan;
    if (out <= 0 || in <= 0 || cols <= 0) return plan;
    const int64_t steps = (in + 255) / 256;
    const int64_t tiles = (out + 127) / 128 * ((cols + 63) / 64);
    const int64_t target = 8 * static_cast<int64_t>(sm_count > 0 ? sm_count : 1);
    const int64_t split_bytes = cols * out * 4;
    int64_t splits = (target + tiles - 1) / tiles;
    for (const int64_t limit : {int64_t{8}, steps / 2, (int64_t{32} << 20) / split_bytes})
        if (splits > limit) splits = limit;
    if (forced_splits > 0) splits = forced_splits < 16 ? forced_splits : 16;
    if (forced_splits > 0 && splits > steps / 2) splits = steps / 2;
    if (splits < 1) splits = 1;
    plan.splits = static_cast<int>(splits);
    plan.workspace_bytes = splits > 1 ? static_cast<uint64_t>(splits * split_bytes) : 0u;
    return plan;
}

}  // namespace dense::cuda
