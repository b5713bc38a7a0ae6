#include "plan/session_bill.hpp"

#include "core/type_table.hpp"
#include "core/units.hpp"
#include "plan/allocation_size.hpp"
#include "plan/buffer_arena.hpp"
#include "plan/bus_staging.hpp"
#include "plan/op_workspace.hpp"
#include "plan/prefill_graph.hpp"
#include "plan/weight_arena.hpp"

#include <set>

namespace dense::plan {

namespace {

std::string type_name(dense_type_id id) {
    const TypeInfo* t = global_type_table().find(id);
    return t ? t->name : "type " + std::to_string(id);
}

// Per layer kind: bytes, the layers seen, and the requested bytes per layer.
struct KindSum {
    uint64_t footprint = 0;
    uint64_t requested = 0;
    std::set<int64_t> layers;
};

void weight_lines(const model::BoundModel& model, const Placement* placement, VramBill& bill) {
    const WeightArena arena = weight_arena(model, placement);
    bill.weight_bytes = arena.bytes;
    bill.allocations.push_back(Allocation{kWeightsLabel, allocation_size(arena.bytes)});
    for (const auto& g : arena.groups) {
        if (g.tensors == 0) continue;
        std::string detail;
        if (g.layer_kind == "global") {
            for (const auto& [role, t] : model.globals)
                if (t != nullptr) detail += (detail.empty() ? "" : ", ") + role;
            if (model.tied_output) detail += " (LM head tied to token_embd)";
        } else {
            detail = std::to_string(g.layers) + " layers";
        }
        if (placement != nullptr && placement->splits_any()) detail += "; GPU prefix rows only (row split)";
        bill.lines.push_back(BillLine{Item::Weights, g.layer_kind, g.bytes, g.tensors, "tensors", detail});
    }
    if (placement != nullptr)
        for (const auto* t : arena.tensors)
            if (placement->in_host_table(std::string(t->name)))
                bill.notes.push_back(std::string(t->name) + " (" + format_bytes(t->n_bytes) +
                                     ") stays in page-locked host memory, not in VRAM: the GPU reads the one row a "
                                     "token needs over the bus");
    if (arena.skipped_bytes > 0)
        bill.notes.push_back("skipped blocks (MTP) are never uploaded: " + format_bytes(arena.skipped_bytes) +
                             " of the file stay off the GPU");
}

void buffer_lines(const graph::Graph& graph, const model::BoundModel& model, VramBill& bill) {
    const BufferArena arena = buffer_arena(graph, model);
    bill.allocations.push_back(Allocation{kGraphBuffersLabel, arena.bytes});

    std::map<std::string, KindSum> kv, state;
    uint64_t act_bytes = 0, staging_bytes = 0, kv_requested = 0;
    int64_t act_count = 0, staging_count = 0;
    for (const auto& s : arena.slots) {
        const graph::Buffer& b = graph.buffers[s.buffer];
        switch (s.item) {
            case Item::KvCache:
            case Item::RecurrentState: {
                KindSum& k = (s.item == Item::KvCache ? kv : state)[s.layer_kind];
                k.footprint += s.footprint;
                k.requested += b.bytes;
                k.layers.insert(b.layer);
                if (s.item == Item::KvCache) kv_requested += b.bytes;
                break;
            }
            case Item::Staging:
                staging_bytes += s.footprint;
                ++staging_count;
                break;
            default:
                act_bytes += s.footprint;
                ++act_count;
                break;
        }
    }
    const uint64_t n_ctx = static_cast<uint64_t>(graph.n_ctx > 0 ? graph.n_ctx : 1);
    bill.kv_bytes_per_token = kv_requested / n_ctx;
    for (const auto& [kind, k] : kv) {
        const uint64_t layers = k.layers.size();
        const uint64_t per_token_layer = k.requested / n_ctx / (layers ? layers : 1);
        bill.lines.push_back(BillLine{Item::KvCache, kind, k.footprint, static_cast<int64_t>(layers), "layers",
                                      std::to_string(layers) + " layers x " + std::to_string(graph.n_ctx) +
                                          " tokens x " + std::to_string(per_token_layer) + " B/token (K+V, " +
                                          type_name(bill.kv_type) + ")"});
    }
    for (const auto& [kind, k] : state) {
        const uint64_t layers = k.layers.size();
        bill.lines.push_back(BillLine{Item::RecurrentState, kind, k.footprint, static_cast<int64_t>(layers), "layers",
                                      std::to_string(layers) + " layers x 2 banks x " +
                                          format_bytes(k.requested / 2 / (layers ? layers : 1)) +
                                          " (conv window + delta-rule state)"});
    }
    bill.lines.push_back(BillLine{Item::Activations, "", act_bytes, act_count, "buffers",
                                  "one buffer per activation name, reused by every layer"});
    bill.lines.push_back(
        BillLine{Item::Staging, "", staging_bytes, staging_count, "buffers",
                 "token, position, n_kv, status in; logits {" + std::to_string(graph.n_vocab) + "} f32 out"});
}

}  // namespace

uint64_t safety_reserve(dense_device_kind kind) noexcept {
    return kind == DENSE_DEVICE_CPU ? 0 : kCudaSafetyReserve;
}

VramBill bill_session(const model::BoundModel& model, const graph::Graph& graph, dense_device_kind kind,
                      dense_type_id kv_type, std::optional<uint64_t> op_workspace, const std::string& device_label,
                      const Placement* placement, uint64_t bus_staging, const graph::Graph* prefill) {
    VramBill bill;
    bill.device = device_label;
    bill.device_kind = kind;
    bill.n_ctx = graph.n_ctx;
    bill.kv_type = kv_type;
    if (kind != DENSE_DEVICE_CPU) weight_lines(model, placement, bill);
    if (placement != nullptr)
        for (const auto& k : summarize(model, *placement)) bill.cpu_read_bytes += k.cpu_bytes;
    buffer_lines(graph, model, bill);
    const uint64_t requested = op_workspace.value_or(0);
    const uint64_t ws = requested > 0 ? allocation_size(requested) : 0;
    if (ws > 0) bill.allocations.push_back(Allocation{kWorkspaceLabel, ws});
    bill.lines.push_back(BillLine{Item::Workspace, "", ws, ws > 0 ? 1 : 0, "buffers",
                                  !op_workspace
                                      ? "not known without the device's pack (billed 0; the reserve covers it)"
                                  : ws > 0 ? "sized for the hungriest op, shared by all"
                                           : "no selected op asks for one"});
    if (bus_staging > 0) {
        bill.allocations.push_back(Allocation{kBusStagingLabel, allocation_size(bus_staging)});
        bill.lines.push_back(BillLine{Item::Staging, "", allocation_size(bus_staging), bus_staging_slots(), "slots",
                                      "bus staging: weight rows copied from page-locked host memory each token "
                                      "(bus_read_share), " + format_bytes(bus_staging_slot_bytes()) + " per slot"});
    }
    if (prefill != nullptr) {
        const uint64_t bytes = prefill_arena(*prefill, model).bytes;
        bill.allocations.push_back(Allocation{kPrefillBuffersLabel, bytes});
        bill.lines.push_back(BillLine{Item::PrefillScratch, "", bytes, 1, "buffers",
                                      std::to_string(prefill->tokens) +
                                          " columns of every activation, and the token, position, n_kv words of a "
                                          "batched prompt step"});
    }
    bill.reserve = safety_reserve(kind);
    if (bill.reserve > 0)
        bill.lines.push_back(
            BillLine{Item::Reserve, "", bill.reserve, 0, "",
                     "kernel images, step graphs, driver and allocator slack (not allocated by dense-rt)"});
    return bill;
}

}  // namespace dense::plan
