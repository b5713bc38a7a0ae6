#include "plan/graph_options.hpp"

#include "packs/activation_choice.hpp"

namespace dense::plan {

graph::GraphOptions session_graph_options(const packs::PackManager& packs, size_t device, int64_t n_ctx,
                                          dense_type_id kv_type, dense_type_id gemv_activation) {
    graph::GraphOptions go;
    go.n_ctx = n_ctx;
    go.kv_type = kv_type;
    go.device_kind = packs.devices().at(device).kind();
    go.activation_for = packs::gemv_activation_chooser(packs, device, gemv_activation);
    go.fuses_quantize = packs::quantize_fusion_checker(packs, device);
    return go;
}

}  // namespace dense::plan
