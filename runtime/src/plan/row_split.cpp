#include "plan/row_split.hpp"

#include "core/env_number.hpp"
#include "core/error.hpp"
#include "core/type_table.hpp"
#include "plan/weight_arena.hpp"

#include <algorithm>
#include <cmath>
#include <set>

namespace dense::plan {

namespace {

std::string range_text(int64_t first, int64_t end) {
    return "rows [" + std::to_string(first) + ", " + std::to_string(end) + ")";
}

// name -> tensor for every used weight (what the weight arena holds).
std::map<std::string, const gguf::TensorInfo*> used_tensors(const model::BoundModel& model) {
    std::map<std::string, const gguf::TensorInfo*> out;
    for (const auto* t : weight_arena(model).tensors) out[std::string(t->name)] = t;
    return out;
}

// name -> role, globals first (a tied head is token_embd: its role stays "token_embd").
std::map<std::string, std::string> roles_of(const model::BoundModel& model) {
    std::map<std::string, std::string> out;
    for (const auto& [role, t] : model.globals)
        if (t != nullptr) out.emplace(std::string(t->name), role);
    for (const auto& layer : model.layers)
        for (const auto& [role, t] : layer.tensors)
            if (t != nullptr) out.emplace(std::string(t->name), role);
    return out;
}

int tier_of(const std::string& role) {
    if (role == "ffn_gate" || role == "ffn_up") return 0;
    if (role == "ffn_down") return 1;
    return 2;
}

// The order in which a tensor of `role` in a format of CPU cost `cost` gives rows (row_split.hpp):
// the FFN roles of the tuned formats, read-bound before arithmetic-bound, then the other roles of the
// tuned formats, then everything the reference alone runs.
constexpr int kTiers = 9;
int move_order(const std::string& role, packs::CpuGemvCost cost) {
    const int r = tier_of(role);
    switch (cost) {
        case packs::CpuGemvCost::ReadBound: return r < 2 ? r : 4;
        case packs::CpuGemvCost::ArithmeticBound: return r < 2 ? 2 + r : 5;
        case packs::CpuGemvCost::ReferenceOnly: break;
    }
    return 6 + r;
}

[[noreturn]] void fail(const std::string& what) {
    throw Error(ErrorKind::Internal, "row placement refused: " + what);
}

int64_t rows_of(const gguf::TensorInfo& t) {
    return t.ne[1] * t.ne[2] * t.ne[3];
}

// kMinSplitFraction, or DENSE_SPLIT_MIN_PERCENT / 100 (0-100; 0: the even fraction over every layer
// always), a knob for measurements; every placement comes from choose_row_split, so plan and
// session agree.
double min_split_fraction() {
    return static_cast<double>(env_whole_number("DENSE_SPLIT_MIN_PERCENT",
                                                static_cast<uint64_t>(kMinSplitFraction * 100 + 0.5), 0, 100)) / 100.0;
}

// Tensor name -> index of the trunk layer that holds it (absent: a global tensor such as the head).
std::map<std::string, int64_t> layers_of(const model::BoundModel& model) {
    std::map<std::string, int64_t> out;
    for (const auto& l : model.layers)
        for (const auto& [role, t] : l.tensors)
            if (t) out[std::string(t->name)] = l.index;
    return out;
}

// The tensors of `tier` that give rows when `remaining` bytes must move: all of them when an even
// fraction of its layers' tensors would be at least min_split_fraction(), else only the tensors of
// evenly spaced layers, so few that each gives up about that fraction of its rows. Global tensors
// (the LM head) then keep theirs; and where the chosen layers cannot cover `remaining` (hybrid layers
// differ in size), the whole tier gives rows as before.
//
// Why: every split layer hands its CPU rows over and joins them back whatever their number (~0.1 ms
// each on the H200 test machine). 16 GiB at context 32768 moves 0.49 GB to the CPU (and 0.49 GB over
// the bus); as 8 % of every layer's ffn_gate / ffn_up that decoded at 39.2 tok/s, as half of 21
// layers' at 41.3-42.6 (+5-9 %; prompts 929 -> 890 tok/s, -4 %). The hand-overs were the smaller part
// of that step's cost (98 tok/s unsplit); by my estimate, not yet profiled, most of it is the bus
// copies (~10 ms at ~50 GB/s), which the staging lets run only 64 MiB ahead of their GEMVs
// (docs/perf-notes.md, session 16). With large moves the even fraction stays: there
// every layer's CPU part is long and overlaps its GPU part.
std::vector<const gguf::TensorInfo*> fewest_layers(const std::vector<const gguf::TensorInfo*>& tier,
                                                   const std::map<std::string, int64_t>& layer_of, uint64_t remaining) {
    uint64_t layer_bytes = 0;
    std::set<int64_t> layers;
    for (const auto* t : tier)
        if (auto it = layer_of.find(std::string(t->name)); it != layer_of.end()) {
            layer_bytes += static_cast<uint64_t>(rows_of(*t)) * row_bytes(*t);
            layers.insert(it->second);
        }
    const double least = min_split_fraction();
    if (layers.size() < 2 || layer_bytes == 0) return tier;
    const double fraction = static_cast<double>(remaining) / static_cast<double>(layer_bytes);
    if (fraction >= least) return tier;
    const auto n = static_cast<int64_t>(layers.size());
    const int64_t k = std::clamp<int64_t>(static_cast<int64_t>(std::ceil(static_cast<double>(n) * fraction / least)), 1, n);
    const std::vector<int64_t> ordered(layers.begin(), layers.end());
    std::set<int64_t> chosen;  // k of the n layers, evenly spaced: the bus copies and CPU parts spread over the step
    for (int64_t i = 0; i < k; ++i) chosen.insert(ordered[static_cast<size_t>((2 * i + 1) * n / (2 * k))]);
    std::vector<const gguf::TensorInfo*> out;
    uint64_t out_bytes = 0;
    for (const auto* t : tier) {
        auto it = layer_of.find(std::string(t->name));
        if (it == layer_of.end() || !chosen.count(it->second)) continue;
        out.push_back(t);
        out_bytes += static_cast<uint64_t>(rows_of(*t)) * row_bytes(*t);
    }
    return out_bytes >= remaining ? out : tier;
}

}  // namespace

int64_t Placement::gpu_rows(const std::string& tensor) const {
    for (const auto& r : ranges)
        if (r.tensor == tensor && r.side == Side::Gpu && r.first == 0) return r.end;
    return 0;
}

bool Placement::splits_any() const {
    return std::any_of(ranges.begin(), ranges.end(), [](const RowRange& r) { return r.side == Side::Cpu; });
}

bool Placement::in_host_table(const std::string& tensor) const {
    return std::any_of(ranges.begin(), ranges.end(),
                       [&](const RowRange& r) { return r.tensor == tensor && r.side == Side::HostTable; });
}

bool Placement::moves_any() const {
    return std::any_of(ranges.begin(), ranges.end(), [](const RowRange& r) { return r.side != Side::Gpu; });
}

Placement whole_on_gpu(const model::BoundModel& model) {
    Placement p;
    for (const auto* t : weight_arena(model).tensors)
        p.ranges.push_back(RowRange{std::string(t->name), 0, rows_of(*t), Side::Gpu});
    return p;
}

uint64_t row_bytes(const gguf::TensorInfo& t) {
    const int64_t rows = rows_of(t);
    return rows > 0 ? t.n_bytes / static_cast<uint64_t>(rows) : 0;
}

namespace {

using TensorsByRole = std::map<std::string, const gguf::TensorInfo*>;

// f(layer, recipe, step, tensors) for every step of the recipes a token step runs: the head's (layer
// -1, the globals' tensors), then per trunk layer its kind's and "ffn" (that layer's tensors).
template <class F>
void for_each_recipe_step(const model::BoundModel& model, const model::ModelSpec& spec, F&& f) {
    auto run = [&](int64_t layer, const std::string& recipe, const TensorsByRole& tensors) {
        auto it = spec.recipes.find(recipe);
        if (it == spec.recipes.end()) return;
        for (const auto& step : it->second) f(layer, recipe, step, tensors);
    };
    run(-1, "head", model.globals);
    for (const auto& layer : model.layers) {
        run(layer.index, layer.kind, layer.tensors);
        run(layer.index, "ffn", layer.tensors);
    }
}

// Weight i of `step` as `tensors` bind it (the step's fallback weight where that role is absent), or
// nullptr.
const gguf::TensorInfo* step_weight(const model::RecipeStep& step, size_t i, const TensorsByRole& tensors) {
    auto find = [&](const std::string& role) -> const gguf::TensorInfo* {
        auto it = tensors.find(role);
        return it == tensors.end() ? nullptr : it->second;
    };
    const gguf::TensorInfo* t = find(step.weights[i]);
    if (t == nullptr && !step.fallback_weight.empty()) t = find(step.fallback_weight);
    return t;
}

bool is_gemv_step(const model::RecipeStep& step) { return step.op == "gemv" || step.op == "gemv_add"; }

// Which steps read each used tensor: as a GEMV matrix, by embed_row, or otherwise (norms, conv taps).
struct TensorReads {
    std::set<std::string> gemv, embed, other;
};

TensorReads tensor_reads(const model::BoundModel& model, const model::ModelSpec& spec) {
    TensorReads reads;
    for_each_recipe_step(model, spec, [&](int64_t, const std::string&, const model::RecipeStep& s, const TensorsByRole& tensors) {
        for (size_t i = 0; i < s.weights.size(); ++i) {
            const gguf::TensorInfo* t = step_weight(s, i, tensors);
            if (t == nullptr) continue;
            auto& set = (is_gemv_step(s) && i == 0) ? reads.gemv : (s.op == "embed_row" && i == 0) ? reads.embed : reads.other;
            set.insert(std::string(t->name));
        }
    });
    return reads;
}

}  // namespace

int64_t cpu_jobs_per_step(const model::BoundModel& model, const model::ModelSpec& spec,
                          const std::function<bool(const gguf::TensorInfo*)>& has_cpu_rows) {
    std::set<std::pair<int64_t, std::string>> jobs;  // (layer, -1 for the head; recipe and input)
    for_each_recipe_step(model, spec, [&](int64_t layer, const std::string& recipe, const model::RecipeStep& step,
                                          const TensorsByRole& tensors) {
        if (!is_gemv_step(step) || step.weights.empty() || step.inputs.empty()) return;
        const gguf::TensorInfo* t = step_weight(step, 0, tensors);
        if (t != nullptr && has_cpu_rows(t)) jobs.insert({layer, recipe + "/" + step.inputs[0]});
    });
    return static_cast<int64_t>(jobs.size());
}

std::vector<std::string> splittable_tensors(const model::BoundModel& model, const model::ModelSpec& spec) {
    const TensorReads reads = tensor_reads(model, spec);
    const auto used = used_tensors(model);
    std::vector<std::string> out;
    for (const auto& name : reads.gemv) {
        auto it = used.find(name);
        // read by row somewhere (a head tied to token_embd), or not uploaded
        if (reads.embed.count(name) || reads.other.count(name) || it == used.end()) continue;
        const gguf::TensorInfo& t = *it->second;
        if (t.ne[2] == 1 && t.ne[3] == 1 && t.ne[1] > 1) out.push_back(name);
    }
    return out;
}

std::vector<std::string> row_read_tables(const model::BoundModel& model, const model::ModelSpec& spec) {
    const TensorReads reads = tensor_reads(model, spec);
    const auto used = used_tensors(model);
    std::vector<std::string> out;
    for (const auto& name : reads.embed)
        if (used.count(name) && !reads.gemv.count(name) && !reads.other.count(name)) out.push_back(name);
    return out;
}

RowSplit choose_row_split(const model::BoundModel& model, const model::ModelSpec& spec, uint64_t bytes_to_move,
                          const CpuGemvCostOf& cpu_cost, bool tables_to_host) {
    const auto used = used_tensors(model);
    const auto roles = roles_of(model);
    std::map<std::string, int64_t> gpu;  // name -> gpu rows
    for (const auto& [name, t] : used) gpu[name] = rows_of(*t);

    uint64_t remaining = bytes_to_move;
    std::set<std::string> tables;
    if (tables_to_host && remaining > 0) {
        // Whole tables first: a token reads one row of each, so their bytes leave VRAM at no cost per
        // token, while every matrix row moved costs its bytes on the host side each token.
        for (const auto& name : row_read_tables(model, spec)) {
            tables.insert(name);
            const uint64_t bytes = used.at(name)->n_bytes;
            remaining = bytes >= remaining ? 0 : remaining - bytes;
        }
    }

    std::vector<const gguf::TensorInfo*> tiers[kTiers];
    for (const auto& name : splittable_tensors(model, spec)) {
        const gguf::TensorInfo* t = used.at(name);
        const packs::CpuGemvCost cost = cpu_cost ? cpu_cost(t->type) : packs::CpuGemvCost::ReadBound;
        tiers[move_order(roles.at(name), cost)].push_back(t);
    }

    const auto layer_of = layers_of(model);
    for (const auto& whole_tier : tiers) {
        if (remaining == 0 || whole_tier.empty()) continue;
        const std::vector<const gguf::TensorInfo*> tier = fewest_layers(whole_tier, layer_of, remaining);
        // Step j of D moves the same fraction j/D of every tensor's whole row tiles; D is the most
        // tiles any tensor has, so one step moves at most one tile of each.
        int64_t d = 1;
        for (const auto* t : tier) d = std::max(d, rows_of(*t) / kSplitRowTile);
        auto gpu_rows_at = [&](const gguf::TensorInfo& t, int64_t j) -> int64_t {
            if (j == 0) return rows_of(t);
            return kSplitRowTile * ((rows_of(t) / kSplitRowTile) * (d - j) / d);
        };
        auto moved_at = [&](int64_t j) {
            uint64_t bytes = 0;
            for (const auto* t : tier)
                bytes += static_cast<uint64_t>(rows_of(*t) - gpu_rows_at(*t, j)) * row_bytes(*t);
            return bytes;
        };
        int64_t j = d;
        if (moved_at(d) >= remaining) {  // the smallest step that moves enough (moved_at grows with j)
            int64_t lo = 0, hi = d;      // moved_at(lo) < remaining <= moved_at(hi)
            while (hi - lo > 1) {
                const int64_t mid = lo + (hi - lo) / 2;
                (moved_at(mid) >= remaining ? hi : lo) = mid;
            }
            j = hi;
        }
        const uint64_t moved = moved_at(j);
        for (const auto* t : tier) gpu[std::string(t->name)] = gpu_rows_at(*t, j);
        remaining = moved >= remaining ? 0 : remaining - moved;
    }

    RowSplit split;
    for (const auto* t : weight_arena(model).tensors) {  // file order
        const std::string name(t->name);
        const int64_t rows = rows_of(*t), g = gpu.at(name);
        if (tables.count(name)) {
            split.placement.ranges.push_back(RowRange{name, 0, rows, Side::HostTable});
            split.host_table_bytes += t->n_bytes;
            split.host_tables.push_back(name);
            continue;
        }
        if (g > 0) split.placement.ranges.push_back(RowRange{name, 0, g, Side::Gpu});
        if (g < rows) {
            split.placement.ranges.push_back(RowRange{name, g, rows, Side::Cpu});
            split.cpu_bytes += static_cast<uint64_t>(rows - g) * row_bytes(*t);
        }
    }
    split.enough = remaining == 0;
    split.kinds = summarize(model, split.placement);
    return split;
}

std::vector<SplitKind> summarize(const model::BoundModel& model, const Placement& placement) {
    const auto used = used_tensors(model);
    const auto roles = roles_of(model);
    std::map<std::string, SplitKind> by_role;
    std::map<std::string, uint64_t> cpu_of;
    for (const auto& r : placement.ranges) {
        auto it = used.find(r.tensor);
        if (r.side != Side::Cpu || it == used.end() || r.end <= r.first) continue;
        cpu_of[r.tensor] += static_cast<uint64_t>(r.end - r.first) * row_bytes(*it->second);
    }
    for (const auto& [name, t] : used) {
        SplitKind& k = by_role[roles.at(name)];
        k.role = roles.at(name);
        ++k.tensors;
        if (auto it = cpu_of.find(name); it != cpu_of.end()) {
            ++k.tensors_split;
            k.cpu_bytes += it->second;
        }
    }
    std::vector<SplitKind> out;
    for (auto& [role, k] : by_role)
        if (k.tensors_split > 0) out.push_back(k);
    std::stable_sort(out.begin(), out.end(),
                     [](const SplitKind& a, const SplitKind& b) { return tier_of(a.role) < tier_of(b.role); });
    return out;
}

void verify_exact_cover(const model::BoundModel& model, const model::ModelSpec& spec, const Placement& placement) {
    const auto used = used_tensors(model);
    const auto splittable_list = splittable_tensors(model, spec);
    const std::set<std::string> splittable(splittable_list.begin(), splittable_list.end());
    const auto table_list = row_read_tables(model, spec);
    const std::set<std::string> tables(table_list.begin(), table_list.end());

    std::map<std::string, std::vector<RowRange>> by_tensor;
    for (const auto& r : placement.ranges) {
        auto it = used.find(r.tensor);
        if (it == used.end())
            fail("it places " + range_text(r.first, r.end) + " of tensor '" + r.tensor +
                 "', which the model does not use");
        const int64_t rows = rows_of(*it->second);
        if (r.first < 0 || r.end > rows || r.first >= r.end)
            fail(range_text(r.first, r.end) + " of '" + r.tensor + "' are " +
                 (r.first >= r.end ? "an empty or reversed range" : "outside its " + std::to_string(rows) + " rows"));
        by_tensor[r.tensor].push_back(r);
    }
    for (const auto& [name, t] : used) {
        const int64_t rows = rows_of(*t);
        auto it = by_tensor.find(name);
        if (it == by_tensor.end()) fail("no row of '" + name + "' (" + std::to_string(rows) + " rows) is placed");
        auto& rs = it->second;
        std::sort(rs.begin(), rs.end(), [](const RowRange& a, const RowRange& b) { return a.first < b.first; });
        int64_t covered = 0;  // rows [0, covered) placed once so far
        for (const auto& r : rs) {
            if (r.first > covered) fail(range_text(covered, r.first) + " of '" + name + "' are placed nowhere");
            if (r.first < covered)
                fail(range_text(r.first, std::min(covered, r.end)) + " of '" + name + "' are placed twice");
            covered = r.end;
        }
        if (covered < rows) fail(range_text(covered, rows) + " of '" + name + "' are placed nowhere");

        // A host table: the whole tensor, and one the step only reads by row (the device then reads
        // it in place; a GEMV over PCIe memory would crawl).
        const bool host_table = std::any_of(rs.begin(), rs.end(), [](const RowRange& r) { return r.side == Side::HostTable; });
        if (host_table) {
            if (rs.size() != 1)
                fail("'" + name + "' is a host table only in part: a host table holds the whole tensor, " +
                     range_text(0, rows));
            if (!tables.count(name))
                fail("'" + name + "' is not read by row only (a GEMV or another op reads it), so it must not be a "
                     "host table, " + range_text(0, rows));
            continue;
        }

        // The executor's shape: GPU prefix, CPU suffix, split on a row tile, only GEMV weights split.
        int64_t split = rows;  // first CPU row
        for (const auto& r : rs) {
            if (r.side == Side::Cpu) split = std::min(split, r.first);
            else if (split < rows)
                fail(range_text(r.first, r.end) + " of '" + name +
                     "' are on the GPU after CPU rows: the GPU must hold a prefix, the CPU the suffix");
        }
        if (split == rows) continue;
        if (!splittable.count(name))
            fail("'" + name + "' is not a GEMV weight (it is read by row on the device) and must not be split, but " +
                 range_text(split, rows) + " are on the CPU");
        if (split % kSplitRowTile != 0)
            fail("'" + name + "' is split at row " + std::to_string(split) + ", not a multiple of the GPU GEMV's " +
                 std::to_string(kSplitRowTile) + "-row tile (" + range_text(split, rows) + " on the CPU)");
    }
}

}  // namespace dense::plan
