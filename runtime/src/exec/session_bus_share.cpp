// Session::choose_auto_bus_share: `bus_read_share: auto` (plan/bus_share.hpp), measured at load.
#include "exec/session.hpp"

#include "exec/split_rates.hpp"
#include "plan/bus_share.hpp"
#include "plan/row_split.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <vector>

namespace dense::exec {

double Session::choose_auto_bus_share(const packs::PackManager& packs, size_t device,
                                      const std::map<const gguf::TensorInfo*, int64_t>& device_rows,
                                      const graph::GraphOptions& go, const std::vector<std::string>& row_read_tables,
                                      int64_t cpu_jobs, void* ring, uint64_t ring_bytes) {
    plan::BusShareInputs in;
    ProbeWeight probe;  // the most host bytes: the CPU's rate
    std::map<dense_type_id, ProbeWeight> formats;  // per format in VRAM, its largest weight: the GPU's
    uint64_t most_host_bytes = 0;
    for (const auto& [t, keep] : device_rows) {
        if (t->ne[2] * t->ne[3] != 1 || keep > t->ne[1]) continue;  // row splits are of 2-D weights
        const uint64_t row = plan::row_bytes(*t);
        const uint64_t host = row * static_cast<uint64_t>(t->ne[1] - keep);
        in.host_bytes += static_cast<double>(host);
        if (host > most_host_bytes) {
            most_host_bytes = host;
            probe.tensor = t;
            probe.n_device_rows = keep;
        }
        // Tables read one row per token (token_embd) cost the step nothing per byte.
        if (std::find(row_read_tables.begin(), row_read_tables.end(), t->name) != row_read_tables.end()) continue;
        const uint64_t on_gpu = row * static_cast<uint64_t>(keep);
        in.gpu_bytes += static_cast<double>(on_gpu);
        ProbeWeight& f = formats[t->type];
        f.format_bytes += on_gpu;
        if (keep > f.n_device_rows) {
            f.tensor = t;
            f.n_device_rows = keep;
        }
    }
    if (probe.tensor == nullptr) return 0;  // a placement of host tables only: nothing to share
    probe.act = graph::gemv_activation(go, probe.tensor->type);
    std::vector<ProbeWeight> vram;
    for (auto& [type, f] : formats) {
        if (f.tensor == nullptr) continue;
        f.device_rows = weights_->pointer(f.tensor);
        f.act = graph::gemv_activation(go, type);
        vram.push_back(f);
    }
    const SplitRates rates = measure_split_rates(*memory_, *cpu_workers_, packs, device, probe, vram, ring, ring_bytes);
    in.cpu_jobs = static_cast<double>(cpu_jobs);
    in.cpu_gbs = rates.cpu_gbs;
    in.bus_gbs = rates.bus_gbs;
    in.gpu_gbs = rates.gpu_gbs;
    const plan::BusShareChoice choice = plan::choose_bus_share(in);
    bus_share_note_ = plan::describe(choice, in) + ", the CPU's rate measured on " + std::string(probe.tensor->name) +
                      ", the GPU's on " + std::to_string(vram.size()) + " formats";
    spdlog::info("bus_read_share auto: {}", bus_share_note_);
    return choice.share;
}

}  // namespace dense::exec
