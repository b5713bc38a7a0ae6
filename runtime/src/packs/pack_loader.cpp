#include "packs/pack_loader.hpp"

#include "core/error.hpp"
#include "packs/abi_struct_copy.hpp"
#include "packs/pack_discovery.hpp"
#include "packs/pack_library.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace dense::packs {
namespace {

bool denied(const PackPolicy& policy, const std::string& name) {
    return !name.empty() && std::find(policy.deny.begin(), policy.deny.end(), name) != policy.deny.end();
}

const PackRecord* loaded_named(const std::vector<PackRecord>& records, const std::string& name) {
    for (const auto& r : records)
        if (r.initialised() && r.status != PackStatus::Skipped && r.name == name) return &r;
    return nullptr;
}

PackRecord refuse(PackRecord r, const std::string& reason) {
    spdlog::warn("pack {} refused: {}", r.file.string(), reason);
    r.status = PackStatus::Refused;
    r.reason = reason;
    return r;
}

PackRecord skip(PackRecord r, const std::string& reason) {
    spdlog::info("pack {} skipped: {}", r.file.string(), reason);
    r.status = PackStatus::Skipped;
    r.reason = reason;
    return r;
}

PackRecord load_one(const PackFile& file, const PackPolicy& policy, const std::vector<DeviceInfo>& devices,
                    const std::vector<PackRecord>& earlier, OpRegistry& registry) {
    PackRecord r;
    r.file = file.path;
    r.origin = file.origin;
    r.name = file.file_name;
    if (!file.problem.empty()) return refuse(std::move(r), file.problem);
    if (denied(policy, r.name)) return skip(std::move(r), "denied by policy");
    if (const PackRecord* first = loaded_named(earlier, r.name))
        return skip(std::move(r), "shadowed by " + first->file.string() + " (same pack name, found first)");

    const PackLibrary& lib = open_pack_library(file.path, file.file_name);
    r.abi_known = lib.abi_known;
    r.abi_major = DENSE_ABI_VERSION_MAJOR(lib.abi_version);
    r.abi_minor = DENSE_ABI_VERSION_MINOR(lib.abi_version);
    if (!lib.refusal.empty()) return refuse(std::move(r), lib.refusal);

    r.name = lib.name;
    r.version = lib.version;
    r.pack = lib.pack;
    r.info = lib.info;
    r.device_kind = lib.info.device_kind;
    for (const auto& t : lib.types) r.types.push_back(t.type);
    if (denied(policy, r.name)) return skip(std::move(r), "denied by policy");
    if (const PackRecord* first = loaded_named(earlier, r.name))
        return skip(std::move(r), "shadowed by " + first->file.string() + " (same pack name, found first)");

    bool usable = false;
    for (const auto& d : devices) {
        const uint32_t s = score_pack(lib, d.hw);
        r.scores.push_back(s);
        if (s > 0 && d.kind() == r.device_kind) usable = true;
    }
    for (const auto& op : lib.ops) {
        try {
            registry.add(r.name, op);  // validated when the pack registered it; this is the defence
        } catch (const Error& e) {
            spdlog::warn("pack {}: op not registered: {}", r.file.string(), e.what());
        }
    }

    if (usable) {
        r.status = PackStatus::Usable;
        spdlog::info("pack {} {} (ABI {}.{}) from {}: usable", r.name, r.version, r.abi_major, r.abi_minor,
                     r.file.string());
    } else {
        r.status = PackStatus::NotUsableHere;
        r.reason = "scores 0 on every " + device_kind_name(r.device_kind) + " device here";
        spdlog::info("pack {} {} (ABI {}.{}) from {}: not usable here ({})", r.name, r.version, r.abi_major,
                     r.abi_minor, r.file.string(), r.reason);
    }
    return r;
}

}  // namespace

const char* to_string(PackStatus status) noexcept {
    switch (status) {
        case PackStatus::Usable:
            return "usable";
        case PackStatus::NotUsableHere:
            return "not usable here";
        case PackStatus::Refused:
            return "refused";
        case PackStatus::Skipped:
            return "skipped";
    }
    return "?";
}

std::optional<dense_device_api> PackRecord::device_api() const {
    if (pack == nullptr || info.device == nullptr) return std::nullopt;
    // Checked when the pack was initialised; the copy keeps the host from reading past its size.
    dense_device_api api = copy_pack_struct(*info.device);
    api.hdr.struct_size = std::min<uint32_t>(info.device->hdr.struct_size, static_cast<uint32_t>(sizeof api));
    return api;
}

std::vector<PackRecord> load_packs(const PackPolicy& policy, const std::vector<DeviceInfo>& devices,
                                   OpRegistry& registry) {
    std::vector<PackRecord> records;
    for (const auto& file : discover_pack_files(policy))
        records.push_back(load_one(file, policy, devices, records, registry));
    if (records.empty()) spdlog::info("no kernel packs found");
    return records;
}

}  // namespace dense::packs
