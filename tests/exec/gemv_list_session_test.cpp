// GEMVs on one input merged into GEMV_Q_MULTI nodes (graph/gemv_lists.hpp), executor side, without a
// GPU: with DENSE_GEMV_LISTS=all the pass merges CPU nodes too, so cpu-ref runs the lists. The
// merged step must give bit-identical logits and hidden states layer by layer, with exactly the
// expected nodes fewer; by default (device nodes only) a CPU session is left alone, and a bad value
// of the variable is a usage error. The GPU side is in tests/exec/gpu_session_test.cpp.
#include "common/scoped_env.hpp"
#include "core/error.hpp"
#include "exec/session_fixture.hpp"
#include "exec/step_trace.hpp"
#include "plan/plan_fixture.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace dense::test {
namespace {

const Model& tiny() {
    static const auto m = synth_tiny();
    return *m;
}

// A cpu-ref session whose GEMVs all take Q8_32 (as on a GPU: one quantized input per norm, so a
// layer's GEMVs share it).
std::unique_ptr<exec::Session> session(const char* lists) {
    ScopedEnv setting("DENSE_GEMV_LISTS", lists);  // read while the graph is built
    exec::SessionOptions o;
    o.n_ctx = 32;
    o.kv_type = DENSE_TYPE_F16;
    o.threads = 2;
    o.gemv_activation = DENSE_TYPE_Q8_32;
    return std::make_unique<exec::Session>(tiny().bound, qwen35_spec(), cpu_ref_packs(), o);
}

TEST(GemvListSession, MergedListsGiveBitIdenticalLogitsAndHiddenStates) {
    auto plain = session("0");
    auto merged = session("all");
    // Per layer: Gated DeltaNet qkv + gate + beta + alpha -> 1 (3 nodes fewer), attention q + k + v
    // -> 1 (2 fewer), FFN gate + up -> 1 (1 fewer).
    const int64_t recurrent = tiny().bound.count_layers("recurrent");
    const int64_t attention = tiny().bound.count_layers("full_attention");
    ASSERT_GT(recurrent, 0);
    ASSERT_GT(attention, 0);
    EXPECT_EQ(plain->node_count() - merged->node_count(), static_cast<size_t>(3 * recurrent + 2 * attention + (recurrent + attention)));
    const StepTrace want = trace_steps(*plain);
    const StepTrace got = trace_steps(*merged);
    ASSERT_EQ(got.hidden.size(), want.hidden.size()) << "the layer observer must see every layer";
    EXPECT_EQ(got.hidden.size(), static_cast<size_t>(6 * (recurrent + attention)));
    EXPECT_TRUE(same_bits(got.hidden, want.hidden)) << "hidden states differ";
    EXPECT_TRUE(same_bits(got.logits, want.logits)) << "logits differ";
}

TEST(GemvListSession, CpuNodesAreLeftAloneByDefault) {
    auto plain = session("0");
    auto by_default = session(nullptr);
    auto explicit_on = session("1");
    EXPECT_EQ(by_default->node_count(), plain->node_count());
    EXPECT_EQ(explicit_on->node_count(), plain->node_count());
}

TEST(GemvListSession, UnknownSettingIsAUsageError) {
    try {
        session("yes");
        ADD_FAILURE() << "DENSE_GEMV_LISTS=yes was accepted";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Usage);
        EXPECT_NE(std::string(e.what()).find("DENSE_GEMV_LISTS"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace dense::test
