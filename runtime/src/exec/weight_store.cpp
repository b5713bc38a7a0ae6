#include "exec/weight_store.hpp"

#include "core/error.hpp"
#include "core/units.hpp"
#include "exec/resident_memory.hpp"
#include "exec/upload_progress.hpp"
#include "gguf/mapped_file.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstring>

#include <unistd.h>

namespace dense::exec {

namespace {

uintptr_t page_size() {
    static const uintptr_t page = [] {
        const long v = ::sysconf(_SC_PAGESIZE);
        return v > 0 ? static_cast<uintptr_t>(v) : uintptr_t{4096};
    }();
    return page;
}

// The first byte of `p`'s page. The mapping starts on a page, so address and file offset agree.
const std::byte* page_floor(const std::byte* p) {
    return reinterpret_cast<const std::byte*>(reinterpret_cast<uintptr_t>(p) / page_size() * page_size());
}

void prefetch(const UploadBatch& batch) {
    for (const auto& piece : batch.pieces) gguf::MappedFile::prefetch_pages_at(piece.source());
}

}  // namespace

WeightStore::WeightStore(const model::BoundModel& model, DeviceMemory& memory, uint64_t batch_bytes,
                         bool drop_page_cache, const plan::Placement* split) {
    const auto tensors = used_tensors(model);
    if (memory.kind() == DENSE_DEVICE_CPU) {
        for (const auto* t : tensors) where_[t] = t->data.data();
        return;
    }
    const auto start = std::chrono::steady_clock::now();
    std::function<uint64_t(const gguf::TensorInfo*)> gpu_bytes;
    if (split != nullptr)
        gpu_bytes = [split](const gguf::TensorInfo* t) {
            return static_cast<uint64_t>(split->gpu_rows(std::string(t->name))) * plan::row_bytes(*t);
        };
    const UploadPlan plan = plan_upload(tensors, batch_bytes, gpu_bytes);
    auto* arena = static_cast<std::byte*>(memory.alloc(plan.arena_bytes, "model weights"));
    for (const auto& [t, offset] : plan.placements) where_[t] = arena + offset;

    auto progress = UploadProgress::on_stderr(plan.tensor_bytes);
    progress.update(0);
    if (!plan.batches.empty()) prefetch(plan.batches.front());
    uint64_t done = 0;
    // Everything before this byte of the mapping has been released. Batches go front to back through
    // the file, so what lies behind the cursor (uploaded tensors, or unused ones such as the MTP
    // head between them) is never read again by this session.
    const std::byte* released_to = nullptr;
    for (size_t b = 0; b < plan.batches.size(); ++b) {
        const auto& batch = plan.batches[b];
        if (b + 1 < plan.batches.size()) prefetch(plan.batches[b + 1]);  // the disk reads while we copy
        for (const auto& piece : batch.pieces)
            memory.to_device(arena + piece.arena_offset, piece.source().data(), piece.bytes);
        memory.sync();  // the copies have read their sources: the pages may go
        done += batch.bytes;
        if (split != nullptr) {
            // Only the uploaded pieces' own whole pages (release_pages_at keeps the partial pages at
            // either end): the CPU rows between them stay.
            for (const auto& piece : batch.pieces)
                released_ += gguf::MappedFile::release_pages_at(piece.source(), drop_page_cache);
            progress.update(done);
            continue;
        }

        const std::byte* from = released_to ? released_to : batch.pieces.front().source().data();
        const auto last = batch.pieces.back().source();
        // Up to the batch's last whole page, except at the very end; the partial page goes with the
        // next batch.
        const std::byte* to = b + 1 < plan.batches.size() ? page_floor(last.data() + last.size())
                                                         : last.data() + last.size();
        if (to > from) {
            released_ += gguf::MappedFile::release_pages_at({from, static_cast<size_t>(to - from)}, drop_page_cache);
            released_to = to;
        }
        progress.update(done);
    }
    if (released_to != nullptr && drop_page_cache) {
        // Once more over everything: the page cache holds a file in folios of up to a few MiB, and
        // the kernel drops only folios wholly inside a range, so the folios astride the batch
        // boundaries are still cached. The pages are already out of the process, so this second
        // pass finds only those few folios (its count would repeat the first pass's).
        const auto& first = plan.batches.front().pieces.front();
        (void)gguf::MappedFile::release_pages_at(
            {first.source().data(), static_cast<size_t>(released_to - first.source().data())});
    }
    progress.finish();
    if (split != nullptr) copy_host_tables(tensors, memory, *split, drop_page_cache);
    uploaded_ = plan.arena_bytes;
    seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    rss_ = resident_bytes().value_or(0);
    spdlog::info("uploaded {} tensors, {} to {} in {:.2f} s ({:.2f} GB/s); released {} of the mapping; "
                 "resident memory after load {}",
                 tensors.size(), format_bytes(plan.tensor_bytes), memory.label(), seconds_,
                 seconds_ > 0 ? static_cast<double>(plan.tensor_bytes) / seconds_ / 1e9 : 0.0, format_bytes(released_),
                 rss_ ? format_bytes(rss_) : std::string("unknown"));
}

void WeightStore::copy_host_tables(const std::vector<const gguf::TensorInfo*>& tensors, DeviceMemory& memory,
                                   const plan::Placement& placement, bool drop_page_cache) {
    const auto start = std::chrono::steady_clock::now();
    std::string names;
    uint64_t table_bytes = 0;
    for (const auto* t : tensors) {
        if (!placement.in_host_table(std::string(t->name))) continue;
        if (!memory.can_map_host())
            throw Error(ErrorKind::Device, memory.label() + " cannot read host memory in place (its pack is older than "
                                           "ABI 1.5), so '" + std::string(t->name) + "' cannot stay in host memory");
        std::pair<void*, void*> mapped;
        try {
            mapped = memory.alloc_host_mapped(t->n_bytes);
        } catch (const Error& e) {
            throw Error(ErrorKind::Device, std::string(e.what()) + "; '" + std::string(t->name) +
                                           "' stays in page-locked host memory when the weights do not fit in VRAM");
        }
        std::memcpy(mapped.first, t->data.data(), t->n_bytes);
        // Read here from now on: the mapping's whole pages of it may go (the partial pages at either
        // end hold other tensors' bytes).
        released_ += gguf::MappedFile::release_pages_at(t->data, drop_page_cache);
        where_[t] = mapped.second;
        table_bytes += t->n_bytes;
        names += (names.empty() ? "" : ", ") + std::string(t->name);
    }
    if (table_bytes > 0)
        spdlog::info("host tables: {} ({}) copied to page-locked host memory in {:.2f} s; the GPU reads the row a "
                     "token needs over the bus",
                     names, format_bytes(table_bytes),
                     std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

const void* WeightStore::pointer(const gguf::TensorInfo* tensor) const {
    auto it = where_.find(tensor);
    if (it == where_.end())
        throw Error(ErrorKind::Internal, "weight '" + std::string(tensor ? tensor->name : "?") + "' was not placed");
    return it->second;
}

}  // namespace dense::exec
