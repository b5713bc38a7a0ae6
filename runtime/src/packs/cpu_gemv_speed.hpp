// What a weight format costs the CPU per byte: the CPU rows of a row split (plan/row_split.hpp) run
// the CPU's best GEMV for the weight against the GPU's activation format, and the planner moves the
// cheapest rows first.
//
// Three classes, cheapest first:
//   - ReadBound: a tuned kernel (a pack above priority 0) for a format whose GEMV keeps up with the
//     host's DRAM on all threads: Q4_K, Q5_K, Q6_K, Q8_0, IQ4_XS, IQ4_NL (H200's Xeon host, 15
//     threads, bench --cpu-rows: Q4_K 65, IQ4_XS 68, Q6_K 57 GB/s against a 67 GB/s read);
//   - ArithmeticBound: a tuned kernel for a format whose decoding bounds it below the read rate
//     there: the codebook formats and the 2-3 bit K-quants, IQ2_XS 22, IQ2_S 30, IQ3_XXS 33, Q3_K
//     42 GB/s (IQ3_S and Q2_K, not measured there, were compute-bound on one thread of the Zen 5 build
//     machine with the others; docs/perf-notes.md, sessions 23-24). A byte of them costs the CPU
//     1.6-3x a read-bound byte;
//   - ReferenceOnly: only cpu-ref (priority 0), the numerical oracle, scalar and 20-100x slower
//     (0.07-0.3 GB/s per thread against 5-19 for cpu-avx2).
// A format a third-party pack adds is ReadBound when a pack tunes it (the runtime knows no better).
// DENSE_CPU_COST_CLASSES=0 makes every tuned format ReadBound (for A/B measurements; read when a
// split is planned, and a value other than 0 or 1 is a usage error then).
#pragma once

#include "packs/pack_manager.hpp"

#include <functional>

namespace dense::packs {

enum class CpuGemvCost { ReadBound = 0, ArithmeticBound = 1, ReferenceOnly = 2 };

// Whether a format's tuned CPU GEMV is bound by its decoding rather than by reads (the list above).
// Throws dense::Error(Usage) when DENSE_CPU_COST_CLASSES is set to anything but 0 or 1.
bool arithmetic_bound_on_cpu(dense_type_id weight);

// For a weight format: ReferenceOnly unless a pack usable on the CPU device (devices()[0])
// implements its GEMV against activation_for(weight) with priority above 0; else ArithmeticBound or
// ReadBound as arithmetic_bound_on_cpu says. Keeps a reference to `packs`.
std::function<CpuGemvCost(dense_type_id weight)> cpu_gemv_cost_checker(
    const PackManager& packs, std::function<dense_type_id(dense_type_id weight)> activation_for);

}  // namespace dense::packs
