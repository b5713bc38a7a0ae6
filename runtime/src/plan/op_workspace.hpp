// The op workspace: one buffer sized for the hungriest node and shared by all (nodes run one after
// another on one stream). Its size is what each selected implementation's workspace_bytes() says
// for the node's real call, so it depends on the pack and on the context (attention partials).
#pragma once

#include "graph/graph.hpp"
#include "packs/pack_manager.hpp"
#include "plan/buffer_arena.hpp"

#include <cstdint>

namespace dense::plan {

// The label the session allocates the workspace with.
inline constexpr const char* kWorkspaceLabel = "op workspace";

// Max over the nodes of workspace_bytes(); `graph` must be resolved with its ops selected.
uint64_t op_workspace_bytes(const graph::Graph& graph);

// The same before anything is allocated: `graph` (built, unresolved) is resolved onto stand-in
// addresses laid out exactly as the session will place its buffers (`arena`), its ops are selected
// on packs.devices()[device], then op_workspace_bytes. The stand-in addresses are never
// dereferenced: supports() and workspace_bytes() only inspect a call (dense_abi.h); its weights'
// addresses are whatever the graph was built with. Throws dense::Error(Pack) as graph::select_ops.
uint64_t planned_op_workspace(graph::Graph graph, const BufferArena& arena, const packs::PackManager& packs,
                              size_t device);

// What planned_op_workspace does first, for any planning that asks the packs about a graph: resolves
// `graph` onto stand-in addresses at `arena`'s slots and selects its ops on packs.devices()[device].
// Throws dense::Error(Pack) as graph::select_ops.
void select_at_stand_ins(graph::Graph& graph, const BufferArena& arena, const packs::PackManager& packs, size_t device);

// A stand-in base address for planning: aligned far beyond any real pointer's alignment, non-null,
// never dereferenced. `region` keeps regions (weights, buffers) apart.
void* stand_in_address(int region, uint64_t offset) noexcept;

}  // namespace dense::plan
