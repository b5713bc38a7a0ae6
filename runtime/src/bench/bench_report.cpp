#include "bench/bench_report.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

namespace dense::bench {

namespace {

std::string fmt(const char* f, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

// Rates: whole numbers when large, three significant digits when small (a CPU run's 0.06 GB/s).
std::string rate(double v) { return v >= 100 ? fmt("%.0f", v) : fmt("%.3g", v); }

std::string mib(uint64_t b) { return fmt("%.0f", static_cast<double>(b) / (1024.0 * 1024.0)); }

}  // namespace

double bytes_moved_per_token(const BenchReport& r, const ModelBenchRow& row) {
    const double history = static_cast<double>(row.depth) + (static_cast<double>(row.tokens) + 1.0) / 2.0;
    return static_cast<double>(r.weight_bytes_per_token) + static_cast<double>(r.state_bytes_per_token) +
           static_cast<double>(r.kv_bytes_per_position) * history;
}

std::string to_markdown(const BenchReport& r) {
    std::ostringstream o;
    o << "dense-rt " << r.version << " | " << r.model << " | " << r.device << " | pack " << r.pack << " | KV "
      << r.kv_type;
    if (!r.rows.empty())  // a model bench: how its prompts ran
        o << " | prompt " << (r.prefill_chunk > 1 ? std::to_string(r.prefill_chunk) + " tokens per step" : "token by token")
          << (r.prefill_chunk > 1 ? (r.prefill_free_order ? " (GEMM in free order)" : " (GEMM in exact order)") : "");
    o << "\n";
    if (!r.repeated_nodes.empty()) {
        o << "TIMING EXPERIMENT (--repeat-nodes): nodes whose implementation name contains";
        for (size_t i = 0; i < r.repeated_nodes.size(); ++i) o << (i ? ", " : " ") << "'" << r.repeated_nodes[i] << "'";
        o << " ran twice per step (a timing experiment: residual GEMVs and in-place ops change the outputs)\n";
    }
    if (r.ceiling)
        o << "bandwidth ceiling (same run, " << mib(r.ceiling->buffer_bytes) << " MiB buffers): copy "
          << rate(r.ceiling->copy_gbs) << " GB/s (read+write), pure read " << rate(r.ceiling->read_gbs)
          << " GB/s (" << r.ceiling->read_impl << ")\n";
    if (!r.rows.empty()) {
        o << "weights read per generated token: " << fmt("%.3f", static_cast<double>(r.weight_bytes_per_token) / 1e9)
          << " GB | session device memory: " << mib(r.session_bytes) << " MiB | load " << fmt("%.1f", r.load_seconds)
          << " s (weight upload " << fmt("%.1f", r.upload_seconds) << " s) | RSS after load "
          << (r.rss_after_load ? mib(r.rss_after_load) + " MiB" : std::string("unknown")) << "\n";
        o << "besides the weights a generated token moves " << fmt("%.3f", static_cast<double>(r.state_bytes_per_token) / 1e9)
          << " GB of recurrent state (read and written) and " << fmt("%.1f", static_cast<double>(r.kv_bytes_per_position) / 1024.0)
          << " KiB of KV per position of its history (" << fmt("%.3f", static_cast<double>(r.kv_bytes_per_position) * 32768.0 / 1e9)
          << " GB at 32768); \"all bytes\" below counts them\n";
        if (r.vram) {
            const auto& v = *r.vram;
            const double planned = static_cast<double>(v.planned);
            o << "VRAM plan (" << v.budget_source << " " << mib(v.budget) << " MiB, context " << v.context
              << "): planned " << mib(v.planned) << " MiB allocated, peak " << mib(v.plan_peak) << " MiB | measured "
              << mib(v.measured) << " MiB (" << fmt("%+.2f", 100.0 * (static_cast<double>(v.measured) - planned) / planned)
              << " %), after the benchmark " << mib(v.measured_after) << " MiB\n";
        }
        if (r.split) {
            const auto& sp = *r.split;
            o << "row split: " << fmt("%.3f", static_cast<double>(sp.cpu_bytes_per_token) / 1e9)
              << " GB of weight rows on the CPU, " << fmt("%.3f", static_cast<double>(sp.gpu_bytes_per_token) / 1e9)
              << " GB on the GPU per token (" << fmt("%.3f", static_cast<double>(sp.gpu_host_bytes_per_token) / 1e9)
              << " GB of them copied from host memory over PCIe) | per step (" << sp.steps << " steps): " << sp.threads
              << " CPU threads busy " << fmt("%.1f", sp.thread_ms_per_step) << " thread-ms ("
              << fmt("%.1f", sp.thread_ms_per_step > 0 ? static_cast<double>(sp.cpu_bytes_per_token) / sp.thread_ms_per_step / 1e6 : 0.0)
              << " GB/s per thread), CPU parts start to end " << fmt("%.2f", sp.cpu_ms_per_step)
              << " ms, "
              << (sp.waits_timed ? "device waited " + fmt("%.2f", sp.wait_ms_per_step) + " ms"
                                 : std::string("handed over by words in host memory (the device's waits are not timed)"))
              << ", " << fmt("%.1f", sp.bus_bytes_per_step / 1024.0) << " KiB over the bus\n";
            o << "bus read share: " << fmt("%.2f", sp.bus_read_share)
              << (sp.bus_share_auto.empty() ? std::string(" (set)") : " (auto: " + sp.bus_share_auto + ")") << "\n";
        }
        o << "\n";
        // "all bytes": weights + KV history + recurrent state (bytes_moved_per_token); at depth 0 the
        // weights are nearly all of it, at 32K the 27B's KV adds ~14 %.
        o << "| test | depth | t/s | ± | weight GB/s | of read ceiling | all bytes GB/s | of read ceiling | TTFT ms |\n";
        o << "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n";
        for (const auto& row : r.rows) {
            const bool tg = row.is_tg();
            const double gbs = static_cast<double>(r.weight_bytes_per_token) * row.mean_tok_per_s() / 1e9;
            const double all_gbs = bytes_moved_per_token(r, row) * row.mean_tok_per_s() / 1e9;
            o << "| " << row.test << " | " << row.depth << " | " << fmt("%.2f", row.mean_tok_per_s()) << " | "
              << fmt("%.2f", row.stddev_tok_per_s()) << " | " << (tg ? rate(gbs) : "") << " | "
              << (tg && r.ceiling ? fmt("%.1f %%", 100.0 * gbs / r.ceiling->read_gbs) : "") << " | "
              << (tg ? rate(all_gbs) : "") << " | "
              << (tg && r.ceiling ? fmt("%.1f %%", 100.0 * all_gbs / r.ceiling->read_gbs) : "") << " | "
              << (tg ? "" : fmt("%.1f", row.ttft_s * 1e3)) << " |\n";
        }
        for (const auto& row : r.rows)
            if (row.is_tg() && row.mean_tok_per_s() > 0) {
                o << "\n" << row.test << " at depth " << row.depth << ": choosing the next token "
                  << (row.greedy_on_device ? "(greedy, ARGMAX on the device; the host reads it back) took "
                                           : "on the host (greedy over the logits copied back) took ")
                  << fmt("%.3f", row.select_ms) << " ms of the " << fmt("%.3f", 1e3 / row.mean_tok_per_s()) << " ms a token\n";
                break;  // one line: it does not depend on the depth
            }
    }
    if (!r.gemv.empty()) {
        o << "\n| GEMV format | shape | in x out | act | MB | µs | GB/s | of read ceiling | impl |\n";
        o << "|---|---|---|---|---:|---:|---:|---:|---|\n";
        for (const auto& g : r.gemv)
            o << "| " << g.format << " | " << g.shape << " | " << g.in << " x " << g.out << " | " << g.act << " | "
              << fmt("%.1f", static_cast<double>(g.weight_bytes) / 1e6) << " | " << fmt("%.1f", g.seconds * 1e6) << " | "
              << rate(g.gbs) << " | " << (g.fraction > 0 ? fmt("%.1f %%", 100.0 * g.fraction) : "") << " | "
              << g.impl << " |\n";
    }
    return o.str();
}

std::string to_json(const BenchReport& r) {
    nlohmann::json j;
    j["version"] = r.version;
    j["command"] = r.command;
    j["repeated_nodes"] = r.repeated_nodes;
    j["model"] = r.model;
    j["device"] = r.device;
    j["pack"] = r.pack;
    j["kv_type"] = r.kv_type;
    j["prefill_chunk"] = r.prefill_chunk;
    j["prefill_gemm_order"] = r.prefill_chunk > 1 ? (r.prefill_free_order ? "free" : "exact") : "none";
    j["weight_bytes_per_token"] = r.weight_bytes_per_token;
    j["kv_bytes_per_position"] = r.kv_bytes_per_position;
    j["state_bytes_per_token"] = r.state_bytes_per_token;
    j["session_bytes"] = r.session_bytes;
    j["load_seconds"] = r.load_seconds;
    j["upload_seconds"] = r.upload_seconds;
    j["rss_after_load_bytes"] = r.rss_after_load;
    if (r.vram)
        j["vram"] = {{"budget_source", r.vram->budget_source}, {"budget_bytes", r.vram->budget},
                     {"context", r.vram->context},           {"planned_bytes", r.vram->planned},
                     {"plan_peak_bytes", r.vram->plan_peak}, {"measured_bytes", r.vram->measured},
                     {"measured_after_bytes", r.vram->measured_after}};
    if (r.split)
        j["row_split"] = {{"cpu_bytes_per_token", r.split->cpu_bytes_per_token},
                          {"gpu_bytes_per_token", r.split->gpu_bytes_per_token},
                          {"gpu_host_bytes_per_token", r.split->gpu_host_bytes_per_token},
                          {"steps", r.split->steps},
                          {"cpu_ms_per_step", r.split->cpu_ms_per_step},
                          {"thread_ms_per_step", r.split->thread_ms_per_step},
                          {"threads", r.split->threads},
                          {"wait_ms_per_step", r.split->wait_ms_per_step},
                          {"waits_timed", r.split->waits_timed},
                          {"bus_bytes_per_step", r.split->bus_bytes_per_step},
                          {"bus_read_share", r.split->bus_read_share},
                          {"bus_share_auto", r.split->bus_share_auto}};
    if (r.ceiling)
        j["bandwidth_ceiling"] = {{"buffer_bytes", r.ceiling->buffer_bytes},
                                  {"copy_gbs", r.ceiling->copy_gbs},
                                  {"read_gbs", r.ceiling->read_gbs},
                                  {"read_impl", r.ceiling->read_impl}};
    j["tests"] = nlohmann::json::array();
    for (const auto& row : r.rows)
        j["tests"].push_back({{"test", row.test},
                              {"depth", row.depth},
                              {"tokens", row.tokens},
                              {"tok_per_s", row.tok_per_s},
                              {"mean_tok_per_s", row.mean_tok_per_s()},
                              {"stddev_tok_per_s", row.stddev_tok_per_s()},
                              {"ttft_s", row.ttft_s},
                              {"bytes_moved_per_token", row.is_tg() ? bytes_moved_per_token(r, row) : 0.0},
                              {"select_ms_per_token", row.select_ms},
                              {"greedy_on_device", row.greedy_on_device}});
    j["gemv"] = nlohmann::json::array();
    for (const auto& g : r.gemv)
        j["gemv"].push_back({{"format", g.format},
                             {"shape", g.shape},
                             {"in", g.in},
                             {"out", g.out},
                             {"act", g.act},
                             {"impl", g.impl},
                             {"weight_bytes", g.weight_bytes},
                             {"seconds", g.seconds},
                             {"gbs", g.gbs},
                             {"fraction_of_read_ceiling", g.fraction}});
    return j.dump(2) + "\n";
}

std::string to_svg(const BenchReport& r) {
    if (r.rows.empty()) return {};
    std::map<std::string, std::vector<std::pair<double, double>>> lines;  // test -> (depth, tok/s)
    double max_d = 1, max_y = 1;
    for (const auto& row : r.rows) {
        lines[row.test].emplace_back(static_cast<double>(row.depth), row.mean_tok_per_s());
        max_d = std::max(max_d, static_cast<double>(row.depth));
        max_y = std::max(max_y, row.mean_tok_per_s());
    }
    const double W = 640, H = 400, L = 70, R = 20, T = 40, B = 50;
    auto px = [&](double d) { return L + (W - L - R) * d / max_d; };
    auto py = [&](double y) { return H - B - (H - T - B) * y / (max_y * 1.1); };
    static const char* colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"};
    std::ostringstream s;
    s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
    s << "<text x=\"" << L << "\" y=\"22\" font-size=\"14\">dense-rt bench: " << r.model << " on " << r.device
      << "</text>\n";
    s << "<line x1=\"" << L << "\" y1=\"" << H - B << "\" x2=\"" << W - R << "\" y2=\"" << H - B << "\" stroke=\"black\"/>\n";
    s << "<line x1=\"" << L << "\" y1=\"" << T << "\" x2=\"" << L << "\" y2=\"" << H - B << "\" stroke=\"black\"/>\n";
    for (int i = 0; i <= 4; ++i) {
        const double y = max_y * 1.1 * i / 4, d = max_d * i / 4;
        s << "<text x=\"" << L - 6 << "\" y=\"" << py(y) + 4 << "\" text-anchor=\"end\">" << fmt("%.0f", y) << "</text>\n";
        s << "<text x=\"" << px(d) << "\" y=\"" << H - B + 16 << "\" text-anchor=\"middle\">" << fmt("%.0f", d) << "</text>\n";
    }
    s << "<text x=\"" << (L + W - R) / 2 << "\" y=\"" << H - 12 << "\" text-anchor=\"middle\">context depth (tokens)</text>\n";
    s << "<text x=\"16\" y=\"" << (T + H - B) / 2 << "\" transform=\"rotate(-90 16 " << (T + H - B) / 2
      << ")\" text-anchor=\"middle\">tokens / s</text>\n";
    int c = 0;
    for (const auto& [test, pts] : lines) {
        const char* col = colors[c % 5];
        s << "<polyline fill=\"none\" stroke=\"" << col << "\" stroke-width=\"2\" points=\"";
        for (const auto& [d, y] : pts) s << px(d) << "," << py(y) << " ";
        s << "\"/>\n";
        for (const auto& [d, y] : pts) s << "<circle cx=\"" << px(d) << "\" cy=\"" << py(y) << "\" r=\"3\" fill=\"" << col << "\"/>\n";
        s << "<text x=\"" << W - R - 80 << "\" y=\"" << T + 16 * (c + 1) << "\" fill=\"" << col << "\">" << test << "</text>\n";
        ++c;
    }
    s << "</svg>\n";
    return s.str();
}

}  // namespace dense::bench
