// compare-logits: prints the position-by-position comparison of two logit files (oracle first) and,
// with --bounds, the verdict of the conformance policy. For humans and for closing notes.
//
//   compare-logits ORACLE OURS [--bounds max_abs=1e-4,kl=1e-6,margin=1e-3] [--worst N]
//
// Files: float32 + <file>.json sidecar, or golden text "pos P v0 ..." (*.txt). Exit codes: 0 compared
// (and within bounds if given), 1 outside the bounds, 2 the files cannot be read or do not match in shape.
#include "logit_compare.hpp"
#include "logits_io.hpp"

#include "core/error.hpp"

#include <CLI/CLI.hpp>

#include <iostream>

int main(int argc, char** argv) {
    using namespace dense::conformance;
    CLI::App app{
        "compare-logits: per-position max |diff|, KL(oracle || ours), top-1 agreement and the oracle's top-2 margin"};
    std::string oracle_path, ours_path, bounds_text;
    std::size_t worst = 0;
    app.add_option("oracle", oracle_path, "Oracle logits (llama.cpp)")->required();
    app.add_option("ours", ours_path, "Logits to check (dense-rt)")->required();
    app.add_option(
        "--bounds", bounds_text,
        "Pass/fail policy: max_abs=A,kl=K,margin=M (unset keys keep the defaults " + Bounds{}.to_string() + ")");
    app.add_option("--worst", worst,
                   "Show only the N positions with the largest max |diff| (0: all; default: all up to "
                   "100 positions, else 20)");
    CLI11_PARSE(app, argc, argv);

    try {
        const LogitMatrix oracle = read_logits(oracle_path);
        const LogitMatrix ours = read_logits(ours_path);
        const Comparison c = compare_logits(oracle, ours);
        if (app.count("--worst") == 0) worst = c.positions.size() > 100 ? 20 : 0;
        if (bounds_text.empty()) {
            std::cout << format_table(c, nullptr, worst);
            return 0;
        }
        const Bounds bounds = Bounds::parse(bounds_text);
        std::cout << format_table(c, &bounds, worst);
        const Verdict v = judge(c, bounds);
        for (std::size_t i = 0; i < v.violations.size() && i < 20; ++i) std::cout << "  " << v.violations[i] << "\n";
        if (v.violations.size() > 20) std::cout << "  ... " << v.violations.size() - 20 << " more\n";
        return v.pass ? 0 : 1;
    } catch (const dense::Error& e) {
        std::cerr << "compare-logits: " << e.what() << "\n";
        return 2;
    }
}
