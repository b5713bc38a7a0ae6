// Batched prefill (plan/prefill_graph.hpp, Session::prefill) without a GPU: cpu-ref registers GEMM_Q
// as a loop over its own GEMV_Q, so a prompt run T tokens per step must leave bit for bit the state,
// KV cache, hidden state and next logits that the same prompt leaves token by token — for every
// chunk size, with prompts that are not a multiple of it, and across two prefill calls (a second
// chat turn). Also: the prompt is checked before anything runs, the plan bills the prefill buffers
// the session allocates, the rest of a prompt after its whole chunks runs in smaller batched steps,
// and a session with a row split batches through the bus staging ring at any bus share.
#include "bench/step_profile.hpp"
#include "core/error.hpp"
#include "plan/bus_staging.hpp"
#include "plan/plan_fixture.hpp"
#include "plan/prefill_graph.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace dense::test {
namespace {

const Model& tiny() {
    static const auto m = synth_tiny();
    return *m;
}

std::unique_ptr<exec::Session> session(int64_t chunk, dense_type_id activation, int64_t n_ctx = 64) {
    exec::SessionOptions o;
    o.n_ctx = n_ctx;
    o.kv_type = DENSE_TYPE_F16;
    o.threads = 2;
    o.gemv_activation = activation;
    o.prefill_chunk = chunk;
    return std::make_unique<exec::Session>(tiny().bound, qwen35_spec(), cpu_ref_packs(), o);
}

std::vector<int32_t> prompt(size_t n) {
    std::vector<int32_t> ids(n);
    for (size_t i = 0; i < n; ++i) ids[i] = static_cast<int32_t>((i * 977 + 13) % 2000);
    return ids;
}

struct Outcome {
    std::vector<std::byte> state;
    std::vector<float> hidden_after_prefill;
    std::vector<std::vector<float>> logits;  // the step after each prefill call, then 3 generated tokens
    int64_t position = 0;
};

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Two turns: prefill(turn) then one step with logits each, then three greedy-free fixed tokens.
Outcome run(exec::Session& s, const std::vector<std::vector<int32_t>>& turns) {
    Outcome o;
    for (const auto& turn : turns) {
        s.prefill(std::span<const int32_t>(turn.data(), turn.size() - 1));
        o.hidden_after_prefill.assign(s.hidden().begin(), s.hidden().end());
        s.step(turn.back(), true);
        o.logits.emplace_back(s.logits().begin(), s.logits().end());
    }
    for (int32_t t : {5, 1700, 33}) {
        s.step(t, true);
        o.logits.emplace_back(s.logits().begin(), s.logits().end());
    }
    o.state = s.snapshot_state();
    o.position = s.position();
    return o;
}

TEST(BatchedPrefill, ChunksLeaveTheSameBitsAsTokenByToken) {
    const std::vector<std::vector<int32_t>> turns = {prompt(14), prompt(9)};
    for (dense_type_id act : {DENSE_TYPE_NONE, DENSE_TYPE_Q8_32}) {
        const auto one = session(1, act);
        ASSERT_EQ(one->prefill_chunk(), 1);
        const Outcome want = run(*one, turns);
        for (int64_t chunk : {2, 4, 5, 13}) {
            SCOPED_TRACE("chunk " + std::to_string(chunk) + ", activation " + std::to_string(act));
            const auto s = session(chunk, act);
            ASSERT_EQ(s->prefill_chunk(), chunk) << s->prefill_note();
            const Outcome got = run(*s, turns);
            EXPECT_EQ(got.position, want.position);
            EXPECT_TRUE(got.state == want.state) << "recurrent state differs";
            EXPECT_TRUE(same_bits(got.hidden_after_prefill, want.hidden_after_prefill)) << "hidden state after prefill";
            ASSERT_EQ(got.logits.size(), want.logits.size());
            for (size_t i = 0; i < want.logits.size(); ++i) EXPECT_TRUE(same_bits(got.logits[i], want.logits[i])) << i;
        }
    }
}

// What is left of a prompt after its whole chunks runs in batched steps of the powers of two below
// the chunk, largest first, and only an odd last token runs alone: 31 tokens at chunk 16 are four
// batched steps (16 + 8 + 4 + 2) and one token step, not one batched step and 15 token steps.
TEST(BatchedPrefill, TheRestOfAPromptRunsInSmallerBatchedSteps) {
    EXPECT_EQ(session(16, DENSE_TYPE_Q8_32)->prefill_step_sizes(), (std::vector<int64_t>{16, 8, 4, 2}));
    EXPECT_EQ(session(5, DENSE_TYPE_Q8_32)->prefill_step_sizes(), (std::vector<int64_t>{5, 4, 2}));
    EXPECT_EQ(session(2, DENSE_TYPE_Q8_32)->prefill_step_sizes(), (std::vector<int64_t>{2}));
    EXPECT_TRUE(session(1, DENSE_TYPE_Q8_32)->prefill_step_sizes().empty());

    const std::vector<int32_t> ids = prompt(31);
    const auto one = session(1, DENSE_TYPE_Q8_32), batched = session(16, DENSE_TYPE_Q8_32);
    one->prefill(ids);
    batched->prefill(ids);
    EXPECT_EQ(batched->batched_steps_run(), 4u);
    EXPECT_EQ(one->batched_steps_run(), 0u);
    EXPECT_EQ(batched->steps_run(), 31u);
    EXPECT_EQ(batched->position(), 31);
    EXPECT_TRUE(batched->snapshot_state() == one->snapshot_state()) << "recurrent state differs";
    EXPECT_TRUE(same_bits({batched->hidden().begin(), batched->hidden().end()}, {one->hidden().begin(), one->hidden().end()}));
    // A second prompt continues from there: 6 tokens are one step of 4 and one of 2.
    const std::vector<int32_t> more = prompt(6);
    one->prefill(more);
    batched->prefill(more);
    EXPECT_EQ(batched->batched_steps_run(), 6u);
    EXPECT_TRUE(batched->snapshot_state() == one->snapshot_state()) << "recurrent state differs after the second prompt";
    one->step(7, true);
    batched->step(7, true);
    EXPECT_TRUE(same_bits({batched->logits().begin(), batched->logits().end()}, {one->logits().begin(), one->logits().end()}));
}

TEST(BatchedPrefill, ABatchedStepHasOneGemmPerWeightAndNoHead) {
    const auto s = session(4, DENSE_TYPE_Q8_32);
    ASSERT_EQ(s->prefill_chunk(), 4);
    // The plan's graph of the same session, built by the same rule.
    graph::GraphOptions go;
    go.n_ctx = 64;
    go.activation_for = [](dense_type_id) { return DENSE_TYPE_Q8_32; };
    const auto g = plan::batched_graph(tiny().bound, qwen35_spec(), go, 4, &cpu_ref_packs(), size_t{0}, nullptr);
    ASSERT_TRUE(g.has_value());
    size_t gemm = 0, gemv = 0, embed = 0;
    for (const auto& n : g->nodes) {
        gemm += n.key.op == DENSE_OP_GEMM_Q;
        gemv += n.key.op == DENSE_OP_GEMV_Q || n.key.op == DENSE_OP_GEMV_Q_MULTI;
        embed += n.key.op == DENSE_OP_EMBED_ROW;
        EXPECT_EQ(n.phase, graph::Phase::Always) << n.label;
    }
    size_t weights = 0;  // GEMV weights of the trunk: every matrix role of every layer
    for (const auto& layer : tiny().bound.layers)
        for (const auto& [role, t] : layer.tensors)
            if (t != nullptr && t->n_dims >= 2 && t->ne[1] > 1 && role != "ssm_conv1d") ++weights;
    EXPECT_EQ(gemm, weights);
    EXPECT_EQ(gemv, 0u);
    EXPECT_EQ(embed, 4u);  // one row per token
}

// The ops with a token axis (ABI 1.10: the Gated DeltaNet ops, RoPE, KV store, attention) run once per layer for
// the whole chunk; built without the axes (for packs that refuse them) they run once per token.
TEST(BatchedPrefill, TokenAxesMakeOneCallPerLayer) {
    graph::GraphOptions go;
    go.n_ctx = 64;
    go.activation_for = [](dense_type_id) { return DENSE_TYPE_Q8_32; };
    size_t gdn_layers = 0, attn_layers = 0;
    for (const auto& layer : tiny().bound.layers) {
        gdn_layers += layer.tensors.count("ssm_conv1d");
        attn_layers += layer.tensors.count("attn_q");
    }
    ASSERT_GT(gdn_layers, 0u);
    ASSERT_GT(attn_layers, 0u);
    for (const bool axes : {true, false}) {
        go.token_axes = axes;
        const auto g = plan::batched_graph(tiny().bound, qwen35_spec(), go, 4, &cpu_ref_packs(), size_t{0}, nullptr);
        ASSERT_TRUE(g.has_value());
        std::map<dense_op_kind, size_t> count;
        for (const auto& n : g->nodes) ++count[n.key.op];
        const size_t per_layer = axes ? 1 : 4;
        for (dense_op_kind op : {DENSE_OP_CONV1D_CAUSAL, DENSE_OP_GDN_GATES, DENSE_OP_GDN_DECODE})
            EXPECT_EQ(count[op], gdn_layers * per_layer) << "op " << op << (axes ? " with" : " without") << " axes";
        EXPECT_GE(count[DENSE_OP_L2_NORM], gdn_layers * per_layer);
        EXPECT_LE(count[DENSE_OP_L2_NORM], 2 * gdn_layers * per_layer);
        EXPECT_EQ(count[DENSE_OP_KV_STORE], attn_layers * per_layer);
        EXPECT_EQ(count[DENSE_OP_ROPE], 2 * attn_layers * per_layer);  // q and k
        EXPECT_EQ(count[DENSE_OP_ATTN_DECODE], attn_layers * per_layer);
    }
}

// A profiled prompt step (`bench --profile` with prompt rows) computes and commits exactly what the
// prefill computes, times every node of the batched graph, and counts each GEMM's weight bytes.
TEST(BatchedPrefill, ProfiledPromptStepsLeaveTheSameStateAsPrefill) {
    const auto plain = session(4, DENSE_TYPE_Q8_32), timed = session(4, DENSE_TYPE_Q8_32);
    const std::vector<int32_t> ids = prompt(8);
    plain->prefill(ids);
    size_t gemm = 0;
    for (size_t i = 0; i < ids.size(); i += 4) {
        const auto nodes = timed->profile_prefill_step(std::span<const int32_t>(ids).subspan(i, 4));
        EXPECT_FALSE(nodes.empty());
        for (const auto& n : nodes) {
            EXPECT_GE(n.ms, 0.0) << n.label;
            if (n.op.rfind("gemm_q", 0) == 0) {
                ++gemm;
                EXPECT_GT(n.weight_bytes, 0u) << n.label;
            }
        }
    }
    EXPECT_GT(gemm, 0u);
    EXPECT_EQ(timed->position(), plain->position());
    EXPECT_TRUE(timed->snapshot_state() == plain->snapshot_state());
    try {
        timed->profile_prefill_step(std::span<const int32_t>(ids).subspan(0, 3));
        FAIL() << "a prompt step of 3 tokens at chunk 4 was accepted";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Usage);
    }
    const auto p = bench::profile_prefill(*timed, 2, 0);
    EXPECT_EQ(p.tokens_per_step, 4);
    EXPECT_EQ(p.steps, 2);
    const auto md = bench::to_markdown(p, 0, 0);
    EXPECT_NE(md.find("Prompt step profile (2 batched steps of 4 prompt tokens"), std::string::npos) << md;
    EXPECT_NE(md.find("| gemm_q |"), std::string::npos) << md;
}

TEST(BatchedPrefill, BadPromptIsRefusedBeforeAnythingRuns) {
    const auto s = session(4, DENSE_TYPE_NONE, 16);
    const auto before = s->snapshot_state();
    std::vector<int32_t> ids = prompt(10);
    ids[7] = 1 << 30;
    try {
        s->prefill(ids);
        FAIL() << "an out-of-range id was accepted";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Usage);
        EXPECT_NE(std::string(e.what()).find("prompt token 7"), std::string::npos) << e.what();
    }
    EXPECT_EQ(s->position(), 0);
    EXPECT_TRUE(s->snapshot_state() == before);
    const std::vector<int32_t> too_long = prompt(17);
    try {
        s->prefill(too_long);
        FAIL() << "a prompt longer than the context was accepted";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Usage);
        EXPECT_NE(std::string(e.what()).find("context of 16"), std::string::npos) << e.what();
    }
    EXPECT_EQ(s->position(), 0);
    EXPECT_TRUE(s->snapshot_state() == before);
}

TEST(BatchedPrefill, PlanBillsThePrefillBuffersTheSessionAllocates) {
    for (int64_t chunk : {1, 8}) {
        plan::PlanRequest r;
        r.n_ctx = 64;
        r.kv_type = DENSE_TYPE_F16;
        r.prefill_chunk = chunk;
        r.target = plan::target_for_device(cpu_ref_packs(), 0);
        const auto bill = plan::make_plan(tiny().bound, qwen35_spec(), &cpu_ref_packs(), r);
        const auto s = session(chunk, DENSE_TYPE_NONE);
        EXPECT_EQ(s->allocated_by_label(), bill.bytes_by_label()) << "chunk " << chunk;
        const auto labels = bill.bytes_by_label();
        EXPECT_EQ(labels.count(plan::kPrefillBuffersLabel), chunk > 1 ? 1u : 0u);
        if (chunk > 1) {
            EXPECT_GT(labels.at(plan::kPrefillBuffersLabel), 0u);
        }
    }
}

// The CPU prefills token by token by default; a GPU 512 tokens a step, a split 64 (its scratch would
// move weight rows to the CPU: plan/prefill_graph.hpp), unless the config asks.
TEST(BatchedPrefill, CpuDefaultIsTokenByToken) {
    EXPECT_EQ(session(-1, DENSE_TYPE_NONE)->prefill_chunk(), 1);
    EXPECT_EQ(plan::default_prefill_chunk(DENSE_DEVICE_CUDA), 512);
    EXPECT_EQ(plan::default_split_prefill_chunk(DENSE_DEVICE_CUDA), 64);
    std::string why;
    EXPECT_EQ(plan::prefill_chunk_for(-1, DENSE_DEVICE_CUDA, false, false, &why), 512);
    EXPECT_EQ(plan::prefill_chunk_for(-1, DENSE_DEVICE_CUDA, true, true, &why), 64);   // a split keeps 64
    EXPECT_EQ(plan::prefill_chunk_for(256, DENSE_DEVICE_CUDA, true, true, &why), 256);  // unless asked
    EXPECT_EQ(plan::smallest_auto_prefill_chunk(DENSE_DEVICE_CUDA), 16);
}

// A split session with bus staging (bus_read_share > 0) batches its prompt too: every host row of a
// split weight streams through the staging slots once per batched step (the share's rows from their
// page-locked copy, the rest from the file mapping) and the device computes the whole weight. On
// the CPU the "copy" is a memcpy and cpu-ref's GEMM is its GEMV per column, so the result is bit for
// bit an unsplit session's token by token. Such a step costs the whole copy whatever its token
// count, so the rest of a prompt uses only its batched steps of 4 tokens or more (8 without the
// bounce buffers, which the CPU session has: exec/bounce_buffers.hpp).
TEST(BatchedPrefill, SplitSessionWithBusStagingStreamsHostRowsPerBatchedStep) {
    exec::SessionOptions o;
    o.n_ctx = 32;
    o.threads = 2;
    o.prefill_chunk = 16;
    o.gemv_activation = DENSE_TYPE_Q8_32;
    o.row_split = split_all_at(tiny(), [](int64_t rows) { return rows / 2 / 8 * 8; });
    o.bus_read_share = 0.5;
    exec::Session split(tiny().bound, qwen35_spec(), cpu_ref_packs(), o);
    ASSERT_EQ(split.prefill_chunk(), 16) << split.prefill_note();
    EXPECT_EQ(split.prefill_step_sizes(), (std::vector<int64_t>{16, 8, 4, 2}));
    const auto plain = session(1, DENSE_TYPE_Q8_32, 32);
    std::vector<int32_t> ids = prompt(24);
    split.prefill(ids);
    plain->prefill(ids);
    EXPECT_EQ(split.batched_steps_run(), 2u);  // 16 + 8
    EXPECT_EQ(split.position(), 24);
    EXPECT_EQ(split.host_split_stats().jobs, 0u) << "a batched step has no CPU part";
    // The rows from the file mapping went through the bounce buffers (exec/bounce_buffers.hpp).
    const uint64_t bounced = split.bounced_bytes();
    EXPECT_GT(bounced, 0u);
    EXPECT_TRUE(split.snapshot_state() == plain->snapshot_state()) << "recurrent state differs";
    ids = prompt(6);  // 4 batched (kMinStreamedTailStep with bounce buffers), 2 token by token (each with its CPU part)
    split.prefill(ids);
    plain->prefill(ids);
    EXPECT_EQ(split.batched_steps_run(), 3u);
    EXPECT_EQ(split.position(), 30);
    EXPECT_GT(split.host_split_stats().jobs, 0u);
    // Every batched step streams the same rows, whatever its token count; token steps none.
    EXPECT_EQ(split.bounced_bytes(), bounced / 2 * 3) << "not the same rows per batched step";
    EXPECT_TRUE(split.snapshot_state() == plain->snapshot_state()) << "recurrent state differs";
    split.step(9, true);
    plain->step(9, true);
    EXPECT_EQ(split.bounced_bytes(), bounced / 2 * 3) << "a token step copies nothing from the file mapping";
    EXPECT_TRUE(same_bits({split.logits().begin(), split.logits().end()}, {plain->logits().begin(), plain->logits().end()}));
}

// prefill(tokens, true): the prompt's last token may end a batched step, the LM head then running
// alone on its hidden state; the logits, state, hidden state and position are bit for bit those of
// the prompt token by token with a step with logits last. 32 tokens at chunk 16: two batched steps
// and no token step at all; 23 tokens: 16 + 4 + 2 batched and one token step (with logits); then a
// second turn on the same session, and generation after it.
TEST(BatchedPrefill, LastLogitsFromABatchedStepAreThoseOfAStepWithLogits) {
    for (size_t n : {32u, 23u}) {
        const auto one = session(1, DENSE_TYPE_Q8_32);
        const auto batched = session(16, DENSE_TYPE_Q8_32);
        const std::vector<int32_t> ids = prompt(n);
        one->prefill(std::span<const int32_t>(ids.data(), ids.size() - 1));
        one->step(ids.back(), true);
        const uint64_t steps_before = batched->steps_run();
        batched->prefill(ids, true);
        EXPECT_EQ(batched->position(), one->position());
        EXPECT_EQ(batched->steps_run() - steps_before, n);
        EXPECT_EQ(batched->batched_steps_run(), n == 32 ? 2u : 3u) << n << " tokens";
        EXPECT_TRUE(same_bits({batched->logits().begin(), batched->logits().end()},
                              {one->logits().begin(), one->logits().end()}))
            << n << " tokens: the last token's logits differ";
        EXPECT_TRUE(same_bits({batched->hidden().begin(), batched->hidden().end()},
                              {one->hidden().begin(), one->hidden().end()}));
        EXPECT_TRUE(batched->snapshot_state() == one->snapshot_state()) << n << " tokens: recurrent state differs";
        // A second turn, then generation: the KV cache and banks the batched steps left are right.
        const std::vector<int32_t> turn2 = prompt(16);
        one->prefill(std::span<const int32_t>(turn2.data(), turn2.size() - 1));
        one->step(turn2.back(), true);
        batched->prefill(turn2, true);
        for (int32_t t : {5, 1700}) {
            one->step(t, true);
            batched->step(t, true);
            EXPECT_TRUE(same_bits({batched->logits().begin(), batched->logits().end()},
                                  {one->logits().begin(), one->logits().end()}))
                << n << " tokens: generation after the second turn differs";
        }
    }
}

TEST(BatchedPrefill, LastLogitsNeedAToken) {
    const auto s = session(16, DENSE_TYPE_Q8_32);
    try {
        s->prefill({}, true);
        FAIL() << "an empty prompt with logits was accepted";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Usage) << e.what();
    }
    EXPECT_EQ(s->position(), 0);
    s->prefill({}, false);  // nothing to do, and no error
    EXPECT_EQ(s->position(), 0);
}

// At bus_read_share 0 a split session batches its prompts too: its batched steps stream every host
// row from the file mapping through the staging ring (through the bounce buffers), and the result
// is still bit for bit an unsplit session's token by token.
TEST(BatchedPrefill, RowSplitSessionAtShareZeroBatchesThroughTheStaging) {
    exec::SessionOptions o;
    o.n_ctx = 32;
    o.threads = 2;
    o.prefill_chunk = 4;
    o.gemv_activation = DENSE_TYPE_Q8_32;
    o.row_split = split_all_at(tiny(), [](int64_t rows) { return rows / 2 / 8 * 8; });
    exec::Session s(tiny().bound, qwen35_spec(), cpu_ref_packs(), o);
    EXPECT_EQ(s.prefill_chunk(), 4) << s.prefill_note();
    EXPECT_EQ(s.bus_weight_bytes(), 0u) << "share 0: no rows in page-locked memory";
    EXPECT_EQ(s.bill().bytes_by_label().at(plan::kBusStagingLabel), plan::bus_staging_slots() * plan::bus_staging_slot_bytes());
    const auto plain = session(1, DENSE_TYPE_Q8_32, 32);
    const auto ids = prompt(10);  // 4 + 4 batched, 2 token by token (below kMinStreamedTailStep)
    s.prefill(ids);
    plain->prefill(ids);
    EXPECT_EQ(s.batched_steps_run(), 2u);
    EXPECT_EQ(s.position(), 10);
    EXPECT_GT(s.bounced_bytes(), 0u);
    EXPECT_TRUE(s.snapshot_state() == plain->snapshot_state()) << "recurrent state differs";
    s.step(9, true);
    plain->step(9, true);
    EXPECT_TRUE(same_bits({s.logits().begin(), s.logits().end()}, {plain->logits().begin(), plain->logits().end()}));
}

}  // namespace
}  // namespace dense::test
