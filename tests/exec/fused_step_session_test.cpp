// The token step's fused ops of ABI 1.11, executor side, without a GPU: a Gated DeltaNet layer's
// CONV1D_CAUSAL, GDN_GATES, L2_NORM and GDN_DECODE as one GDN_STEP node (graph/gdn_step_fusion.hpp), and
// a full-attention layer's two head RMS_NORMs, two ROPEs and KV_STORE as one ATTN_PREP node
// (graph/attn_prep_fusion.hpp). With DENSE_GDN_STEP_FUSION=all / DENSE_ATTN_PREP_FUSION=all the passes
// merge CPU nodes too, so cpu-ref runs the fused ops (as the calls they stand for). The merged step
// must give bit-identical logits and hidden states layer by layer with exactly 3 nodes fewer per
// recurrent layer and 4 per attention layer, batched prompt steps keep the separate ops (no token
// axis on the fused ones) and give the same state; by default a CPU session is left alone, and a bad
// value of either variable is a usage error. The GPU kernels against the separate CUDA launches are
// tests/cuda/ops_gdn_step_gpu_test.cpp and ops_attn_prep_gpu_test.cpp.
#include "common/scoped_env.hpp"
#include "core/error.hpp"
#include "exec/session_fixture.hpp"
#include "exec/step_trace.hpp"
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

std::unique_ptr<exec::Session> session(const char* gdn, const char* attn, int64_t prefill_chunk = 1) {
    ScopedEnv gdn_setting("DENSE_GDN_STEP_FUSION", gdn);  // read while the graph is built
    ScopedEnv attn_setting("DENSE_ATTN_PREP_FUSION", attn);
    exec::SessionOptions o;
    o.n_ctx = 32;
    o.kv_type = DENSE_TYPE_F16;
    o.threads = 2;
    o.prefill_chunk = prefill_chunk;
    return std::make_unique<exec::Session>(tiny().bound, qwen35_spec(), cpu_ref_packs(), o);
}

TEST(FusedStepSession, MergedStepsGiveBitIdenticalLogitsAndHiddenStates) {
    auto plain = session("0", "0");
    auto merged = session("all", "all");
    auto gdn_only = session("all", "0");
    auto attn_only = session("0", "all");
    const int64_t recurrent = tiny().bound.count_layers("recurrent");
    const int64_t attention = tiny().bound.count_layers("full_attention");
    ASSERT_GT(recurrent, 0);
    ASSERT_GT(attention, 0);
    EXPECT_EQ(plain->node_count() - gdn_only->node_count(), static_cast<size_t>(3 * recurrent));
    EXPECT_EQ(plain->node_count() - attn_only->node_count(), static_cast<size_t>(4 * attention));
    EXPECT_EQ(plain->node_count() - merged->node_count(), static_cast<size_t>(3 * recurrent + 4 * attention));
    const StepTrace want = trace_steps(*plain);
    const StepTrace got = trace_steps(*merged);
    ASSERT_EQ(got.hidden.size(), want.hidden.size()) << "the layer observer must see every layer";
    EXPECT_EQ(got.hidden.size(), static_cast<size_t>(6 * (recurrent + attention)));
    EXPECT_TRUE(same_bits(got.hidden, want.hidden)) << "hidden states differ";
    EXPECT_TRUE(same_bits(got.logits, want.logits)) << "logits differ";
}

TEST(FusedStepSession, BatchedPromptStepsKeepTheSeparateOpsAndTheSameResult) {
    // A 13-token prompt in batched steps of 4 (the separate ops on their token axes), then a token step
    // (the fused ops): the logits after it must be those of the unmerged token-by-token session.
    const std::vector<int32_t> prompt = {3, 17, 400, 9, 1200, 77, 5, 64, 901, 2, 33, 1500, 8};
    auto plain = session("0", "0");
    auto merged = session("all", "all", 4);
    std::vector<float> want, got;
    for (size_t i = 0; i < prompt.size(); ++i) plain->step(prompt[i], i + 1 == prompt.size());
    want.assign(plain->logits().begin(), plain->logits().end());
    ASSERT_GT(merged->prefill_chunk(), 1) << merged->prefill_note();
    merged->prefill(prompt, true);
    got.assign(merged->logits().begin(), merged->logits().end());
    ASSERT_EQ(got.size(), want.size());
    EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0) << "logits differ";
}

TEST(FusedStepSession, CpuNodesAreLeftAloneByDefault) {
    auto plain = session("0", "0");
    auto by_default = session(nullptr, nullptr);
    auto explicit_on = session("1", "1");
    EXPECT_EQ(by_default->node_count(), plain->node_count());
    EXPECT_EQ(explicit_on->node_count(), plain->node_count());
}

TEST(FusedStepSession, UnknownSettingIsAUsageError) {
    for (const char* name : {"DENSE_GDN_STEP_FUSION", "DENSE_ATTN_PREP_FUSION"}) {
        try {
            const bool gdn = std::string(name) == "DENSE_GDN_STEP_FUSION";
            session(gdn ? "yes" : "0", gdn ? "0" : "yes");
            ADD_FAILURE() << name << "=yes was accepted";
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::Usage);
            EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
        }
    }
}

}  // namespace
}  // namespace dense::test
