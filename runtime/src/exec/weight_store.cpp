#include "exec/weight_store.hpp"

#include "core/error.hpp"
#include "core/units.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <set>

namespace dense::exec {

namespace {

// Every tensor the graph reads: globals and trunk layers (not skipped blocks), each once.
std::vector<const gguf::TensorInfo*> used_tensors(const model::BoundModel& m) {
    std::set<const gguf::TensorInfo*> seen;
    std::vector<const gguf::TensorInfo*> out;
    auto add = [&](const gguf::TensorInfo* t) {
        if (t != nullptr && seen.insert(t).second) out.push_back(t);
    };
    for (const auto& [role, t] : m.globals) add(t);
    for (const auto& layer : m.layers)
        for (const auto& [role, t] : layer.tensors) add(t);
    // Upload in file order: the mapping is read sequentially.
    std::sort(out.begin(), out.end(), [](auto* a, auto* b) { return a->file_offset < b->file_offset; });
    return out;
}

}  // namespace

WeightStore::WeightStore(const model::BoundModel& model, DeviceMemory& memory) {
    const auto tensors = used_tensors(model);
    if (memory.kind() == DENSE_DEVICE_CPU) {
        for (const auto* t : tensors) where_[t] = t->data.data();
        return;
    }
    const auto start = std::chrono::steady_clock::now();
    uint64_t total = 0;
    for (const auto* t : tensors) total += (t->n_bytes + 255) / 256 * 256;
    auto* arena = static_cast<std::byte*>(memory.alloc(total, "model weights"));
    uint64_t offset = 0;
    for (const auto* t : tensors) {
        memory.to_device(arena + offset, t->data.data(), t->n_bytes);
        where_[t] = arena + offset;
        offset += (t->n_bytes + 255) / 256 * 256;
    }
    memory.sync();
    uploaded_ = total;
    seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    spdlog::info("uploaded {} tensors, {} to {} in {:.2f} s ({:.2f} GB/s)", tensors.size(), format_bytes(total),
                 memory.label(), seconds_, seconds_ > 0 ? static_cast<double>(total) / seconds_ / 1e9 : 0.0);
}

const void* WeightStore::pointer(const gguf::TensorInfo* tensor) const {
    auto it = where_.find(tensor);
    if (it == where_.end())
        throw Error(ErrorKind::Internal, "weight '" + std::string(tensor ? tensor->name : "?") + "' was not placed");
    return it->second;
}

}  // namespace dense::exec
