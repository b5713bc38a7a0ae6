// `dense-rt bench`: see commands.hpp and runtime/src/bench. The markdown table goes to stdout,
// progress to stderr; --json and --plot write files.
#include "bench/bandwidth_probe.hpp"
#include "bench/bench_report.hpp"
#include "bench/cpu_rows_bench.hpp"
#include "bench/gemv_bench.hpp"
#include "bench/model_bench.hpp"
#include "bench/step_profile.hpp"
#include "cli/commands.hpp"
#include "cli/loaded_model.hpp"
#include "cli/vram_guard.hpp"
#include "core/error.hpp"
#include "core/type_table.hpp"
#include "exec/resident_memory.hpp"
#include "exec/session.hpp"
#include "packs/device_probe.hpp"
#include "packs/pack_manager.hpp"

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <thread>

namespace dense::cli {

namespace {

std::vector<int64_t> parse_depths(const std::string& text) {
    std::vector<int64_t> out;
    std::stringstream ss(text);
    for (std::string item; std::getline(ss, item, ',');) {
        try {
            size_t used = 0;
            const long long v = std::stoll(item, &used);
            if (used != item.size() || v < 0) throw std::invalid_argument(item);
            out.push_back(v);
        } catch (const std::exception&) {
            throw Error(ErrorKind::Usage, "bench: -d expects comma-separated depths >= 0, got '" + text + "'");
        }
    }
    if (out.empty()) throw Error(ErrorKind::Usage, "bench: -d is empty");
    return out;
}

std::vector<dense_type_id> gemv_formats(const std::vector<std::string>& names) {
    static const dense_type_id all[] = {DENSE_TYPE_Q8_0, DENSE_TYPE_Q2_K,    DENSE_TYPE_Q3_K,   DENSE_TYPE_Q4_K,
                                        DENSE_TYPE_Q5_K, DENSE_TYPE_Q6_K,    DENSE_TYPE_IQ2_XS, DENSE_TYPE_IQ3_XXS,
                                        DENSE_TYPE_IQ4_NL, DENSE_TYPE_IQ3_S, DENSE_TYPE_IQ2_S,  DENSE_TYPE_IQ4_XS};
    if (names.empty()) return {std::begin(all), std::end(all)};
    std::vector<dense_type_id> out;
    for (const auto& n : names) {
        const TypeInfo* t = global_type_table().find(n);
        if (t == nullptr || !t->storable) throw Error(ErrorKind::Usage, "bench: --gemv-formats: unknown weight format '" + n + "'");
        out.push_back(t->id);
    }
    return out;
}

// Bytes of weights one generated token reads: every trunk and head tensor, but only one row of the
// token embedding (unless it is also the LM head).
uint64_t weight_bytes_per_token(const model::BoundModel& m) {
    uint64_t total = 0;
    for (const auto& [role, t] : m.globals) {
        if (t == nullptr) continue;
        total += (role == "token_embd" && !m.tied_output) ? t->n_bytes / static_cast<uint64_t>(t->ne[1]) : t->n_bytes;
    }
    for (const auto& layer : m.layers)
        for (const auto& [role, t] : layer.tensors)
            if (t != nullptr) total += t->n_bytes;
    return total;
}

// Free memory of a CUDA device now (the driver's count), or nothing for the CPU / no reading.
std::optional<uint64_t> device_free_bytes(const packs::PackManager& packs, size_t device) {
    const auto& d = packs.devices().at(device);
    if (d.kind() != DENSE_DEVICE_CUDA || d.simulated) return std::nullopt;
    for (const auto& probed : packs::probe_cuda_devices())
        if (probed.hw.device_index == d.hw.device_index && probed.hw.free_memory_bytes > 0)
            return probed.hw.free_memory_bytes;
    return std::nullopt;
}

void write_file(const std::string& path, const std::string& text, const char* what) {
    std::ofstream out(path, std::ios::binary);
    out << text;
    if (!out) throw Error(ErrorKind::Io, std::string("bench: cannot write the ") + what + " to " + path);
    spdlog::info("bench: wrote {} to {}", what, path);
}

// --cpu-rows: the row split's CPU side alone (no model, no device).
int bench_cpu_rows(const BenchFlags& flags, const packs::PackPolicy& policy, const std::string& command_line) {
    if (flags.cpu_rows_gib <= 0 || flags.cpu_rows_gib > 64) throw Error(ErrorKind::Usage, "bench: --cpu-rows-gib must be in (0, 64]");
    packs::PackManager packs(policy);
    packs.load();
    packs.throw_if_unusable();
    bench::CpuRowsOptions o;
    if (flags.gemv_formats.empty())
        o.formats = {DENSE_TYPE_IQ4_XS, DENSE_TYPE_Q4_K, DENSE_TYPE_Q6_K};  // the 27B seed-iq4 mix's big ones
    else
        o.formats = gemv_formats(flags.gemv_formats);
    o.threads = flags.cpu_threads;
    if (o.threads.empty()) {
        const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
        for (unsigned t : {1u, 2u, 4u, 8u, hw - 1, hw})
            if (t >= 1 && t <= hw && std::find(o.threads.begin(), o.threads.end(), t) == o.threads.end()) o.threads.push_back(t);
    }
    o.bytes = static_cast<uint64_t>(flags.cpu_rows_gib * 1073741824.0);
    o.reps = std::max(1, flags.reps);
    o.file_dir = std::filesystem::temp_directory_path();
    const packs::PackRecord* pack = packs.chosen_pack(0);
    spdlog::info("bench: CPU rows of a split, {} formats x {} thread counts, {:.2f} GiB per pass, file in {}",
                 o.formats.size(), o.threads.size(), flags.cpu_rows_gib, o.file_dir.string());
    const auto results = bench::bench_cpu_rows(packs, o);
    std::cout << "dense-rt " << DENSE_VERSION << " | " << packs.devices().at(0).name() << " | pack "
              << (pack ? pack->name : "-") << " | " << std::thread::hardware_concurrency() << " hardware threads\n"
              << "command: " << command_line << "\n"
              << bench::cpu_rows_markdown(results) << std::flush;
    if (!flags.json_out.empty()) {
        nlohmann::json j;
        j["version"] = DENSE_VERSION;
        j["command"] = command_line;
        j["cpu_rows"] = nlohmann::json::array();
        for (const auto& r : results)
            j["cpu_rows"].push_back({{"format", r.format}, {"source", r.source}, {"impl", r.impl}, {"threads", r.threads},
                                     {"bytes", r.bytes}, {"seconds", r.seconds}, {"gbs", r.gbs},
                                     {"minor_faults", r.minor_faults}, {"major_faults", r.major_faults}});
        write_file(flags.json_out, j.dump(2) + "\n", "JSON report");
    }
    return 0;
}

}  // namespace

int cmd_bench(const model::RunConfig* config, const BenchFlags& flags, const packs::PackPolicy& policy,
              const std::string& command_line) {
    if (flags.reps < 1) throw Error(ErrorKind::Usage, "bench: -r must be at least 1");
    if (flags.cpu_rows) return bench_cpu_rows(flags, policy, command_line);
    if (flags.prompt_tokens < 0 || flags.gen_tokens < 0) throw Error(ErrorKind::Usage, "bench: -p and -n must be >= 0");
    const auto depths = parse_depths(flags.depths);
    if (flags.profile_steps > 0 && flags.gemv_only) throw Error(ErrorKind::Usage, "bench: --profile needs a model (not --gemv-only)");
    if (!flags.repeat_nodes.empty() && flags.gemv_only)
        throw Error(ErrorKind::Usage, "bench: --repeat-nodes needs a model (not --gemv-only)");
    const auto formats = gemv_formats(flags.gemv_formats);

    packs::PackManager packs(policy);
    packs.load();
    packs.throw_if_unusable();
    const size_t device = flags.cpu ? 0 : packs.main_device_index();
    const auto& dev = packs.devices().at(device);
    const packs::PackRecord* pack = packs.chosen_pack(device);
    bench::MemoryFactory memory = [&packs, device]() {
        return device == 0 ? exec::make_host_memory() : exec::make_pack_memory(packs, device);
    };

    bench::BenchReport report;
    report.version = DENSE_VERSION;
    report.command = command_line;
    report.device = dev.id() + " (" + dev.name() + ")";
    report.pack = pack ? pack->name : "-";

    const bool want_gemv = flags.gemv || flags.gemv_only;
    std::optional<bench::StepProfile> profile, prompt_profile;
    double pp_ms = 0;
    double tg_ms = 0;
    {
        // On the CPU a 1 GiB probe would take long for nothing: the ceiling matters for GPUs.
        const uint64_t bytes = static_cast<uint64_t>(flags.ceiling_gib * (device == 0 ? 0.125 : 1.0) * 1073741824.0);
        spdlog::info("bench: measuring the bandwidth ceiling of {} ({} MiB buffers)", dev.id(), bytes >> 20);
        report.ceiling = bench::measure_bandwidth(packs, device, memory, bytes, 5);
    }

    if (!flags.gemv_only) {
        if (config == nullptr) throw Error(ErrorKind::Usage, "bench: give --config or -m (or use --gemv-only)");
        const auto t0 = std::chrono::steady_clock::now();
        auto model = load_model(*config);
        exec::SessionOptions so;
        // The config's context (--ctx), raised to what the depths need: the VRAM plan is checked at it.
        so.n_ctx = std::max<int64_t>(
            {*std::max_element(depths.begin(), depths.end()) + flags.prompt_tokens + flags.gen_tokens + 2,
             depths.front() + flags.profile_steps + 2, config->context});
        so.kv_type = config->kv_type == "f32" ? DENSE_TYPE_F32 : DENSE_TYPE_F16;
        so.threads = static_cast<int32_t>(config->threads);
        so.keep_page_cache = config->keep_page_cache;
        so.bus_read_share = config->bus_read_share;
        so.prefill_chunk = config->prefill_chunk;
        so.device = device;
        so.repeat_nodes = flags.repeat_nodes;
        report.repeated_nodes = flags.repeat_nodes;
        place_in_vram(*model, packs, so, *config);  // the bill before any allocation
        const auto free_before = device_free_bytes(packs, device);
        exec::Session session(model->bound, model->spec, packs, so);
        const auto free_after_create = device_free_bytes(packs, device);
        for (const std::string& word : flags.repeat_nodes)
            if (word.empty() || session.nodes_matching(word) == 0)
                throw Error(ErrorKind::Usage, "bench: --repeat-nodes '" + word +
                                                  "' names no node of the token step (words match implementation "
                                                  "names such as cuda-sm90.rms_norm; `bench --profile` lists the op kinds)");
        report.load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        // What the step runs, rather than the device's highest-scoring pack (on the CPU that is
        // cpu-avx2, whose ops serve only a split's CPU rows).
        const auto used = session.packs_used();
        report.pack.clear();
        for (const std::string& name : used) report.pack += (report.pack.empty() ? "" : " + ") + name;
        report.model = config->model.filename().string();
        report.kv_type = config->kv_type;
        report.prefill_chunk = session.prefill_chunk();
        report.prefill_free_order = session.prefill_free_order();
        report.weight_bytes_per_token = weight_bytes_per_token(model->bound);
        report.kv_bytes_per_position = session.bill().kv_bytes_per_token;
        report.state_bytes_per_token = session.bill().bytes_of(plan::Item::RecurrentState);
        report.session_bytes = session.memory_bytes();
        report.upload_seconds = session.weights().upload_seconds();
        report.rss_after_load = exec::resident_bytes().value_or(0);
        bench::ModelBenchOptions mo;
        mo.prompt_tokens = flags.prompt_tokens;
        mo.gen_tokens = flags.gen_tokens;
        mo.depths = depths;
        mo.reps = flags.reps;
        spdlog::info("bench: {} on {} (context {}), pp{} / tg{} at depths {} x {} repetitions", report.model,
                     session.device_label(), so.n_ctx, flags.prompt_tokens, flags.gen_tokens, flags.depths, flags.reps);
        report.rows = bench::bench_model(session, mo);
        if (free_before && free_after_create) {
            bench::BenchReport::VramCheck v;
            v.budget = config->vram_budget.value_or(*free_before);
            v.budget_source = config->vram_budget ? config->vram_budget_source : "free memory of " + dev.id();
            v.context = so.n_ctx;
            v.planned = session.bill().allocated();
            v.plan_peak = session.bill().peak();
            v.measured = *free_before - std::min(*free_before, *free_after_create);
            v.measured_after = *free_before - std::min(*free_before, device_free_bytes(packs, device).value_or(*free_before));
            report.vram = v;
        }
        if (so.row_split) {
            const auto st = session.host_split_stats();
            bench::BenchReport::SplitUse u;
            u.gpu_host_bytes_per_token = session.bus_weight_bytes();
            u.cpu_bytes_per_token = session.bill().cpu_read_bytes - std::min(session.bill().cpu_read_bytes, u.gpu_host_bytes_per_token);
            u.gpu_bytes_per_token = report.weight_bytes_per_token - std::min(report.weight_bytes_per_token, u.cpu_bytes_per_token);
            u.steps = session.steps_run();
            const double steps = static_cast<double>(std::max<uint64_t>(u.steps, 1));
            u.cpu_ms_per_step = st.cpu_ms / steps;
            u.thread_ms_per_step = st.thread_ms / steps;
            u.threads = st.threads;
            u.wait_ms_per_step = st.wait_ms / steps;
            u.waits_timed = st.waits_timed;
            u.bus_bytes_per_step = static_cast<double>(st.bytes_to_host + st.bytes_to_device) / steps;
            u.bus_read_share = session.bus_read_share();
            u.bus_share_auto = session.bus_share_note();
            report.split = u;
        }
        if (flags.profile_steps > 0) {
            spdlog::info("bench: profiling {} decode steps node by node at depth {}", flags.profile_steps, depths.front());
            profile = bench::profile_decode(session, flags.profile_steps, depths.front());
            for (const auto& row : report.rows)
                if (row.is_tg() && row.depth == depths.front() && row.mean_tok_per_s() > 0)
                    tg_ms = 1000.0 / row.mean_tok_per_s();
            if (flags.prompt_tokens > 0 && session.prefill_chunk() > 1 &&
                so.n_ctx - depths.front() >= session.prefill_chunk()) {
                // A few batched prompt steps the same way (each is prefill_chunk() tokens).
                const int64_t room = (so.n_ctx - depths.front()) / session.prefill_chunk();  // steps the context holds
                const int steps = static_cast<int>(std::min<int64_t>(std::min(flags.profile_steps, 4), room));
                spdlog::info("bench: profiling {} prompt steps of {} tokens node by node at depth {}", steps,
                             session.prefill_chunk(), depths.front());
                prompt_profile = bench::profile_prefill(session, steps, depths.front());
                for (const auto& row : report.rows)
                    if (row.test.rfind("pp", 0) == 0 && row.depth == depths.front() && row.mean_tok_per_s() > 0)
                        pp_ms = 1000.0 / row.mean_tok_per_s();
            }
        }
    }

    if (want_gemv) {
        bench::GemvBenchOptions go;
        go.formats = formats;
        for (const auto& s : bench::qwen35_27b_gemv_shapes())
            if (s.label != "lm_head") go.shapes.push_back(s);
        go.read_ceiling_gbs = report.ceiling ? report.ceiling->read_gbs : 0;
        go.reps = 5;
        if (device == 0) go.rotate_bytes = uint64_t{64} << 20;
        if (!flags.gemm_cols.empty()) {
            // --gemm-cols: GEMM_Q of each T at the same shapes (no LM head), in a table of their own.
            std::vector<bench::GemvResult> gemm;
            for (const int cols : flags.gemm_cols) {
                bench::GemvBenchOptions gg = go;
                gg.gemm_cols = cols;
                spdlog::info("bench: GEMM micro-bench, T = {}, {} formats x {} shapes", cols, gg.formats.size(),
                             gg.shapes.size());
                const auto more = bench::bench_gemv(packs, device, memory, gg);
                gemm.insert(gemm.end(), more.begin(), more.end());
            }
            std::cout << bench::to_markdown(report) << bench::gemm_markdown(gemm);
            if (profile) std::cout << bench::to_markdown(*profile, tg_ms, report.ceiling ? report.ceiling->read_gbs : 0);
            if (prompt_profile)
                std::cout << bench::to_markdown(*prompt_profile, pp_ms, report.ceiling ? report.ceiling->read_gbs : 0);
            std::cout << std::flush;
            report.gemv = std::move(gemm);
            if (!flags.json_out.empty()) write_file(flags.json_out, bench::to_json(report), "JSON report");
            return 0;
        }
        spdlog::info("bench: GEMV micro-bench, {} formats x {} shapes", go.formats.size(), go.shapes.size());
        report.gemv = bench::bench_gemv(packs, device, memory, go);
        // The LM head (248,320 rows) once, in the format the 27B's output uses (Q6_K).
        bench::GemvBenchOptions head = go;
        head.formats = {DENSE_TYPE_Q6_K};
        head.shapes.clear();
        for (const auto& s : bench::qwen35_27b_gemv_shapes())
            if (s.label == "lm_head") head.shapes.push_back(s);
        if (device != 0) {
            const auto more = bench::bench_gemv(packs, device, memory, head);
            report.gemv.insert(report.gemv.end(), more.begin(), more.end());
        }
    }

    std::cout << bench::to_markdown(report);
    if (profile) std::cout << bench::to_markdown(*profile, tg_ms, report.ceiling ? report.ceiling->read_gbs : 0);
    if (prompt_profile)
        std::cout << bench::to_markdown(*prompt_profile, pp_ms, report.ceiling ? report.ceiling->read_gbs : 0);
    std::cout << std::flush;
    if (!flags.json_out.empty()) write_file(flags.json_out, bench::to_json(report), "JSON report");
    if (!flags.plot_out.empty()) {
        const std::string svg = bench::to_svg(report);
        if (svg.empty()) throw Error(ErrorKind::Usage, "bench: --plot needs model rows (not --gemv-only)");
        write_file(flags.plot_out, svg, "plot");
    }
    return 0;
}

}  // namespace dense::cli
