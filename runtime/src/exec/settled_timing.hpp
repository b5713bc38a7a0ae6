// When a repeated timing has settled: the load-time rate probes (exec/split_rates.hpp) time rounds of
// a few runs each and keep going while a round still beats the best before it by more than a
// tolerance. Why: a probe that starts while the machine is still coming up to speed (an idle GPU's
// clocks and PCIe link) reads a fraction of the rate, and `auto` then picks a poor share. Session 28
// on an H100 (docs/perf-notes.md): one 8 GiB run measured the bus at 28.5 GB/s and the GPU's GEMVs at
// 535 GB/s, the same run a minute later 54.5 and 1,598 GB/s; `auto` picked 0.38 and 0.53 and the
// decode ran at 6.44 and 10.54 tok/s. Settling cannot help where the host stays busy for the whole
// probe (the same session: the bus at 29.5 GB/s right after a 15.7 GB file was written, and that
// run's decode was slow too): the probe then reads what the run will get.
#pragma once

#include <algorithm>

namespace dense::exec {

struct SettleRule {
    int min_rounds = 2;        // never fewer rounds than this
    int max_rounds = 8;        // a timing that keeps improving stops here (its best so far counts)
    double tolerance = 0.05;   // settled: a round no more than this fraction faster than the best before it
};

// The best (smallest) time over rounds, and whether the rounds have settled.
class SettledBest {
public:
    explicit SettledBest(SettleRule rule = {}) : rule_(rule) {}

    // Adds one round's best time (ms, > 0); returns true when no more rounds are needed.
    bool add(double round_best_ms) {
        const bool improved = rounds_ == 0 || round_best_ms < best_ * (1.0 - rule_.tolerance);
        best_ = rounds_ == 0 ? round_best_ms : std::min(best_, round_best_ms);
        ++rounds_;
        if (rounds_ >= rule_.max_rounds) return true;
        return rounds_ >= rule_.min_rounds && !improved;
    }

    double best_ms() const noexcept { return best_; }
    int rounds() const noexcept { return rounds_; }

private:
    SettleRule rule_;
    double best_ = 0;
    int rounds_ = 0;
};

// Runs round() (one round's best time in ms) until the rounds settle, and returns the best. A round
// of 0 ms or less means the time cannot be measured: that round ends it, uncounted (0 when it is the
// first).
template <class Round>
double settled_best_ms(Round&& round, SettleRule rule = {}) {
    SettledBest best(rule);
    for (;;) {
        const double ms = round();
        if (ms <= 0 || best.add(ms)) return best.best_ms();
    }
}

}  // namespace dense::exec
