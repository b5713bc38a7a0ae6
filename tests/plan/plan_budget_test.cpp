// A bill against a budget: the max-context solver (the plan at the returned context fits, one token
// more does not), the bytes that would have to move to the CPU, and the report in text and JSON.
#include "plan/budget.hpp"
#include "plan/plan_fixture.hpp"
#include "plan/plan_report.hpp"
#include "plan/plan_verdict.hpp"
#include "plan/prefill_graph.hpp"

#include <gtest/gtest.h>
#include <algorithm>
#include <nlohmann/json.hpp>
#include <vector>

namespace dense::test {
namespace {

const Model& tiny() {
    static const auto m = synth_tiny();
    return *m;
}

uint64_t peak_at(int64_t n_ctx) {
    return plan::make_plan(tiny().bound, qwen35_spec(), nullptr, absent_gpu(n_ctx)).peak();
}

plan::PlanReport judged(uint64_t budget, int64_t n_ctx = 512) {
    return plan::plan_and_judge(tiny().bound, qwen35_spec(), nullptr, absent_gpu(n_ctx),
                                plan::Budget{budget, "test budget"}, true, "tiny.gguf");
}

TEST(PlanBudget, MaxContextFitsAndOneTokenMoreDoesNot) {
    const auto base = plan::make_plan(tiny().bound, qwen35_spec(), nullptr, absent_gpu(512));
    ASSERT_GT(base.kv_bytes_per_token, 100u);
    for (uint64_t extra_tokens : {0u, 37u, 5000u}) {
        const uint64_t budget = base.peak() + extra_tokens * base.kv_bytes_per_token + 100;
        const auto r = judged(budget);
        ASSERT_TRUE(r.verdict && r.verdict->max_context);
        const int64_t n = *r.verdict->max_context;
        EXPECT_LE(peak_at(n), budget) << n;
        EXPECT_GT(peak_at(n + 1), budget) << n;
        // Every KV row of the tiny shape is a whole number of 256-byte units: the peak grows by
        // exactly kv_bytes_per_token per token, so the answer is known.
        EXPECT_EQ(n, 512 + static_cast<int64_t>(extra_tokens));
        EXPECT_TRUE(r.verdict->fits);
        EXPECT_EQ(r.verdict->headroom, budget - base.peak());
    }
}

// `prefill_chunk: auto` (512 on a GPU) over budget halves the chunk (down to 16) while that makes the
// bill fit, before a context cut or a row split is considered; an explicit chunk never changes.
TEST(PlanBudget, AutoPrefillChunkStepsDownBeforeAnythingElse) {
    auto at = [](int64_t chunk) {
        plan::PlanRequest r = absent_gpu(512);
        r.prefill_chunk = chunk;
        return plan::make_plan(tiny().bound, qwen35_spec(), nullptr, r).peak();
    };
    ASSERT_EQ(plan::default_prefill_chunk(DENSE_DEVICE_CUDA), 512);
    const std::vector<int64_t> chunks = {512, 256, 128, 64, 32, 16};  // what `auto` tries, in order
    for (size_t i = 0; i + 1 < chunks.size(); ++i) ASSERT_GT(at(chunks[i]), at(chunks[i + 1])) << chunks[i];
    const uint64_t p256 = at(256), p16 = at(16);
    auto judged_auto = [](uint64_t budget) {
        plan::PlanRequest r = absent_gpu(512);
        r.prefill_chunk = -1;
        return plan::plan_and_judge(tiny().bound, qwen35_spec(), nullptr, r, plan::Budget{budget, "test budget"},
                                    false, "tiny.gguf");
    };
    struct Case {
        uint64_t budget;
        int64_t chunk;
    };
    std::vector<Case> cases;
    for (size_t i = 0; i < chunks.size(); ++i) {
        cases.push_back({at(chunks[i]), chunks[i]});  // exactly its peak: that chunk
        if (i + 1 < chunks.size()) cases.push_back({at(chunks[i]) - 1, chunks[i + 1]});  // a byte short: the next
    }
    for (const Case c : cases) {
        const auto r = judged_auto(c.budget);
        ASSERT_TRUE(r.verdict);
        EXPECT_TRUE(r.verdict->fits) << c.budget;
        EXPECT_EQ(r.prefill_chunk, c.chunk) << c.budget;
        EXPECT_EQ(r.bill.peak(), at(c.chunk)) << c.budget;
        EXPECT_FALSE(r.split) << "a smaller prefill chunk fits: no row split";
        const bool noted = std::any_of(r.bill.notes.begin(), r.bill.notes.end(), [](const std::string& n) {
            return n.find("tokens per batched step") != std::string::npos;
        });
        EXPECT_EQ(noted, c.chunk != 512) << c.budget;
    }
    // Below the smallest auto chunk's peak: over budget, and the bill is the one at a split's default
    // chunk (64: a row split streams host rows once per batched step, so there a long step pays).
    const auto over = judged_auto(p16 - 1);
    ASSERT_TRUE(over.verdict);
    EXPECT_FALSE(over.verdict->fits);
    EXPECT_EQ(over.prefill_chunk, 64);  // what a row split, the next thing to give way, would use
    EXPECT_EQ(over.verdict->over, at(64) - (p16 - 1));
    // An explicit chunk is what the config asked for: never lowered.
    plan::PlanRequest fixed = absent_gpu(512);
    fixed.prefill_chunk = 256;
    const auto kept = plan::plan_and_judge(tiny().bound, qwen35_spec(), nullptr, fixed,
                                           plan::Budget{p256 - 1, "test budget"}, false, "tiny.gguf");
    ASSERT_TRUE(kept.verdict);
    EXPECT_FALSE(kept.verdict->fits);
    EXPECT_EQ(kept.prefill_chunk, 256);
}

TEST(PlanBudget, OverBudgetSaysWhatWouldFit) {
    const auto base = plan::make_plan(tiny().bound, qwen35_spec(), nullptr, absent_gpu(512));
    const auto r = judged(base.peak() - 12345);
    ASSERT_TRUE(r.verdict);
    EXPECT_FALSE(r.verdict->fits);
    EXPECT_EQ(r.verdict->over, 12345u);
    EXPECT_EQ(r.verdict->bytes_to_cpu, 12345u);
    EXPECT_TRUE(r.verdict->split_can_fit);
    EXPECT_EQ(r.verdict->max_context, 512 - 13);  // 12345 bytes = 12.06 tokens of 1 KiB
    const std::string text = plan::to_text(r);
    EXPECT_NE(text.find("does not fit"), std::string::npos) << text;
    EXPECT_NE(text.find("12,345 bytes"), std::string::npos) << text;
    EXPECT_NE(text.find("max context at this budget: 499 tokens"), std::string::npos) << text;

    // A budget below what the KV cache, state and reserve need alone: no split could help.
    const auto tiny_budget = judged(uint64_t{1} << 20);
    EXPECT_FALSE(tiny_budget.verdict->fits);
    EXPECT_EQ(tiny_budget.verdict->max_context, 0);
    EXPECT_FALSE(tiny_budget.verdict->split_can_fit);
    const std::string t2 = plan::to_text(tiny_budget);
    EXPECT_NE(t2.find("max context at this budget: none"), std::string::npos) << t2;
    EXPECT_NE(t2.find("even with every weight on the CPU"), std::string::npos) << t2;
}

TEST(PlanBudget, SolverEdgeCases) {
    const plan::PeakAt linear = [](int64_t n) { return uint64_t{1000} + 10 * static_cast<uint64_t>(n); };
    EXPECT_EQ(plan::max_context(linear, 1009, 100), 0);  // not one token
    EXPECT_EQ(plan::max_context(linear, 1010, 100), 1);
    EXPECT_EQ(plan::max_context(linear, 1509, 100), 50);
    EXPECT_EQ(plan::max_context(linear, 1510, 100), 51);
    EXPECT_EQ(plan::max_context(linear, 1u << 30, 100), 100);  // stops at the limit
    EXPECT_EQ(plan::max_context(linear, 1u << 30, 0), 0);
}

TEST(PlanBudget, SearchStopsAtTheTrainedContext) {
    const int64_t trained = hp(tiny(), "n_ctx_train");
    EXPECT_EQ(plan::context_search_limit(tiny().bound, 10), trained);
    EXPECT_EQ(plan::context_search_limit(tiny().bound, trained + 5), trained + 5);
    const auto r = judged(uint64_t{1} << 40);
    EXPECT_EQ(r.verdict->max_context, trained);
    EXPECT_TRUE(r.verdict->max_context_at_limit);
}

TEST(PlanReport, JsonCarriesTheBill) {
    const auto base = plan::make_plan(tiny().bound, qwen35_spec(), nullptr, absent_gpu(512));
    const auto r = judged(base.peak() + 10 * base.kv_bytes_per_token);
    const auto j = nlohmann::json::parse(plan::to_json(r));
    uint64_t sum = 0;
    for (const auto& l : j["lines"]) sum += l["bytes"].get<uint64_t>();
    EXPECT_EQ(sum, j["peak_bytes"].get<uint64_t>());
    EXPECT_EQ(j["peak_bytes"].get<uint64_t>(), base.peak());
    EXPECT_EQ(j["allocated_bytes"].get<uint64_t>() + j["reserve_bytes"].get<uint64_t>(), base.peak());
    EXPECT_EQ(j["context"].get<int64_t>(), 512);
    EXPECT_EQ(j["kv_type"].get<std::string>(), "f16");
    EXPECT_EQ(j["prefill_chunk"].get<int64_t>(), 16);
    EXPECT_TRUE(j["fits"].get<bool>());
    EXPECT_EQ(j["max_context"].get<int64_t>(), 522);
    EXPECT_EQ(j["budget"]["source"].get<std::string>(), "test budget");
    const std::string text = plan::to_text(r);
    for (const char* item :
         {"weights", "KV cache", "recurrent state x 2 banks", "activations", "safety reserve", "fits"})
        EXPECT_NE(text.find(item), std::string::npos) << item << " missing from\n" << text;
}

}  // namespace
}  // namespace dense::test
