#include "plan/budget.hpp"

#include "core/units.hpp"

#include <algorithm>

namespace dense::plan {

int64_t max_context(const PeakAt& peak, uint64_t budget, int64_t limit) {
    if (limit < 1 || peak(1) > budget) return 0;
    int64_t lo = 1, hi = limit;  // invariant: peak(lo) fits; answer in [lo, hi]
    if (peak(hi) <= budget) return hi;
    while (hi - lo > 1) {  // peak(hi) does not fit
        const int64_t mid = lo + (hi - lo) / 2;
        (peak(mid) <= budget ? lo : hi) = mid;
    }
    return lo;
}

Verdict judge(const VramBill& bill, const Budget& budget, const PeakAt& peak_at, int64_t limit) {
    Verdict v;
    v.peak = bill.peak();
    v.budget = budget.bytes;
    v.fits = v.peak <= v.budget;
    if (v.fits) {
        v.headroom = v.budget - v.peak;
    } else {
        v.over = v.peak - v.budget;
        v.bytes_to_cpu = v.over;
        v.split_can_fit = v.over <= bill.weight_bytes;
    }
    if (peak_at) {
        v.max_context = max_context(peak_at, v.budget, limit);
        v.max_context_at_limit = *v.max_context == limit && limit > 0;
    }
    return v;
}

std::string decision_text(const VramBill& bill, const Budget& budget, const Verdict& v) {
    if (v.fits)
        return "fits: all weights, the KV cache and the state on " + bill.device + " (peak " + format_bytes(v.peak) +
               " of " + format_bytes(v.budget) + " from " + budget.source + "; " + format_bytes(v.headroom) + " left)";
    return "does not fit: the peak " + format_bytes(v.peak) + " is over the budget " + format_bytes(v.budget) + " (" +
           budget.source + ") by " + format_bytes(v.over) + " (" + std::to_string(v.over) + " bytes)";
}

}  // namespace dense::plan
