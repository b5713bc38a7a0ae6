#include "packs/device_probe.hpp"

#include <spdlog/spdlog.h>

#include <array>
#include <cstdlib>
#include <cstring>

namespace dense::packs {

std::string DeviceInfo::name() const {
    return std::string(hw.name, strnlen(hw.name, sizeof hw.name));
}

std::string DeviceInfo::id() const {
    if (hw.device_kind == DENSE_DEVICE_CPU) return "cpu";
    if (hw.device_kind == DENSE_DEVICE_CUDA) return "cuda:" + std::to_string(hw.device_index);
    return "device" + std::to_string(hw.device_kind) + ":" + std::to_string(hw.device_index);
}

dense_hw_desc make_hw_desc(dense_device_kind kind, uint32_t index) {
    dense_hw_desc hw{};
    hw.hdr.abi_major = static_cast<uint16_t>(DENSE_ABI_MAJOR);
    hw.hdr.abi_minor = static_cast<uint16_t>(DENSE_ABI_MINOR);
    hw.hdr.struct_size = static_cast<uint32_t>(sizeof(dense_hw_desc));
    hw.device_kind = kind;
    hw.device_index = index;
    return hw;
}

std::vector<DeviceInfo> probe_devices(const ProbeOptions& options) {
    std::vector<DeviceInfo> devices;
    devices.push_back(probe_cpu());
    // Simulated GPUs replace the real ones: a preview ("which pack would run on an RTX 5060 Ti?")
    // must give the same answer on every machine, with or without a GPU of its own.
    const char* spec = options.fake_from_env ? std::getenv("DENSE_FAKE_DEVICES") : nullptr;
    const bool simulate = spec != nullptr && *spec != '\0';
    if (options.real_cuda && !simulate)
        for (auto& d : probe_cuda_devices()) devices.push_back(std::move(d));
    if (simulate) {
        for (auto& d : parse_fake_devices(spec, 0)) {
            spdlog::info("simulated device {}: {} (from DENSE_FAKE_DEVICES; real GPUs are not probed)", d.id(), d.name());
            devices.push_back(std::move(d));
        }
    }
    return devices;
}

std::string cpu_feature_names(uint64_t features) {
    struct Named {
        uint64_t bit;
        const char* name;
    };
    static constexpr std::array<Named, 11> kNames = {{{DENSE_CPU_SSE42, "sse4.2"},
                                                      {DENSE_CPU_AVX, "avx"},
                                                      {DENSE_CPU_AVX2, "avx2"},
                                                      {DENSE_CPU_FMA, "fma"},
                                                      {DENSE_CPU_F16C, "f16c"},
                                                      {DENSE_CPU_AVX512F, "avx512f"},
                                                      {DENSE_CPU_AVX512BW, "avx512bw"},
                                                      {DENSE_CPU_AVX512VL, "avx512vl"},
                                                      {DENSE_CPU_AVX512VNNI, "avx512vnni"},
                                                      {DENSE_CPU_AVXVNNI, "avxvnni"},
                                                      {DENSE_CPU_AVX512BF16, "avx512bf16"}}};
    std::string out;
    for (const auto& n : kNames) {
        if ((features & n.bit) == 0) continue;
        if (!out.empty()) out += ' ';
        out += n.name;
    }
    return out;
}

}  // namespace dense::packs
