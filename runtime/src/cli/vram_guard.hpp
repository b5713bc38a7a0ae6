// The VRAM plan checked before a GPU session allocates (generate, bench): the session's bill against
// the budget (--vram-budget / vram_budget, else the device's free memory). Over budget, with
// `placement: auto`, the weights' output rows that do not fit go to the CPU (plan/row_split.hpp) when
// that makes the bill fit; otherwise the run is refused with the bill and what would fit — never a
// silent context cut or KV precision change.
#pragma once

#include "cli/loaded_model.hpp"
#include "exec/session.hpp"
#include "model/run_config.hpp"
#include "packs/pack_manager.hpp"
#include "plan/row_split.hpp"

#include <optional>

namespace dense::cli {

// Sets what the session must run with: options.row_split (empty: every weight on the GPU, or a CPU
// session) and, with `prefill_chunk: auto` where the default chunk's scratch would not fit, the
// smaller options.prefill_chunk the plan chose (plan_and_judge). Throws dense::Error(Device) with
// the bill when over budget and no split helps (or placement is gpu-only), and dense::Error(Pack)
// like the session would when the device's pack lacks an op.
void place_in_vram(const LoadedModel& model, const packs::PackManager& packs, exec::SessionOptions& options,
                   const model::RunConfig& config);

}  // namespace dense::cli
