#include "plan/plan_report.hpp"

#include "core/type_table.hpp"
#include "core/units.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>

namespace dense::plan {

namespace {

std::string grouped(uint64_t n) {  // 56123392 -> "56,123,392"
    std::string digits = std::to_string(n), out;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return out;
}

double mib(uint64_t bytes) {
    return static_cast<double>(bytes) / 1048576.0;
}

std::string kv_name(dense_type_id id) {
    const TypeInfo* t = global_type_table().find(id);
    return t ? t->name : "?";
}

std::string row(const std::string& item, const std::string& kind, const std::string& count, uint64_t bytes,
                const std::string& detail) {
    char buf[512];
    std::snprintf(buf, sizeof buf, "  %-30s %-15s %-12s %16s %11.2f  %s\n", item.c_str(), kind.c_str(), count.c_str(),
                  grouped(bytes).c_str(), mib(bytes), detail.c_str());
    return buf;
}

std::string decision(const PlanReport& r) {
    if (!r.budget || !r.verdict)
        return "placement cpu: everything runs on the CPU; weights are read from the file mapping, nothing is "
               "placed on a GPU";
    return decision_text(r.bill, *r.budget, *r.verdict);
}

}  // namespace

std::string to_text(const PlanReport& r) {
    const VramBill& b = r.bill;
    std::string out = (b.device_kind == DENSE_DEVICE_CPU ? "Memory plan for " : "VRAM plan for ") + r.model + " on " +
                      b.device + ": context " + std::to_string(b.n_ctx) + " tokens, KV " + kv_name(b.kv_type) + "\n";
    char head[256];
    std::snprintf(head, sizeof head, "  %-30s %-15s %-12s %16s %11s  %s\n", "item", "layer kind", "count", "bytes",
                  "MiB", "detail");
    out += head;
    for (const auto& l : b.lines)
        out += row(title(l.item), l.layer_kind, l.unit.empty() ? "" : std::to_string(l.count) + " " + l.unit, l.bytes,
                   l.detail);
    out += "  " + std::string(100, '-') + "\n";
    out += row("peak", "", "", b.peak(), "allocated " + grouped(b.allocated()) + " + reserve " + grouped(b.reserve));
    if (b.kv_bytes_per_token > 0)
        out += "  KV cache per token (all full-attention layers): " + grouped(b.kv_bytes_per_token) + " bytes\n";
    if (r.budget) out += row("budget", "", "", r.budget->bytes, r.budget->source);
    out += "decision: " + decision(r) + "\n";
    if (r.verdict) {
        const Verdict& v = *r.verdict;
        if (v.max_context) {
            if (*v.max_context == 0)
                out += "max context at this budget: none; the weights and fixed buffers alone do not fit\n";
            else
                out += "max context at this budget: " + std::to_string(*v.max_context) +
                       (v.max_context_at_limit ? "+" : "") + " tokens (KV " + kv_name(b.kv_type) +
                       ", all weights on the GPU" +
                       (v.max_context_at_limit ? "; the search stops at the model's trained context" : "") + ")\n";
        }
        if (!v.fits) {
            if (v.split_can_fit)
                out += "to keep " + std::to_string(b.n_ctx) + " tokens, " + grouped(v.bytes_to_cpu) + " bytes (" +
                       format_bytes(v.bytes_to_cpu) + ") of weights would have to move to the CPU\n";
            else
                out += "even with every weight on the CPU, the KV cache, state and buffers (" +
                       format_bytes(b.peak() - b.weight_bytes) + ") exceed the budget\n";
        }
    }
    if (b.cpu_read_bytes > 0)
        out += "CPU reads per token (row-split suffix rows, from the file mapping): " + grouped(b.cpu_read_bytes) +
               " bytes (" + format_bytes(b.cpu_read_bytes) + ")\n";
    if (r.split) {
        const auto& s = *r.split;
        if (!s.host_tables.empty()) {
            std::string names;
            for (const auto& n : s.host_tables) names += (names.empty() ? "" : ", ") + n;
            out += "host tables it would use: " + names + ", " + grouped(s.host_table_bytes) + " bytes (" +
                   format_bytes(s.host_table_bytes) +
                   ") in page-locked host memory; the GPU reads one row of each per token over the bus\n";
        }
        out += "row split it would use (GPU keeps each matrix's first rows, the CPU reads the rest from the file; "
               "split points on 8-row tiles):\n";
        for (const auto& k : s.kinds) {
            char line[256];
            std::snprintf(line, sizeof line, "  %-16s %4lld of %4lld tensors split %16s bytes %11.2f MiB to the CPU\n",
                          k.role.c_str(), static_cast<long long>(k.tensors_split), static_cast<long long>(k.tensors),
                          grouped(k.cpu_bytes).c_str(), mib(k.cpu_bytes));
            out += line;
        }
        out += "  with it: peak " + grouped(s.peak) + " bytes (" + format_bytes(s.peak) + (s.bus_staging > 0 ? ", " + format_bytes(s.bus_staging) + " of it the bus staging" : std::string()) + "), " +
               (s.fits ? "fits" : "still over") + " the budget; the CPU reads " + grouped(s.cpu_read_bytes) +
               " bytes per token (" +
               (s.fits ? "--allow-cpu-split accepts it; a run with `placement: auto` uses it" : "no split fits") + ")\n";
    }
    for (const auto& n : b.notes) out += "note: " + n + "\n";
    return out;
}

std::string to_json(const PlanReport& r) {
    const VramBill& b = r.bill;
    nlohmann::ordered_json j;
    j["model"] = r.model;
    j["device"] = b.device;
    j["device_kind"] = b.device_kind == DENSE_DEVICE_CPU ? "cpu" : "cuda";
    j["context"] = b.n_ctx;
    j["kv_type"] = kv_name(b.kv_type);
    j["prefill_chunk"] = r.prefill_chunk;
    j["lines"] = nlohmann::ordered_json::array();
    for (const auto& l : b.lines)
        j["lines"].push_back({{"item", to_string(l.item)},
                              {"layer_kind", l.layer_kind},
                              {"bytes", l.bytes},
                              {"mib", mib(l.bytes)},
                              {"count", l.count},
                              {"unit", l.unit},
                              {"detail", l.detail}});
    j["allocations"] = nlohmann::ordered_json::array();
    for (const auto& a : b.allocations) j["allocations"].push_back({{"label", a.label}, {"bytes", a.bytes}});
    j["allocated_bytes"] = b.allocated();
    j["reserve_bytes"] = b.reserve;
    j["peak_bytes"] = b.peak();
    j["weight_bytes"] = b.weight_bytes;
    j["kv_bytes_per_token"] = b.kv_bytes_per_token;
    if (r.budget)
        j["budget"] = {{"bytes", r.budget->bytes}, {"source", r.budget->source}};
    else
        j["budget"] = nullptr;
    j["fits"] = r.verdict ? nlohmann::ordered_json(r.verdict->fits) : nlohmann::ordered_json(nullptr);
    j["decision"] = decision(r);
    if (r.verdict && r.verdict->max_context) {
        j["max_context"] = *r.verdict->max_context;
        j["max_context_at_limit"] = r.verdict->max_context_at_limit;
    } else {
        j["max_context"] = nullptr;
    }
    j["bytes_to_cpu"] = r.verdict ? r.verdict->bytes_to_cpu : 0;
    j["split_can_fit"] = r.verdict ? r.verdict->split_can_fit : true;
    j["cpu_read_bytes"] = b.cpu_read_bytes;
    if (r.split) {
        nlohmann::ordered_json kinds = nlohmann::ordered_json::array();
        for (const auto& k : r.split->kinds)
            kinds.push_back({{"role", k.role},
                             {"tensors_split", k.tensors_split},
                             {"tensors", k.tensors},
                             {"cpu_bytes", k.cpu_bytes}});
        j["row_split"] = {{"kinds", kinds},
                          {"cpu_read_bytes", r.split->cpu_read_bytes},
                          {"peak_bytes", r.split->peak},
                          {"bus_staging_bytes", r.split->bus_staging},
                          {"prefill_chunk", r.split->prefill_chunk},
                          {"bus_read_share", r.split->bus_read_share < 0 ? nlohmann::json("auto") : nlohmann::json(r.split->bus_read_share)},
                          {"host_tables", r.split->host_tables},
                          {"host_table_bytes", r.split->host_table_bytes},
                          {"fits", r.split->fits}};
    } else {
        j["row_split"] = nullptr;
    }
    j["notes"] = b.notes;
    return j.dump(2) + "\n";
}

}  // namespace dense::plan
