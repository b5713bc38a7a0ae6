// Session::choose_auto_bus_share: `bus_read_share: auto` (plan/bus_share.hpp), measured at load.
#include "exec/session.hpp"

#include "core/type_table.hpp"
#include "exec/split_rates.hpp"
#include "plan/bus_share.hpp"
#include "plan/row_split.hpp"

#include <spdlog/spdlog.h>

namespace dense::exec {

double Session::choose_auto_bus_share(const packs::PackManager& packs, size_t device,
                                      const std::map<const gguf::TensorInfo*, int64_t>& device_rows,
                                      const graph::GraphOptions& go, void* ring, uint64_t ring_bytes) {
    plan::BusShareInputs in;
    ProbeWeight probe, vram;  // the most host bytes (the CPU's rate), a layer's most VRAM bytes (the GPU's)
    uint64_t most_host_bytes = 0, most_vram_bytes = 0;
    for (const auto& [t, keep] : device_rows) {
        const uint64_t row = plan::row_bytes(*t);
        const uint64_t on_gpu = row * static_cast<uint64_t>(keep);
        in.gpu_bytes += static_cast<double>(on_gpu);
        const uint64_t host = row * static_cast<uint64_t>(t->ne[1] - keep);
        in.host_bytes += static_cast<double>(host);
        if (host > most_host_bytes) {
            most_host_bytes = host;
            probe.tensor = t;
            probe.n_device_rows = keep;
        }
        // A layer's weight: the step's GEMV rate is its layers' (the LM head, read once per token
        // with logits, runs a faster GEMV: 2.57 against ~1.5 TB/s on the H200, session 17).
        const bool layer_weight = t->name.rfind("blk.", 0) == 0;
        if (layer_weight && on_gpu > most_vram_bytes) {
            most_vram_bytes = on_gpu;
            vram.tensor = t;
            vram.n_device_rows = keep;
        }
    }
    if (probe.tensor == nullptr) return 0;  // a placement of host tables only: nothing to share
    const auto activation = [&go](dense_type_id weight) {
        const auto* type = global_type_table().find(weight);
        return go.activation_for ? go.activation_for(weight) : (type ? type->act_type : DENSE_TYPE_NONE);
    };
    probe.act = activation(probe.tensor->type);
    if (vram.tensor != nullptr) {
        vram.device_rows = weights_->pointer(vram.tensor);
        vram.act = activation(vram.tensor->type);
    }
    const SplitRates rates = measure_split_rates(*memory_, *cpu_workers_, packs, device, probe, vram, ring, ring_bytes);
    in.cpu_gbs = rates.cpu_gbs;
    in.bus_gbs = rates.bus_gbs;
    in.gpu_gbs = rates.gpu_gbs;
    const plan::BusShareChoice choice = plan::choose_bus_share(in);
    bus_share_note_ = plan::describe(choice, in) + ", measured on " + std::string(probe.tensor->name) +
                      (vram.tensor != nullptr ? " (CPU) and " + std::string(vram.tensor->name) + " (GPU)" : std::string(" (CPU)"));
    spdlog::info("bus_read_share auto: {}", bus_share_note_);
    return choice.share;
}

}  // namespace dense::exec
