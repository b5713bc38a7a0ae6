// The GPU's share of a row split's host rows (plan/row_split.hpp): rows that do not fit in VRAM are
// read from host memory either by the CPU workers (exec/host_nodes.hpp) or by the GPU itself, over
// PCIe, from page-locked host memory mapped into the device's address space (a copy of those rows,
// made at load; exec/device_memory.hpp alloc_host_mapped). Both run at once, so they add up: on the
// H200 test machine 15 CPU threads read ~90 GB/s and the GPU ~48 GB/s over the bus beside them
// (experiments/host_rows.cu, docs/perf-notes.md session 8), while the CPU's GEMV kernels alone reach
// 45-56 GB/s.
//
// Per split weight the rows are then laid out as
//   [0, device_rows)                          in the GPU arena
//   [device_rows, device_rows + bus_rows)     in pinned host memory, read by a GPU GEMV over the bus
//   [device_rows + bus_rows, rows)            in the file mapping, read by the CPU
// with bus_rows a multiple of plan::kSplitRowTile (a warp's 8 rows never straddle two sources).
//
// Why a copy and not the file mapping itself registered with the driver (cudaHostRegister): a
// read-only registration of a 3 GiB file mapping worked in isolation on the H200 machine, but in the
// runtime (a 15.5 GB MAP_PRIVATE mapping, partly released after the upload) it spun a core for
// minutes without returning (session 8). The copy costs host memory (the bus rows' bytes, pinned) and
// is proven at 37 GB/s for the pack's GEMV kernels.
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
    // of mapped page-locked host memory from `memory` (each tensor's rows 256-byte aligned), then
    // releases the copied rows' whole pages of the file mapping from this process (and from the page
    // cache when `drop_page_cache`): nothing reads them there again, and the process would otherwise
    // hold them twice (measured on the H200: RSS 6.8 GB instead of ~3.5 for 3.28 GB of bus rows).
    // Throws dense::Error(Device) when the device cannot read host memory or the allocation fails.
    BusRows(DeviceMemory& memory, const std::vector<const gguf::TensorInfo*>& tensors,
            const std::function<int64_t(const gguf::TensorInfo*)>& first_row,
            const std::function<int64_t(const gguf::TensorInfo*)>& rows_of, bool drop_page_cache = true);

    // Where the device reads the first bus row of `t` (dense::Error(Internal) for a tensor without).
    const void* device_rows(const gguf::TensorInfo* t) const;
    // Where the host holds the same bytes (tests compare them with the mapping).
    const void* host_rows(const gguf::TensorInfo* t) const;
    uint64_t bus_bytes() const noexcept { return bus_bytes_; }        // bytes of the rows themselves
    uint64_t pinned_bytes() const noexcept { return pinned_bytes_; }  // with the alignment padding

private:
    struct Where {
        const std::byte* host;
        const std::byte* device;
    };
    const Where& where(const gguf::TensorInfo* t) const;

    std::map<const gguf::TensorInfo*, Where> where_;
    uint64_t bus_bytes_ = 0, pinned_bytes_ = 0;
};

}  // namespace dense::exec
