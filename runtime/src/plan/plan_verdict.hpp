// A plan made and judged in one go: the bill at the requested context, the verdict against the
// budget and (when asked, or always when over budget) the longest context that fits, found by
// re-planning the same session at other contexts; over budget on a GPU, also the output-row split
// onto the CPU that would keep the requested context (re-planned with it).
#pragma once

#include "plan/plan_builder.hpp"
#include "plan/plan_report.hpp"

#include <optional>
#include <string>

namespace dense::plan {

// Where the max-context search stops: the model's trained context (n_ctx_train), at least the
// requested context, at most what an I32 position holds.
int64_t context_search_limit(const model::BoundModel& model, int64_t requested);

// `budget` empty (a CPU target): the bill alone. `model_name` is what the report calls the model.
PlanReport plan_and_judge(const model::BoundModel& model, const model::ModelSpec& spec, const packs::PackManager* packs,
                          const PlanRequest& request, const std::optional<Budget>& budget,
                          bool always_search_max_context, const std::string& model_name);

}  // namespace dense::plan
