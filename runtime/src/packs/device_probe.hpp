// What hardware this process can run on: the CPU first, then every CUDA device the driver reports,
// then simulated devices from $DENSE_FAKE_DEVICES. Packs are scored against these descriptions.
//
// CUDA devices come from the driver API, loaded at run time with dlopen("libcuda.so.1"): the core
// never links libcuda or cudart, so dense-rt runs (CPU only) on a machine without an NVIDIA driver.
// Without the library, or when cuInit fails, there are simply no CUDA devices (logged at info level).
//
// DENSE_FAKE_DEVICES (tests and `dense-rt packs` previews)
//   A comma-separated list of simulated CUDA devices, appended after the real ones:
//     DENSE_FAKE_DEVICES="cuda:12.0:16GiB:RTX 5060 Ti,cuda:9.0:141GiB:H200"
//   Each entry is  cuda:<cc major>.<cc minor>:<memory>:<name>
//     memory: a byte size as dense::parse_byte_size reads it ("16GiB", "141 GiB", "8GB" = 8e9);
//             free memory is reported equal to total memory;
//     name:   the rest of the entry (may contain ':' but not ',').
//   A simulated device reports 0 SMs and driver version 13000 (CUDA 13.0) so that packs checking the
//   driver can be previewed, is marked `simulated` everywhere it is printed, and can never run
//   anything: it exists only for scoring and selection. A malformed entry is a dense::Error (Config).
#pragma once

#include <dense/abi/dense_abi.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dense::packs {

// One device as the host sees it. `hw` is exactly what packs are scored with.
struct DeviceInfo {
    dense_hw_desc hw{};      // header filled for this runtime's ABI version
    bool simulated = false;  // from DENSE_FAKE_DEVICES: for scoring/preview only, never for running

    dense_device_kind kind() const noexcept { return hw.device_kind; }
    bool is_cuda() const noexcept { return hw.device_kind == DENSE_DEVICE_CUDA; }
    std::string name() const;  // hw.name as a string
    std::string id() const;    // "cpu", "cuda:0", ...
};

// A dense_hw_desc with its header filled for this runtime (the host is the writer).
dense_hw_desc make_hw_desc(dense_device_kind kind, uint32_t index);

// The CPU this process runs on: /proc/cpuinfo model name, cpuid features (DENSE_CPU_* bits, only
// those the OS also enabled), logical cores this process may use, physical and available memory.
DeviceInfo probe_cpu();

// Every CUDA device the driver reports, ordinals 0..n-1. Empty without a driver. May create (and
// releases again) each device's primary context to read its free memory.
std::vector<DeviceInfo> probe_cuda_devices();

// Parses a DENSE_FAKE_DEVICES value. The devices get ordinals first_index, first_index+1, ...
// Throws dense::Error (Config) naming the entry on malformed input.
std::vector<DeviceInfo> parse_fake_devices(std::string_view spec, uint32_t first_index);

struct ProbeOptions {
    bool real_cuda = true;      // ask the CUDA driver
    bool fake_from_env = true;  // $DENSE_FAKE_DEVICES, when set, replaces the real CUDA devices
};

// CPU, then the CUDA devices: the real ones, or the simulated ones of $DENSE_FAKE_DEVICES instead
// (index 0 is always the CPU).
std::vector<DeviceInfo> probe_devices(const ProbeOptions& options = {});

// "sse4.2 avx avx2 fma ..." for DENSE_CPU_* bits ("" for none).
std::string cpu_feature_names(uint64_t features);

}  // namespace dense::packs
