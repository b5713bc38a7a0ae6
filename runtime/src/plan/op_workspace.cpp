#include "plan/op_workspace.hpp"

#include "graph/attn_prep_fusion.hpp"
#include "graph/gdn_step_fusion.hpp"
#include "graph/gemv_lists.hpp"
#include "graph/graph_builder.hpp"

#include <algorithm>

namespace dense::plan {

uint64_t op_workspace_bytes(const graph::Graph& graph) {
    uint64_t bytes = 0;
    for (const auto& n : graph.nodes)
        if (n.op.impl.workspace_bytes != nullptr)
            bytes = std::max(bytes, n.op.impl.workspace_bytes(n.op.impl.user, &n.call));
    return bytes;
}

void* stand_in_address(int region, uint64_t offset) noexcept {
    // 1 TiB apart, starting at 1 TiB: 256-byte (indeed 2^40-byte) aligned bases.
    const uintptr_t base = (uintptr_t{1} << 40) * static_cast<uintptr_t>(region + 1);
    return reinterpret_cast<void*>(base + static_cast<uintptr_t>(offset));
}

void select_at_stand_ins(graph::Graph& graph, const BufferArena& arena, const packs::PackManager& packs, size_t device) {
    std::vector<void*> base(graph.buffers.size());
    for (const auto& s : arena.slots) base[s.buffer] = stand_in_address(1, s.offset);
    graph.resolve(base);
    graph::select_ops(graph, packs, device);
}

uint64_t planned_op_workspace(graph::Graph graph, const BufferArena& arena, const packs::PackManager& packs,
                              size_t device) {
    select_at_stand_ins(graph, arena, packs, device);
    graph::merge_gemv_lists(graph, packs, device);  // as the session does (exec/session.cpp)
    graph::fuse_gdn_steps(graph, packs, device);
    graph::fuse_attn_preps(graph, packs, device);
    return op_workspace_bytes(graph);
}

}  // namespace dense::plan
