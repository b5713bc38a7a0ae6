// The VRAM that weight rows copied over the bus pass through (exec/bus_copies.hpp): when a row
// split gives the GPU a share of its host rows (run config `bus_read_share`), those rows are kept in
// page-locked host memory and copied, a chunk at a time, into a ring of staging slots in VRAM by a
// second stream while the step runs; the GEMV of each chunk then reads VRAM at full speed. A split
// session's batched prompt steps stream every host row through the same ring (at share 0 too).
//
// Why copies and not kernels that read host memory in place (session 8): on the H200 test machine
// the pack's GEMV kernels read page-locked host memory at 14-38 GB/s alone and ~22 GB/s in the
// model (few rows per launch, a PCIe round trip per load), while the copy engine moves 55 GB/s and
// needs no SM. The staging costs VRAM, billed as its own allocation: kBusStagingSlots x
// kBusStagingSlotBytes. Eight slots let the copies run up to seven chunks (about two layers of a
// 27B at a share of 0.5) ahead of the GEMVs that consume them, across the joins with the CPU rows.
#pragma once

#include "plan/row_split.hpp"

#include <dense/abi/dense_abi.h>

#include <cstdint>

namespace dense::plan {

inline constexpr uint32_t kBusStagingSlots = 8;
inline constexpr uint64_t kBusStagingSlotBytes = uint64_t{8} << 20;

// The ring's shape: the constants above, or DENSE_BUS_SLOTS (2-256) and DENSE_BUS_SLOT_MIB (1-1024)
// from the environment, tuning knobs for measurements that plan and session both read (so the bill
// still matches). A malformed value is dense::Error(Usage) naming the variable.
uint32_t bus_staging_slots();
uint64_t bus_staging_slot_bytes();

// The label the staging ring is allocated with (exec/session.cpp) and billed under.
inline constexpr const char* kBusStagingLabel = "bus staging";

// Bytes of the staging ring a session allocates: all slots when a row split is given and either the
// share is positive or `auto` on a GPU (the token step's copies) or the session batches its prompts (`prefill_chunk`
// as the run config asks it, < 0 the default for `kind`, above 1: each batched step streams every
// host row through the ring, at share 0 too), else 0.
uint64_t bus_staging_bytes(double bus_read_share, const Placement* split, int64_t prefill_chunk, dense_device_kind kind);

}  // namespace dense::plan
