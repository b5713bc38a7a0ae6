// The GPU's share of a row split's host rows (plan/row_split.hpp): rows that do not fit in VRAM are
// read from host memory either by the CPU workers (exec/host_nodes.hpp) or by the GPU, which gets
// them by copy over PCIe while the step runs (exec/bus_copies.hpp, plan/bus_staging.hpp). Both run
// at once, so they add up: on the H200 test machine 15 CPU threads read ~90 GB/s and the copy
// engine ~50 GB/s beside them (experiments/host_rows.cu, docs/perf-notes.md sessions 8 and 9),
// while the CPU's GEMV kernels alone reach 45-56 GB/s.
//
// Per split weight the rows are then laid out as
//   [0, device_rows)                          in the GPU arena
//   [device_rows, device_rows + bus_rows)     in page-locked host memory, copied to VRAM each token
//   [device_rows + bus_rows, rows)            in the file mapping, read by the CPU
// with bus_rows a multiple of plan::kSplitRowTile (a warp's 8 rows never straddle two sources).
//
// Why a page-locked copy and not the file mapping itself registered with the driver
// (cudaHostRegister): copies from pageable memory are neither asynchronous nor capturable into the
// step's device graph, and a read-only registration of the runtime's 15.5 GB MAP_PRIVATE mapping
// spun a core for minutes without returning on the H200 machine (session 8; llama.cpp turned its
// own pinning of mmap'ed models off by default too, PR #6206). The copy costs host memory: the bus
// rows' bytes, pinned, while the copied rows' file pages are released.
#pragma once

#include "exec/device_memory.hpp"
#include "gguf/gguf_types.hpp"
#include "plan/row_split.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <vector>

namespace dense::exec {

// How many of a split weight's host rows (`host_rows` = rows past its GPU prefix) the GPU reads over
// the bus at `share` (0..1): share x host_rows rounded down to kSplitRowTile, all of them when
// fewer than 16 would be left to the CPU (a chunk that small costs more to hand out than to compute);
// none when the share is less than one tile.
int64_t bus_rows_for(int64_t host_rows, double share);

class BusRows {
public:
    // Copies every tensor's bus rows, `rows_of(t)` rows starting at row `first_row(t)`, into one block
    // of page-locked host memory from `memory` (each tensor's rows 256-byte aligned), then
    // releases the copied rows' whole pages of the file mapping from this process (and from the page
    // cache when `drop_page_cache`): nothing reads them there again, and the process would otherwise
    // hold them twice (measured on the H200: RSS 6.8 GB instead of ~3.5 for 3.28 GB of bus rows).
    // Throws dense::Error(Device) when the device cannot copy beside the step (a pack before ABI 1.6)
    // or the allocation fails.
    BusRows(DeviceMemory& memory, const std::vector<const gguf::TensorInfo*>& tensors,
            const std::function<int64_t(const gguf::TensorInfo*)>& first_row,
            const std::function<int64_t(const gguf::TensorInfo*)>& rows_of, bool drop_page_cache = true);

    // Where the copy of the first bus row of `t` lies (dense::Error(Internal) for a tensor without).
    const void* host_rows(const gguf::TensorInfo* t) const;
    uint64_t bus_bytes() const noexcept { return bus_bytes_; }        // bytes of the rows themselves
    uint64_t pinned_bytes() const noexcept { return pinned_bytes_; }  // with the alignment padding

private:
    std::map<const gguf::TensorInfo*, const std::byte*> where_;
    uint64_t bus_bytes_ = 0, pinned_bytes_ = 0;
};

}  // namespace dense::exec
