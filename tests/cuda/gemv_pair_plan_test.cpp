// When a GEMV_Q_MULTI list goes out as one pair launch, and how the launch's grid is shared
// (plugins/cuda-common/src/kernels/gemv_pair_plan.hpp). Plain C++: runs on every machine. The GPU
// test CudaGemvList.EveryOutputIsBitIdenticalToItsOwnGemv runs lists of both kinds (pair and per
// format) and checks every output bit for bit against its own GEMV_Q.
#include "../../plugins/cuda-common/src/kernels/gemv_pair_plan.hpp"

#include <dense/abi/dense_abi.h>

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace dense::test::cuda {
namespace {

using dense::cuda::ListMatrixOrder;
using dense::cuda::pair_grid;
using dense::cuda::plan_pair;

constexpr int kMaxPerPart = 4;  // gemv_kernel.cuh: kMaxMatrices

// A matrix of `rows` rows of `type`: streamed (ks 8, strided) or not (K split ks), readable in place.
ListMatrixOrder streamed(uint32_t type, int64_t rows) {
    return ListMatrixOrder{type, rows, 8, true, true, static_cast<double>(rows) * 1000};
}
ListMatrixOrder unstreamed(uint32_t type, int64_t rows, int ks = 8, bool direct_ok = true) {
    return ListMatrixOrder{type, rows, ks, false, direct_ok, static_cast<double>(rows) * 1000};
}

TEST(GemvPairPlan, TheTwentySevenBsGatedDeltaNetListIsOnePair) {
    // qkv and gate (Q5_K, streamed), beta and alpha (Q8_0, 48 rows: not streamed).
    const std::vector<ListMatrixOrder> list = {streamed(DENSE_TYPE_Q5_K, 10240), streamed(DENSE_TYPE_Q5_K, 6144),
                                               unstreamed(DENSE_TYPE_Q8_0, 48), unstreamed(DENSE_TYPE_Q8_0, 48)};
    const auto plan = plan_pair(list.data(), 4, DENSE_TYPE_Q5_K, DENSE_TYPE_Q8_0, kMaxPerPart);
    ASSERT_TRUE(plan.ok);
    ASSERT_EQ(plan.n_streamed, 2);
    ASSERT_EQ(plan.n_direct, 2);
    EXPECT_EQ(plan.streamed[0], 0);
    EXPECT_EQ(plan.streamed[1], 1);
    EXPECT_EQ(plan.direct[0], 2);
    EXPECT_EQ(plan.direct[1], 3);
    // The same list does not fit a pair of other formats.
    EXPECT_FALSE(plan_pair(list.data(), 4, DENSE_TYPE_Q4_K, DENSE_TYPE_Q8_0, kMaxPerPart).ok);
    EXPECT_FALSE(plan_pair(list.data(), 4, DENSE_TYPE_Q5_K, DENSE_TYPE_Q6_K, kMaxPerPart).ok);
}

TEST(GemvPairPlan, OneFormatInTwoOrdersIsOnePair) {
    // A Q4_K file's attention list: q streamed, k and v (1024 rows) not.
    const std::vector<ListMatrixOrder> list = {streamed(DENSE_TYPE_Q4_K, 12288), unstreamed(DENSE_TYPE_Q4_K, 1024),
                                               unstreamed(DENSE_TYPE_Q4_K, 1024)};
    const auto plan = plan_pair(list.data(), 3, DENSE_TYPE_Q4_K, DENSE_TYPE_Q4_K, kMaxPerPart);
    ASSERT_TRUE(plan.ok);
    EXPECT_EQ(plan.n_streamed, 1);
    EXPECT_EQ(plan.n_direct, 2);
}

TEST(GemvPairPlan, ListsThatNeedAThirdLaunchOrNoSecondAreRefused) {
    struct Case {
        const char* why;
        std::vector<ListMatrixOrder> list;
    };
    const std::vector<Case> cases = {
        {"a third format (the 27B's attention where v is Q6_K)",
         {streamed(DENSE_TYPE_Q5_K, 12288), unstreamed(DENSE_TYPE_Q8_0, 1024), unstreamed(DENSE_TYPE_Q6_K, 1024)}},
        {"two K splits in the small group", {streamed(DENSE_TYPE_Q5_K, 12288), unstreamed(DENSE_TYPE_Q8_0, 1024, 8),
                                             unstreamed(DENSE_TYPE_Q8_0, 40, 4)}},
        {"a small matrix the direct code cannot read in place (unaligned, or a partial last step)",
         {streamed(DENSE_TYPE_Q5_K, 12288), unstreamed(DENSE_TYPE_Q8_0, 48, 8, false)}},
        {"a streamed matrix of the small group's format (two streamed formats)",
         {streamed(DENSE_TYPE_Q5_K, 12288), streamed(DENSE_TYPE_Q8_0, 4096)}},
        {"nothing streamed", {unstreamed(DENSE_TYPE_Q5_K, 1024), unstreamed(DENSE_TYPE_Q8_0, 48)}},
        {"nothing beside the streamed group", {streamed(DENSE_TYPE_Q5_K, 12288), streamed(DENSE_TYPE_Q5_K, 6144)}},
        {"five streamed matrices (a launch takes four of a kind)",
         {streamed(DENSE_TYPE_Q5_K, 4096), streamed(DENSE_TYPE_Q5_K, 4096), streamed(DENSE_TYPE_Q5_K, 4096),
          streamed(DENSE_TYPE_Q5_K, 4096), streamed(DENSE_TYPE_Q5_K, 4096), unstreamed(DENSE_TYPE_Q8_0, 48)}},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.why);
        for (uint32_t d : {DENSE_TYPE_Q8_0, DENSE_TYPE_Q5_K})
            EXPECT_FALSE(plan_pair(c.list.data(), static_cast<int>(c.list.size()), DENSE_TYPE_Q5_K, d, kMaxPerPart).ok);
    }
}

TEST(GemvPairPlan, MatricesWithoutRowsAreLeftOut) {
    const std::vector<ListMatrixOrder> list = {streamed(DENSE_TYPE_Q5_K, 10240), unstreamed(DENSE_TYPE_Q6_K, 0),
                                               unstreamed(DENSE_TYPE_Q8_0, 48)};
    const auto plan = plan_pair(list.data(), 3, DENSE_TYPE_Q5_K, DENSE_TYPE_Q8_0, kMaxPerPart);
    ASSERT_TRUE(plan.ok);
    EXPECT_EQ(plan.n_streamed, 1);
    ASSERT_EQ(plan.n_direct, 1);
    EXPECT_EQ(plan.direct[0], 2);
}

TEST(GemvPairPlan, TheGridIsOneWaveSharedByBytes) {
    // The Gated DeltaNet list on an H200 (132 SMs x 3 blocks): 57.7 MB streamed in 2,048 warp tasks
    // (256 blocks' worth), 0.52 MB in 12 block tiles beside it.
    auto g = pair_grid(396, 57.7e6, 256, 0.52e6, 12);
    EXPECT_EQ(g.direct_blocks, 4u);  // ceil(396 x 0.52 / 58.22)
    EXPECT_EQ(g.streamed_blocks, 256u);  // at most one block per 8 tasks
    // The attention list: 43.3 MB streamed (768 blocks' worth), 11.1 MB in 256 tiles.
    g = pair_grid(396, 43.3e6, 768, 11.1e6, 256);
    EXPECT_EQ(g.direct_blocks, 81u);
    EXPECT_EQ(g.streamed_blocks, 315u);
    EXPECT_EQ(g.direct_blocks + g.streamed_blocks, 396u);

    // Any inputs: both parts get a block, neither more than its units, the whole at most one wave.
    std::mt19937_64 rng(7);
    for (int i = 0; i < 2000; ++i) {
        const int64_t max_blocks = 2 + static_cast<int64_t>(rng() % 2000);
        const int64_t su = 1 + static_cast<int64_t>(rng() % 5000), du = 1 + static_cast<int64_t>(rng() % 5000);
        const double sb = static_cast<double>(rng() % 100000000), db = static_cast<double>(rng() % 100000000);
        g = pair_grid(max_blocks, sb, su, db, du);
        ASSERT_GE(g.direct_blocks, 1u);
        ASSERT_GE(g.streamed_blocks, 1u);
        ASSERT_LE(g.direct_blocks, static_cast<uint64_t>(du));
        ASSERT_LE(g.streamed_blocks, static_cast<uint64_t>(su));
        ASSERT_LE(static_cast<int64_t>(g.direct_blocks + g.streamed_blocks), max_blocks);
    }
}

}  // namespace
}  // namespace dense::test::cuda
