// The options a session's graph is built with on a device: decided here, once, so that a plan made
// before the session builds the very same graph (same buffers, same ops). exec::Session adds only
// where the weights are read from.
#pragma once

#include "graph/graph_builder.hpp"
#include "packs/pack_manager.hpp"

#include <dense/abi/dense_abi.h>

namespace dense::plan {

// For packs.devices()[device], whose packs choose the GEMV activation formats (`gemv_activation`
// first where a pack pairs it; NONE: the device's own choice) and the fused quantizations. `top_k`:
// the k a sampled run keeps (exec::SessionOptions::device_top_k; 0: none), taken on the device where
// 1 <= k <= DENSE_TOP_K_MAX and its packs implement TOP_K.
graph::GraphOptions session_graph_options(const packs::PackManager& packs, size_t device, int64_t n_ctx,
                                          dense_type_id kv_type, dense_type_id gemv_activation, int32_t top_k = 0);

// Whether batched prompt steps ask for GEMM_Q in free order (ABI 1.13): yes unless
// DENSE_PREFILL_EXACT=1, which keeps the token-by-token bits. The session's graph and the GEMM
// micro-bench (bench/gemv_bench.cpp) both ask here.
bool prefill_gemm_free_order();

}  // namespace dense::plan
