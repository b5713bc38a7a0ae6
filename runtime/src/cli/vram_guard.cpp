#include "cli/vram_guard.hpp"

#include "core/error.hpp"
#include "core/units.hpp"
#include "plan/bus_share.hpp"
#include "plan/plan_target.hpp"
#include "plan/prefill_graph.hpp"
#include "plan/plan_verdict.hpp"

#include <spdlog/spdlog.h>

namespace dense::cli {

void place_in_vram(const LoadedModel& model, const packs::PackManager& packs, exec::SessionOptions& options,
                   const model::RunConfig& config) {
    options.row_split.reset();
    const plan::PlanTarget target = plan::target_for_device(packs, options.device);
    if (target.kind == DENSE_DEVICE_CPU) {
        if (config.vram_budget)
            spdlog::info("running on the CPU: the VRAM budget ({}) does not apply", config.vram_budget_source);
        return;
    }
    std::optional<plan::Budget> budget;
    if (config.vram_budget) {
        budget = plan::Budget{*config.vram_budget, config.vram_budget_source};
    } else if (auto free = plan::free_memory_budget(target)) {
        budget = std::move(free);
    } else {
        spdlog::warn("{}: free memory unknown and no vram_budget given; the VRAM plan is not checked", target.label);
        return;
    }
    plan::PlanRequest request;
    request.n_ctx = options.n_ctx;
    request.kv_type = options.kv_type;
    request.gemv_activation = options.gemv_activation;
    request.bus_read_share = options.bus_read_share;
    request.prefill_chunk = options.prefill_chunk;
    request.device_top_k = options.device_top_k;
    request.target = target;
    const plan::PlanReport report =
        plan::plan_and_judge(model.bound, model.spec, &packs, request, budget, false, config.model.filename().string());
    if (!report.verdict->fits && config.placement == model::Placement::Auto && report.split && report.split->fits) {
        uint64_t cpu_tensors = 0;
        for (const auto& k : report.split->kinds) cpu_tensors += static_cast<uint64_t>(k.tensors_split);
        std::string tables;
        for (const auto& t : report.split->host_tables) tables += (tables.empty() ? "" : ", ") + t;
        if (!tables.empty())
            tables = "; " + tables + " (" + format_bytes(report.split->host_table_bytes) +
                     ") stays in page-locked host memory, read by row over the bus";
        spdlog::info("VRAM plan: the weights do not all fit {} ({}); {} of weight rows of {} tensors go to the CPU "
                     "(read from the file each token){}; peak {} of {}",
                     target.label, budget->source, format_bytes(report.split->cpu_read_bytes), cpu_tensors, tables,
                     format_bytes(report.split->peak), format_bytes(report.verdict->budget));
        options.row_split = report.split->placement;
        if (options.prefill_chunk < 0 && report.split->prefill_chunk == 1) {
            spdlog::info("VRAM plan: with the row split, prompts run token by token (the batched steps' bus staging "
                         "and scratch do not fit beside it)");
            options.prefill_chunk = 1;
        }
        if (plan::is_auto_bus_share(options.bus_read_share) && !plan::is_auto_bus_share(report.split->bus_read_share)) {
            spdlog::info("VRAM plan: with the row split, the CPU reads every host row (bus_read_share auto: the bus "
                         "staging ring does not fit beside it)");
            options.bus_read_share = report.split->bus_read_share;
        }
        return;
    }
    if (!report.verdict->fits)
        throw Error(ErrorKind::Device, "the model does not fit " + target.label + " at context " +
                                           std::to_string(options.n_ctx) + "; nothing was allocated.\n" +
                                           plan::to_text(report) +
                                           "lower the context (--ctx / `context`), or raise the budget "
                                           "(--vram-budget / `vram_budget`) if the GPU has more free memory");
    spdlog::info("VRAM plan: peak {} of {} ({}); {} left", format_bytes(report.verdict->peak),
                 format_bytes(report.verdict->budget), budget->source, format_bytes(report.verdict->headroom));
    if (options.prefill_chunk < 0 && report.prefill_chunk != plan::default_prefill_chunk(target.kind)) {
        spdlog::info("VRAM plan: prompts run {} tokens per batched step (the default {} does not fit)",
                     report.prefill_chunk, plan::default_prefill_chunk(target.kind));
        options.prefill_chunk = report.prefill_chunk;
    }
}

}  // namespace dense::cli
