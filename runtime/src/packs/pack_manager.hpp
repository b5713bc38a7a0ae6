// The packs stage as the rest of the runtime sees it: devices, kernel packs, the op registry and
// which pack serves which device.
//
//   dense::packs::PackPolicy policy;              // from the run config / command line
//   dense::packs::PackManager packs(policy);
//   packs.load();                                 // probe devices, load + score + select; logs refusals
//   packs.throw_if_unusable();                    // a run needs a pack for its main device
//   const auto& main = packs.main_device();       // where the model runs
//   const OpCandidate* gemv = packs.select_op(key, call, packs.main_device_index());
//
// load() never throws for a bad pack: each refused pack is one warning line and a PackRecord with
// the reason (see pack_loader.hpp). Device indices everywhere are positions in devices(); index 0
// is the CPU. Packs are never unloaded, so pointers into packs stay valid for the process lifetime;
// the records, registry and selection live as long as the PackManager.
#pragma once

#include "packs/device_probe.hpp"
#include "packs/op_registry.hpp"
#include "packs/pack_policy.hpp"
#include "packs/pack_record.hpp"
#include "packs/pack_selection.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dense::packs {

class PackManager {
public:
    // Devices are probed by load(): the CPU, CUDA devices (driver), $DENSE_FAKE_DEVICES.
    explicit PackManager(PackPolicy policy);
    // Uses exactly these devices instead of probing (tests, previews). devices[0] should be the CPU.
    PackManager(PackPolicy policy, std::vector<DeviceInfo> devices);

    PackManager(const PackManager&) = delete;
    PackManager& operator=(const PackManager&) = delete;

    // Probes (unless devices were given), loads every pack the policy reaches, scores it per device,
    // registers ops and selects packs. Call once; a second call throws dense::Error (Internal).
    // Throws dense::Error (Config) only for a malformed $DENSE_FAKE_DEVICES.
    void load();
    bool loaded() const noexcept { return loaded_; }

    // All accessors below need load() first (they throw dense::Error (Internal) otherwise).
    const PackPolicy& policy() const noexcept { return policy_; }
    const std::vector<DeviceInfo>& devices() const;
    const std::vector<PackRecord>& packs() const;  // one per file found, in search order
    const OpRegistry& registry() const;

    const PackRecord* find_pack(std::string_view name) const;  // an initialised (not skipped) pack of that name
    const PackRecord* chosen_pack(size_t device) const;        // nullptr if no pack can serve it
    size_t main_device_index() const;
    const DeviceInfo& main_device() const;
    const PackRecord* main_pack() const { return chosen_pack(main_device_index()); }

    // What the policy asked for and could not get, and a main device without a pack.
    const std::vector<std::string>& problems() const;
    // Throws dense::Error (Pack) with the first problem, if any: call before running a model.
    void throw_if_unusable() const;

    // How packs rank on one device for op selection (policy.force leaves only the forced pack on
    // the main device).
    PackRanks ranks_for(size_t device) const;
    // The best implementation of `key` for `call` on devices()[device] (see op_registry.hpp), or
    // nullptr: a missing op is a planning decision for the caller, never a crash here.
    const OpCandidate* select_op(const OpKey& key, const dense_op_call& call, size_t device) const;

private:
    void require_loaded() const;

    PackPolicy policy_;
    bool probe_ = true;
    bool loaded_ = false;
    std::vector<DeviceInfo> devices_;
    std::vector<PackRecord> packs_;
    OpRegistry registry_;
    PackSelection selection_;
};

}  // namespace dense::packs
