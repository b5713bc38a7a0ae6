// The VRAM plan checked before a GPU session allocates (generate, bench): the session's bill against
// the budget (--vram-budget / vram_budget, else the device's free memory). Over budget, the run is
// refused with the bill and what would fit — never a silent context cut or KV precision change.
#pragma once

#include "cli/loaded_model.hpp"
#include "exec/session.hpp"
#include "model/run_config.hpp"
#include "packs/pack_manager.hpp"

namespace dense::cli {

// Nothing for a CPU session. Throws dense::Error(Device) with the bill when over budget, and
// dense::Error(Pack) like the session would when the device's pack lacks an op.
void require_vram_fits(const LoadedModel& model, const packs::PackManager& packs, const exec::SessionOptions& options,
                       const model::RunConfig& config);

}  // namespace dense::cli
