#include "plan/buffer_arena.hpp"

#include "core/error.hpp"
#include "plan/allocation_size.hpp"

namespace dense::plan {

Item item_of(graph::BufferKind kind) noexcept {
    switch (kind) {
        case graph::BufferKind::Activation: return Item::Activations;
        case graph::BufferKind::StepInput: return Item::Staging;
        case graph::BufferKind::KvCache: return Item::KvCache;
        case graph::BufferKind::StateBankA:
        case graph::BufferKind::StateBankB: return Item::RecurrentState;
        case graph::BufferKind::Output: return Item::Staging;
    }
    return Item::Activations;
}

BufferArena buffer_arena(const graph::Graph& graph, const model::BoundModel& model) {
    auto kind_of_layer = [&](int64_t layer) -> std::string {
        if (layer < 0) return "";
        for (const auto& l : model.layers)
            if (l.index == layer) return l.kind;
        throw Error(ErrorKind::Internal, "graph buffer of layer " + std::to_string(layer) + " outside the trunk");
    };
    BufferArena arena;
    uint64_t end = 0;  // end of the previous buffer's bytes
    for (size_t i = 0; i < graph.buffers.size(); ++i) {
        const graph::Buffer& b = graph.buffers[i];
        const bool packed = b.kind == graph::BufferKind::StepInput && i > 0 &&
                            graph.buffers[i - 1].kind == graph::BufferKind::StepInput;
        BufferSlot s;
        s.buffer = static_cast<graph::BufferId>(i);
        s.offset = packed ? end : align_up(end);
        s.item = item_of(b.kind);
        s.layer_kind = kind_of_layer(b.layer);
        if (!arena.slots.empty()) arena.slots.back().footprint = s.offset - arena.slots.back().offset;
        end = s.offset + b.bytes;
        arena.slots.push_back(std::move(s));
    }
    arena.bytes = allocation_size(end);
    if (!arena.slots.empty()) arena.slots.back().footprint = arena.bytes - arena.slots.back().offset;
    return arena;
}

}  // namespace dense::plan
