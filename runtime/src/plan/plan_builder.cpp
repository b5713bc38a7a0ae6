#include "plan/plan_builder.hpp"

#include "core/error.hpp"
#include "core/type_table.hpp"
#include "core/units.hpp"
#include "graph/graph_builder.hpp"
#include "plan/buffer_arena.hpp"
#include "plan/bus_staging.hpp"
#include "plan/graph_options.hpp"
#include "plan/op_workspace.hpp"
#include "plan/prefill_graph.hpp"
#include "plan/session_bill.hpp"
#include "plan/weight_arena.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace dense::plan {

dense_type_id assumed_gpu_activation(dense_type_id weight) {
    const TypeInfo* t = global_type_table().find(weight);
    const bool float_weight = t != nullptr && t->block_elements == 1;  // F32, F16, BF16
    return float_weight ? DENSE_TYPE_F32 : DENSE_TYPE_Q8_32;
}

int64_t request_prefill_chunk(const PlanRequest& request) {
    const Placement* split = request.row_split ? &*request.row_split : nullptr;
    return prefill_chunk_for(request.prefill_chunk, request.target.kind, split != nullptr && split->splits_any(),
                             bus_staging_bytes(request.bus_read_share, split, request.prefill_chunk, request.target.kind) > 0,
                             nullptr);
}

VramBill make_plan(const model::BoundModel& model, const model::ModelSpec& spec, const packs::PackManager* packs,
                   const PlanRequest& request) {
    const PlanTarget& target = request.target;
    if (target.device && packs == nullptr)
        throw Error(ErrorKind::Internal, "make_plan: a device index needs the packs");

    // Weights at the addresses the session will read them from: the mapping on the CPU, their slot
    // of the weight arena (stand-ins: nothing is allocated) on a GPU.
    const WeightArena weights = weight_arena(model);
    std::map<const gguf::TensorInfo*, uint64_t> slot;
    uint64_t offset = 0;
    for (const auto* t : weights.tensors) {
        slot[t] = offset;
        offset += weight_slot_bytes(t->n_bytes);
    }
    std::set<const gguf::TensorInfo*> read;
    graph::GraphOptions go;
    if (target.device) {
        go = session_graph_options(*packs, *target.device, request.n_ctx, request.kv_type, request.gemv_activation,
                                   request.device_top_k);
    } else {  // no pack to ask: no fused quantization, the activation formats of dense-rt's CUDA packs
        go.n_ctx = request.n_ctx;
        go.kv_type = request.kv_type;
        go.device_kind = target.kind;
        if (target.kind != DENSE_DEVICE_CPU) go.activation_for = assumed_gpu_activation;
    }
    go.weight_pointer = [&](const gguf::TensorInfo* t) -> const void* {
        read.insert(t);
        if (target.kind == DENSE_DEVICE_CPU) return t->data.data();
        auto it = slot.find(t);
        if (it == slot.end())
            throw Error(ErrorKind::Internal,
                        "the graph reads weight '" + std::string(t->name) + "', which the weight arena does not hold");
        return stand_in_address(0, it->second);
    };
    const graph::Graph graph = graph::build_graph(model, spec, go);

    const Placement* split = nullptr;
    if (request.row_split) {
        verify_exact_cover(model, spec, *request.row_split);
        split = &*request.row_split;
    }
    // The batched prefill graph the session would build (same rule, same graph).
    const int64_t chunk = request_prefill_chunk(request);
    const std::optional<graph::Graph> prefill = batched_graph(model, spec, go, chunk, packs, target.device, nullptr);

    std::optional<uint64_t> workspace;
    if (target.device) {
        workspace = planned_op_workspace(graph, buffer_arena(graph, model), *packs, *target.device);
        if (prefill)
            workspace = std::max(*workspace, planned_op_workspace(*prefill, buffer_arena(*prefill, model), *packs,
                                                                  *target.device));
    }
    VramBill bill = bill_session(model, graph, target.kind, request.kv_type, workspace, target.label, split,
                                 bus_staging_bytes(request.bus_read_share, split, request.prefill_chunk, target.kind),
                                 prefill ? &*prefill : nullptr);
    if (!target.device && target.kind != DENSE_DEVICE_CPU)
        bill.notes.push_back("no kernel pack can be asked about " + target.label +
                             ": activation formats assumed as dense-rt's CUDA packs pair them (Q8_32; F32 for float "
                             "weights); the op workspace is not known and billed as 0 (the safety reserve covers it)");
    if (target.simulated)
        bill.notes.push_back(target.label + " is simulated (DENSE_FAKE_DEVICES): it can be planned for, never run on");
    if (target.kind != DENSE_DEVICE_CPU) {
        uint64_t unread = 0;
        for (const auto* t : weights.tensors)
            if (!read.count(t)) unread += weight_slot_bytes(t->n_bytes);
        if (unread > 0) bill.notes.push_back(format_bytes(unread) + " of uploaded weights are never read by the graph");
    }
    return bill;
}

}  // namespace dense::plan
