// How well a CUDA pack built for one compute capability fits a device. Pure arithmetic on the
// host's dense_hw_desc: scoring must never touch the CUDA runtime (no context, no driver call).
#pragma once

#include <dense/abi/dense_abi.h>

#include <cstdint>

namespace dense::cuda {

inline constexpr uint32_t kScoreExactCubin = 100;  // cubin built for exactly this compute capability
inline constexpr uint32_t kScoreFamilyCubin = 60;  // same major, newer minor: the cubin still runs
inline constexpr uint32_t kScorePtxJit = 20;       // newer arch: the driver JIT-compiles the embedded PTX

// target_*: the capability the pack was built for; runtime_version: CUDART_VERSION it links
// (e.g. 13000). The driver must be at least the runtime's major version, or the first runtime call
// fails with cudaErrorInsufficientDriver.
constexpr uint32_t score_for_target(const dense_hw_desc& hw, uint32_t target_major, uint32_t target_minor,
                                    uint32_t runtime_version) noexcept {
    if (hw.device_kind != DENSE_DEVICE_CUDA) return 0;
    if (hw.cuda_driver_version / 1000 < runtime_version / 1000) return 0;
    const uint32_t major = hw.cuda_cc_major;
    const uint32_t minor = hw.cuda_cc_minor;
    if (major == target_major && minor == target_minor) return kScoreExactCubin;
    if (major == target_major && minor > target_minor) return kScoreFamilyCubin;
    if (major > target_major) return kScorePtxJit;
    return 0;  // older than the target: neither the cubin nor the PTX can run
}

}  // namespace dense::cuda
