// A plan as people and scripts read it: the itemized bill (bytes and MiB per line, per layer kind),
// the budget, the placement decision and, when over budget, what would fit.
#pragma once

#include "plan/budget.hpp"
#include "plan/row_split.hpp"
#include "plan/vram_bill.hpp"

#include <optional>
#include <string>

namespace dense::plan {

struct PlanReport {
    std::string model;  // the GGUF's file name
    VramBill bill;
    std::optional<Budget> budget;    // empty: nothing to budget (the CPU)
    std::optional<Verdict> verdict;  // with the budget
    // Prompt tokens per batched step the bill was made with (1: token by token). With
    // `prefill_chunk: auto` over budget, smaller than the default where that makes the bill fit.
    int64_t prefill_chunk = 1;
    // Over budget, when moving weights can help: the row split that would keep the requested
    // context (plan/row_split.hpp) and the bill's peak with it.
    struct Split {
        std::vector<SplitKind> kinds;
        uint64_t cpu_read_bytes = 0;  // weight bytes the CPU would read per token
        uint64_t peak = 0;            // the bill's peak with the split
        bool fits = false;            // peak <= budget
        uint64_t bus_staging = 0;     // of the peak: the bus staging ring (plan/bus_staging.hpp)
        int64_t prefill_chunk = 1;    // prompt tokens per batched step with the split (1: token by token)
        // The request's bus_read_share, or 0 where `auto` (plan/bus_share.hpp) had to give up the
        // staging ring for the split to fit.
        double bus_read_share = 0;
        Placement placement;          // the rows themselves (what a session runs with)
        std::vector<std::string> host_tables;  // tables left in page-locked host memory (token_embd)
        uint64_t host_table_bytes = 0;         // their bytes (off the GPU; the device reads a row per token)
    };
    std::optional<Split> split;
};

// The printed bill (several lines, ends with a newline).
std::string to_text(const PlanReport& report);

// One JSON object: {"model", "device", "context", "kv_type", "prefill_chunk", "lines": [...], "allocations": [...],
// "allocated_bytes", "reserve_bytes", "peak_bytes", "kv_bytes_per_token", "budget": {...} | null,
// "fits", "decision", "max_context", "bytes_to_cpu", "row_split": {...} | null, "notes"}.
std::string to_json(const PlanReport& report);

}  // namespace dense::plan
