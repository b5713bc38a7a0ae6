#include "exec/bus_rows.hpp"

#include "core/error.hpp"
#include "core/units.hpp"
#include "gguf/mapped_file.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstring>

namespace dense::exec {

int64_t bus_rows_for(int64_t host_rows, double share) {
    constexpr int64_t kMinCpuRows = 16;
    if (host_rows <= 0 || !(share > 0)) return 0;
    if (share >= 1) return host_rows;
    const int64_t rows = static_cast<int64_t>(static_cast<double>(host_rows) * share) / plan::kSplitRowTile * plan::kSplitRowTile;
    if (rows == 0) return 0;
    return host_rows - rows < kMinCpuRows ? host_rows : rows;
}

BusRows::BusRows(DeviceMemory& memory, const std::vector<const gguf::TensorInfo*>& tensors,
                 const std::function<int64_t(const gguf::TensorInfo*)>& first_row,
                 const std::function<int64_t(const gguf::TensorInfo*)>& rows_of, bool drop_page_cache) {
    constexpr uint64_t kAlign = 256;
    struct Piece {
        const gguf::TensorInfo* t;
        const std::byte* source;
        uint64_t bytes, offset;
    };
    std::vector<Piece> pieces;
    for (const auto* t : tensors) {
        const int64_t n = rows_of(t);
        if (n <= 0) continue;
        const uint64_t rb = plan::row_bytes(*t);
        const std::byte* first = t->data.data() + rb * static_cast<uint64_t>(first_row(t));
        const uint64_t bytes = rb * static_cast<uint64_t>(n);
        if (first + bytes > t->data.data() + t->data.size())
            throw Error(ErrorKind::Internal, "bus rows of '" + std::string(t->name) + "' run past the tensor");
        pieces.push_back({t, first, bytes, pinned_bytes_});
        bus_bytes_ += bytes;
        pinned_bytes_ += (bytes + kAlign - 1) / kAlign * kAlign;
    }
    if (pieces.empty()) return;
    if (!memory.can_overlap_copies())
        throw Error(ErrorKind::Device, memory.label() + " cannot copy weight rows beside the step (its pack is "
                                       "older than ABI 1.6); set bus_read_share: 0");
    const auto start = std::chrono::steady_clock::now();
    std::byte* host = nullptr;
    try {
        host = static_cast<std::byte*>(memory.alloc_host_locked(pinned_bytes_));
    } catch (const Error& e) {
        throw Error(ErrorKind::Device, std::string(e.what()) + "; the bus rows (bus_read_share) need that much "
                                       "page-locked host memory: lower bus_read_share, or set it to 0");
    }
    for (const auto& p : pieces) {
        std::memcpy(host + p.offset, p.source, p.bytes);
        where_[p.t] = host + p.offset;
        // Whole pages only (release_pages_at keeps the partial pages at either end, which hold GPU or
        // CPU rows too).
        (void)gguf::MappedFile::release_pages_at({p.source, static_cast<size_t>(p.bytes)}, drop_page_cache);
    }
    spdlog::info("bus rows: {} of weight rows of {} tensors copied to page-locked host memory in {:.2f} s; they "
                 "cross PCIe each token beside the CPU's rows",
                 format_bytes(bus_bytes_), pieces.size(),
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

const void* BusRows::host_rows(const gguf::TensorInfo* t) const {
    auto it = where_.find(t);
    if (it == where_.end())
        throw Error(ErrorKind::Internal, "weight '" + std::string(t ? t->name : "?") + "' has no rows copied over the bus");
    return it->second;
}

}  // namespace dense::exec
