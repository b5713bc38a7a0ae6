// GEMVs that read the same activation, merged into one GEMV_Q_MULTI node (dense_abi.h, ABI 1.8).
//
// At batch 1 a small matrix costs a kernel's start and tail rather than its bytes: a Gated DeltaNet
// layer multiplies its normed input by four matrices (qkv 10240 rows, gate 6144, beta and alpha 48
// each), an attention layer by three (q, k, v), every FFN by two (gate, up). A pack that registers
// GEMV_Q_MULTI computes such a list in as few launches as it can, each output bit for bit what
// GEMV_Q would write, so merging changes no result, only the launch count.
//
// A run of consecutive nodes is merged when every node is a plain GEMV_Q (not accumulating, not the
// CPU part of a row split, not a bus chunk reading a staging slot), all in one layer and phase, on
// the same device, reading the same quantized activation, their outputs disjoint from it and from
// each other, their implementations all from one pack, and that pack's GEMV_Q_MULTI accepts the
// merged call. Up to 16 nodes per run. Only device nodes: on the CPU a call has no launch to save
// and the fast CPU packs implement GEMV_Q alone. DENSE_GEMV_LISTS=0 leaves every GEMV alone (for
// A/B runs), =all merges CPU nodes too (tests: it puts the pass on cpu-ref without a GPU); any other
// value but 1 is a usage error.
#pragma once

#include "graph/graph.hpp"
#include "packs/pack_manager.hpp"

namespace dense::graph {

// `graph` must be resolved with ops selected (select_ops); it stays so. Returns the number of merged
// nodes created. The merge depends on node order and views only, so applying it to two copies of a
// graph that differ in buffer addresses (the executor's two state-bank parities) gives the same
// node list in both.
size_t merge_gemv_lists(Graph& graph, const packs::PackManager& packs, size_t device);

}  // namespace dense::graph
