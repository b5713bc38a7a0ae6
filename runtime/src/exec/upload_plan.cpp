#include "exec/upload_plan.hpp"

#include "core/error.hpp"

#include <algorithm>
#include <set>

namespace dense::exec {

std::vector<const gguf::TensorInfo*> used_tensors(const model::BoundModel& m) {
    std::set<const gguf::TensorInfo*> seen;
    std::vector<const gguf::TensorInfo*> out;
    auto add = [&](const gguf::TensorInfo* t) {
        if (t != nullptr && seen.insert(t).second) out.push_back(t);
    };
    for (const auto& [role, t] : m.globals) add(t);
    for (const auto& layer : m.layers)
        for (const auto& [role, t] : layer.tensors) add(t);
    // m.skipped_blocks (the MTP head) on purpose not: the graph never reads them.
    std::sort(out.begin(), out.end(), [](auto* a, auto* b) { return a->file_offset < b->file_offset; });
    return out;
}

UploadPlan plan_upload(std::span<const gguf::TensorInfo* const> tensors, uint64_t batch_bytes,
                       const std::function<uint64_t(const gguf::TensorInfo*)>& upload_bytes) {
    if (batch_bytes == 0) throw Error(ErrorKind::Internal, "upload batch size is 0");
    UploadPlan plan;
    UploadBatch batch;
    auto close_batch = [&] {
        if (batch.pieces.empty()) return;
        plan.batches.push_back(std::move(batch));
        batch = {};
    };
    for (const auto* t : tensors) {
        plan.placements.emplace_back(t, plan.arena_bytes);
        const uint64_t bytes = upload_bytes ? upload_bytes(t) : t->n_bytes;
        if (bytes > t->n_bytes)
            throw Error(ErrorKind::Internal, "upload of " + std::to_string(bytes) + " bytes of '" + std::string(t->name) +
                                                 "', which has " + std::to_string(t->n_bytes));
        for (uint64_t done = 0; done < bytes;) {
            const uint64_t n = std::min(bytes - done, batch_bytes - batch.bytes);
            batch.pieces.push_back({t, done, plan.arena_bytes + done, n});
            batch.bytes += n;
            done += n;
            if (batch.bytes == batch_bytes) close_batch();
        }
        plan.tensor_bytes += bytes;
        plan.arena_bytes += (bytes + kWeightAlign - 1) / kWeightAlign * kWeightAlign;
    }
    close_batch();
    return plan;
}

}  // namespace dense::exec
