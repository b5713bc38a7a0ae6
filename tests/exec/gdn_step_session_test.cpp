// A Gated DeltaNet layer's CONV1D_CAUSAL, GDN_GATES, L2_NORM and GDN_DECODE merged into one GDN_STEP node
// (graph/gdn_step_fusion.hpp), executor side, without a GPU: with DENSE_GDN_STEP_FUSION=all the pass
// merges CPU nodes too, so cpu-ref runs GDN_STEP (as its four calls). The merged step must give
// bit-identical logits and hidden states layer by layer with exactly 3 nodes fewer per recurrent
// layer, batched prompt steps keep the four ops (GDN_STEP has no token axis) and give the same state;
// by default a CPU session is left alone, and a bad value of the variable is a usage error. The GPU
// kernel against the four CUDA launches is tests/cuda/ops_gdn_step_gpu_test.cpp.
#include "common/scoped_env.hpp"
#include "core/error.hpp"
#include "exec/session_fixture.hpp"
#include "plan/plan_fixture.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace dense::test {
namespace {

const Model& tiny() {
    static const auto m = synth_tiny();
    return *m;
}

std::unique_ptr<exec::Session> session(const char* fusion, int64_t prefill_chunk = 1) {
    ScopedEnv setting("DENSE_GDN_STEP_FUSION", fusion);  // read while the graph is built
    exec::SessionOptions o;
    o.n_ctx = 32;
    o.kv_type = DENSE_TYPE_F16;
    o.threads = 2;
    o.prefill_chunk = prefill_chunk;
    return std::make_unique<exec::Session>(tiny().bound, qwen35_spec(), cpu_ref_packs(), o);
}

struct Trace {
    std::vector<std::vector<float>> logits, hidden;  // hidden: every layer of every step
};

Trace run(exec::Session& s) {
    Trace t;
    s.set_layer_observer([&t](int64_t, int64_t, std::span<const float> h) { t.hidden.emplace_back(h.begin(), h.end()); });
    for (int32_t token : {11, 1900, 7, 42, 1023, 5}) {
        s.step(token, true);
        t.logits.emplace_back(s.logits().begin(), s.logits().end());
    }
    return t;
}

bool same_bits(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (a[i].size() != b[i].size() || std::memcmp(a[i].data(), b[i].data(), a[i].size() * sizeof(float)) != 0)
            return false;
    return true;
}

TEST(GdnStepSession, MergedStepsGiveBitIdenticalLogitsAndHiddenStates) {
    auto plain = session("0");
    auto merged = session("all");
    const int64_t recurrent = tiny().bound.count_layers("recurrent");
    ASSERT_GT(recurrent, 0);
    EXPECT_EQ(plain->node_count() - merged->node_count(), static_cast<size_t>(3 * recurrent));
    const Trace want = run(*plain);
    const Trace got = run(*merged);
    ASSERT_EQ(got.hidden.size(), want.hidden.size()) << "the layer observer must see every layer";
    EXPECT_EQ(got.hidden.size(),
              static_cast<size_t>(6 * (recurrent + tiny().bound.count_layers("full_attention"))));
    EXPECT_TRUE(same_bits(got.hidden, want.hidden)) << "hidden states differ";
    EXPECT_TRUE(same_bits(got.logits, want.logits)) << "logits differ";
}

TEST(GdnStepSession, BatchedPromptStepsKeepTheFourOpsAndTheSameResult) {
    // A 13-token prompt in batched steps of 4 (the four ops on their token axes), then tokens one by
    // one (GDN_STEP): the logits after it must be those of the unmerged token-by-token session.
    const std::vector<int32_t> prompt = {3, 17, 400, 9, 1200, 77, 5, 64, 901, 2, 33, 1500, 8};
    auto plain = session("0");
    auto merged = session("all", 4);
    std::vector<float> want, got;
    for (size_t i = 0; i < prompt.size(); ++i) plain->step(prompt[i], i + 1 == prompt.size());
    want.assign(plain->logits().begin(), plain->logits().end());
    ASSERT_GT(merged->prefill_chunk(), 1) << merged->prefill_note();
    merged->prefill(prompt, true);
    got.assign(merged->logits().begin(), merged->logits().end());
    ASSERT_EQ(got.size(), want.size());
    EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0) << "logits differ";
}

TEST(GdnStepSession, CpuNodesAreLeftAloneByDefault) {
    auto plain = session("0");
    auto by_default = session(nullptr);
    auto explicit_on = session("1");
    EXPECT_EQ(by_default->node_count(), plain->node_count());
    EXPECT_EQ(explicit_on->node_count(), plain->node_count());
}

TEST(GdnStepSession, UnknownSettingIsAUsageError) {
    try {
        session("yes");
        ADD_FAILURE() << "DENSE_GDN_STEP_FUSION=yes was accepted";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Usage);
        EXPECT_NE(std::string(e.what()).find("DENSE_GDN_STEP_FUSION"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace dense::test
