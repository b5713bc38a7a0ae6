// The output-row split onto the CPU, planner side: which tensors may split, the tiers and the
// even fraction choose_row_split moves, the exact-cover verifier against handcrafted broken
// placements, and the bill of a split (GPU prefix rows only, CPU bytes per token) and its report.
#include "common/pack_loading.hpp"
#include "core/error.hpp"
#include "packs/cpu_gemv_speed.hpp"
#include "plan/plan_fixture.hpp"
#include "plan/prefill_graph.hpp"
#include "plan/plan_verdict.hpp"
#include "plan/bus_staging.hpp"
#include "plan/plan_report.hpp"
#include "plan/row_split.hpp"
#include "plan/weight_arena.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <set>

namespace dense::test {
namespace {

using plan::Placement;
using plan::RowRange;
using plan::Side;

const Model& tiny() {
    static const auto m = synth_tiny();
    return *m;
}

std::string role_of(const Model& m, const std::string& name) {
    for (const auto& [role, t] : m.bound.globals)
        if (t && t->name == name) return role;
    for (const auto& l : m.bound.layers)
        for (const auto& [role, t] : l.tensors)
            if (t && t->name == name) return role;
    return "";
}

const gguf::TensorInfo& tensor(const Model& m, const std::string& name) {
    for (const auto* t : plan::weight_arena(m.bound).tensors)
        if (t->name == name) return *t;
    throw std::runtime_error("no tensor " + name);
}

uint64_t cpu_bytes_of_roles(const Model& m, const Placement& p, const std::set<std::string>& roles) {
    uint64_t bytes = 0;
    for (const auto& r : p.ranges)
        if (r.side == Side::Cpu && roles.count(role_of(m, r.tensor)))
            bytes += static_cast<uint64_t>(r.end - r.first) * plan::row_bytes(tensor(m, r.tensor));
    return bytes;
}

uint64_t bytes_of_roles(const Model& m, const std::set<std::string>& roles) {
    uint64_t bytes = 0;
    for (const auto& name : plan::splittable_tensors(m.bound, qwen35_spec()))
        if (roles.count(role_of(m, name))) bytes += tensor(m, name).n_bytes;
    return bytes;
}

// Runs the verifier and returns its message ("" when it accepts).
std::string verdict_of(const Placement& p, const Model& m = tiny()) {
    try {
        plan::verify_exact_cover(m.bound, qwen35_spec(), p);
        return "";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Internal) << e.what();
        return e.what();
    }
}

// The whole-on-GPU placement with `name`'s ranges replaced.
Placement with_ranges(const std::string& name, std::vector<RowRange> ranges) {
    Placement p = plan::whole_on_gpu(tiny().bound);
    p.ranges.erase(std::remove_if(p.ranges.begin(), p.ranges.end(), [&](const RowRange& r) { return r.tensor == name; }),
                   p.ranges.end());
    for (auto& r : ranges) {
        r.tensor = name;
        p.ranges.push_back(r);
    }
    return p;
}

TEST(RowSplit, OnlyGemvWeightsMaySplit) {
    const auto names = plan::splittable_tensors(tiny().bound, qwen35_spec());
    const std::set<std::string> set(names.begin(), names.end());
    EXPECT_TRUE(set.count("blk.0.ffn_gate.weight"));
    EXPECT_TRUE(set.count("blk.0.ffn_down.weight"));
    EXPECT_TRUE(set.count("output.weight"));  // the LM head splits like any matrix
    EXPECT_FALSE(set.count("token_embd.weight"));
    EXPECT_FALSE(set.count("output_norm.weight"));
    EXPECT_FALSE(set.count("blk.0.attn_norm.weight"));
    EXPECT_FALSE(set.count("blk.0.ssm_conv1d.weight"));
    for (const auto& n : names) EXPECT_EQ(role_of(tiny(), n).find("norm"), std::string::npos) << n;

    // A head tied to token_embd is read by row (the embedding): it must not split.
    SynthOptions o;
    o.tied = true;
    const auto tied = synth_tiny(o);
    const auto tied_names = plan::splittable_tensors(tied->bound, qwen35_spec());
    EXPECT_EQ(std::count(tied_names.begin(), tied_names.end(), "token_embd.weight"), 0);
    EXPECT_EQ(tied_names.size() + 1, names.size());  // everything else still splits
}

TEST(RowSplit, NothingToMoveIsWholeOnGpu) {
    const auto rs = plan::choose_row_split(tiny().bound, qwen35_spec(), 0);
    EXPECT_FALSE(rs.placement.splits_any());
    EXPECT_EQ(rs.cpu_bytes, 0u);
    EXPECT_TRUE(rs.enough);
    EXPECT_EQ(verdict_of(rs.placement), "");
}

// A move of at least kMinSplitFraction of the tier: every layer gives up the same rows.
TEST(RowSplit, FfnGateAndUpFirstSameFractionEveryLayer) {
    const Model& m = tiny();
    const uint64_t gate_up = bytes_of_roles(m, {"ffn_gate", "ffn_up"});
    ASSERT_GT(gate_up, 0u);
    const uint64_t ask = gate_up / 5 * 3;
    const auto rs = plan::choose_row_split(m.bound, qwen35_spec(), ask);
    EXPECT_EQ(verdict_of(rs.placement), "");
    EXPECT_TRUE(rs.enough);
    EXPECT_GE(rs.cpu_bytes, ask);
    EXPECT_EQ(cpu_bytes_of_roles(m, rs.placement, {"ffn_gate", "ffn_up"}), rs.cpu_bytes);  // nothing else moved
    std::set<int64_t> split_points;
    for (const auto& l : m.bound.layers)
        for (const char* role : {"ffn_gate", "ffn_up"}) {
            const auto* t = l.tensors.at(role);
            const int64_t g = rs.placement.gpu_rows(std::string(t->name));
            EXPECT_EQ(g % plan::kSplitRowTile, 0) << t->name;
            EXPECT_LT(g, t->ne[1]) << t->name << " kept whole";
            split_points.insert(g);
        }
    EXPECT_EQ(split_points.size(), 1u) << "every layer gives up the same rows";
    // Not more than one 8-row tile per tensor beyond what was asked.
    uint64_t one_step = 0;
    for (const auto& l : m.bound.layers)
        for (const char* role : {"ffn_gate", "ffn_up"}) one_step += 8 * plan::row_bytes(*l.tensors.at(role));
    EXPECT_LT(rs.cpu_bytes, ask + one_step);
    ASSERT_FALSE(rs.kinds.empty());
    EXPECT_TRUE(rs.kinds[0].role == "ffn_gate" || rs.kinds[0].role == "ffn_up");
}

// A small move (1/8 of the tier, under kMinSplitFraction): only the tensors of evenly spaced layers
// give rows, about kMinSplitFraction each (8 layers x 1/8 / 0.5 = 2 layers: the 3rd and the 7th),
// every one the same rows, so only two layers pay the hand-overs to the CPU.
TEST(RowSplit, SmallMovesSplitFewLayers) {
    const Model& m = tiny();
    ASSERT_EQ(m.bound.layers.size(), 8u);
    const uint64_t gate_up = bytes_of_roles(m, {"ffn_gate", "ffn_up"});
    const uint64_t ask = gate_up / 8;
    const auto rs = plan::choose_row_split(m.bound, qwen35_spec(), ask);
    EXPECT_EQ(verdict_of(rs.placement), "");
    EXPECT_TRUE(rs.enough);
    EXPECT_GE(rs.cpu_bytes, ask);
    EXPECT_EQ(cpu_bytes_of_roles(m, rs.placement, {"ffn_gate", "ffn_up"}), rs.cpu_bytes);
    std::set<int64_t> split_layers, split_points;
    uint64_t one_step = 0;
    for (const auto& l : m.bound.layers)
        for (const char* role : {"ffn_gate", "ffn_up"}) {
            const auto* t = l.tensors.at(role);
            const int64_t g = rs.placement.gpu_rows(std::string(t->name));
            if (g == t->ne[1]) continue;
            split_layers.insert(l.index);
            split_points.insert(g);
            one_step += 8 * plan::row_bytes(*t);
            EXPECT_LE(g, t->ne[1] - t->ne[1] / 2 + plan::kSplitRowTile) << t->name << " gives up under half its rows";
        }
    EXPECT_EQ(split_layers, (std::set<int64_t>{2, 6}));
    EXPECT_EQ(split_points.size(), 1u) << "the split layers give up the same rows";
    EXPECT_LT(rs.cpu_bytes, ask + one_step);
}

TEST(RowSplit, ThenFfnDownThenTheRest) {
    const Model& m = tiny();
    const uint64_t gate_up = bytes_of_roles(m, {"ffn_gate", "ffn_up"});
    const uint64_t down = bytes_of_roles(m, {"ffn_down"});
    auto rs = plan::choose_row_split(m.bound, qwen35_spec(), gate_up + down / 2);
    EXPECT_EQ(verdict_of(rs.placement), "");
    EXPECT_EQ(cpu_bytes_of_roles(m, rs.placement, {"ffn_gate", "ffn_up"}), gate_up);  // all of tier 1
    const uint64_t moved_down = cpu_bytes_of_roles(m, rs.placement, {"ffn_down"});
    EXPECT_GE(moved_down, down / 2);
    EXPECT_LT(moved_down, down);
    EXPECT_EQ(rs.cpu_bytes, gate_up + moved_down);  // tier 3 untouched

    rs = plan::choose_row_split(m.bound, qwen35_spec(), gate_up + down + 1);
    EXPECT_EQ(verdict_of(rs.placement), "");
    EXPECT_GT(rs.cpu_bytes, gate_up + down);
    EXPECT_TRUE(rs.enough);

    // More than every splittable row: all of them on the CPU, norms and the embedding still whole.
    rs = plan::choose_row_split(m.bound, qwen35_spec(), uint64_t{1} << 50);
    EXPECT_FALSE(rs.enough);
    EXPECT_EQ(verdict_of(rs.placement), "");
    for (const auto& name : plan::splittable_tensors(m.bound, qwen35_spec()))
        EXPECT_EQ(rs.placement.gpu_rows(name), 0) << name;
    EXPECT_EQ(rs.placement.gpu_rows("token_embd.weight"), tensor(m, "token_embd.weight").ne[1]);
    EXPECT_EQ(rs.placement.gpu_rows("output_norm.weight"), 1);
}

// Tensors in a format the CPU runs only on the scalar reference move after every tuned one, tier by
// tier: with enough tuned bytes none of them moves; asking for one byte more moves slow ffn rows first.
TEST(RowSplit, FormatsTheCpuRunsSlowlyMoveLast) {
    const Model& m = tiny();
    const dense_type_id slow = m.bound.layers.at(0).tensors.at("ffn_gate")->type;
    const plan::CpuGemvCostOf cpu_fast = [slow](dense_type_id t) {
        return t == slow ? packs::CpuGemvCost::ReferenceOnly : packs::CpuGemvCost::ReadBound;
    };
    uint64_t fast_bytes = 0, slow_bytes = 0;
    std::set<std::string> slow_names;
    for (const auto& name : plan::splittable_tensors(m.bound, qwen35_spec())) {
        const auto& t = tensor(m, name);
        (t.type == slow ? slow_bytes : fast_bytes) += t.n_bytes;
        if (t.type == slow) slow_names.insert(name);
    }
    ASSERT_GT(fast_bytes, 0u);
    ASSERT_GT(slow_bytes, 0u);

    auto rs = plan::choose_row_split(m.bound, qwen35_spec(), fast_bytes, cpu_fast);
    EXPECT_EQ(verdict_of(rs.placement), "");
    EXPECT_TRUE(rs.enough);
    for (const auto& name : slow_names) EXPECT_EQ(rs.placement.gpu_rows(name), tensor(m, name).ne[1]) << name << " moved";
    EXPECT_EQ(rs.cpu_bytes, fast_bytes);  // every fast row, nothing else

    rs = plan::choose_row_split(m.bound, qwen35_spec(), fast_bytes + 1, cpu_fast);
    EXPECT_EQ(verdict_of(rs.placement), "");
    EXPECT_GT(rs.cpu_bytes, fast_bytes);
    // The slow ffn_gate tensors are the first slow ones to give rows (one byte: one layer's, as few
    // layers as kMinSplitFraction allows).
    int slow_gates_split = 0;
    for (const auto& name : slow_names) {
        const std::string role = role_of(m, name);
        if (role == "ffn_gate") {
            slow_gates_split += rs.placement.gpu_rows(name) < tensor(m, name).ne[1] ? 1 : 0;
        } else if (role != "ffn_up") {
            EXPECT_EQ(rs.placement.gpu_rows(name), tensor(m, name).ne[1]) << name;
        }
    }
    EXPECT_EQ(slow_gates_split, 1);

    // Without the checker every format counts as fast: the slow ffn_gate rows move in tier 1.
    rs = plan::choose_row_split(m.bound, qwen35_spec(), fast_bytes);
    uint64_t slow_moved = 0;
    for (const auto& name : slow_names) slow_moved += tensor(m, name).ne[1] - rs.placement.gpu_rows(name);
    EXPECT_GT(slow_moved, 0u);
}

// The checker asks the loaded packs: cpu-ref (priority 0) alone is reference-only; cpu-avx2, where
// this CPU can run it, tunes the 12 quantized formats against the GPU's Q8_32 (the grid formats since
// session 21): the 2-3 bit K-quants and the codebook formats arithmetic-bound, the others read-bound;
// the float formats, which it does not implement, stay reference-only.
TEST(RowSplit, CpuCostClassesComeFromThePacksAboveZeroAndTheFormat) {
    const auto packs = load_packs_from({build_pack_dir()});
    const auto cost = packs::cpu_gemv_cost_checker(*packs, [](dense_type_id) { return DENSE_TYPE_Q8_32; });
    const auto* avx2 = packs->find_pack("cpu-avx2");
    const auto ranks = packs->ranks_for(0);
    const auto* rank = avx2 ? ranks.find("cpu-avx2") : nullptr;
    const bool avx2_usable = rank != nullptr && rank->score > 0;
    using packs::CpuGemvCost;
    for (dense_type_id t : {DENSE_TYPE_IQ4_XS, DENSE_TYPE_IQ4_NL, DENSE_TYPE_Q4_K, DENSE_TYPE_Q5_K, DENSE_TYPE_Q6_K,
                            DENSE_TYPE_Q8_0})
        EXPECT_EQ(cost(t), avx2_usable ? CpuGemvCost::ReadBound : CpuGemvCost::ReferenceOnly) << t;
    for (dense_type_id t : {DENSE_TYPE_IQ3_XXS, DENSE_TYPE_IQ3_S, DENSE_TYPE_IQ2_XS, DENSE_TYPE_IQ2_S, DENSE_TYPE_Q2_K,
                            DENSE_TYPE_Q3_K})
        EXPECT_EQ(cost(t), avx2_usable ? CpuGemvCost::ArithmeticBound : CpuGemvCost::ReferenceOnly) << t;
    for (dense_type_id t : {DENSE_TYPE_F16, DENSE_TYPE_BF16, DENSE_TYPE_F32})
        EXPECT_EQ(cost(t), CpuGemvCost::ReferenceOnly) << t;
    if (!avx2_usable) std::printf("cpu-avx2 is not usable on this CPU: every format is reference-only here\n");
}

// An arithmetic-bound format's FFN rows move after every read-bound FFN row and before the other
// roles' rows: at 8 GiB the 27B's IQ2 / IQ3 / Q3_K ffn tensors stay on the GPU while read-bound ffn
// rows go instead (the same bytes, less CPU time per token).
TEST(RowSplit, ArithmeticBoundFfnRowsMoveAfterTheReadBoundOnes) {
    const Model& m = tiny();
    const dense_type_id heavy = m.bound.layers.at(0).tensors.at("ffn_gate")->type;
    const plan::CpuGemvCostOf cost = [heavy](dense_type_id t) {
        return t == heavy ? packs::CpuGemvCost::ArithmeticBound : packs::CpuGemvCost::ReadBound;
    };
    const std::set<std::string> ffn = {"ffn_gate", "ffn_up", "ffn_down"};
    uint64_t light_ffn = 0, heavy_ffn = 0;
    std::set<std::string> heavy_ffn_names, heavy_other_names;
    for (const auto& name : plan::splittable_tensors(m.bound, qwen35_spec())) {
        const auto& t = tensor(m, name);
        const bool in_ffn = ffn.count(role_of(m, name)) != 0;
        if (t.type == heavy) (in_ffn ? heavy_ffn_names : heavy_other_names).insert(name);
        if (in_ffn) (t.type == heavy ? heavy_ffn : light_ffn) += t.n_bytes;
    }
    ASSERT_GT(light_ffn, 0u);
    ASSERT_GT(heavy_ffn, 0u);

    // Every read-bound FFN row and nothing else.
    auto rs = plan::choose_row_split(m.bound, qwen35_spec(), light_ffn, cost);
    EXPECT_EQ(verdict_of(rs.placement), "");
    EXPECT_EQ(rs.cpu_bytes, light_ffn);
    for (const auto& name : heavy_ffn_names) EXPECT_EQ(rs.placement.gpu_rows(name), tensor(m, name).ne[1]) << name;

    // Then the arithmetic-bound FFN rows, before any other role's.
    rs = plan::choose_row_split(m.bound, qwen35_spec(), light_ffn + heavy_ffn, cost);
    EXPECT_EQ(verdict_of(rs.placement), "");
    EXPECT_EQ(cpu_bytes_of_roles(m, rs.placement, ffn), light_ffn + heavy_ffn);
    EXPECT_EQ(rs.cpu_bytes, light_ffn + heavy_ffn);
    for (const auto& name : heavy_other_names) EXPECT_EQ(rs.placement.gpu_rows(name), tensor(m, name).ne[1]) << name;
}

// Row-read tables (token_embd) leave VRAM whole before any matrix row, when the device can read
// host memory in place; a head tied to token_embd is a GEMV weight too, so it never becomes one.
TEST(RowSplit, RowReadTablesGoToHostMemoryFirst) {
    const Model& m = tiny();
    EXPECT_EQ(plan::row_read_tables(m.bound, qwen35_spec()), std::vector<std::string>{"token_embd.weight"});
    const uint64_t table = tensor(m, "token_embd.weight").n_bytes;

    auto rs = plan::choose_row_split(m.bound, qwen35_spec(), table / 2, {}, true);
    EXPECT_TRUE(rs.placement.in_host_table("token_embd.weight"));
    EXPECT_EQ(rs.host_table_bytes, table);
    EXPECT_EQ(rs.host_tables, std::vector<std::string>{"token_embd.weight"});
    EXPECT_FALSE(rs.placement.splits_any());  // the table alone was enough
    EXPECT_TRUE(rs.placement.moves_any());
    EXPECT_EQ(rs.cpu_bytes, 0u);
    EXPECT_TRUE(rs.enough);
    EXPECT_EQ(rs.placement.gpu_rows("token_embd.weight"), 0);
    EXPECT_EQ(verdict_of(rs.placement), "");

    // More than the table: the rest comes from matrix rows, as without tables, for the remainder.
    const uint64_t more = table + table / 2;
    rs = plan::choose_row_split(m.bound, qwen35_spec(), more, {}, true);
    const auto rows_only = plan::choose_row_split(m.bound, qwen35_spec(), more - table);
    EXPECT_TRUE(rs.placement.in_host_table("token_embd.weight"));
    EXPECT_EQ(rs.cpu_bytes, rows_only.cpu_bytes);
    EXPECT_GE(rs.cpu_bytes + rs.host_table_bytes, more);
    EXPECT_EQ(verdict_of(rs.placement), "");

    // Without the device's host mapping, or with nothing to move: no table.
    EXPECT_FALSE(plan::choose_row_split(m.bound, qwen35_spec(), more).placement.in_host_table("token_embd.weight"));
    EXPECT_FALSE(plan::choose_row_split(m.bound, qwen35_spec(), 0, {}, true).placement.moves_any());

    SynthOptions o;
    o.tied = true;
    const auto tied = synth_tiny(o);
    EXPECT_TRUE(plan::row_read_tables(tied->bound, qwen35_spec()).empty());
    EXPECT_EQ(plan::choose_row_split(tied->bound, qwen35_spec(), table / 2, {}, true).host_table_bytes, 0u);
}

TEST(RowSplitVerifier, HostTablesAreWholeRowReadTablesOnly) {
    const std::string embd = "token_embd.weight";
    const int64_t vocab = tensor(tiny(), embd).ne[1];
    EXPECT_EQ(verdict_of(with_ranges(embd, {{"", 0, vocab, Side::HostTable}})), "");
    std::string msg = verdict_of(with_ranges(embd, {{"", 0, 8, Side::Gpu}, {"", 8, vocab, Side::HostTable}}));
    EXPECT_NE(msg.find("'" + embd + "' is a host table only in part"), std::string::npos) << msg;
    const std::string w = "blk.1.ffn_up.weight";
    const int64_t rows = tensor(tiny(), w).ne[1];
    msg = verdict_of(with_ranges(w, {{"", 0, rows, Side::HostTable}}));
    EXPECT_NE(msg.find("'" + w + "' is not read by row only"), std::string::npos) << msg;
    EXPECT_NE(msg.find("rows [0, " + std::to_string(rows) + ")"), std::string::npos) << msg;
    const std::string norm = "blk.0.attn_norm.weight";
    msg = verdict_of(with_ranges(norm, {{"", 0, tensor(tiny(), norm).ne[1], Side::HostTable}}));
    EXPECT_NE(msg.find("'" + norm + "' is not read by row only"), std::string::npos) << msg;
}

// A host table is billed out of VRAM (its slot leaves the weight arena, nothing else changes) and
// named in the bill's notes; the plan's split report shows it when over budget.
TEST(RowSplitBill, HostTableLeavesTheArenaAndIsNamed) {
    const Model& m = tiny();
    const auto request = absent_gpu(256);
    const auto whole = plan::make_plan(m.bound, qwen35_spec(), nullptr, request);
    const uint64_t table = tensor(m, "token_embd.weight").n_bytes;
    auto with_table = request;
    with_table.row_split = plan::choose_row_split(m.bound, qwen35_spec(), table / 2, {}, true).placement;
    const auto b = plan::make_plan(m.bound, qwen35_spec(), nullptr, with_table);
    EXPECT_EQ(whole.weight_bytes - b.weight_bytes, plan::weight_slot_bytes(table));
    EXPECT_EQ(whole.peak() - b.peak(), plan::weight_slot_bytes(table));
    EXPECT_EQ(b.cpu_read_bytes, 0u);
    EXPECT_TRUE(std::any_of(b.notes.begin(), b.notes.end(), [](const std::string& n) {
        return n.find("token_embd.weight") != std::string::npos && n.find("page-locked host memory") != std::string::npos;
    }));

    const plan::Budget budget{whole.peak() - table / 2, "test"};  // the table alone makes it fit
    const auto report = plan::plan_and_judge(m.bound, qwen35_spec(), nullptr, request, budget, false, "tiny");
    ASSERT_TRUE(report.split.has_value());
    EXPECT_TRUE(report.split->fits);
    EXPECT_EQ(report.split->host_table_bytes, table);
    EXPECT_EQ(report.split->cpu_read_bytes, 0u);
    EXPECT_NE(plan::to_text(report).find("host tables it would use: token_embd.weight"), std::string::npos);
    EXPECT_NE(plan::to_json(report).find("\"host_table_bytes\""), std::string::npos);
}

TEST(RowSplitVerifier, RefusesBrokenPlacements) {
    const std::string w = "blk.1.ffn_up.weight";
    const int64_t rows = tensor(tiny(), w).ne[1];
    ASSERT_GE(rows, 32);

    EXPECT_EQ(verdict_of(with_ranges(w, {{"", 0, 16, Side::Gpu}, {"", 16, rows, Side::Cpu}})), "");

    auto expect_refused = [&](const Placement& p, const std::string& what, const std::string& range) {
        const std::string msg = verdict_of(p);
        EXPECT_NE(msg.find(what), std::string::npos) << msg;
        EXPECT_NE(msg.find(range), std::string::npos) << msg;
    };
    const std::string r = std::to_string(rows);
    expect_refused(with_ranges(w, {{"", 0, 16, Side::Gpu}, {"", 24, rows, Side::Cpu}}), w,
                   "rows [16, 24) of '" + w + "' are placed nowhere");  // gap
    expect_refused(with_ranges(w, {{"", 0, 16, Side::Gpu}}), w, "rows [16, " + r + ")");  // gap at the end
    expect_refused(with_ranges(w, {{"", 0, 24, Side::Gpu}, {"", 16, rows, Side::Cpu}}), w,
                   "rows [16, 24) of '" + w + "' are placed twice");  // overlap
    expect_refused(with_ranges(w, {{"", 0, 16, Side::Gpu}, {"", 16, rows + 8, Side::Cpu}}), w,
                   "rows [16, " + std::to_string(rows + 8) + ")");  // past the end
    expect_refused(with_ranges(w, {{"", 0, 16, Side::Gpu}, {"", 16, 16, Side::Cpu}, {"", 16, rows, Side::Cpu}}), w,
                   "empty");
    expect_refused(with_ranges(w, {}), "no row of '" + w + "'", "(" + r + " rows)");  // missing tensor

    Placement unknown = plan::whole_on_gpu(tiny().bound);
    unknown.ranges.push_back(RowRange{"blk.99.ffn_up.weight", 0, 8, Side::Cpu});
    expect_refused(unknown, "'blk.99.ffn_up.weight', which the model does not use", "rows [0, 8)");

    const std::string norm = "blk.0.attn_norm.weight";
    expect_refused(with_ranges(norm, {{"", 0, 1, Side::Cpu}}), "'" + norm + "' is not a GEMV weight", "rows [0, 1)");
    const std::string embd = "token_embd.weight";
    const int64_t vocab = tensor(tiny(), embd).ne[1];
    expect_refused(with_ranges(embd, {{"", 0, 8, Side::Gpu}, {"", 8, vocab, Side::Cpu}}),
                   "'" + embd + "' is not a GEMV weight", "rows [8, " + std::to_string(vocab) + ")");

    expect_refused(with_ranges(w, {{"", 0, 12, Side::Gpu}, {"", 12, rows, Side::Cpu}}), "split at row 12",
                   "rows [12, " + r + ")");  // a warp would straddle the split
    expect_refused(with_ranges(w, {{"", 0, 16, Side::Cpu}, {"", 16, rows, Side::Gpu}}), "on the GPU after CPU rows",
                   "rows [16, " + r + ")");
}

TEST(RowSplitBill, GpuHoldsPrefixRowsAndCpuBytesAreBilled) {
    const Model& m = tiny();
    const auto whole = plan::make_plan(m.bound, qwen35_spec(), nullptr, absent_gpu(256));
    EXPECT_EQ(whole.cpu_read_bytes, 0u);

    const auto rs = plan::choose_row_split(m.bound, qwen35_spec(), whole.weight_bytes / 4);
    auto request = absent_gpu(256);
    request.row_split = rs.placement;
    const auto split = plan::make_plan(m.bound, qwen35_spec(), nullptr, request);
    EXPECT_EQ(split.cpu_read_bytes, rs.cpu_bytes);
    uint64_t prefix_slots = 0;
    for (const auto* t : plan::weight_arena(m.bound).tensors)
        prefix_slots += aligned(static_cast<uint64_t>(rs.placement.gpu_rows(std::string(t->name))) * plan::row_bytes(*t));
    EXPECT_EQ(split.weight_bytes, prefix_slots);
    // The arena shrinks by the moved bytes, give or take each slot's 256-byte rounding.
    const auto n_tensors = static_cast<int64_t>(plan::weight_arena(m.bound).tensors.size());
    EXPECT_LE(std::llabs(static_cast<int64_t>(split.weight_bytes + rs.cpu_bytes) -
                         static_cast<int64_t>(whole.weight_bytes)),
              256 * n_tensors);
    // Nothing else changes but the bus staging ring that the split's batched prompt steps stream its
    // host rows through (plan/bus_staging.hpp, at share 0 too); the prefill buffers stay the same.
    const auto whole_labels = whole.bytes_by_label(), split_labels = split.bytes_by_label();
    const uint64_t ring = plan::bus_staging_slots() * plan::bus_staging_slot_bytes();
    ASSERT_EQ(whole_labels.count(plan::kPrefillBuffersLabel), 1u);
    EXPECT_EQ(split_labels.at(plan::kPrefillBuffersLabel), whole_labels.at(plan::kPrefillBuffersLabel));
    EXPECT_EQ(split_labels.at(plan::kBusStagingLabel), ring);
    EXPECT_EQ(static_cast<int64_t>(split.peak()) - static_cast<int64_t>(whole.peak()),
              static_cast<int64_t>(ring) - static_cast<int64_t>(whole.weight_bytes - split.weight_bytes));
    EXPECT_EQ(split.peak(), split.allocated() + split.reserve);
    // Token by token (prefill_chunk 1): neither the ring nor prefill buffers.
    auto token_by_token = request;
    token_by_token.prefill_chunk = 1;
    const auto tbt = plan::make_plan(m.bound, qwen35_spec(), nullptr, token_by_token).bytes_by_label();
    EXPECT_EQ(tbt.count(plan::kPrefillBuffersLabel), 0u);
    EXPECT_EQ(tbt.count(plan::kBusStagingLabel), 0u);

    // A broken placement is refused before anything is billed.
    auto bad = request;
    bad.row_split->ranges.pop_back();
    EXPECT_THROW(plan::make_plan(m.bound, qwen35_spec(), nullptr, bad), Error);
}

// A split bills its staging ring (plan/bus_staging.hpp) where the token step copies a bus share
// (bus_read_share > 0) or its batched prompt steps stream the host rows (prefill_chunk > 1, at share
// 0 too): one more allocation under its label, exactly its bytes on top of the same split's peak;
// without a split, or token by token at share 0, nothing.
TEST(RowSplitBill, BusShareBillsTheStagingRing) {
    const Model& m = tiny();
    const auto rs = plan::choose_row_split(m.bound, qwen35_spec(), plan::make_plan(m.bound, qwen35_spec(), nullptr, absent_gpu(256)).weight_bytes / 4);
    auto request = absent_gpu(256);
    request.row_split = rs.placement;
    request.prefill_chunk = 1;
    const auto plain = plan::make_plan(m.bound, qwen35_spec(), nullptr, request);
    request.prefill_chunk = 16;
    const auto share0 = plan::make_plan(m.bound, qwen35_spec(), nullptr, request);
    request.bus_read_share = 0.5;
    const auto bus = plan::make_plan(m.bound, qwen35_spec(), nullptr, request);
    request.prefill_chunk = 1;
    const auto bus_token_by_token = plan::make_plan(m.bound, qwen35_spec(), nullptr, request);
    const uint64_t ring = plan::bus_staging_slots() * plan::bus_staging_slot_bytes();
    // With the ring the split session also batches its prompts (every host row streamed through the
    // ring once per step): the prefill buffers come with it; without, it prefills token by token.
    const auto prefill = [](const plan::VramBill& b) {
        const auto labels = b.bytes_by_label();
        const auto it = labels.find(plan::kPrefillBuffersLabel);
        return it == labels.end() ? uint64_t{0} : it->second;
    };
    EXPECT_EQ(prefill(plain), 0u);
    EXPECT_GT(prefill(bus), 0u);
    EXPECT_EQ(bus.peak() - plain.peak(), ring + prefill(bus));
    EXPECT_EQ(bus.bytes_by_label().at(plan::kBusStagingLabel), ring);
    EXPECT_EQ(plain.bytes_by_label().count(plan::kBusStagingLabel), 0u);
    EXPECT_EQ(share0.bytes_by_label(), bus.bytes_by_label()) << "batched prompts at share 0 need the same ring";
    EXPECT_EQ(bus_token_by_token.peak() - plain.peak(), ring) << "a bus share needs the ring, prompts or not";
    EXPECT_EQ(prefill(bus_token_by_token), 0u);
    EXPECT_EQ(bus.peak(), bus.allocated() + bus.reserve);
    auto unsplit = absent_gpu(256);
    unsplit.bus_read_share = 0.5;
    EXPECT_EQ(plan::make_plan(m.bound, qwen35_spec(), nullptr, unsplit).bytes_by_label().count(plan::kBusStagingLabel), 0u);
    // The over-budget report's split says how much of its peak the ring is.
    const auto whole = plan::make_plan(m.bound, qwen35_spec(), nullptr, unsplit);
    const plan::Budget budget{whole.peak() - whole.weight_bytes / 3, "test"};  // the ring (64 MiB) makes the split miss it: still reported
    const auto report = plan::plan_and_judge(m.bound, qwen35_spec(), nullptr, unsplit, budget, false, "tiny");
    ASSERT_TRUE(report.split.has_value());
    EXPECT_EQ(report.split->bus_staging, ring);
    EXPECT_NE(plan::to_text(report).find("of it the bus staging"), std::string::npos);
}

// With `prefill_chunk: auto`, a split whose batched prompt steps (the staging ring, 64 MiB, and their
// scratch) would not fit prefills token by token instead, and the report says so: here the tiny
// model is smaller than the ring.
TEST(RowSplitBill, OverBudgetReportShowsTheSplitThatFits) {
    const Model& m = tiny();
    auto request = absent_gpu(256);
    request.prefill_chunk = -1;
    // The budget: a third of the weights short of the peak at the smallest chunk `auto` tries, so no
    // smaller prompt step makes it fit (the default 256-token step's scratch alone is more than that
    // third on the tiny model).
    auto at_smallest = request;
    at_smallest.prefill_chunk = plan::smallest_auto_prefill_chunk(DENSE_DEVICE_CUDA);
    const auto whole = plan::make_plan(m.bound, qwen35_spec(), nullptr, at_smallest);
    const plan::Budget budget{whole.peak() - whole.weight_bytes / 3, "test"};
    const auto report = plan::plan_and_judge(m.bound, qwen35_spec(), nullptr, request, budget, false, "tiny");
    ASSERT_TRUE(report.verdict && !report.verdict->fits);
    ASSERT_TRUE(report.split.has_value());
    EXPECT_TRUE(report.split->fits);
    EXPECT_LE(report.split->peak, budget.bytes);
    EXPECT_EQ(report.split->prefill_chunk, 1);
    EXPECT_EQ(report.split->bus_staging, 0u);
    // What leaves the GPU: the host table (token_embd) first, then CPU rows for the rest.
    EXPECT_GT(report.split->host_table_bytes, 0u);
    EXPECT_GE(report.split->cpu_read_bytes + report.split->host_table_bytes, report.verdict->bytes_to_cpu);
    ASSERT_FALSE(report.split->kinds.empty());
    const std::string text = plan::to_text(report);
    EXPECT_NE(text.find("row split it would use"), std::string::npos) << text;
    EXPECT_NE(text.find("ffn_gate"), std::string::npos) << text;
    EXPECT_NE(text.find("with the row split, prompts run token by token"), std::string::npos) << text;
    const std::string json = plan::to_json(report);
    EXPECT_NE(json.find("\"row_split\": {"), std::string::npos) << json;

    // Within budget: no split is shown.
    const auto fits = plan::plan_and_judge(m.bound, qwen35_spec(), nullptr, request,
                                           plan::Budget{whole.peak(), "test"}, false, "tiny");
    EXPECT_FALSE(fits.split.has_value());
}

}  // namespace
}  // namespace dense::test

namespace dense::test {
namespace {

// The CPU parts a split's step runs (bus_read_share auto's hand-over term): adjacent split GEMVs on
// one activation are one job, so per layer one for gate + up, one for down, one for a Gated DeltaNet
// or attention list, one per other GEMV with CPU rows; one for the head.
TEST(RowSplit, CpuJobsPerStepCountTheDistinctInputsOfSplitGemvs) {
    const Model& m = tiny();
    const auto roles_with_cpu_rows = [&m](std::set<std::string> roles) {
        return [&m, roles](const gguf::TensorInfo* t) { return roles.count(role_of(m, std::string(t->name))) != 0; };
    };
    int64_t recurrent = 0, attention = 0;
    for (const auto& l : m.bound.layers) (l.kind == "recurrent" ? recurrent : attention) += 1;
    const int64_t layers = recurrent + attention;
    ASSERT_GT(recurrent, 0);
    ASSERT_GT(attention, 0);
    const auto& spec = qwen35_spec();
    EXPECT_EQ(plan::cpu_jobs_per_step(m.bound, spec, roles_with_cpu_rows({})), 0);
    EXPECT_EQ(plan::cpu_jobs_per_step(m.bound, spec, roles_with_cpu_rows({"ffn_gate"})), layers);
    EXPECT_EQ(plan::cpu_jobs_per_step(m.bound, spec, roles_with_cpu_rows({"ffn_gate", "ffn_up"})), layers);
    EXPECT_EQ(plan::cpu_jobs_per_step(m.bound, spec, roles_with_cpu_rows({"ffn_gate", "ffn_up", "ffn_down"})), 2 * layers);
    EXPECT_EQ(plan::cpu_jobs_per_step(m.bound, spec, roles_with_cpu_rows({"attn_qkv", "attn_gate", "ssm_beta", "ssm_alpha",
                                                                            "attn_q", "attn_k", "attn_v"})),
              layers);
    EXPECT_EQ(plan::cpu_jobs_per_step(m.bound, spec, roles_with_cpu_rows({"ssm_out", "attn_output", "output"})), layers + 1);
}

}  // namespace
}  // namespace dense::test
