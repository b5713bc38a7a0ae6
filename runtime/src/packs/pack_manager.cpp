#include "packs/pack_manager.hpp"

#include "core/error.hpp"
#include "packs/pack_loader.hpp"

#include <spdlog/spdlog.h>

namespace dense::packs {

PackManager::PackManager(PackPolicy policy) : policy_(std::move(policy)) {}

PackManager::PackManager(PackPolicy policy, std::vector<DeviceInfo> devices)
    : policy_(std::move(policy)), probe_(false), devices_(std::move(devices)) {}

void PackManager::load() {
    if (loaded_) throw Error(ErrorKind::Internal, "PackManager::load() called twice");
    if (probe_) devices_ = probe_devices();
    packs_ = load_packs(policy_, devices_, registry_);
    selection_ = select_packs(devices_, packs_, policy_);
    for (const auto& p : selection_.problems) spdlog::warn("{}", p);
    loaded_ = true;
    if (!devices_.empty()) {
        const PackRecord* main = chosen_pack(selection_.main_device);
        spdlog::info("main device {} ({}{}), pack {}", main_device().id(), main_device().name(),
                     main_device().simulated ? ", simulated" : "", main != nullptr ? main->name : "none");
    }
}

void PackManager::require_loaded() const {
    if (!loaded_) throw Error(ErrorKind::Internal, "PackManager used before load()");
}

const std::vector<DeviceInfo>& PackManager::devices() const {
    require_loaded();
    return devices_;
}

const std::vector<PackRecord>& PackManager::packs() const {
    require_loaded();
    return packs_;
}

const OpRegistry& PackManager::registry() const {
    require_loaded();
    return registry_;
}

const PackRecord* PackManager::find_pack(std::string_view name) const {
    require_loaded();
    for (const auto& p : packs_)
        if (p.initialised() && p.status != PackStatus::Skipped && p.name == name) return &p;
    return nullptr;
}

const PackRecord* PackManager::chosen_pack(size_t device) const {
    require_loaded();
    if (device >= selection_.chosen.size() || !selection_.chosen[device]) return nullptr;
    return &packs_[*selection_.chosen[device]];
}

size_t PackManager::main_device_index() const {
    require_loaded();
    return selection_.main_device;
}

const DeviceInfo& PackManager::main_device() const {
    require_loaded();
    if (devices_.empty()) throw Error(ErrorKind::Device, "no devices (not even a CPU) were given");
    return devices_[selection_.main_device];
}

const std::vector<std::string>& PackManager::problems() const {
    require_loaded();
    return selection_.problems;
}

void PackManager::throw_if_unusable() const {
    require_loaded();
    if (!selection_.problems.empty()) throw Error(ErrorKind::Pack, selection_.problems.front());
}

PackRanks PackManager::ranks_for(size_t device) const {
    require_loaded();
    PackRanks ranks;
    const bool forced_here = policy_.force.has_value() && device == selection_.main_device;
    for (const auto& p : packs_) {
        if (forced_here && p.name != *policy_.force) continue;
        const PackRank r = pack_rank(p, device, devices_, policy_);
        if (r.score > 0) ranks.by_pack.emplace(p.name, r);
    }
    return ranks;
}

const OpCandidate* PackManager::select_op(const OpKey& key, const dense_op_call& call, size_t device) const {
    require_loaded();
    if (device >= devices_.size() || devices_[device].kind() != key.device) return nullptr;
    return registry_.select(key, call, ranks_for(device));
}

}  // namespace dense::packs
