// `bus_read_share: auto`: which share of a row split's host rows the GPU should copy over the bus
// each token, from three rates measured on the machine at load (exec/split_rates.hpp).
//
// Why a model: the best share depends on how big the split is against the GPU's own work. A CPU
// part of a split GEMV sits on the step's critical path (the next op needs its rows: the GPU waits
// at the join), so the CPU's time adds to the step. The bus copies do not depend on the activation:
// they run beside the whole step and only bound it when they take longer than it. Both read the
// host's DRAM, so while the CPU rows run each side gets less than alone. Per token, with H the host
// rows' bytes, s the share, G the GPU's own time:
//
//     CPU phase   P(s) = (1 - s) H / c'        (c' the CPU's rate beside the copies)
//     step(s)     = max(G + P(s),  bus(s))     (bus(s): s H copied at b' during P(s), at b after)
//
// with b, b' the bus's rate alone and beside the CPU, all measured at load (exec/split_rates.hpp).
// choose_bus_share takes the share (in steps of 0.01) with the shortest predicted step. Measured on
// the H200 test machine (docs/perf-notes.md, session 17: 27B seed-iq4, G ~ 10 ms, CPU ~45-75 GB/s,
// bus ~55 GB/s alone): 16 GiB at context 32768 moves 0.98 GB and decodes best at 0.8 (55 tok/s
// against 44 at the old fixed 0.5), 12 GiB (3.6 GB) at 0.5-0.6, 8 GiB (7.9 GB) at 0.5 (0.59-0.67:
// -13-16 %, the copies slow down beside the CPU). A slow GPU against a fast bus (a 16 GB consumer
// card) has a large G and gets the whole move over the bus. Not modelled: the hand-overs and chunk
// tails that make a step's CPU parts slower than the probe's pass.
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

struct BusShareInputs {
    double host_bytes = 0;  // the split's host rows, read once per token (H)
    double gpu_bytes = 0;   // the weight bytes the GPU reads from VRAM per token
    double cpu_gbs = 0;     // the CPU workers' GEMV rate over host rows, alone (GB/s, all threads)
    double bus_gbs = 0;     // page-locked host -> VRAM copy rate, alone (GB/s)
    double gpu_gbs = 0;     // the GPU's GEMV rate over VRAM rows (GB/s)
    double cpu_beside_bus_gbs = 0;  // the two side by side (0: not measured, the rate alone is used)
    double bus_beside_cpu_gbs = 0;
};

struct BusShareChoice {
    double share = 0;         // in [0, 1]
    double gpu_ms = 0;        // G, the GPU's own time
    double cpu_ms = 0;        // all host rows on the CPU alone
    double bus_ms = 0;        // all host rows over the bus alone
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
