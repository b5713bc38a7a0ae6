// A bill against a budget: does it fit, and if not, what would — the longest context that fits
// with every weight on the GPU, and how many weight bytes would have to move to the CPU to keep the
// requested context. Never a silent context cut or KV precision change: the caller shows the
// verdict and refuses to run.
#pragma once

#include "plan/vram_bill.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace dense::plan {

struct Budget {
    uint64_t bytes = 0;
    std::string source;  // "--vram-budget", "vram_budget in configs/x.yaml", "free memory of cuda:0"
    // The device's free memory, read after the driver's context exists (so the context is already
    // out of it); false for an explicit budget, which may be a card's whole memory.
    bool device_free_memory = false;
};

// peak(n_ctx) of the same session at another context (a fresh plan each call).
using PeakAt = std::function<uint64_t(int64_t n_ctx)>;

// The largest n in [1, limit] with peak(n) <= budget, or 0 when not even one token fits. The peak
// grows with the context (KV cache, attention workspace), so a binary search finds it.
int64_t max_context(const PeakAt& peak, uint64_t budget, int64_t limit);

struct Verdict {
    bool fits = false;
    uint64_t peak = 0;
    uint64_t budget = 0;
    uint64_t over = 0;      // peak - budget when it does not fit
    uint64_t headroom = 0;  // budget - peak when it fits
    // The longest context that fits at this budget with all weights on the GPU (0: none); when the
    // search reached `limit` it is "at least" this (the model's trained context, say).
    std::optional<int64_t> max_context;
    bool max_context_at_limit = false;
    // Weight bytes that would have to live on the CPU for the requested context to fit (= over);
    // `split_can_fit` is false when even all weights off the GPU would not be enough.
    uint64_t bytes_to_cpu = 0;
    bool split_can_fit = true;
};

// `peak_at` and `limit` are needed only for max_context; without peak_at it stays empty.
Verdict judge(const VramBill& bill, const Budget& budget, const PeakAt& peak_at = {}, int64_t limit = 0);

// One line: "fits: ... left" or "does not fit: over by ...".
std::string decision_text(const VramBill& bill, const Budget& budget, const Verdict& v);

}  // namespace dense::plan
