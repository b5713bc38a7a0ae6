#include "exec/bus_rows.hpp"

#include "core/error.hpp"

#include <algorithm>
#include <unistd.h>

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
                 const std::function<int64_t(const gguf::TensorInfo*)>& rows_of) {
    const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
    std::vector<std::pair<const std::byte*, const std::byte*>> spans;
    for (const auto* t : tensors) {
        const int64_t n = rows_of(t);
        if (n <= 0) continue;
        const uint64_t rb = plan::row_bytes(*t);
        const std::byte* first = t->data.data() + rb * static_cast<uint64_t>(first_row(t));
        const std::byte* end = first + rb * static_cast<uint64_t>(n);
        if (end > t->data.data() + t->data.size())
            throw Error(ErrorKind::Internal, "bus rows of '" + std::string(t->name) + "' run past the tensor");
        bus_bytes_ += rb * static_cast<uint64_t>(n);
        const auto lo = reinterpret_cast<uintptr_t>(first) / page * page;
        const auto hi = (reinterpret_cast<uintptr_t>(end) + page - 1) / page * page;
        spans.emplace_back(reinterpret_cast<const std::byte*>(lo), reinterpret_cast<const std::byte*>(hi));
    }
    if (spans.empty()) return;
    if (!memory.can_read_host())
        throw Error(ErrorKind::Device, memory.label() + " cannot read weight rows from host memory (its pack is "
                                       "older than ABI 1.5); set bus_read_share: 0");
    std::sort(spans.begin(), spans.end());
    // Touching or overlapping spans become one range: a page can be registered only once.
    std::vector<std::pair<const std::byte*, const std::byte*>> merged{spans.front()};
    for (size_t i = 1; i < spans.size(); ++i) {
        if (spans[i].first <= merged.back().second)
            merged.back().second = std::max(merged.back().second, spans[i].second);
        else
            merged.push_back(spans[i]);
    }
    for (const auto& [lo, hi] : merged) {
        const auto bytes = static_cast<uint64_t>(hi - lo);
        const auto* device = static_cast<const std::byte*>(memory.register_host(lo, bytes));
        ranges_[lo] = {hi, device};
        registered_ += bytes;
    }
}

const void* BusRows::device_address(const void* host) const {
    const auto* p = static_cast<const std::byte*>(host);
    auto it = ranges_.upper_bound(p);
    if (it != ranges_.begin()) {
        --it;
        if (p < it->second.end) return it->second.device + (p - it->first);
    }
    throw Error(ErrorKind::Internal, "a weight row read over the bus lies outside every registered range");
}

}  // namespace dense::exec
