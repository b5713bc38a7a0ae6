// Loading every pack a policy reaches: discovery, load + ABI check + init (once per process per
// file), scoring on each device, and registration of their ops. Used by PackManager.
//
// Every file found gets one PackRecord. A pack that cannot be used is refused with exactly one
// warning line naming the file and the reason, and loading goes on with the others:
//   cannot load (dlerror text) | missing export <symbol> | built for ABI a.b, this runtime speaks 1.y |
//   dense_pack_init failed with <status> / threw | bad dense_pack (other major, struct too small) |
//   a file name not of the form libdense-<family>-<variant>.so | an explicit path that does not exist.
// Packs denied by the policy, or shadowed by an earlier pack of the same name, are Skipped (info).
#pragma once

#include "packs/device_probe.hpp"
#include "packs/op_registry.hpp"
#include "packs/pack_policy.hpp"
#include "packs/pack_record.hpp"

#include <vector>

namespace dense::packs {

// Loads the packs `policy` reaches, scores each on every device of `devices` (PackRecord::scores is
// indexed like `devices`) and adds the ops of every initialised, non-skipped pack to `registry`
// (including packs not usable here, so listings can show them; select() skips them by score).
std::vector<PackRecord> load_packs(const PackPolicy& policy, const std::vector<DeviceInfo>& devices,
                                   OpRegistry& registry);

}  // namespace dense::packs
