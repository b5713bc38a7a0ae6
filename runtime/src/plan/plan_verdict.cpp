#include "plan/plan_verdict.hpp"

#include "plan/bus_share.hpp"
#include "plan/bus_staging.hpp"
#include "plan/prefill_graph.hpp"

#include "core/env_number.hpp"

#include "packs/activation_choice.hpp"
#include "packs/cpu_gemv_speed.hpp"

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
    PlanRequest req = request;  // with `auto`, its prefill chunk may step down below
    report.bill = make_plan(model, spec, packs, req);
    report.prefill_chunk = request_prefill_chunk(req);
    if (!budget) return report;
    report.budget = budget;
    if (!budget->device_free_memory && request.target.kind != DENSE_DEVICE_CPU)
        // Measured on the H200 (docs/perf-notes.md, session 6): nvidia-smi showed ~530 MiB more than the
        // session's allocations. The device's free memory is read after the context exists, so only an
        // explicit budget (a card's size) leaves it out.
        report.bill.notes.push_back(
            "the budget (" + budget->source +
            ") is for dense-rt's own allocations: the GPU driver's context and loaded kernels (about 0.5 GiB "
            "measured on an H200) and other programs need room beside it when the budget is a card's whole memory");
    report.verdict = judge(report.bill, *budget);
    // `prefill_chunk: auto` over budget: smaller batched prompt steps (less scratch) before anything
    // else gives way. Still over at the smallest, the bill is the one at a split's default chunk
    // (64 on a GPU, prefill_graph.hpp): a row split is what comes next, and it streams its host rows
    // through the bus once per batched step, so there a long step pays most (the context search
    // below still asks what the smallest chunk would hold).
    const bool auto_chunk = request.prefill_chunk < 0 && report.prefill_chunk > 1;
    const int64_t smallest_chunk = smallest_auto_prefill_chunk(request.target.kind);
    if (auto_chunk && !report.verdict->fits) {
        const int64_t asked = report.prefill_chunk;
        for (int64_t c = asked / 2; c >= smallest_chunk && !report.verdict->fits; c /= 2) {
            req.prefill_chunk = c;
            report.bill = make_plan(model, spec, packs, req);
            report.prefill_chunk = c;
            report.verdict = judge(report.bill, *budget);
        }
        if (report.verdict->fits) {
            report.bill.notes.push_back("prompts run " + std::to_string(report.prefill_chunk) +
                                        " tokens per batched step: at the default " + std::to_string(asked) +
                                        " the batched step's scratch does not fit (prefill_chunk: auto)");
        } else {
            req.prefill_chunk = default_split_prefill_chunk(request.target.kind);
            report.bill = make_plan(model, spec, packs, req);
            report.prefill_chunk = req.prefill_chunk;
            report.verdict = judge(report.bill, *budget);
            req.prefill_chunk = request.prefill_chunk;  // `auto` again for the split search
        }
    }
    if (always_search_max_context || !report.verdict->fits) {
        const PeakAt peak_at = [&](int64_t n_ctx) {
            PlanRequest r = req;
            if (auto_chunk) r.prefill_chunk = smallest_chunk;  // what `auto` would step down to there
            r.n_ctx = n_ctx;
            return make_plan(model, spec, packs, r).peak();
        };
        report.verdict = judge(report.bill, *budget, peak_at, context_search_limit(model, request.n_ctx));
    }
    if (!report.verdict->fits && report.verdict->split_can_fit && request.target.kind != DENSE_DEVICE_CPU) {
        // The split moves row bytes; the arena saves slot bytes (256-byte rounding per tensor), so
        // ask again for what is still over until it fits or nothing more can move.
        CpuGemvCostOf cpu_cost;
        if (packs != nullptr) {
            std::function<dense_type_id(dense_type_id)> act = assumed_gpu_activation;
            if (request.target.device) act = packs::gemv_activation_chooser(*packs, *request.target.device, request.gemv_activation);
            cpu_cost = packs::cpu_gemv_cost_checker(*packs, act);
        }
        // DENSE_HOST_TABLES=0 keeps token_embd in VRAM (for A/B measurements of the host tables).
        const bool tables_to_host = request.target.maps_host_memory && env_whole_number("DENSE_HOST_TABLES", 1, 0, 1) == 1;
        const auto try_split = [&](int64_t prefill_chunk, double bus_read_share) {
            uint64_t ask = report.verdict->bytes_to_cpu;
            for (int attempt = 0; attempt < 8; ++attempt) {
                const RowSplit rs = choose_row_split(model, spec, ask, cpu_cost, tables_to_host);
                PlanRequest r = req;
                r.row_split = rs.placement;
                r.prefill_chunk = prefill_chunk;
                r.bus_read_share = bus_read_share;
                const VramBill b = make_plan(model, spec, packs, r);
                report.split = PlanReport::Split{rs.kinds,
                                                 b.cpu_read_bytes,
                                                 b.peak(),
                                                 b.peak() <= budget->bytes,
                                                 bus_staging_bytes(r.bus_read_share, &*r.row_split, prefill_chunk,
                                                                   r.target.kind),
                                                 request_prefill_chunk(r),
                                                 bus_read_share,
                                                 rs.placement,
                                                 rs.host_tables,
                                                 rs.host_table_bytes};
                if (report.split->fits || !rs.enough) break;
                // Ask for what is still over, doubled on each attempt: the bill need not fall byte for
                // byte with the rows moved (the device's op workspaces follow the split's shapes), and
                // asking the same small amount again can land on the same over-budget split every time
                // (session 11: --vram-budget 7880MiB was refused on the H200, 118 KB over, while 7800MiB
                // fitted). A split a few tiles larger than needed costs little; a refused run costs all.
                ask += (b.peak() - budget->bytes) << attempt;
            }
        };
        try_split(req.prefill_chunk, req.bus_read_share);
        // Tries the split again with less VRAM for the prompts or the bus; keeps it (and says why)
        // where that fits, else the split before.
        const auto fall_back = [&](int64_t prefill_chunk, double bus_read_share, const char* note) {
            const PlanReport::Split before = *report.split;
            try_split(prefill_chunk, bus_read_share);
            if (report.split->fits)
                report.bill.notes.push_back(note);
            else
                report.split = before;
        };
        // With `auto`, a split whose batched prompt steps (their staging ring and scratch) do not fit
        // beside it prefills token by token instead: slow prompts, not a refused run.
        if (!report.split->fits && request.prefill_chunk < 0 && report.split->prefill_chunk > 1)
            fall_back(1, req.bus_read_share,
                      "with the row split, prompts run token by token: the batched steps' bus staging and scratch do "
                      "not fit beside it (prefill_chunk: auto)");
        // And `bus_read_share: auto` gives up the staging ring (share 0, the CPU reads every host row)
        // where the split fits only without it, token by token (the ring is what batched steps need).
        if (!report.split->fits && is_auto_bus_share(request.bus_read_share) && report.split->bus_staging > 0 &&
            (request.prefill_chunk < 0 || request.prefill_chunk == 1))
            fall_back(1, 0.0,
                      "with the row split, the CPU reads every host row and prompts run token by token: the bus "
                      "staging ring does not fit beside it (bus_read_share: auto)");
    }
    return report;
}

}  // namespace dense::plan
