// Where each weight tensor is read from during a step: the read-only file mapping itself when the
// ops run on the CPU, or one device arena the tensors were uploaded into (large batches, in file
// order) when they run on a GPU. Tensors of skipped blocks (the MTP head) are never uploaded.
#pragma once

#include "exec/device_memory.hpp"
#include "model/model_binding.hpp"

#include <map>

namespace dense::exec {

class WeightStore {
public:
    // CPU: pointers into the mapping. GPU: uploads every tensor the trunk and head use.
    WeightStore(const model::BoundModel& model, DeviceMemory& memory);

    const void* pointer(const gguf::TensorInfo* tensor) const;  // throws Internal for an unknown tensor
    uint64_t uploaded_bytes() const noexcept { return uploaded_; }
    double upload_seconds() const noexcept { return seconds_; }

private:
    std::map<const gguf::TensorInfo*, const void*> where_;
    uint64_t uploaded_ = 0;
    double seconds_ = 0;
};

}  // namespace dense::exec
