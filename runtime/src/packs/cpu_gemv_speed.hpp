// Which weight formats the CPU can multiply fast: the CPU rows of a row split (plan/row_split.hpp)
// run the CPU's best GEMV for the weight against the GPU's activation format. cpu-ref registers
// every format at priority 0 — it is the numerical oracle, scalar and 20-100x slower than a tuned
// kernel (bench --cpu-rows: 0.07-0.3 GB/s per thread against 5-19 for cpu-avx2) — and a pack that
// optimizes a format registers it above 0. A format with only priority-0 GEMVs on the CPU is "slow":
// the planner moves its rows last.
#pragma once

#include "packs/pack_manager.hpp"

#include <functional>

namespace dense::packs {

// For a weight format: whether a pack usable on the CPU device (devices()[0]) implements its GEMV
// against activation_for(weight) with priority above 0. Keeps a reference to `packs`.
std::function<bool(dense_type_id weight)> fast_cpu_gemv_checker(
    const PackManager& packs, std::function<dense_type_id(dense_type_id weight)> activation_for);

}  // namespace dense::packs
