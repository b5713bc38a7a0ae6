// The per-node profile of a step (Session::profile_step, `dense-rt bench --profile`): it computes
// exactly what step() computes and commits the same way, times every node that ran, and reports the
// bytes of the weights a node streams; the bench groups nodes by tensor role across layers.
#include "bench/step_profile.hpp"
#include "exec/session_fixture.hpp"

#include <cstring>

namespace dense::test {
namespace {

TEST(StepProfile, ProfiledStepsGiveTheSameLogitsAndStateAsPlainSteps) {
    auto model = bind_file(gguf::GgufFile::open(data_dir() / "golden-tiny" / "tiny-qwen35-f32.gguf"));
    const auto ids = golden_tokens();
    auto plain = make_session(*model, 32);
    auto timed = make_session(*model, 32);
    for (size_t i = 0; i < 6; ++i) {
        const bool logits = i % 2 == 1;  // state-only and full steps both
        plain->step(ids[i], logits);
        const auto nodes = timed->profile_step(ids[i], logits);
        EXPECT_EQ(timed->position(), plain->position());
        if (logits) {
            ASSERT_EQ(nodes.size(), timed->node_count());  // every node ran and was timed
            EXPECT_EQ(std::memcmp(plain->logits().data(), timed->logits().data(), plain->logits().size_bytes()), 0);
        } else {
            EXPECT_LT(nodes.size(), timed->node_count());  // no final norm, no LM head
        }
        size_t gemvs = 0;
        for (const auto& n : nodes) {
            EXPECT_GE(n.ms, 0.0) << n.label;
            if (n.op.rfind("gemv_q", 0) == 0) {
                ++gemvs;
                EXPECT_GT(n.weight_bytes, 0u) << n.label;  // a GEMV streams its whole matrix
            } else {
                EXPECT_EQ(n.weight_bytes, 0u) << n.label;
            }
        }
        EXPECT_GT(gemvs, 0u);
    }
    EXPECT_EQ(plain->snapshot_state(), timed->snapshot_state());
}

// `bench --repeat-nodes` (SessionOptions::repeat_nodes) really runs the named nodes twice: a repeated
// residual GEMV adds its product into the stream twice, so the logits leave the plain run's; a
// repeated causal conv reads its state from one bank and writes the other (graph.hpp), so running it
// twice changes nothing; nothing repeated (a word no implementation name contains) leaves them too.
TEST(StepProfile, RepeatedNodesRunTwice) {
    auto model = bind_file(gguf::GgufFile::open(data_dir() / "golden-tiny" / "tiny-qwen35-f32.gguf"));
    const auto ids = golden_tokens();
    auto session_with = [&](std::vector<std::string> words) {
        exec::SessionOptions o;
        o.n_ctx = 16;
        o.kv_type = DENSE_TYPE_F32;
        o.repeat_nodes = std::move(words);
        return std::make_unique<exec::Session>(model->bound, qwen35_spec(), cpu_ref_packs(), o);
    };
    auto plain = make_session(*model, 16);
    auto gemv_twice = session_with({"gemv_q"});
    auto conv_twice = session_with({"conv1d"});
    auto none_twice = session_with({"no-such-op"});
    EXPECT_GT(gemv_twice->nodes_matching("gemv_q"), 0u);
    EXPECT_GT(conv_twice->nodes_matching("conv1d"), 0u);
    EXPECT_EQ(none_twice->nodes_matching("no-such-op"), 0u);
    for (size_t i = 0; i < 3; ++i)
        for (auto* s : {plain.get(), gemv_twice.get(), conv_twice.get(), none_twice.get()}) s->step(ids[i], true);
    const size_t bytes = plain->logits().size_bytes();
    EXPECT_NE(std::memcmp(plain->logits().data(), gemv_twice->logits().data(), bytes), 0);
    EXPECT_EQ(std::memcmp(plain->logits().data(), conv_twice->logits().data(), bytes), 0);
    EXPECT_EQ(std::memcmp(plain->logits().data(), none_twice->logits().data(), bytes), 0);
}

TEST(StepProfile, GroupsNodesByRoleAcrossLayers) {
    // The executor's labels: "blk.12.ffn_down.weight gemv+residual", "blk.4 gated_delta_rule".
    EXPECT_EQ(bench::role_of("blk.12.ffn_down.weight gemv+residual"), "ffn_down.weight gemv+residual");
    EXPECT_EQ(bench::role_of("blk.4 gated_delta_rule"), "gated_delta_rule");
    EXPECT_EQ(bench::role_of("output.weight gemv"), "output.weight gemv");
    // The parts of a row split: one row per part kind, whatever their row ranges.
    EXPECT_EQ(bench::role_of("blk.3.ffn_up.weight gemv rows [4096, 17408) on the cpu"), "ffn_up.weight gemv (cpu rows)");
    EXPECT_EQ(bench::role_of("blk.3.ffn_up.weight gemv rows [1024, 4096) copied over the bus"),
              "ffn_up.weight gemv (bus chunks)");
    EXPECT_EQ(bench::role_of("blk.3.ffn_up.weight gemv rows [0, 1024)"), "ffn_up.weight gemv (gpu rows)");
    EXPECT_EQ(bench::role_of("output.weight gemv rows [0, 8)"), "output.weight gemv (gpu rows)");
    EXPECT_EQ(bench::role_of("blk.x.odd"), "blk.x.odd");

    auto model = bind_file(gguf::GgufFile::open(data_dir() / "golden-tiny" / "tiny-qwen35-f32.gguf"));
    auto session = make_session(*model, 16);
    const auto p = bench::profile_decode(*session, 2, 3);
    EXPECT_EQ(p.steps, 2);
    EXPECT_EQ(p.nodes_per_step, static_cast<int>(session->node_count()));
    int nodes = 0;
    double ms = 0;
    for (const auto& g : p.by_role) {
        nodes += g.nodes_per_step;
        ms += g.ms_per_step;
    }
    EXPECT_EQ(nodes, p.nodes_per_step);  // every node in exactly one role
    EXPECT_NEAR(ms, p.ms_per_step, 1e-9 + 1e-9 * p.ms_per_step);
    const auto md = bench::to_markdown(p, 0, 0);
    EXPECT_NE(md.find("| op kind |"), std::string::npos) << md;
    EXPECT_NE(md.find("| ffn_down.weight gemv+residual | gemv_q(f32, "), std::string::npos) << md;
}

}  // namespace
}  // namespace dense::test
