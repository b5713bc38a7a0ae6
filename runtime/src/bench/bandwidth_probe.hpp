// The memory-bandwidth ceiling of a device, measured in the same run as the benchmarks it judges:
//   copy: a large device-to-device copy (bytes read + bytes written per second, as bandwidth tests
//         and the peer's figures count it);
//   read: a pure-read kernel (the pack's CHECK_FINITE over a large F32 buffer: every byte read once,
//         one status word written) — the ceiling a GEMV, which only reads its weights, can reach.
// Buffers are far larger than the L2 cache, so both measure DRAM.
#pragma once

#include "exec/device_memory.hpp"
#include "packs/pack_manager.hpp"

#include <functional>
#include <memory>
#include <string>

namespace dense::bench {

using MemoryFactory = std::function<std::unique_ptr<exec::DeviceMemory>()>;

struct BandwidthCeiling {
    uint64_t buffer_bytes = 0;
    double copy_gbs = 0;       // (read + write) GB/s, best of the repetitions
    double read_gbs = 0;       // GB/s of the pure-read kernel, best of the repetitions
    std::string read_impl;     // which op impl served as the read kernel
};

BandwidthCeiling measure_bandwidth(const packs::PackManager& packs, size_t device, const MemoryFactory& memory,
                                   uint64_t buffer_bytes, int reps);

}  // namespace dense::bench
