// sdk-logit-rel-rms: the relative RMS difference of two logit files, per position:
//   rel[p] = sqrt(mean_v (other[p][v] - base[p][v])^2) / sqrt(mean_v base[p][v]^2)
//
//   sdk-logit-rel-rms BASE OTHER [--min R] [--max R]
//
// Used by tests/sdk/out_of_tree_test.sh where the expected size of a difference is known from how
// the weights were changed (a max |diff| or KL bound would not say "as large as predicted").
// Exit codes: 0 every position within [min, max] (default [0, inf)), 1 outside, 2 unreadable files.
#include "logits_io.hpp"

#include "core/error.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <string_view>

int main(int argc, char** argv) {
    using namespace dense::conformance;
    std::string base_path, other_path;
    double lo = 0.0, hi = std::numeric_limits<double>::infinity();
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        if ((a == "--min" || a == "--max") && i + 1 < argc) {
            (a == "--min" ? lo : hi) = std::strtod(argv[++i], nullptr);
        } else if (base_path.empty()) {
            base_path = argv[i];
        } else if (other_path.empty()) {
            other_path = argv[i];
        } else {
            std::fprintf(stderr, "usage: sdk-logit-rel-rms BASE OTHER [--min R] [--max R]\n");
            return 2;
        }
    }
    if (other_path.empty()) {
        std::fprintf(stderr, "usage: sdk-logit-rel-rms BASE OTHER [--min R] [--max R]\n");
        return 2;
    }
    try {
        const LogitMatrix base = read_logits(base_path);
        const LogitMatrix other = read_logits(other_path);
        if (base.rows != other.rows || base.vocab != other.vocab || base.positions != other.positions) {
            std::fprintf(stderr, "sdk-logit-rel-rms: %s and %s differ in shape or positions\n", base_path.c_str(),
                         other_path.c_str());
            return 2;
        }
        bool ok = base.rows > 0;
        std::printf("%6s %12s %12s %10s\n", "pos", "rms(base)", "rms(diff)", "rel");
        for (std::size_t r = 0; r < base.rows; ++r) {
            double sb = 0.0, sd = 0.0;
            const auto b = base.row(r);
            const auto o = other.row(r);
            for (std::size_t v = 0; v < base.vocab; ++v) {
                const double d = static_cast<double>(o[v]) - static_cast<double>(b[v]);
                sb += static_cast<double>(b[v]) * static_cast<double>(b[v]);
                sd += d * d;
            }
            const double n = static_cast<double>(base.vocab);
            const double rel = sb > 0.0 ? std::sqrt(sd / sb) : std::numeric_limits<double>::infinity();
            const bool in = std::isfinite(rel) && rel >= lo && rel <= hi;
            ok = ok && in;
            std::printf("%6lld %12.5f %12.5f %10.5f%s\n", static_cast<long long>(base.positions[r]), std::sqrt(sb / n),
                        std::sqrt(sd / n), rel, in ? "" : "  <- outside the bounds");
        }
        std::printf("bounds [%g, %g]: %s\n", lo, hi, ok ? "pass" : "FAIL");
        return ok ? 0 : 1;
    } catch (const dense::Error& e) {
        std::fprintf(stderr, "sdk-logit-rel-rms: %s\n", e.what());
        return 2;
    }
}
