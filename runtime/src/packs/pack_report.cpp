// JSON layout (packs_report_json):
// {
//   "runtime_abi": "1.0",
//   "devices": [ { "index", "id", "kind", "name", "simulated", "total_memory_bytes", "free_memory_bytes",
//                  cpu: "cpu_features": [..], "logical_cores";  cuda: "compute_capability": "9.0",
//                  "sm_count", "driver_version";  "chosen_pack": name|null, "main": bool } ],
//   "main_device": "cuda:0",
//   "packs": [ { "file", "origin", "name", "version", "abi": "1.0"|null, "status", "reason",
//                "device_kind", "scores": { "<device id>": n }, "chosen_for": [device ids],
//                "types": [ {"name", "id", "block_elements", "block_bytes", "act_type"} ],
//                "ops": { "<op>": [ {"weight", "act", "device", "priority", "impl"} ] } } ],
//   "problems": [ "..." ]
// }
#include "packs/pack_report.hpp"

#include "core/units.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

namespace dense::packs {
namespace {

using Json = nlohmann::ordered_json;

std::string abi_text(const PackRecord& p) {
    return p.abi_known ? std::to_string(p.abi_major) + "." + std::to_string(p.abi_minor) : "-";
}

std::string status_text(const PackRecord& p) {
    std::string s = to_string(p.status);
    if (p.status != PackStatus::Usable && !p.reason.empty()) s += ": " + p.reason;
    return s;
}

std::string device_label(const DeviceInfo& d) {
    return d.name() + (d.simulated ? " [simulated]" : "");
}

std::string device_details(const DeviceInfo& d) {
    std::ostringstream s;
    if (d.is_cuda()) {
        s << "cc " << d.hw.cuda_cc_major << "." << d.hw.cuda_cc_minor;
        if (d.hw.cuda_sm_count > 0) s << ", " << d.hw.cuda_sm_count << " SMs";
        if (d.hw.cuda_driver_version > 0)
            s << ", driver " << d.hw.cuda_driver_version / 1000 << "." << (d.hw.cuda_driver_version % 1000) / 10;
    } else {
        s << d.hw.cpu_logical_cores << " cores";
        const std::string f = cpu_feature_names(d.hw.cpu_features);
        if (!f.empty()) s << ": " << f;
    }
    return s.str();
}

std::string memory_text(const DeviceInfo& d) {
    if (d.hw.total_memory_bytes == 0) return "?";
    std::string s = format_bytes(d.hw.total_memory_bytes);
    if (!d.simulated) s += " (" + format_bytes(d.hw.free_memory_bytes) + " free)";
    return s;
}

// "q4_k/q8_1": weight/activation, '-' where the op has none.
std::string pair_text(const OpCandidate& c) {
    return type_name(c.impl.weight_type) + "/" + type_name(c.impl.act_type);
}

// op name (with its device kind if it differs from the pack's) -> the weight/act pairs, in key order.
std::map<std::string, std::vector<std::string>> ops_summary(const PackManager& m, const PackRecord& p) {
    std::map<std::string, std::vector<std::string>> out;
    for (const OpCandidate* c : m.registry().of_pack(p.name)) {
        std::string op = op_kind_name(c->impl.op_kind);
        if (c->impl.device_kind != p.device_kind) op += " [" + device_kind_name(c->impl.device_kind) + "]";
        auto& v = out[op];
        const std::string pair = pair_text(*c);
        if (std::find(v.begin(), v.end(), pair) == v.end()) v.push_back(pair);
    }
    return out;
}

// A packs record owns its registry entries only if it is the initialised, non-skipped one of its name.
bool owns_ops(const PackManager& m, const PackRecord& p) {
    return m.find_pack(p.name) == &p;
}

class Table {
public:
    Table() = default;
    explicit Table(std::vector<std::string> header) { rows_.push_back(std::move(header)); }
    void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
    // right_from: columns at or after this index are right-aligned (numbers).
    void print(std::ostream& out, size_t right_from = SIZE_MAX) const {
        std::vector<size_t> width;
        for (const auto& r : rows_) {
            width.resize(std::max(width.size(), r.size()));
            for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
        }
        for (const auto& r : rows_) {
            std::string line = " ";
            for (size_t i = 0; i < r.size(); ++i) {
                const bool last = i + 1 == r.size();
                const std::string pad(width[i] - r[i].size(), ' ');
                line += " ";
                if (i >= right_from)
                    line += pad + r[i];
                else
                    line += last ? r[i] : r[i] + pad;
                if (!last) line += " ";
            }
            line.erase(line.find_last_not_of(' ') + 1);  // an empty last column leaves no trailing blanks
            out << line << "\n";
        }
    }

private:
    std::vector<std::vector<std::string>> rows_;
};

}  // namespace

std::string packs_report_text(const PackManager& m) {
    std::ostringstream out;
    const auto& devices = m.devices();
    const auto& packs = m.packs();
    out << "dense-rt kernel packs (runtime ABI " << DENSE_ABI_MAJOR << "." << DENSE_ABI_MINOR << ")\n\n";

    out << "Devices:\n";
    Table dev({"#", "id", "name", "memory", "details"});
    for (size_t d = 0; d < devices.size(); ++d)
        dev.add({std::to_string(d), devices[d].id(), device_label(devices[d]), memory_text(devices[d]),
                 device_details(devices[d])});
    dev.print(out);

    out << "\nPacks:\n";
    if (packs.empty()) {
        out << "  (none found)\n";
    } else {
        Table t({"name", "version", "ABI", "status", "file"});
        for (const auto& p : packs)
            t.add({p.name.empty() ? "?" : p.name, p.version.empty() ? "-" : p.version, abi_text(p), status_text(p),
                   p.file.string()});
        t.print(out);
    }

    std::vector<const PackRecord*> scored;
    for (const auto& p : packs)
        if (!p.scores.empty()) scored.push_back(&p);
    if (!scored.empty()) {
        out << "\nScores per device:\n";
        std::vector<std::string> header = {"pack"};
        for (const auto& d : devices) header.push_back(d.id());
        Table t(header);
        for (const PackRecord* p : scored) {
            std::vector<std::string> row = {p->name};
            for (size_t d = 0; d < devices.size(); ++d) row.push_back(std::to_string(p->score_on(d)));
            t.add(row);
        }
        t.print(out, 1);
    }

    out << "\nChosen pack per device:\n";
    Table chosen({"device", "pack", ""});
    for (size_t d = 0; d < devices.size(); ++d) {
        const PackRecord* p = m.chosen_pack(d);
        chosen.add(
            {devices[d].id(), p != nullptr ? p->name : "(none)", d == m.main_device_index() ? "<- main device" : ""});
    }
    chosen.print(out);

    bool any_ops = false;
    for (const auto& p : packs) {
        if (!owns_ops(m, p)) continue;
        const auto ops = ops_summary(m, p);
        if (!any_ops) out << "\nOps x types (weight/activation) per pack:\n";
        any_ops = true;
        out << "  " << p.name << " (" << device_kind_name(p.device_kind) << ", " << to_string(p.status) << ")";
        if (!p.types.empty()) {
            out << ", registers types:";
            for (const auto& t : p.types) out << " " << t.name;
        }
        out << "\n";
        if (ops.empty()) out << "    (no ops)\n";
        Table t;
        for (const auto& [op, pairs] : ops) {
            std::string list;
            for (const auto& s : pairs) list += (list.empty() ? "" : " ") + s;
            t.add({"  " + op, list});
        }
        t.print(out);
    }

    for (const auto& problem : m.problems()) out << "\nproblem: " << problem << "\n";
    return out.str();
}

std::string packs_report_json(const PackManager& m) {
    const auto& devices = m.devices();
    Json root;
    root["runtime_abi"] = std::to_string(DENSE_ABI_MAJOR) + "." + std::to_string(DENSE_ABI_MINOR);

    Json devs = Json::array();
    for (size_t d = 0; d < devices.size(); ++d) {
        const DeviceInfo& dev = devices[d];
        Json j;
        j["index"] = d;
        j["id"] = dev.id();
        j["kind"] = device_kind_name(dev.kind());
        j["name"] = dev.name();
        j["simulated"] = dev.simulated;
        j["total_memory_bytes"] = dev.hw.total_memory_bytes;
        j["free_memory_bytes"] = dev.hw.free_memory_bytes;
        if (dev.is_cuda()) {
            j["compute_capability"] = std::to_string(dev.hw.cuda_cc_major) + "." + std::to_string(dev.hw.cuda_cc_minor);
            j["sm_count"] = dev.hw.cuda_sm_count;
            j["driver_version"] = dev.hw.cuda_driver_version;
        } else {
            Json features = Json::array();
            std::istringstream names(cpu_feature_names(dev.hw.cpu_features));
            for (std::string f; names >> f;) features.push_back(f);
            j["cpu_features"] = features;
            j["logical_cores"] = dev.hw.cpu_logical_cores;
        }
        const PackRecord* chosen = m.chosen_pack(d);
        j["chosen_pack"] = chosen != nullptr ? Json(chosen->name) : Json(nullptr);
        j["main"] = d == m.main_device_index();
        devs.push_back(j);
    }
    root["devices"] = devs;
    root["main_device"] = devices.empty() ? Json(nullptr) : Json(m.main_device().id());

    Json packs = Json::array();
    for (const auto& p : m.packs()) {
        Json j;
        j["file"] = p.file.string();
        j["origin"] = p.origin;
        j["name"] = p.name;
        j["version"] = p.version;
        j["abi"] = p.abi_known ? Json(abi_text(p)) : Json(nullptr);
        j["status"] = to_string(p.status);
        j["reason"] = p.reason;
        j["device_kind"] = p.initialised() ? Json(device_kind_name(p.device_kind)) : Json(nullptr);
        Json scores = Json::object();
        for (size_t d = 0; d < p.scores.size() && d < devices.size(); ++d) scores[devices[d].id()] = p.scores[d];
        j["scores"] = scores;
        Json chosen_for = Json::array();
        for (size_t d = 0; d < devices.size(); ++d)
            if (m.chosen_pack(d) == &p) chosen_for.push_back(devices[d].id());
        j["chosen_for"] = chosen_for;
        Json types = Json::array();
        for (const auto& t : p.types)
            types.push_back({{"name", t.name},
                             {"id", t.id},
                             {"block_elements", t.block_elements},
                             {"block_bytes", t.block_bytes},
                             {"act_type", type_name(t.act_type)}});
        j["types"] = types;
        Json ops = Json::object();
        if (owns_ops(m, p)) {
            for (const OpCandidate* c : m.registry().of_pack(p.name)) {
                Json& list = ops[op_kind_name(c->impl.op_kind)];
                if (list.is_null()) list = Json::array();
                list.push_back({{"weight", type_name(c->impl.weight_type)},
                                {"act", type_name(c->impl.act_type)},
                                {"device", device_kind_name(c->impl.device_kind)},
                                {"priority", c->priority},
                                {"impl", c->impl_name}});
            }
        }
        j["ops"] = ops;
        packs.push_back(j);
    }
    root["packs"] = packs;
    root["problems"] = m.problems();
    return root.dump(2) + "\n";
}

}  // namespace dense::packs
