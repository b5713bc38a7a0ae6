// `bus_read_share: auto`: which share of a row split's host rows the GPU should copy over the bus
// each token, from three rates measured on the machine at load (exec/split_rates.hpp).
//
// Why a model: the best share depends on how big the split is against the GPU's own work. A CPU
// part of a split GEMV sits on the step's critical path (the next op needs its rows: the GPU waits
// at the join), so the CPU's time adds to the step. The bus copies do not depend on the activation:
// they run beside the whole step and only bound it when they take longer than it. Both read the
// host's DRAM, so while the CPU rows run the copies get only what the CPU leaves of its read rate.
// Per token, with H the host rows' bytes, s the share, G the GPU's own time, c the CPU's rate in a
// step, b the bus's, D the DRAM's:
//
//     CPU phase   P(s) = (1 - s) H / c
//     step(s)     = max(G + P(s),  bus(s)),   bus(s) = the time to copy s H at min(b, D - c) during
//                                              P(s) and at b after it
//
// choose_bus_share takes the share (in steps of 0.01) with the shortest predicted step. Measured on
// the H200 test machine (docs/perf-notes.md, session 17: 27B seed-iq4, G ~ 10 ms, CPU probe ~60-75
// GB/s, bus ~55 GB/s): 16 GiB at context 32768 moves 0.98 GB and decodes best at 0.8 (55 tok/s
// against 44 at the old fixed 0.5), 12 GiB (3.6 GB) at 0.5-0.6, 8 GiB (7.9 GB) at 0.5 (0.59: -13 %,
// the copies slow down beside the CPU). A slow GPU against a fast bus (a 16 GB consumer card) has a
// large G and gets the whole move over the bus.
#pragma once

#include "model/run_config.hpp"

#include <cstdint>
#include <string>

namespace dense::plan {

// The run config's and SessionOptions' value for "auto" (a share is otherwise 0..1).
inline constexpr double kAutoBusShare = model::kAutoBusShare;
inline bool is_auto_bus_share(double share) noexcept { return share < 0; }

// A GPU step is more than its GEMVs (norms, attention, launch gaps): its time is the GEMVs' bytes at
// their measured rate times this. On the H200 the GEMV nodes are ~80 % of a profiled step
// (docs/perf-notes.md, sessions 5 and 17).
inline constexpr double kStepPerGemvTime = 1.25;

// The CPU's rate in a step, against its probe's (exec/split_rates.hpp: the GEMV alone on its
// workers). In the step each split GEMV's CPU part starts after a hand-over and ends with its
// slowest chunk, beside the bus copies reading the same DRAM. Measured on the H200 test machine
// (session 17), CPU parts start to end against the probe of the same run: 38.7 / 68 GB/s at 16 GiB
// (0.49 GB), 43.6 / 63-72 at 12 GiB (1.8 GB), 45.8 / 65-75 at 8 GiB (4 GB): 0.57-0.70.
inline constexpr double kCpuStepEfficiency = 0.62;

struct BusShareInputs {
    double host_bytes = 0;  // the split's host rows, read once per token (H)
    double gpu_bytes = 0;   // the weight bytes the GPU reads from VRAM per token
    double cpu_gbs = 0;     // the CPU workers' GEMV rate over host rows, probed alone (GB/s, all threads)
    double bus_gbs = 0;     // page-locked host -> VRAM copy rate (GB/s)
    double gpu_gbs = 0;     // the GPU's GEMV rate over VRAM rows (GB/s)
    double dram_gbs = 0;    // the host's DRAM read rate (GB/s; 0: not measured, no sharing modelled)
};

struct BusShareChoice {
    double share = 0;         // in [0, 1]
    double gpu_ms = 0;        // G
    double cpu_ms = 0;        // C: all host rows on the CPU (at kCpuStepEfficiency of the probe's rate)
    double bus_ms = 0;        // B: all host rows over the bus
    double predicted_ms = 0;  // step(share)
};

// step(s) in ms (infinite where a side that has work has no rate).
double predicted_step_ms(const BusShareInputs& in, double share);

// The share with the shortest predicted step: 0 without a bus rate, 1 without a CPU rate, 0 with no
// host bytes.
BusShareChoice choose_bus_share(const BusShareInputs& in);

// "0.78 (bus 48.1 GB/s, CPU 45.9 GB/s, GPU 1800 GB/s: step ~12.9 ms vs ~20.6 at 0.5)" for the log.
std::string describe(const BusShareChoice& c, const BusShareInputs& in);

}  // namespace dense::plan
