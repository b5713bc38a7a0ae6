// Where each weight tensor is read from during a step: the read-only file mapping itself when the
// ops run on the CPU, or one device arena the tensors were uploaded into when they run on a GPU.
// Tensors of skipped blocks (the MTP head) are never uploaded (exec/upload_plan.hpp).
//
// The GPU upload goes in batches of about 64 MiB (upload_plan.hpp): copy the batch, wait for the
// device, then release the batch's pages of the mapping from the process and (by default) the page
// cache (gguf::MappedFile::release_pages_at), so the resident memory after load stays small; meanwhile
// the next batch is prefetched and a progress line runs on stderr (upload_progress.hpp). On the CPU
// nothing is released: the ops read the weights from the mapping for the whole session.
//
// Staging: the pack's copy_to_device is the only host-to-device path the device API offers; from
// pageable memory (the mapping) the CUDA driver stages each copy through its own pinned buffers.
#pragma once

#include "exec/device_memory.hpp"
#include "exec/upload_plan.hpp"
#include "model/model_binding.hpp"
#include "plan/row_split.hpp"

#include <map>

namespace dense::exec {

class WeightStore {
public:
    // CPU: pointers into the mapping. GPU: uploads every tensor the trunk and head use, in batches
    // of `batch_bytes` (smaller in tests, to get many batches out of a tiny model); each batch's pages
    // leave the process, and the page cache too unless `drop_page_cache` is false (the run config's
    // keep_page_cache: a rerun of the same model then loads from memory instead of the disk).
    // With a row split (`split`, verified), only each tensor's GPU prefix rows are uploaded, and
    // only their pages are released: the CPU rows stay mapped (and cached) for the CPU to read. Its
    // host tables (plan/row_split.hpp: token_embd) are copied whole into page-locked host memory
    // mapped for the device, and pointer() gives the device's address of that copy.
    WeightStore(const model::BoundModel& model, DeviceMemory& memory, uint64_t batch_bytes = kUploadBatchBytes,
                bool drop_page_cache = true, const plan::Placement* split = nullptr);

    const void* pointer(const gguf::TensorInfo* tensor) const;  // throws Internal for an unknown tensor
    uint64_t uploaded_bytes() const noexcept { return uploaded_; }  // the arena, padding included; 0 on the CPU
    double upload_seconds() const noexcept { return seconds_; }
    uint64_t released_bytes() const noexcept { return released_; }  // of the mapping, after the upload
    uint64_t resident_after_upload() const noexcept { return rss_; }  // process RSS; 0 = unknown or no upload

private:
    void copy_host_tables(const std::vector<const gguf::TensorInfo*>& tensors, DeviceMemory& memory,
                          const plan::Placement& placement, bool drop_page_cache);

    std::map<const gguf::TensorInfo*, const void*> where_;
    uint64_t uploaded_ = 0;
    double seconds_ = 0;
    uint64_t released_ = 0;
    uint64_t rss_ = 0;
};

}  // namespace dense::exec
