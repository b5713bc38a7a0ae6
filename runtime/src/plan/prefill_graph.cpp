#include "plan/prefill_graph.hpp"

#include "core/error.hpp"
#include "plan/op_workspace.hpp"

#include <algorithm>

namespace dense::plan {

int64_t default_prefill_chunk(dense_device_kind kind) noexcept { return kind == DENSE_DEVICE_CPU ? 1 : 512; }

int64_t default_split_prefill_chunk(dense_device_kind kind) noexcept { return kind == DENSE_DEVICE_CPU ? 1 : 64; }

int64_t smallest_auto_prefill_chunk(dense_device_kind kind) noexcept { return kind == DENSE_DEVICE_CPU ? 1 : 16; }

int64_t prefill_chunk_for(int64_t requested, dense_device_kind kind, bool split, bool bus_staging, std::string* why) {
    const int64_t chunk = requested >= 0 ? std::max<int64_t>(requested, 1)
                          : split             ? default_split_prefill_chunk(kind)
                                              : default_prefill_chunk(kind);
    if (chunk > 1 && split && !bus_staging) {
        if (why != nullptr)
            *why = "the weights are split onto the CPU and the device's pack cannot copy weight rows beside the step "
                   "(before ABI 1.6): no VRAM staging to stream the host rows through once per batched step";
        return 1;
    }
    return chunk;
}

std::optional<graph::Graph> batched_graph(const model::BoundModel& model, const model::ModelSpec& spec,
                                          graph::GraphOptions go, int64_t tokens, const packs::PackManager* packs,
                                          std::optional<size_t> device, std::string* why) {
    if (tokens <= 1) return std::nullopt;
    go.tokens = tokens;
    if (packs == nullptr || !device) return graph::build_graph(model, spec, go);
    // Ask the packs as the session will (select_ops on a resolved call), at stand-in addresses: first
    // with the token axes (one call per layer for the Gated DeltaNet ops), then, for packs that
    // refuse those, one call per token.
    std::string refused;
    for (const bool axes : {go.token_axes, false}) {
        go.token_axes = axes;
        graph::Graph g = graph::build_graph(model, spec, go);
        graph::Graph probe = g;
        try {
            select_at_stand_ins(probe, buffer_arena(probe, model), *packs, *device);
            return g;
        } catch (const Error& e) {
            if (e.kind() != ErrorKind::Pack) throw;
            refused = e.what();
        }
        if (!axes) break;
    }
    if (why != nullptr) *why = refused;
    return std::nullopt;
}

bool shared_with_token_step(graph::BufferKind kind) noexcept {
    return kind == graph::BufferKind::KvCache || kind == graph::BufferKind::StateBankA ||
           kind == graph::BufferKind::StateBankB;
}

BufferArena prefill_arena(const graph::Graph& batched, const model::BoundModel& model) {
    graph::Graph own = batched;  // the buffer list only matters here
    own.nodes.clear();
    for (auto& b : own.buffers)
        if (shared_with_token_step(b.kind)) b.bytes = 0;  // an empty slot: no bytes, no alignment gap
    return buffer_arena(own, model);
}

}  // namespace dense::plan
