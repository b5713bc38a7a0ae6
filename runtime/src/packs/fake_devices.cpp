// DENSE_FAKE_DEVICES: simulated CUDA device descriptions (format documented in device_probe.hpp).
#include "core/error.hpp"
#include "core/units.hpp"
#include "packs/device_probe.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>

namespace dense::packs {
namespace {

// What a simulated device claims as its driver: new enough for any pack's driver check, so a
// preview shows what the pack would score on a current machine.
constexpr uint32_t kSimulatedDriverVersion = 13000;

[[noreturn]] void bad_entry(std::string_view entry, const std::string& why) {
    throw Error(ErrorKind::Config, "DENSE_FAKE_DEVICES entry '" + std::string(entry) + "': " + why +
                                       " (expected cuda:<major>.<minor>:<memory>:<name>, e.g. "
                                       "cuda:9.0:141GiB:H200)");
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

bool parse_uint(std::string_view s, uint32_t& out) {
    if (s.empty()) return false;
    const auto* end = s.data() + s.size();
    const auto r = std::from_chars(s.data(), end, out);
    return r.ec == std::errc() && r.ptr == end;
}

DeviceInfo parse_entry(std::string_view entry, uint32_t index) {
    // kind ':' cc ':' memory ':' name (the name keeps any further ':')
    std::string_view fields[3];
    std::string_view rest = entry;
    for (auto& f : fields) {
        const auto colon = rest.find(':');
        if (colon == std::string_view::npos) bad_entry(entry, "too few ':'-separated fields");
        f = trim(rest.substr(0, colon));
        rest = rest.substr(colon + 1);
    }
    const std::string_view name = trim(rest);
    if (fields[0] != "cuda")
        bad_entry(entry, "device kind '" + std::string(fields[0]) + "' (only 'cuda' can be simulated)");
    const auto dot = fields[1].find('.');
    uint32_t cc_major = 0, cc_minor = 0;
    if (dot == std::string_view::npos || !parse_uint(fields[1].substr(0, dot), cc_major) ||
        !parse_uint(fields[1].substr(dot + 1), cc_minor) || cc_major == 0 || cc_major > 99 || cc_minor > 9)
        bad_entry(entry, "compute capability '" + std::string(fields[1]) + "' is not <major>.<minor>");
    const auto bytes = parse_byte_size(fields[2]);
    if (!bytes || *bytes == 0) bad_entry(entry, "memory size '" + std::string(fields[2]) + "' is not a byte size");
    if (name.empty()) bad_entry(entry, "empty device name");

    DeviceInfo d;
    d.simulated = true;
    d.hw = make_hw_desc(DENSE_DEVICE_CUDA, index);
    const size_t n = std::min(name.size(), sizeof d.hw.name - 1);
    std::memcpy(d.hw.name, name.data(), n);
    d.hw.cuda_cc_major = cc_major;
    d.hw.cuda_cc_minor = cc_minor;
    d.hw.cuda_driver_version = kSimulatedDriverVersion;
    d.hw.cuda_sm_count = 0;  // unknown
    d.hw.total_memory_bytes = *bytes;
    d.hw.free_memory_bytes = *bytes;
    return d;
}

}  // namespace

std::vector<DeviceInfo> parse_fake_devices(std::string_view spec, uint32_t first_index) {
    std::vector<DeviceInfo> out;
    while (true) {
        const auto comma = spec.find(',');
        const std::string_view entry = trim(spec.substr(0, comma));
        if (!entry.empty()) out.push_back(parse_entry(entry, first_index + static_cast<uint32_t>(out.size())));
        if (comma == std::string_view::npos) break;
        spec = spec.substr(comma + 1);
    }
    return out;
}

}  // namespace dense::packs
