// What a GPU session uploads and in which pieces. Every tensor the graph reads (the globals and the
// trunk layers; never the skipped blocks such as the MTP head, which are validated but not run) gets
// a 256-byte-aligned offset in one device arena, in file order so the mapping is read front to back.
// The copies are grouped into batches of about 64 MiB; a tensor larger than what is left of a batch
// is split across batches. After each batch the uploader waits for the device, releases the batch's
// mapped pages and reports progress, so the batch size bounds both the resident memory the upload
// needs and how long the progress line can stand still.
#pragma once

#include "model/model_binding.hpp"

#include <cstdint>
#include <functional>
#include <span>
#include <utility>
#include <vector>

namespace dense::exec {

inline constexpr uint64_t kUploadBatchBytes = uint64_t{64} << 20;
inline constexpr uint64_t kWeightAlign = 256;  // every tensor's arena offset; what the kernels may assume

// Globals and trunk tensors, each once, sorted by file offset. Skipped blocks are left out.
std::vector<const gguf::TensorInfo*> used_tensors(const model::BoundModel& model);

struct UploadPiece {
    const gguf::TensorInfo* tensor = nullptr;
    uint64_t tensor_offset = 0;  // first byte of the piece within the tensor
    uint64_t arena_offset = 0;   // where that byte goes in the arena
    uint64_t bytes = 0;

    std::span<const std::byte> source() const { return tensor->data.subspan(tensor_offset, bytes); }
};

struct UploadBatch {
    std::vector<UploadPiece> pieces;  // in file order
    uint64_t bytes = 0;               // sum of the pieces
};

struct UploadPlan {
    std::vector<std::pair<const gguf::TensorInfo*, uint64_t>> placements;  // tensor -> arena offset
    uint64_t arena_bytes = 0;   // with each tensor padded to kWeightAlign
    uint64_t tensor_bytes = 0;  // the bytes that actually move
    std::vector<UploadBatch> batches;
};

// `tensors` in the order to upload (used_tensors() gives file order). batch_bytes >= 1.
// `upload_bytes(t)`, when given, is how much of t's start to upload (a row split's GPU prefix rows;
// the rest stays in the mapping for the CPU): t's slot and pieces cover only those bytes.
UploadPlan plan_upload(std::span<const gguf::TensorInfo* const> tensors, uint64_t batch_bytes = kUploadBatchBytes,
                       const std::function<uint64_t(const gguf::TensorInfo*)>& upload_bytes = {});

}  // namespace dense::exec
