// Which device a plan is for and which budget it is held to.
//
// Device: the CPU for `placement: cpu`; else the main device when it is a GPU with a usable pack
// (real, or simulated through DENSE_FAKE_DEVICES); else a GPU that is here without a usable pack;
// else a CUDA device that is not here at all (users plan before they buy a card).
// Budget: an explicit one (--vram-budget, or vram_budget in the run config) wins over the memory
// the device reports free.
#pragma once

#include "model/run_config.hpp"
#include "packs/pack_manager.hpp"
#include "plan/budget.hpp"
#include "plan/plan_builder.hpp"

#include <optional>
#include <string>

namespace dense::plan {

// The target for packs.devices()[device] (its pack selects the ops when it has one).
PlanTarget target_for_device(const packs::PackManager& packs, size_t device);

PlanTarget choose_target(const packs::PackManager& packs, model::Placement placement);

// The target's free memory as a budget, or nullopt when it is not known.
std::optional<Budget> free_memory_budget(const PlanTarget& target);

// nullopt for a CPU target (nothing to budget). Throws dense::Error(Usage) for a GPU target with
// neither an explicit budget nor a known amount of free memory.
std::optional<Budget> choose_budget(const PlanTarget& target, std::optional<uint64_t> explicit_bytes,
                                    const std::string& explicit_source);

}  // namespace dense::plan
