#include "graph/graph_builder.hpp"

#include "core/error.hpp"
#include "core/type_table.hpp"
#include "graph/cpu_part_hoist.hpp"
#include "graph/step_lowering.hpp"

#include <cstring>

namespace dense::graph {

void select_ops(Graph& graph, const packs::PackManager& packs, size_t device) {
    for (Node& n : graph.nodes) {
        // The CPU part of a row split in a GPU session runs on the CPU (devices()[0]).
        const size_t on = n.key.device == DENSE_DEVICE_CPU ? 0 : device;
        const packs::OpCandidate* c = packs.select_op(n.key, n.call, on);
        if (c == nullptr)
            throw Error(ErrorKind::Pack, "no usable kernel pack implements " + packs::to_string(n.key) + " for node '" +
                                             n.label + "' on device " + packs.devices().at(on).id() +
                                             " (dense-rt packs lists what each pack registers)");
        n.op = *c;
    }
}

Graph build_graph(const model::BoundModel& model, const model::ModelSpec& spec, const GraphOptions& options) {
    if (options.kv_type != DENSE_TYPE_F16 && options.kv_type != DENSE_TYPE_F32)
        throw Error(ErrorKind::Config, "KV cache type must be f16 or f32");
    if (options.n_ctx < 1) throw Error(ErrorKind::Config, "context must be at least 1 token");
    if (options.tokens < 1) throw Error(ErrorKind::Internal, "graph: a step of " + std::to_string(options.tokens) + " tokens");
    const bool batched = options.tokens > 1;  // a state-only prefill step: no head
    Lowering low(model, options);

    const auto& head = spec.recipes.at("head");
    size_t head_split = 0;  // head steps before this index run before the trunk (the embedding)
    while (head_split < head.size() && head[head_split].op == "embed_row") ++head_split;
    if (head_split == 0) throw Error(ErrorKind::Model, spec.source.string() + ": the head recipe must start with embed_row");

    for (size_t i = 0; i < head_split; ++i) low.lower(head[i], nullptr, Phase::Always);
    for (const auto& layer : model.layers) {
        for (const auto& step : spec.recipes.at(layer.kind)) low.lower(step, &layer, Phase::Always);
        if (spec.recipes.count("ffn"))
            for (const auto& step : spec.recipes.at("ffn")) low.lower(step, &layer, Phase::Always);
        low.end_layer();
    }
    low.check_finite("h", Phase::Always);
    if (!batched) {
        for (size_t i = head_split; i < head.size(); ++i) low.lower(head[i], nullptr, Phase::LogitsOnly);
        low.check_finite("logits", Phase::LogitsOnly);
        if (options.greedy_on_device) low.argmax("logits", Phase::LogitsOnly);
        if (options.top_k_on_device > 0) low.top_k("logits", Phase::LogitsOnly);
    }
    Graph g = low.finish();
    hoist_cpu_parts(g);
    return g;
}

}  // namespace dense::graph
