// `bus_read_share: auto`: which share of a row split's host rows the GPU should copy over the bus
// each token, from three rates measured on the machine at load (exec/split_rates.hpp).
//
// Why a model: the best share depends on how big the split is against the GPU's own work. A CPU
// part of a split GEMV sits on the step's critical path (the next op needs its rows: the GPU waits
// at the join), so the CPU's time adds to the step. The bus copies do not depend on the activation:
// they run beside the whole step and only bound it when they take longer than it. So per token,
// with H the host rows' bytes, s the share, G the GPU's own time, C = H / cpu rate, B = H / bus rate:
//
//     step(s) = max(G + J + (1 - s) C,  s B)      best at  s* = (G + J + C) / (C + B), clamped to [0, 1]
//
// where J is what the CPU parts' hand-overs cost whatever their rows (kHandOverMs per CPU part); at
// s = 1 no row is left to the CPU and step(1) = max(G, B).
//
// Measured on the H200 test machine (docs/perf-notes.md, session 17, 27B seed-iq4, G ~ 10 ms): at
// fixed shares 16 GiB at context 32768 (0.98 GB of host rows) decodes best at 0.8 (54-56 tok/s
// against 44 at the old fixed 0.5), 12 GiB (3.6 GB) at 0.5-0.6, 8 GiB (7.9 GB) at 0.5. With the rates
// probed at load (CPU ~63-70 GB/s alone, bus ~55, the GPU's formats ~1.78 TB/s) this model chose
// 0.75 (53.1 tok/s), 0.53 (20.1) and 0.46 (9.78 against 9.77 at 0.5, same run): each below the
// best, by more where the split has fewer bytes per CPU part. With J (session 25: 21, 64 and 128 CPU
// parts per step there) the same rates give 0.82, 0.57 and 0.52.
// A slow GPU against a fast bus (a 16 GB consumer card) has a large G and gets the whole move over
// the bus.
//
// Known limits: the CPU and the copies both read the host's DRAM, and beside each other both run
// slower than their probes alone (the copies ~44 GB/s instead of 55 on the H200 host); and a step's
// CPU parts run slower than the probe's pass (hand-overs, chunk tails). Where the CPU probe reads
// low, a large split gets more than 0.5 (8 GiB at 0.59 decoded 13 % slower than at 0.5). Measuring
// both sides side by side is the next step (branch bus-share-side-by-side, not yet run on a GPU).
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

// What one CPU part of a split costs the step besides its rows (ms): the GPU's word to the
// dispatcher, the sleeping workers waking, the last chunk's tail, the done word back. ~0.1 ms on the
// H200's host (docs/perf-notes.md: session 16 measured "~0.1 ms each" for the hand-overs of a small
// split; fitted to session 24's 16 GiB and 8 GiB splits, 24 and 128 parts, 0.09 ms).
inline constexpr double kHandOverMs = 0.1;

struct BusShareInputs {
    double host_bytes = 0;  // the split's host rows, read once per token (H)
    double gpu_bytes = 0;   // the weight bytes the GPU reads from VRAM per token
    double cpu_gbs = 0;     // the CPU workers' GEMV rate over host rows (GB/s, all threads)
    double bus_gbs = 0;     // page-locked host -> VRAM copy rate (GB/s)
    double gpu_gbs = 0;     // the GPU's GEMV rate over VRAM rows (GB/s)
    double cpu_jobs = 0;    // CPU parts per step while the CPU has rows (plan::cpu_jobs_per_step)
};

struct BusShareChoice {
    double share = 0;         // s*, in [0, 1]
    double gpu_ms = 0;        // G
    double cpu_ms = 0;        // C: all host rows on the CPU
    double bus_ms = 0;        // B: all host rows over the bus
    double handover_ms = 0;   // J: the CPU parts' hand-overs, while the CPU has rows
    double predicted_ms = 0;  // step(s*)
};

// s* for the inputs; a rate that is not positive (not measured) counts as 0 for its side: share 0
// without a bus, 1 without CPU rows' rate. No host bytes: share 0.
BusShareChoice choose_bus_share(const BusShareInputs& in);

// "0.78 (0.98 GB of host rows; bus 48.1 GB/s, CPU 45.9 GB/s, GPU GEMV 1800 GB/s, 21 CPU parts: step ~12.9
// ms, ~20.6 ms at 0.5)" for the log.
std::string describe(const BusShareChoice& c, const BusShareInputs& in);

}  // namespace dense::plan
