// A Gated DeltaNet layer's token-step ops after its projections — CONV1D_CAUSAL, GDN_GATES, the
// L2_NORM of the q and k heads, GDN_DECODE — merged into one GDN_STEP node (dense_abi.h, ABI 1.11).
//
// At batch 1 each of the four is a dependent launch that moves a few kilobytes: their cost is the
// launches (~3 µs each in the captured step on an H200, docs/perf-notes.md session 22), so a pack with
// GDN_STEP runs the four as one kernel. GDN_STEP must leave exactly what the four calls leave (every
// output, the conv output and the gates included), so merging changes no result, only the launch count.
//
// Four consecutive nodes are merged when they are, in order, one token's CONV1D_CAUSAL (x -> y), GDN_GATES,
// L2_NORM in place over y's first 2 Hk rows of dk (q then k heads, one node), and GDN_DECODE reading
// q, k and v as y's three consecutive parts and beta and decay as the gates' outputs; all in one layer
// and phase on one device, and the pack that runs them accepts the merged call. Only device nodes by
// default (on the CPU a call has no launch to save). DENSE_GDN_STEP_FUSION=0 leaves them alone (A/B
// runs), =all merges CPU nodes too (tests: it puts the pass on cpu-ref without a GPU); any other value
// but 1 is a usage error. Batched steps (token axes) keep the four ops: GDN_STEP has no token axis.
#pragma once

#include "graph/graph.hpp"
#include "packs/pack_manager.hpp"

namespace dense::graph {

// `graph` must be resolved with ops selected (select_ops); it stays so. Returns the number of GDN_STEP
// nodes made. Like merge_gemv_lists, the result depends on node order and views only, so both
// state-bank parities of a graph merge alike.
size_t fuse_gdn_steps(Graph& graph, const packs::PackManager& packs, size_t device);

}  // namespace dense::graph
