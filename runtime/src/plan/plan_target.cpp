#include "plan/plan_target.hpp"

#include "core/error.hpp"

namespace dense::plan {

PlanTarget target_for_device(const packs::PackManager& packs, size_t device) {
    const packs::DeviceInfo& d = packs.devices().at(device);
    PlanTarget t;
    t.kind = d.kind();
    t.label = d.id() + " (" + d.name() + ")";
    t.simulated = d.simulated;
    if (const packs::PackRecord* pack = packs.chosen_pack(device)) {
        t.device = device;
        const auto api = pack->device_api();
        t.maps_host_memory = d.is_cuda() && api && api->host_alloc_mapped != nullptr && api->host_free != nullptr;
    } else if (d.is_cuda()) {
        t.label += ", no usable kernel pack";
    }
    // A probe that could not read free memory reports 0: that is "unknown", not "full".
    if (d.is_cuda() && d.hw.free_memory_bytes > 0) t.free_bytes = d.hw.free_memory_bytes;
    return t;
}

PlanTarget choose_target(const packs::PackManager& packs, model::Placement placement) {
    if (placement == model::Placement::Cpu) return target_for_device(packs, 0);
    const size_t main = packs.main_device_index();
    if (packs.devices().at(main).is_cuda()) return target_for_device(packs, main);
    for (size_t i = 0; i < packs.devices().size(); ++i)
        if (packs.devices()[i].is_cuda()) return target_for_device(packs, i);
    PlanTarget t;
    t.kind = DENSE_DEVICE_CUDA;
    t.label = "a CUDA device (none here)";
    return t;
}

std::optional<Budget> free_memory_budget(const PlanTarget& target) {
    if (!target.free_bytes) return std::nullopt;
    return Budget{*target.free_bytes, "free memory of " + target.label, true};
}

std::optional<Budget> choose_budget(const PlanTarget& target, std::optional<uint64_t> explicit_bytes,
                                    const std::string& explicit_source) {
    if (target.kind == DENSE_DEVICE_CPU) return std::nullopt;
    if (explicit_bytes) return Budget{*explicit_bytes, explicit_source};
    if (auto free = free_memory_budget(target)) return free;
    throw Error(ErrorKind::Usage, "no VRAM budget for " + target.label +
                                      ": give --vram-budget SIZE (e.g. 8GiB) or `vram_budget:` in the run config");
}

}  // namespace dense::plan
