#include "bench/step_profile.hpp"

#include "bench/model_bench.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>

namespace dense::bench {

namespace {

// The op kind of a key string: "gemv_q(q4_k, q8_32, cuda)" -> "gemv_q".
std::string kind_of(const std::string& op) { return op.substr(0, op.find('(')); }

std::vector<ProfileGroup> sorted_groups(const std::map<std::string, ProfileGroup>& m, int steps) {
    std::vector<ProfileGroup> out;
    for (const auto& [name, g] : m) {
        ProfileGroup x = g;
        x.name = name;
        x.nodes_per_step /= steps;
        x.ms_per_step /= steps;
        x.weight_bytes_per_step /= static_cast<uint64_t>(steps);
        out.push_back(std::move(x));
    }
    std::sort(out.begin(), out.end(), [](const ProfileGroup& a, const ProfileGroup& b) {
        return a.ms_per_step != b.ms_per_step ? a.ms_per_step > b.ms_per_step : a.name < b.name;
    });
    return out;
}

void append_row(std::string& out, const ProfileGroup& g, double total_ms, double ceiling_gbs) {
    char line[512];
    const double us = g.ms_per_step * 1000.0;
    std::string bw = "";
    if (g.weight_bytes_per_step > 0 && g.ms_per_step > 0) {
        const double gbs = static_cast<double>(g.weight_bytes_per_step) / (g.ms_per_step * 1e-3) / 1e9;
        char b[64];
        if (ceiling_gbs > 0)
            std::snprintf(b, sizeof b, gbs < 10 ? "%.2f (%.1f %%)" : "%.0f (%.1f %%)", gbs, 100.0 * gbs / ceiling_gbs);
        else
            std::snprintf(b, sizeof b, gbs < 10 ? "%.2f" : "%.0f", gbs);
        bw = b;
    }
    std::snprintf(line, sizeof line, "| %s | %d | %.1f | %.1f | %.1f | %s |\n", g.name.c_str(), g.nodes_per_step, us,
                  g.nodes_per_step ? us / g.nodes_per_step : 0.0, total_ms > 0 ? 100.0 * g.ms_per_step / total_ms : 0.0,
                  bw.c_str());
    out += line;
}

// Sums node times per role ("ffn_down gemv_q(iq4_xs, q8_32, cuda)") and per op kind over steps.
struct Groups {
    std::map<std::string, ProfileGroup> roles, kinds;

    void add(const std::vector<exec::NodeTime>& nodes, StepProfile& p) {
        for (const auto& n : nodes) {
            // The op key names the weight format: layers of one role in different formats get rows of their own.
            for (auto* g : {&roles[role_of(n.label) + " | " + n.op], &kinds[kind_of(n.op)]}) {
                g->nodes_per_step += 1;
                g->ms_per_step += n.ms;
                g->weight_bytes_per_step += n.weight_bytes;
            }
            p.ms_per_step += n.ms;
            p.nodes_per_step += 1;
        }
    }
    void finish(StepProfile& p, int steps) const {
        p.ms_per_step /= steps;
        p.nodes_per_step /= steps;
        p.by_role = sorted_groups(roles, steps);
        p.by_kind = sorted_groups(kinds, steps);
    }
};

}  // namespace

std::string role_of(const std::string& label) {
    // The parts of a row split name their rows ("... rows [a, b) on the cpu"): one row per part kind.
    std::string base = label;
    if (const size_t rows = base.find(" rows ["); rows != std::string::npos) {
        const char* part = base.find(" on the cpu", rows) != std::string::npos        ? " (cpu rows)"
                           : base.find(" copied over the bus", rows) != std::string::npos ? " (bus chunks)"
                                                                                          : " (gpu rows)";
        base = base.substr(0, rows) + part;
    }
    if (base.rfind("blk.", 0) != 0) return base;
    size_t i = 4;
    while (i < base.size() && std::isdigit(static_cast<unsigned char>(base[i]))) ++i;
    if (i == 4 || i >= base.size() || (base[i] != '.' && base[i] != ' ')) return base;
    return base.substr(i + 1);
}

StepProfile profile_decode(exec::Session& session, int steps, int64_t depth) {
    StepProfile p;
    p.steps = steps;
    p.depth = depth;
    if (steps <= 0) return p;
    session.reset();
    session.skip_positions_for_bench(depth);
    session.step(0, true);  // untimed: the token to start from (and a warm cache)
    int32_t tok = greedy_next(session);
    Groups groups;
    for (int s = 0; s < steps; ++s) {
        const auto nodes = session.profile_step(tok, true);
        tok = greedy_next(session);
        groups.add(nodes, p);
    }
    groups.finish(p, steps);
    return p;
}

StepProfile profile_prefill(exec::Session& session, int steps, int64_t depth) {
    StepProfile p;
    p.steps = steps;
    p.depth = depth;
    p.tokens_per_step = session.prefill_chunk();
    if (steps <= 0) return p;
    session.reset();
    session.skip_positions_for_bench(depth);
    std::vector<int32_t> chunk(static_cast<size_t>(p.tokens_per_step));
    Groups groups;
    for (int s = 0; s < steps; ++s) {
        for (size_t i = 0; i < chunk.size(); ++i)
            chunk[i] = prompt_token(static_cast<int>(static_cast<size_t>(s) * chunk.size() + i), session.n_vocab());
        groups.add(session.profile_prefill_step(chunk), p);
    }
    groups.finish(p, steps);
    return p;
}

std::string to_markdown(const StepProfile& p, double tg_ms_per_token, double read_ceiling_gbs) {
    std::string out;
    char line[512];
    if (p.tokens_per_step > 1)
        std::snprintf(line, sizeof line, "\n## Prompt step profile (%d batched steps of %lld prompt tokens at depth %lld, node by node)\n\n",
                      p.steps, static_cast<long long>(p.tokens_per_step), static_cast<long long>(p.depth));
    else
        std::snprintf(line, sizeof line, "\n## Step profile (%d generated tokens at depth %lld, node by node)\n\n", p.steps,
                      static_cast<long long>(p.depth));
    out += line;
    std::snprintf(line, sizeof line, "%d nodes per step, %.3f ms of node time per step", p.nodes_per_step, p.ms_per_step);
    out += line;
    if (p.tokens_per_step > 1) {
        std::snprintf(line, sizeof line, " = %.3f ms per prompt token", p.ms_per_step / static_cast<double>(p.tokens_per_step));
        out += line;
        if (tg_ms_per_token > 0) {
            std::snprintf(line, sizeof line, " (the pp rows: %.3f ms per prompt token)", tg_ms_per_token);
            out += line;
        }
    } else if (tg_ms_per_token > 0) {
        std::snprintf(line, sizeof line, " (the tg rows' step: %.3f ms per token)", tg_ms_per_token);
        out += line;
    }
    out += ".\nEach node's time runs from the end of the node before to its own end (launch gaps included).\n\n";
    out += "| op kind | nodes/step | µs/step | µs/node | share | weight GB/s |\n|---|---:|---:|---:|---:|---:|\n";
    for (const auto& g : p.by_kind) append_row(out, g, p.ms_per_step, read_ceiling_gbs);
    out += "\n| node (layer number dropped) | op | nodes/step | µs/step | µs/node | share | weight GB/s |\n"
           "|---|---|---:|---:|---:|---:|---:|\n";
    for (const auto& g : p.by_role) append_row(out, g, p.ms_per_step, read_ceiling_gbs);
    return out;
}

}  // namespace dense::bench
