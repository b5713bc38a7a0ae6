#include "plan/weight_arena.hpp"

#include "plan/row_split.hpp"

#include <algorithm>
#include <set>

namespace dense::plan {

WeightArena weight_arena(const model::BoundModel& model, const Placement* placement) {
    WeightArena arena;
    std::set<const gguf::TensorInfo*> seen;
    auto group = [&](const std::string& kind) -> WeightGroup& {
        for (auto& g : arena.groups)
            if (g.layer_kind == kind) return g;
        arena.groups.push_back(WeightGroup{kind, 0, 0, 0});
        return arena.groups.back();
    };
    auto add = [&](const gguf::TensorInfo* t, WeightGroup& g) {
        if (t == nullptr || !seen.insert(t).second) return;  // absent optional, or shared (tied head)
        arena.tensors.push_back(t);
        const uint64_t gpu_bytes =
            placement ? static_cast<uint64_t>(placement->gpu_rows(std::string(t->name))) * row_bytes(*t) : t->n_bytes;
        g.bytes += weight_slot_bytes(gpu_bytes);
        ++g.tensors;
    };
    WeightGroup& globals = group("global");
    for (const auto& [role, t] : model.globals) add(t, globals);
    for (const auto& layer : model.layers) {
        WeightGroup& g = group(layer.kind);
        ++g.layers;
        for (const auto& [role, t] : layer.tensors) add(t, g);
    }
    for (const auto& block : model.skipped_blocks)
        for (const auto& [role, t] : block.tensors)
            if (t != nullptr && !seen.count(t)) arena.skipped_bytes += t->n_bytes;
    std::sort(arena.tensors.begin(), arena.tensors.end(),
              [](const gguf::TensorInfo* a, const gguf::TensorInfo* b) { return a->file_offset < b->file_offset; });
    for (const auto& g : arena.groups) arena.bytes += g.bytes;
    return arena;
}

}  // namespace dense::plan
