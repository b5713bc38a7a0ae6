// A plan as people and scripts read it: the itemized bill (bytes and MiB per line, per layer kind),
// the budget, the placement decision and, when over budget, what would fit.
#pragma once

#include "plan/budget.hpp"
#include "plan/vram_bill.hpp"

#include <optional>
#include <string>

namespace dense::plan {

struct PlanReport {
    std::string model;  // the GGUF's file name
    VramBill bill;
    std::optional<Budget> budget;    // empty: nothing to budget (the CPU)
    std::optional<Verdict> verdict;  // with the budget
};

// The printed bill (several lines, ends with a newline).
std::string to_text(const PlanReport& report);

// One JSON object: {"model", "device", "context", "kv_type", "lines": [...], "allocations": [...],
// "allocated_bytes", "reserve_bytes", "peak_bytes", "kv_bytes_per_token", "budget": {...} | null,
// "fits", "decision", "max_context", "bytes_to_cpu", "notes"}.
std::string to_json(const PlanReport& report);

}  // namespace dense::plan
