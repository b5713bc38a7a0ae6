// The output-row split onto the CPU, executor side: a split GEMV lowered as two GEMV nodes over row
// views of the same weight must give bit-identical logits to no split when cpu-ref computes both
// halves (every output row is computed by the same code either way) — at several split points,
// from nothing to everything on the CPU side, for plain GEMVs and GEMV+residual alike; and a broken
// placement is refused up front. The GPU side of a split (exec/host_nodes.hpp) is tested in
// tests/exec/gpu_session_test.cpp.
#include "common/pack_loading.hpp"
#include "core/error.hpp"
#include "exec/kernel_copy.hpp"
#include "common/test_paths.hpp"
#include "exec/session_fixture.hpp"
#include "plan/plan_fixture.hpp"
#include "plan/row_split.hpp"
#include "plan/weight_arena.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>

namespace dense::test {
namespace {

const Model& tiny() {
    static const auto m = synth_tiny();
    return *m;
}

std::unique_ptr<exec::Session> session(std::optional<plan::Placement> split, size_t device = 0,
                                       packs::PackManager& pm = cpu_ref_packs(),
                                       dense_type_id activation = DENSE_TYPE_NONE) {
    exec::SessionOptions o;
    o.n_ctx = 32;
    o.kv_type = DENSE_TYPE_F16;
    o.device = device;
    o.threads = 3;
    o.gemv_activation = activation;
    o.row_split = std::move(split);
    return std::make_unique<exec::Session>(tiny().bound, qwen35_spec(), pm, o);
}

plan::Placement split_all_at(const std::function<int64_t(int64_t rows)>& gpu_rows) {
    return test::split_all_at(tiny(), gpu_rows);
}

std::vector<std::vector<float>> run(exec::Session& s) {
    const int32_t prompt[] = {11, 1900, 7, 42, 1023, 5};
    std::vector<std::vector<float>> logits;
    for (int32_t t : prompt) {
        s.step(t, true);
        logits.emplace_back(s.logits().begin(), s.logits().end());
    }
    return logits;
}

int64_t split_count(const plan::Placement& p) {
    int64_t n = 0;
    for (const auto& r : p.ranges) n += r.side == plan::Side::Cpu && r.first > 0;  // both halves present
    return n;
}

TEST(RowSplitSession, LogitsBitIdenticalWithAndWithoutSplit) {
    auto plain = session(std::nullopt);
    const auto reference = run(*plain);
    const size_t plain_nodes = plain->node_count();

    struct Case {
        std::string name;
        plan::Placement placement;
    };
    std::vector<Case> cases;
    cases.push_back({"0 rows on the cpu", split_all_at([](int64_t rows) { return rows; })});
    cases.push_back({"8 rows on the gpu", split_all_at([](int64_t) { return 8; })});
    cases.push_back({"half", split_all_at([](int64_t rows) { return rows / 2; })});
    cases.push_back({"all but 8 rows on the cpu", split_all_at([](int64_t rows) { return rows - 8; })});
    cases.push_back({"all rows on the cpu", split_all_at([](int64_t) { return 0; })});
    cases.push_back({"choose_row_split 1/3", plan::choose_row_split(tiny().bound, qwen35_spec(),
                                                                    plan::weight_arena(tiny().bound).bytes / 3)
                                                 .placement});
    for (const auto& c : cases) {
        SCOPED_TRACE(c.name);
        auto s = session(c.placement);
        // Each split with rows on both sides adds exactly one node; all-CPU tensors keep one node.
        EXPECT_EQ(s->node_count(), plain_nodes + static_cast<size_t>(split_count(c.placement)));
        uint64_t cpu_bytes = 0;
        for (const auto& k : plan::summarize(tiny().bound, c.placement)) cpu_bytes += k.cpu_bytes;
        EXPECT_EQ(s->bill().cpu_read_bytes, cpu_bytes);
        const auto got = run(*s);
        // The CPU rows really ran as host jobs (exec/host_nodes.hpp) whenever there are CPU rows.
        EXPECT_EQ(s->host_split_stats().jobs > 0, cpu_bytes > 0);
        ASSERT_EQ(got.size(), reference.size());
        for (size_t i = 0; i < got.size(); ++i) {
            ASSERT_EQ(got[i].size(), reference[i].size());
            EXPECT_EQ(std::memcmp(got[i].data(), reference[i].data(), got[i].size() * sizeof(float)), 0)
                << "logits differ at step " << i;
        }
    }
    // The cases really split: both halves exist somewhere, and a GEMV+residual (ffn_down) is split.
    EXPECT_GT(split_count(cases[2].placement), 0);
    EXPECT_GT(cases[2].placement.gpu_rows("blk.0.ffn_down.weight"), 0);
    EXPECT_LT(cases[2].placement.gpu_rows("blk.0.ffn_down.weight"), tiny().bound.layers[0].tensors.at("ffn_down")->ne[1]);
}

// ffn_gate's and ffn_up's CPU rows read the same activation and, hoisted next to each other, run as
// one job (exec/host_nodes.hpp): at least one job fewer per layer than with DENSE_ROW_SPLIT_MERGE=0,
// the same logits bit for bit.
TEST(RowSplitSession, GateAndUpCpuRowsRunAsOneJob) {
    const auto placement = split_all_at([](int64_t rows) { return rows / 2; });
    const auto jobs_and_logits = [&](const char* merge) {
        ::setenv("DENSE_ROW_SPLIT_MERGE", merge, 1);
        auto s = session(placement);
        ::unsetenv("DENSE_ROW_SPLIT_MERGE");
        const auto logits = run(*s);
        return std::make_pair(s->host_split_stats().jobs, logits);
    };
    const auto [merged_jobs, merged] = jobs_and_logits("1");
    const auto [single_jobs, single] = jobs_and_logits("0");
    const uint64_t steps = 6;
    // Every layer merges at least its ffn pair (the projections that share the attention input,
    // like q/k/v, merge too); the same number every step.
    EXPECT_GE(single_jobs - merged_jobs, steps * tiny().bound.layers.size());
    EXPECT_EQ((single_jobs - merged_jobs) % steps, 0u);
    ASSERT_EQ(merged.size(), single.size());
    for (size_t i = 0; i < merged.size(); ++i)
        EXPECT_EQ(std::memcmp(merged[i].data(), single[i].data(), merged[i].size() * sizeof(float)), 0) << "step " << i;
}

// The kernel that carries a GPU split's activations and CPU results (exec/kernel_copy.hpp) is the
// CUDA pack's F32 DEQUANTIZE, found for an sm_90 device (a simulated one here: nothing runs); the
// CPU has none.
TEST(RowSplitSession, KernelCopyFindsTheCudaPacksF32Copy) {
    const auto pack = build_pack_dir() / "libdense-cuda-sm90.so";
    if (!std::filesystem::exists(pack)) GTEST_SKIP() << "no CUDA pack in this build (" << pack.string() << ")";
    ::setenv("DENSE_FAKE_DEVICES", "cuda:9.0:16GiB:Test Card", 1);
    const auto loaded = load_packs_from({build_pack_dir() / "libdense-cpu-ref.so", pack});
    ::unsetenv("DENSE_FAKE_DEVICES");
    std::optional<size_t> gpu;
    for (size_t d = 0; d < loaded->devices().size(); ++d)
        if (loaded->devices()[d].is_cuda()) gpu = d;
    ASSERT_TRUE(gpu.has_value()) << "the simulated device was not probed";
    if (loaded->chosen_pack(*gpu) == nullptr) GTEST_SKIP() << "the sm_90 pack is not usable on the simulated device";
    const packs::OpCandidate* op = exec::KernelCopy::find_op(*loaded, *gpu);
    ASSERT_NE(op, nullptr);
    EXPECT_EQ(op->pack, "cuda-sm90");
    EXPECT_EQ(op->impl.op_kind, static_cast<uint32_t>(DENSE_OP_DEQUANTIZE));
    EXPECT_EQ(op->impl.weight_type, static_cast<uint32_t>(DENSE_TYPE_F32));
    EXPECT_EQ(exec::KernelCopy::find_op(*loaded, 0), nullptr) << "a copy kernel for the CPU";
}

// A GPU session's split in miniature, on the CPU: the GPU's activation format (Q8_32) and every pack
// of the build, so the CPU rows of the formats cpu-avx2 serves run there (where the CPU has AVX2),
// the others on cpu-ref, as host jobs beside the other ops. Against the same session without a
// split with cpu-ref alone: bit for bit (cpu-avx2 reproduces cpu-ref's arithmetic exactly).
TEST(RowSplitSession, Q8_32SplitWithTheAvx2PackIsBitIdenticalToCpuRefUnsplit) {
    const auto loaded =
        load_packs_from({build_pack_dir() / "libdense-cpu-ref.so", build_pack_dir() / "libdense-cpu-avx2.so"});
    packs::PackManager& all = *loaded;
    auto plain = session(std::nullopt, 0, cpu_ref_packs(), DENSE_TYPE_Q8_32);
    EXPECT_EQ(plain->packs_used(), std::vector<std::string>{"cpu-ref"});
    const auto reference = run(*plain);
    const packs::PackRecord* avx2 = all.find_pack("cpu-avx2");
    const bool avx2_usable = avx2 != nullptr && avx2->usable();
    for (const auto& placement : {split_all_at([](int64_t rows) { return rows / 2; }), split_all_at([](int64_t) { return 0; })}) {
        auto s = session(placement, 0, all, DENSE_TYPE_Q8_32);
        // What bench reports as the step's packs: cpu-ref's ops first (the embedding row), and
        // cpu-avx2's GEMVs where this CPU can run them.
        const auto used = s->packs_used();
        ASSERT_FALSE(used.empty());
        EXPECT_EQ(used.front(), "cpu-ref");
        EXPECT_EQ(std::count(used.begin(), used.end(), "cpu-avx2"), avx2_usable ? 1 : 0);
        const auto got = run(*s);
        EXPECT_GT(s->host_split_stats().jobs, 0u);
        ASSERT_EQ(got.size(), reference.size());
        for (size_t i = 0; i < got.size(); ++i)
            EXPECT_EQ(std::memcmp(got[i].data(), reference[i].data(), got[i].size() * sizeof(float)), 0)
                << "logits differ at step " << i;
        // State-only steps between (the LM head's CPU rows not run) change nothing either.
        s->reset();
        const int32_t prompt[] = {11, 1900, 7, 42, 1023, 5};
        for (size_t i = 0; i < std::size(prompt); ++i) {
            const bool logits = i % 2 == 1;
            s->step(prompt[i], logits);
            if (logits) {
                EXPECT_EQ(std::memcmp(s->logits().data(), reference[i].data(), reference[i].size() * sizeof(float)), 0)
                    << "logits differ at step " << i << " after state-only steps";
            }
        }
    }
}

// The layer observer (--dump-layers, the GPU tests' per-layer comparison) sees every layer's output
// with its CPU rows in it, also where a layer ends with the CPU part of a split (every row on the CPU).
TEST(RowSplitSession, LayerObserverSeesEveryLayerWithItsCpuRows) {
    const auto observe = [](exec::Session& s) {
        std::vector<std::vector<float>> layers;
        s.set_layer_observer([&](int64_t, int64_t, std::span<const float> h) { layers.emplace_back(h.begin(), h.end()); });
        for (int32_t t : {11, 1900, 7}) s.step(t, true);
        return layers;
    };
    auto plain = session(std::nullopt);
    const auto reference = observe(*plain);
    ASSERT_EQ(reference.size(), 3 * tiny().bound.layers.size());
    for (const auto& placement : {split_all_at([](int64_t rows) { return rows / 2; }), split_all_at([](int64_t) { return 0; })}) {
        auto s = session(placement);
        const auto got = observe(*s);
        ASSERT_EQ(got.size(), reference.size());
        for (size_t i = 0; i < got.size(); ++i)
            EXPECT_EQ(std::memcmp(got[i].data(), reference[i].data(), got[i].size() * sizeof(float)), 0)
                << "layer output " << i << " differs";
    }
}

TEST(RowSplitSession, BrokenPlacementRefusedBeforeAnythingRuns) {
    plan::Placement p = split_all_at([](int64_t rows) { return rows / 2; });
    p.ranges.push_back({"blk.0.ffn_gate.weight", 0, 8, plan::Side::Cpu});  // overlap
    try {
        session(p);
        FAIL() << "an overlapping placement was accepted";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Internal);
        EXPECT_NE(std::string(e.what()).find("blk.0.ffn_gate.weight"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("placed twice"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace dense::test
