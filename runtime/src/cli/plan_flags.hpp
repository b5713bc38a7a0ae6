// The flags of `dense-rt plan` (parsed in main.cpp, run by cmd_plan.cpp). --vram-budget is a common
// flag (run_setup.hpp): generate and bench are held to the same budget.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace dense::cli {

struct PlanFlags {
    std::optional<int64_t> context;      // --context N (config `context`)
    std::optional<std::string> kv_type;  // --kv-type f16|f32 (config `kv_type`)
    bool json = false;                   // --json: the plan as one JSON object on stdout
    // --allow-cpu-split: over budget, exit 0 when the output-row split onto the CPU the plan shows
    // fits. A flag of `plan` only (no run-config key yet): GPU sessions do not run a split so far,
    // so generate/bench must not be told they may.
    bool allow_cpu_split = false;
};

// `dense-rt plan` exit codes: 0 the plan fits (or, with --allow-cpu-split, its row split fits), 1 an
// error (bad flag, file, ...), 3 over budget.
inline constexpr int kPlanOverBudgetExit = 3;

}  // namespace dense::cli
