// Position-by-position comparison of two logit matrices (an oracle's and ours) and the pass/fail policy
// of the conformance tests.
//
// Public API (namespace dense::conformance)
//   Comparison c = compare_logits(oracle, ours);   // throws Error(Format) if shapes/positions differ
//   Verdict v = judge(c, bounds);                  // v.pass, v.violations (each names position and value)
//   std::string t = format_table(c, &bounds, max_rows);
//   double kl = kl_divergence(p_logits, q_logits); // KL(softmax(p) || softmax(q)) in nats, in double
//   TopTwo t = top_two(logits);                    // argmax and top-1 minus top-2 logit
//   Bounds b = Bounds::parse("max_abs=1e-4,kl=1e-6,margin=1e-3");
//
// Why these three measures: the max abs difference catches any wrong number; KL weighs differences
// by the probability mass they move (what sampling sees); top-1 agreement is what greedy decoding
// sees, but only demanded where the oracle's own top-2 margin is clear of numerical noise (two
// correct implementations may legitimately pick different tokens out of a near tie).
#pragma once

#include "logits_io.hpp"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

namespace dense::conformance {

struct TopTwo {
    std::size_t top1 = 0;
    double margin = 0.0;  // logit[top1] - second largest logit (0 for a tie; +inf for a vocab of 1)
};

TopTwo top_two(std::span<const float> logits);

// KL(P || Q) with P = softmax(p_logits), Q = softmax(q_logits), log-softmax computed in double.
// +inf if some value is not finite (a NaN/Inf anywhere is never "close").
double kl_divergence(std::span<const float> p_logits, std::span<const float> q_logits);

struct PositionComparison {
    int64_t position = 0;
    double max_abs_diff = 0.0;  // +inf if either row holds a NaN/Inf
    double kl = 0.0;            // KL(oracle || ours), nats
    std::size_t oracle_top1 = 0;
    std::size_t ours_top1 = 0;
    double oracle_margin = 0.0;   // oracle's top-1 minus top-2 logit
    double oracle_max_abs = 0.0;  // scale of the oracle's logits at this position (for the table)

    bool top1_agree() const { return oracle_top1 == ours_top1; }
};

// Max, mean and 99th percentile (nearest rank) of a per-position measure.
struct Stat {
    double max = 0.0;
    double mean = 0.0;
    double p99 = 0.0;
};

Stat summarize(std::vector<double> values);

struct Comparison {
    std::string oracle_source;
    std::string ours_source;
    std::size_t vocab = 0;
    std::vector<PositionComparison> positions;
    Stat max_abs;
    Stat kl;
    std::size_t top1_agree = 0;
};

Comparison compare_logits(const LogitMatrix& oracle, const LogitMatrix& ours);

// The policy: every position must have max abs diff <= max_abs and KL <= kl, and the same top-1 token
// wherever the oracle's top-2 margin is > margin. Optionally (off by default: +inf) also bounds on the
// means over positions, which separate a systematic difference from rare amplified rounding flips.
struct Bounds {
    double max_abs = 1e-4;
    double kl = 1e-7;
    double margin = 1e-3;
    double mean_abs = std::numeric_limits<double>::infinity();  // mean over positions of max abs diff
    double mean_kl = std::numeric_limits<double>::infinity();   // mean over positions of KL

    // "max_abs=A,kl=K,margin=M,mean_abs=B,mean_kl=L" (any subset; the others keep the values of
    // `defaults`, or of Bounds{}); throws Error(Usage).
    static Bounds parse(const std::string& text, const Bounds& defaults);
    static Bounds parse(const std::string& text);  // unset keys keep the defaults above
    std::string to_string() const;
};

struct Verdict {
    bool pass = true;
    std::vector<std::string> violations;  // one line per failing position and measure
};

Verdict judge(const Comparison& c, const Bounds& bounds);

// A fixed-width table: a header naming both files, one row per position (all of them when max_rows is 0
// or >= the number of positions, else the max_rows worst by max abs diff, in position order), then
// summary lines; with bounds, each row is flagged and the verdict is printed.
std::string format_table(const Comparison& c, const Bounds* bounds, std::size_t max_rows = 0);

}  // namespace dense::conformance
