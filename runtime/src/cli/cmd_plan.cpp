// `dense-rt plan`: the VRAM bill of a run before anything is allocated — on the main GPU, on a GPU
// with no usable pack, or on a CUDA device that is not here (then --vram-budget is needed) — the
// placement decision and, over budget, what would fit. The bill goes to stdout (text or --json);
// exit 0 when it fits, 3 when over budget (plan_flags.hpp); over budget it also shows the output-row
// split onto the CPU that would fit, and --allow-cpu-split accepts that split (exit 0).
#include "cli/commands.hpp"
#include "cli/loaded_model.hpp"
#include "cli/sampling_setup.hpp"
#include "core/error.hpp"
#include "plan/plan_target.hpp"
#include "plan/plan_verdict.hpp"

#include <iostream>

namespace dense::cli {

int cmd_plan(model::RunConfig config, const PlanFlags& flags, const packs::PackPolicy& policy) {
    if (flags.context) {
        if (*flags.context < 1) throw Error(ErrorKind::Usage, "plan: --context must be at least 1 token");
        config.context = *flags.context;
    }
    if (flags.kv_type) {
        if (*flags.kv_type != "f16" && *flags.kv_type != "f32")
            throw Error(ErrorKind::Usage, "plan: --kv-type must be f16 or f32, got '" + *flags.kv_type + "'");
        config.kv_type = *flags.kv_type;
    }
    // Packs first: a model may store tensors in a format a pack registers. A missing pack is no
    // error here: planning for a device that is not here needs none.
    packs::PackManager packs(policy);
    packs.load();
    const auto model = load_model(config);

    plan::PlanRequest request;
    request.n_ctx = config.context;
    request.kv_type = config.kv_type == "f32" ? DENSE_TYPE_F32 : DENSE_TYPE_F16;
    request.bus_read_share = config.bus_read_share;
    request.prefill_chunk = config.prefill_chunk;
    request.device_top_k = session_top_k(config);  // the graph a run of this config builds
    request.target = plan::choose_target(packs, config.placement);
    const auto budget = plan::choose_budget(request.target, config.vram_budget, config.vram_budget_source);
    const plan::PlanReport report = plan::plan_and_judge(model->bound, model->spec, &packs, request, budget, true,
                                                         config.model.filename().string());
    std::cout << (flags.json ? plan::to_json(report) : plan::to_text(report)) << std::flush;
    if (!report.verdict || report.verdict->fits) return 0;
    return flags.allow_cpu_split && report.split && report.split->fits ? 0 : kPlanOverBudgetExit;
}

}  // namespace dense::cli
