#include "plan/plan_verdict.hpp"

#include <algorithm>
#include <limits>

namespace dense::plan {

int64_t context_search_limit(const model::BoundModel& model, int64_t requested) {
    int64_t trained = 0;
    if (auto v = model.hparams.number("n_ctx_train"); v && std::holds_alternative<int64_t>(*v))
        trained = std::get<int64_t>(*v);
    return std::min<int64_t>(std::max(trained, requested), std::numeric_limits<int32_t>::max());
}

PlanReport plan_and_judge(const model::BoundModel& model, const model::ModelSpec& spec, const packs::PackManager* packs,
                          const PlanRequest& request, const std::optional<Budget>& budget,
                          bool always_search_max_context, const std::string& model_name) {
    PlanReport report;
    report.model = model_name;
    report.bill = make_plan(model, spec, packs, request);
    if (!budget) return report;
    report.budget = budget;
    report.verdict = judge(report.bill, *budget);
    if (always_search_max_context || !report.verdict->fits) {
        const PeakAt peak_at = [&](int64_t n_ctx) {
            PlanRequest r = request;
            r.n_ctx = n_ctx;
            return make_plan(model, spec, packs, r).peak();
        };
        report.verdict = judge(report.bill, *budget, peak_at, context_search_limit(model, request.n_ctx));
    }
    return report;
}

}  // namespace dense::plan
