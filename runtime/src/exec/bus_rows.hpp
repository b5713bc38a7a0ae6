// The GPU's share of a row split's host rows (plan/row_split.hpp): rows that do not fit in VRAM are
// read from host memory either by the CPU workers (exec/host_nodes.hpp) or by the GPU itself, over
// PCIe, straight from the file mapping (no copy: the mapping's pages are registered with the device,
// exec/device_memory.hpp register_host). Both run at once, so they add up: on the H200 test machine
// 15 CPU threads read ~90 GB/s and the GPU ~48 GB/s over the bus beside them (experiments/host_rows.cu,
// docs/perf-notes.md session 8), while the CPU's GEMV kernels alone reach 45-56 GB/s.
//
// Per split weight the rows are then laid out as
//   [0, device_rows)                          in the GPU arena
//   [device_rows, device_rows + bus_rows)     in the mapping, read by a GPU GEMV over the bus
//   [device_rows + bus_rows, rows)            in the mapping, read by the CPU
// with bus_rows a multiple of plan::kSplitRowTile (a warp's 8 rows never straddle two sources).
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
    // Registers with `memory` the host bytes of every tensor's bus rows, `rows_of(t)` rows starting
    // at row `first_row(t)`, as few page-aligned ranges as cover them (neighbouring tensors share
    // pages). Throws dense::Error(Device) when the device cannot read host memory or refuses a range.
    BusRows(DeviceMemory& memory, const std::vector<const gguf::TensorInfo*>& tensors,
            const std::function<int64_t(const gguf::TensorInfo*)>& first_row,
            const std::function<int64_t(const gguf::TensorInfo*)>& rows_of);

    // The address the device reads host byte `host` at; `host` must lie in a registered range
    // (dense::Error(Internal) otherwise).
    const void* device_address(const void* host) const;
    uint64_t registered_bytes() const noexcept { return registered_; }
    uint64_t bus_bytes() const noexcept { return bus_bytes_; }  // bytes of the rows themselves
    size_t ranges() const noexcept { return ranges_.size(); }

private:
    struct Range {
        const std::byte* end;
        const std::byte* device;
    };
    std::map<const std::byte*, Range> ranges_;  // by first host byte
    uint64_t registered_ = 0, bus_bytes_ = 0;
};

}  // namespace dense::exec
