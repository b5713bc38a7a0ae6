// The bill's arithmetic on tiny synthetic models, planned for a CUDA device that is not here: the
// KV cache and the recurrent state follow the hyperparameters, the weights are exactly the tensors
// a GPU session uploads (256-byte slots, MTP never, a tied head once), and the lines, allocations
// and peak add up.
#include "plan/plan_fixture.hpp"
#include "plan/prefill_graph.hpp"
#include "plan/session_bill.hpp"

#include <gtest/gtest.h>

namespace dense::test {
namespace {

using plan::Item;

const Model& tiny() {
    static const auto m = synth_tiny();
    return *m;
}

uint64_t sum_lines(const plan::VramBill& b) {
    uint64_t s = 0;
    for (const auto& l : b.lines) s += l.bytes;
    return s;
}

const plan::BillLine* line(const plan::VramBill& b, Item item, const std::string& kind) {
    for (const auto& l : b.lines)
        if (l.item == item && l.layer_kind == kind) return &l;
    return nullptr;
}

TEST(PlanBill, KvCacheAndStateFollowTheHyperparameters) {
    const Model& m = tiny();
    const int64_t n_ctx = 1000;
    const auto bill = plan::make_plan(m.bound, qwen35_spec(), nullptr, absent_gpu(n_ctx));

    const uint64_t d = hp(m, "head_dim"), hkv = hp(m, "n_head_kv");
    const uint64_t n_fa = m.bound.count_layers("full_attention"), n_rec = m.bound.count_layers("recurrent");
    ASSERT_GT(n_fa, 0u);
    ASSERT_GT(n_rec, 0u);
    // K and V per full-attention layer, f16, every position; each its own 256-byte-aligned slot.
    const uint64_t kv = n_fa * 2 * aligned(d * hkv * n_ctx * 2);
    EXPECT_EQ(bill.bytes_of(Item::KvCache), kv);
    EXPECT_EQ(bill.kv_bytes_per_token, n_fa * 2 * d * hkv * 2);
    const auto* kv_line = line(bill, Item::KvCache, "full_attention");
    ASSERT_NE(kv_line, nullptr);
    EXPECT_EQ(kv_line->count, static_cast<int64_t>(n_fa));

    // Conv window ((kernel - 1) x conv channels) and delta-rule matrix (d_k x d_v per value head),
    // f32, two banks per recurrent layer.
    const uint64_t conv = (hp(m, "ssm_conv_kernel") - 1) * hp(m, "conv_dim") * 4;
    const uint64_t delta = hp(m, "ssm_state_size") * hp(m, "ssm_head_v_dim") * hp(m, "ssm_time_step_rank") * 4;
    EXPECT_EQ(bill.bytes_of(Item::RecurrentState), n_rec * 2 * (aligned(conv) + aligned(delta)));
    const auto* state_line = line(bill, Item::RecurrentState, "recurrent");
    ASSERT_NE(state_line, nullptr);
    EXPECT_EQ(state_line->count, static_cast<int64_t>(n_rec));

    // The logits are staged back every step: at least n_vocab floats.
    EXPECT_GE(bill.bytes_of(Item::Staging), static_cast<uint64_t>(hp(m, "n_vocab")) * 4);
    EXPECT_GT(bill.bytes_of(Item::Activations), 0u);
    EXPECT_EQ(bill.bytes_of(Item::Workspace), 0u) << "no pack was asked: billed as 0 with a note";
    EXPECT_FALSE(bill.notes.empty());
}

TEST(PlanBill, LinesAllocationsAndPeakAddUp) {
    const auto bill = plan::make_plan(tiny().bound, qwen35_spec(), nullptr, absent_gpu(777));
    EXPECT_EQ(sum_lines(bill), bill.peak());
    EXPECT_EQ(bill.peak(), bill.allocated() + bill.reserve);
    EXPECT_EQ(bill.reserve, plan::kCudaSafetyReserve);
    // No op workspace without a pack; a GPU prefills 16 tokens per step by default, so its buffers
    // are billed (plan/prefill_graph.hpp).
    ASSERT_EQ(bill.allocations.size(), 3u);
    EXPECT_EQ(bill.allocations[0].label, plan::kWeightsLabel);
    EXPECT_EQ(bill.allocations[0].bytes, bill.weight_bytes);
    EXPECT_EQ(bill.allocations[1].label, "graph buffers");
    EXPECT_EQ(bill.allocations[2].label, plan::kPrefillBuffersLabel);
    EXPECT_GT(bill.allocations[2].bytes, 0u);
    // Every buffer item lives in the graph-buffer arena; the prefill scratch is its own allocation.
    EXPECT_EQ(bill.allocations[1].bytes, bill.bytes_of(Item::KvCache) + bill.bytes_of(Item::RecurrentState) +
                                             bill.bytes_of(Item::Activations) + bill.bytes_of(Item::Staging));
    EXPECT_EQ(bill.allocations[2].bytes, bill.bytes_of(Item::PrefillScratch));
    auto token_by_token = absent_gpu(777);
    token_by_token.prefill_chunk = 1;
    const auto plain = plan::make_plan(tiny().bound, qwen35_spec(), nullptr, token_by_token);
    EXPECT_EQ(plain.allocations.size(), 2u);
    EXPECT_EQ(bill.peak() - plain.peak(), bill.allocations[2].bytes);
    for (const auto& a : bill.allocations) EXPECT_EQ(a.bytes % 256, 0u) << a.label;
}

TEST(PlanBill, KvGrowsPerTokenAndF32Doubles) {
    const auto& m = tiny().bound;
    const auto a = plan::make_plan(m, qwen35_spec(), nullptr, absent_gpu(512));
    const auto b = plan::make_plan(m, qwen35_spec(), nullptr, absent_gpu(512 + 1024));
    EXPECT_EQ(b.peak() - a.peak(), 1024 * a.kv_bytes_per_token);
    const auto f32 = plan::make_plan(m, qwen35_spec(), nullptr, absent_gpu(512, DENSE_TYPE_F32));
    EXPECT_EQ(f32.bytes_of(Item::KvCache), 2 * a.bytes_of(Item::KvCache));
    EXPECT_EQ(f32.kv_bytes_per_token, 2 * a.kv_bytes_per_token);
    EXPECT_EQ(f32.bytes_of(Item::Weights), a.bytes_of(Item::Weights));
}

// The weight arena, computed independently from the file's tensor list: every tensor except those
// of the MTP block (block n_layer), each rounded up to 256 bytes.
uint64_t expected_weights(const Model& m, int64_t* tensors = nullptr) {
    const std::string mtp = "blk." + std::to_string(hp(m, "n_layer")) + ".";
    uint64_t total = 0;
    int64_t n = 0;
    for (const auto& t : m.file.tensors()) {
        if (std::string(t.name).rfind(mtp, 0) == 0) continue;
        total += aligned(t.n_bytes);
        ++n;
    }
    if (tensors) *tensors = n;
    return total;
}

int64_t weight_tensors(const plan::VramBill& b) {
    int64_t n = 0;
    for (const auto& l : b.lines)
        if (l.item == Item::Weights) n += l.count;
    return n;
}

TEST(PlanBill, WeightsAreTheUploadedTensorsInAlignedSlots) {
    const Model& m = tiny();
    const auto bill = plan::make_plan(m.bound, qwen35_spec(), nullptr, absent_gpu(64));
    int64_t n = 0;
    EXPECT_EQ(bill.weight_bytes, expected_weights(m, &n));
    EXPECT_EQ(bill.bytes_of(Item::Weights), bill.weight_bytes);
    EXPECT_EQ(weight_tensors(bill), n);
    const auto* global = line(bill, Item::Weights, "global");
    ASSERT_NE(global, nullptr);
    EXPECT_EQ(global->count, 3);  // token_embd, output_norm, output
    ASSERT_NE(line(bill, Item::Weights, "recurrent"), nullptr);
    ASSERT_NE(line(bill, Item::Weights, "full_attention"), nullptr);
}

TEST(PlanBill, MtpBlockIsNeverBilled) {
    SynthOptions o;
    o.mtp = true;
    const auto m = synth_tiny(o);
    ASSERT_FALSE(m->bound.skipped_blocks.empty());
    const auto bill = plan::make_plan(m->bound, qwen35_spec(), nullptr, absent_gpu(64));
    EXPECT_EQ(bill.weight_bytes, expected_weights(*m));
    uint64_t all = 0;
    for (const auto& t : m->file.tensors()) all += aligned(t.n_bytes);
    EXPECT_LT(bill.weight_bytes, all);
    bool noted = false;
    for (const auto& n : bill.notes) noted |= n.find("MTP") != std::string::npos;
    EXPECT_TRUE(noted);
}

TEST(PlanBill, TiedHeadIsBilledOnce) {
    SynthOptions o;
    o.tied = true;
    const auto m = synth_tiny(o);
    ASSERT_TRUE(m->bound.tied_output);
    const auto bill = plan::make_plan(m->bound, qwen35_spec(), nullptr, absent_gpu(64));
    EXPECT_EQ(bill.weight_bytes, expected_weights(*m));
    EXPECT_EQ(line(bill, Item::Weights, "global")->count, 2);  // token_embd (also the head), output_norm
}

TEST(PlanBill, CpuPlanHasNoWeightsAndNoReserve) {
    plan::PlanRequest r;
    r.n_ctx = 64;
    r.target = plan::target_for_device(cpu_ref_packs(), 0);
    ASSERT_EQ(r.target.kind, DENSE_DEVICE_CPU);
    const auto bill = plan::make_plan(tiny().bound, qwen35_spec(), &cpu_ref_packs(), r);
    EXPECT_EQ(bill.weight_bytes, 0u);
    EXPECT_EQ(bill.reserve, 0u);
    EXPECT_EQ(bill.bytes_of(Item::Weights), 0u);
    EXPECT_EQ(sum_lines(bill), bill.peak());
}

}  // namespace
}  // namespace dense::test
