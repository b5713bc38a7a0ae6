// Where every buffer of a built graph lives: one arena per session (the design's "one device arena
// for mutable state"), carved into slots in buffer order. exec::Session allocates the arena and
// points each buffer at its slot with exactly this layout.
//
// WHY one arena and not one allocation per buffer: device allocators round every allocation up to
// their own granularity (2 MiB pages for cudaMalloc), which no plan can bill exactly for dozens of
// small per-layer buffers. One allocation is billed to the byte.
//
// Slots start 256-byte aligned, except that consecutive step inputs are packed back to back: the
// executor writes token, position, n_kv and status with one copy per step.
#pragma once

#include "graph/graph.hpp"
#include "model/model_binding.hpp"
#include "plan/vram_bill.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace dense::plan {

// The label the session allocates the arena with.
inline constexpr const char* kGraphBuffersLabel = "graph buffers";

struct BufferSlot {
    graph::BufferId buffer = 0;
    uint64_t offset = 0;     // bytes from the arena start
    uint64_t footprint = 0;  // bytes up to the next slot (or the arena end): its share of the arena
    Item item = Item::Activations;
    std::string layer_kind;  // kind of the buffer's layer ("" for buffers shared by all layers)
};

struct BufferArena {
    std::vector<BufferSlot> slots;  // one per graph buffer, in buffer order (slots[i].buffer == i)
    uint64_t bytes = 0;             // the arena allocation (sum of footprints)
};

// What a buffer holds, as billed.
Item item_of(graph::BufferKind kind) noexcept;

// Throws dense::Error(Internal) for a buffer whose layer is not in the model's trunk.
BufferArena buffer_arena(const graph::Graph& graph, const model::BoundModel& model);

}  // namespace dense::plan
