#include "logit_compare.hpp"

#include "core/error.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <sstream>

namespace dense::conformance {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

bool all_finite(std::span<const float> v) {
    return std::all_of(v.begin(), v.end(), [](float x) { return std::isfinite(x); });
}

// log(sum(exp(x))) in double, shifted by the max so nothing overflows.
double log_sum_exp(std::span<const float> x) {
    double mx = -kInf;
    for (float v : x) mx = std::max(mx, static_cast<double>(v));
    double sum = 0.0;
    for (float v : x) sum += std::exp(static_cast<double>(v) - mx);
    return mx + std::log(sum);
}

std::string fmt(const char* format, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, format, v);
    return buf;
}

std::string position_label(const PositionComparison& p) {
    return "pos " + std::to_string(p.position);
}

}  // namespace

TopTwo top_two(std::span<const float> logits) {
    TopTwo t;
    if (logits.empty()) return t;
    double best = -kInf, second = -kInf;
    for (std::size_t i = 0; i < logits.size(); ++i) {
        const double v = logits[i];
        if (v > best) {
            second = best;
            best = v;
            t.top1 = i;
        } else if (v > second) {
            second = v;
        }
    }
    t.margin = best - second;  // +inf when there is no second value
    return t;
}

double kl_divergence(std::span<const float> p_logits, std::span<const float> q_logits) {
    if (p_logits.size() != q_logits.size()) throw Error(ErrorKind::Internal, "kl_divergence: rows of different length");
    if (!all_finite(p_logits) || !all_finite(q_logits)) return kInf;
    const double lse_p = log_sum_exp(p_logits);
    const double lse_q = log_sum_exp(q_logits);
    double kl = 0.0;
    for (std::size_t i = 0; i < p_logits.size(); ++i) {
        const double log_p = p_logits[i] - lse_p;
        const double log_q = q_logits[i] - lse_q;
        kl += std::exp(log_p) * (log_p - log_q);
    }
    return std::max(kl, 0.0);  // rounding can leave a tiny negative value for identical rows
}

Stat summarize(std::vector<double> values) {
    Stat s;
    if (values.empty()) return s;
    std::sort(values.begin(), values.end());
    s.max = values.back();
    s.mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
    const auto rank = static_cast<std::size_t>(std::ceil(0.99 * static_cast<double>(values.size())));
    s.p99 = values[std::max<std::size_t>(rank, 1) - 1];
    return s;
}

Comparison compare_logits(const LogitMatrix& oracle, const LogitMatrix& ours) {
    const std::string pair = oracle.source + " vs " + ours.source;
    if (oracle.vocab != ours.vocab)
        throw Error(ErrorKind::Format,
                    pair + ": vocab " + std::to_string(oracle.vocab) + " vs " + std::to_string(ours.vocab));
    if (oracle.rows != ours.rows)
        throw Error(ErrorKind::Format, pair + ": " + std::to_string(oracle.rows) + " vs " + std::to_string(ours.rows) +
                                           " rows (positions)");
    for (std::size_t r = 0; r < oracle.rows; ++r)
        if (oracle.positions[r] != ours.positions[r])
            throw Error(ErrorKind::Format, pair + ": row " + std::to_string(r) + " is position " +
                                               std::to_string(oracle.positions[r]) + " vs " +
                                               std::to_string(ours.positions[r]));
    // Both sides may record the token ids they ran; different ids make the comparison meaningless.
    const auto a_ids = oracle.metadata.find("ids");
    const auto b_ids = ours.metadata.find("ids");
    if (a_ids != oracle.metadata.end() && b_ids != ours.metadata.end() && a_ids->second != b_ids->second)
        throw Error(ErrorKind::Format, pair + ": the sidecars record different token ids");

    Comparison c;
    c.oracle_source = oracle.source;
    c.ours_source = ours.source;
    c.vocab = oracle.vocab;
    std::vector<double> diffs, kls;
    for (std::size_t r = 0; r < oracle.rows; ++r) {
        const auto a = oracle.row(r);
        const auto b = ours.row(r);
        PositionComparison p;
        p.position = oracle.positions[r];
        const bool finite = all_finite(a) && all_finite(b);
        for (std::size_t i = 0; i < a.size(); ++i) {
            p.max_abs_diff = std::max(p.max_abs_diff, std::fabs(static_cast<double>(a[i]) - b[i]));
            p.oracle_max_abs = std::max(p.oracle_max_abs, std::fabs(static_cast<double>(a[i])));
        }
        if (!finite) p.max_abs_diff = kInf;
        p.kl = kl_divergence(a, b);
        const TopTwo ta = top_two(a);
        p.oracle_top1 = ta.top1;
        p.oracle_margin = ta.margin;
        p.ours_top1 = top_two(b).top1;
        if (p.top1_agree()) ++c.top1_agree;
        diffs.push_back(p.max_abs_diff);
        kls.push_back(p.kl);
        c.positions.push_back(p);
    }
    c.max_abs = summarize(std::move(diffs));
    c.kl = summarize(std::move(kls));
    return c;
}

constexpr const char* kKeys = "keys: max_abs, kl, margin, mean_abs, mean_kl";

Bounds Bounds::parse(const std::string& text) {
    return parse(text, Bounds{});
}

Bounds Bounds::parse(const std::string& text, const Bounds& defaults) {
    Bounds b = defaults;
    std::istringstream in(text);
    std::string item;
    while (std::getline(in, item, ',')) {
        if (item.empty()) continue;
        const auto eq = item.find('=');
        if (eq == std::string::npos)
            throw Error(ErrorKind::Usage, "bounds: \"" + item + "\" is not key=value (" + kKeys + ")");
        const std::string key = item.substr(0, eq);
        const std::string value = item.substr(eq + 1);
        double v = 0.0;
        std::size_t used = 0;
        try {
            v = std::stod(value, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used != value.size() || value.empty() || !(v >= 0.0))
            throw Error(ErrorKind::Usage, "bounds: \"" + value + "\" for " + key + " is not a non-negative number");
        if (key == "max_abs")
            b.max_abs = v;
        else if (key == "kl")
            b.kl = v;
        else if (key == "margin")
            b.margin = v;
        else if (key == "mean_abs")
            b.mean_abs = v;
        else if (key == "mean_kl")
            b.mean_kl = v;
        else
            throw Error(ErrorKind::Usage, "bounds: unknown key \"" + key + "\" (" + kKeys + ")");
    }
    return b;
}

std::string Bounds::to_string() const {
    std::string s =
        "max_abs<=" + fmt("%.3g", max_abs) + " kl<=" + fmt("%.3g", kl) + " top1 where margin>" + fmt("%.3g", margin);
    if (std::isfinite(mean_abs)) s += " mean_abs<=" + fmt("%.3g", mean_abs);
    if (std::isfinite(mean_kl)) s += " mean_kl<=" + fmt("%.3g", mean_kl);
    return s;
}

Verdict judge(const Comparison& c, const Bounds& bounds) {
    Verdict v;
    auto fail = [&](const std::string& line) {
        v.pass = false;
        v.violations.push_back(line);
    };
    if (c.positions.empty()) fail("no positions to compare");
    for (const PositionComparison& p : c.positions) {
        // Written as !(x <= bound) so that a NaN fails too.
        if (!(p.max_abs_diff <= bounds.max_abs))
            fail(position_label(p) + ": max abs diff " + fmt("%.3e", p.max_abs_diff) + " > " +
                 fmt("%.3g", bounds.max_abs));
        if (!(p.kl <= bounds.kl))
            fail(position_label(p) + ": KL " + fmt("%.3e", p.kl) + " > " + fmt("%.3g", bounds.kl));
        if (!p.top1_agree() && p.oracle_margin > bounds.margin)
            fail(position_label(p) + ": top-1 " + std::to_string(p.ours_top1) + " but the oracle's is " +
                 std::to_string(p.oracle_top1) + " with margin " + fmt("%.3e", p.oracle_margin) + " > " +
                 fmt("%.3g", bounds.margin));
    }
    if (!(c.max_abs.mean <= bounds.mean_abs))
        fail("mean over positions of max abs diff " + fmt("%.3e", c.max_abs.mean) + " > " +
             fmt("%.3g", bounds.mean_abs));
    if (!(c.kl.mean <= bounds.mean_kl))
        fail("mean over positions of KL " + fmt("%.3e", c.kl.mean) + " > " + fmt("%.3g", bounds.mean_kl));
    return v;
}

std::string format_table(const Comparison& c, const Bounds* bounds, std::size_t max_rows) {
    std::ostringstream out;
    out << "oracle: " << c.oracle_source << "\nours:   " << c.ours_source << "\n";
    out << c.positions.size() << " positions x vocab " << c.vocab << "\n";

    std::vector<std::size_t> shown(c.positions.size());
    std::iota(shown.begin(), shown.end(), std::size_t{0});
    if (max_rows != 0 && max_rows < shown.size()) {
        std::stable_sort(shown.begin(), shown.end(), [&](std::size_t a, std::size_t b) {
            return c.positions[a].max_abs_diff > c.positions[b].max_abs_diff;
        });
        shown.resize(max_rows);
        std::sort(shown.begin(), shown.end());
        out << "(the " << max_rows << " positions with the largest max abs diff)\n";
    }

    char line[256];
    std::snprintf(line, sizeof line, "%6s %11s %11s %8s %8s %8s %10s %9s %s\n", "pos", "max|diff|", "KL", "top1_or",
                  "top1_us", "agree", "margin_or", "max|or|", bounds != nullptr ? "flag" : "");
    out << line;
    for (std::size_t i : shown) {
        const PositionComparison& p = c.positions[i];
        std::string flag;
        if (bounds != nullptr) {
            if (!(p.max_abs_diff <= bounds->max_abs)) flag += " ABS";
            if (!(p.kl <= bounds->kl)) flag += " KL";
            if (!p.top1_agree() && p.oracle_margin > bounds->margin) flag += " TOP1";
        }
        std::snprintf(line, sizeof line, "%6lld %11.3e %11.3e %8zu %8zu %8s %10.4f %9.3f%s\n",
                      static_cast<long long>(p.position), p.max_abs_diff, p.kl, p.oracle_top1, p.ours_top1,
                      p.top1_agree() ? "yes" : "NO", p.oracle_margin, p.oracle_max_abs, flag.c_str());
        out << line;
    }
    std::snprintf(line, sizeof line, "max|diff|: max %.3e mean %.3e p99 %.3e\n", c.max_abs.max, c.max_abs.mean,
                  c.max_abs.p99);
    out << line;
    std::snprintf(line, sizeof line, "KL:        max %.3e mean %.3e p99 %.3e\n", c.kl.max, c.kl.mean, c.kl.p99);
    out << line;
    out << "top-1 agreement: " << c.top1_agree << "/" << c.positions.size() << "\n";
    if (bounds != nullptr) {
        const Verdict v = judge(c, *bounds);
        out << "bounds: " << bounds->to_string() << "\n";
        out << (v.pass ? "PASS" : "FAIL") << (v.pass ? "" : " (" + std::to_string(v.violations.size()) + " violations)")
            << "\n";
    }
    return out.str();
}

}  // namespace dense::conformance
