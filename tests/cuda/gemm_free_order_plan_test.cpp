// The free-order GEMM's K split and workspace (plugins/cuda-common/src/kernels/gemm_free_order_plan.hpp):
// what the workspace query and the launch both compute. Plain C++: runs on every machine. The GPU
// tests CudaGemm.*InFreeOrderStayWithinTheOrderBound run the kernel with the workspace it plans.
#include "../../plugins/cuda-common/src/kernels/gemm_free_order_plan.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <tuple>

namespace dense::test::cuda {
namespace {

using dense::cuda::gemm_free_order_plan;
using dense::cuda::GemmFreeOrderPlan;

// Blocks of 128 rows x 64 columns, two a multiprocessor: the plan's own unit.
int64_t blocks(int64_t out, int64_t cols, int splits) { return (out + 127) / 128 * ((cols + 63) / 64) * splits; }

TEST(GemmFreeOrderPlan, SplitsStayWithinTheirLimitsAndTheWorkspaceHoldsEveryPartialSum) {
    for (const int sm : {1, 36, 132})
        for (const int64_t out : {1, 48, 1024, 4100, 5120, 17408, 248320})
            for (const int64_t in : {32, 256, 768, 5120, 17408})
                for (const int64_t cols : {2, 17, 64, 65, 256}) {
                    const std::string label = std::to_string(out) + " x " + std::to_string(in) + " x " +
                                              std::to_string(cols) + " on " + std::to_string(sm) + " SMs";
                    const GemmFreeOrderPlan p = gemm_free_order_plan(out, in, cols, sm);
                    const int64_t split_bytes = cols * out * 4;
                    EXPECT_GE(p.splits, 1) << label;
                    EXPECT_LE(p.splits, 8) << label;
                    if (p.splits > 1) {
                        EXPECT_LE(p.splits, (in + 255) / 256 / 2) << label << ": two steps a split";
                        EXPECT_LE(p.splits * split_bytes, int64_t{32} << 20) << label << ": 32 MiB of partial sums";
                        // More splits only while the blocks fall short of 8 per SM... (the target).
                        EXPECT_LT(blocks(out, cols, p.splits - 1), 8 * sm) << label;
                    }
                    const uint64_t want = p.splits > 1 ? static_cast<uint64_t>(p.splits * split_bytes) : 0;
                    EXPECT_EQ(p.workspace_bytes, want) << label;
                }
}

// The shapes the comment names (132 SMs, a prompt chunk of 64 or 256 columns).
TEST(GemmFreeOrderPlan, TheMeasuredShapesGetTheirSplits) {
    EXPECT_EQ(gemm_free_order_plan(5120, 17408, 64, 132).splits, 8);   // 320 blocks
    EXPECT_EQ(gemm_free_order_plan(17408, 5120, 64, 132).splits, 7);   // 952 blocks: 8 would pass 32 MiB
    EXPECT_EQ(gemm_free_order_plan(17408, 5120, 256, 132).splits, 1);  // 544 blocks, no workspace
    EXPECT_EQ(gemm_free_order_plan(17408, 5120, 256, 132).workspace_bytes, 0u);
    EXPECT_EQ(gemm_free_order_plan(5120, 17408, 256, 132).splits, 6);  // 960 blocks, 30 MiB
    EXPECT_EQ(gemm_free_order_plan(5120, 256, 64, 132).splits, 1);     // one step: nothing to split
}

TEST(GemmFreeOrderPlan, ForcedSplitsAreClampedToWhatTheShapeAllows) {
    EXPECT_EQ(gemm_free_order_plan(5120, 17408, 64, 132, 3).splits, 3);
    EXPECT_EQ(gemm_free_order_plan(5120, 17408, 256, 132, 16).splits, 16);  // no memory limit when forced
    EXPECT_EQ(gemm_free_order_plan(5120, 1024, 64, 132, 16).splits, 2);     // 4 steps: at most 2 splits
    EXPECT_EQ(gemm_free_order_plan(5120, 17408, 64, 132, 0).splits, 8);     // 0: the plan's choice
}

TEST(GemmFreeOrderPlan, EmptyShapesNeedNothing) {
    for (const auto& [out, in, cols] : {std::tuple<int64_t, int64_t, int64_t>{0, 256, 64}, {64, 0, 64}, {64, 256, 0}}) {
        const GemmFreeOrderPlan p = gemm_free_order_plan(out, in, cols, 132);
        EXPECT_EQ(p.splits, 1);
        EXPECT_EQ(p.workspace_bytes, 0u);
    }
}

}  // namespace
}  // namespace dense::test::cuda
