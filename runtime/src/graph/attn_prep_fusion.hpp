// A full-attention layer's token-step ops between its projections and its attention — RMS_NORM of the
// q heads, RMS_NORM of the k heads, ROPE of each, KV_STORE — merged into one ATTN_PREP node (dense_abi.h,
// ABI 1.11), as graph/gdn_step_fusion.hpp does for the Gated DeltaNet layers: five dependent launches
// of a few kilobytes become one (4 x 16 = 64 per token fewer on the 27B). ATTN_PREP must leave exactly
// what the five calls leave, so merging changes no result.
//
// Five consecutive nodes are merged when they are, in order, one token's plain RMS_NORM of the q heads
// into q (no quantized copy), RMS_NORM of the k heads into k_out, ROPE of q in place, ROPE of k_out in
// place (the same position input and params), and KV_STORE of k_out and v at that position; all in one
// layer and phase on one device, and the pack that runs them accepts the merged call. Only device nodes
// by default. DENSE_ATTN_PREP_FUSION=0 leaves them alone (A/B runs), =all merges CPU nodes too (tests);
// any other value but 1 is a usage error. Batched steps keep the five ops on their token axes.
#pragma once

#include "graph/graph.hpp"
#include "packs/pack_manager.hpp"

namespace dense::graph {

// `graph` must be resolved with ops selected (select_ops); it stays so. Returns the number of
// ATTN_PREP nodes made; the result depends on node order and views only.
size_t fuse_attn_preps(Graph& graph, const packs::PackManager& packs, size_t device);

}  // namespace dense::graph
