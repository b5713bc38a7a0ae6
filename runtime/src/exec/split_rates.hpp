// The three rates a split session's `bus_read_share: auto` is chosen from (plan/bus_share.hpp),
// measured at load on this machine, before the bus rows are laid out:
//   - bus: page-locked host memory -> VRAM, a 32 MiB buffer copied into the staging ring;
//   - GPU: the device pack's GEMV over the VRAM rows of one weight per format;
//   - CPU: the CPU pack's GEMV over up to 64 MiB of that weight's host rows, read from the file
//     mapping in row chunks on the session's workers, as the split's CPU parts run.
// Each is the best of rounds that go on until they settle (settled_timing.hpp: rounds of 3 runs on
// the device, of 1 on the CPU); the device probes start after 200 ms of warm-up, all of them back to
// back, because an idle GPU's first milliseconds run at a fraction of its rates. About 0.25 s of load.
// The CPU's probe weight is the split weight with the most host rows (the format the CPU reads most of).
// The activation is zeros: a timing probe, the kernels do the same work on any input (and zeros keep
// the CPU's float units clear of denormals).
#pragma once

#include "exec/cpu_workers.hpp"
#include "exec/device_memory.hpp"
#include "gguf/gguf_file.hpp"
#include "packs/pack_manager.hpp"

#include <cstdint>
#include <vector>

namespace dense::exec {

struct SplitRates {
    double bus_gbs = 0;  // 0: not measured (the device cannot copy beside the step or time)
    double cpu_gbs = 0;
    double gpu_gbs = 0;
};

// One weight the probe reads: for the CPU rate the rows past n_device_rows (its host rows, from
// the file mapping), for the GPU rate the VRAM prefix.
struct ProbeWeight {
    const gguf::TensorInfo* tensor = nullptr;
    const void* device_rows = nullptr;  // its VRAM prefix, rows [0, n_device_rows)
    int64_t n_device_rows = 0;
    dense_type_id act = DENSE_TYPE_NONE;  // the activation format its GEMV reads
    uint64_t format_bytes = 0;  // GPU probes: the VRAM bytes per token of its format, the rate's weight
};

// `scratch` is device memory of `scratch_bytes` (the staging ring, not yet in use): the GPU probe's
// activation, output and workspace, and the bus probe's destination. Throws dense::Error(Pack) when
// no pack has the GEMV, Device when the device fails.
// `host` must have host rows. `vram`: one weight per format in VRAM (the largest of it); gpu_gbs is
// their rates averaged as the step spends its time, sum(format_bytes) / sum(format_bytes / rate).
// None: no GPU rate. (One weight alone is not the step's rate: on the H200 an IQ4_XS GEMV runs at
// ~1.6 TB/s, a Q4_K one at ~2.3, the LM head's Q6_K at ~2.6.)
SplitRates measure_split_rates(DeviceMemory& memory, CpuWorkers& workers, const packs::PackManager& packs,
                               size_t device, const ProbeWeight& host, const std::vector<ProbeWeight>& vram,
                               void* scratch, uint64_t scratch_bytes);

}  // namespace dense::exec
