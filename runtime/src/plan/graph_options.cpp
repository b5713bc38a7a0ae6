#include "plan/graph_options.hpp"

#include "core/env_number.hpp"
#include "packs/activation_choice.hpp"

namespace dense::plan {

graph::GraphOptions session_graph_options(const packs::PackManager& packs, size_t device, int64_t n_ctx,
                                          dense_type_id kv_type, dense_type_id gemv_activation, int32_t top_k) {
    graph::GraphOptions go;
    go.n_ctx = n_ctx;
    go.kv_type = kv_type;
    go.device_kind = packs.devices().at(device).kind();
    go.activation_for = packs::gemv_activation_chooser(packs, device, gemv_activation);
    go.fuses_quantize = packs::quantize_fusion_checker(packs, device);
    // DENSE_DEVICE_GREEDY=0: the logits come back and the host chooses (the A/B switch of ABI 1.12's
    // ARGMAX; the same tokens either way).
    go.greedy_on_device = env_whole_number("DENSE_DEVICE_GREEDY", 1, 0, 1) == 1 &&
                          packs::implements_op(packs, device, DENSE_OP_ARGMAX);
    // DENSE_DEVICE_TOP_K=0: a sampled run copies the logits back and the host takes the k best (the
    // A/B switch of ABI 1.15's TOP_K; the same candidates, so the same tokens, either way).
    if (top_k >= 1 && top_k <= DENSE_TOP_K_MAX && env_whole_number("DENSE_DEVICE_TOP_K", 1, 0, 1) == 1 &&
        packs::implements_op(packs, device, DENSE_OP_TOP_K))
        go.top_k_on_device = top_k;
    go.gemm_free_order = prefill_gemm_free_order();
    return go;
}

bool prefill_gemm_free_order() { return env_whole_number("DENSE_PREFILL_EXACT", 0, 0, 1) == 0; }

}  // namespace dense::plan
