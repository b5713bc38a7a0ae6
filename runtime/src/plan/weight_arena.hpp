// The weight arena a GPU session uploads, as exec/weight_store.cpp places it: every tensor of the
// globals and the trunk layers, each once (a tied LM head is token_embd itself), never a tensor of a
// skipped block (the MTP head), each in its own slot rounded up to 256 bytes, all in one allocation.
// On the CPU nothing is uploaded: the ops read the file mapping.
#pragma once

#include "gguf/gguf_file.hpp"
#include "model/model_binding.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace dense::plan {

// The bytes of one weight's slot in the arena.
constexpr uint64_t weight_slot_bytes(uint64_t tensor_bytes) noexcept {
    return (tensor_bytes + 255) / 256 * 256;
}

struct WeightGroup {
    std::string layer_kind;  // "global" for tensors outside the trunk layers, else the layer kind
    uint64_t bytes = 0;      // slot bytes
    int64_t tensors = 0;
    int64_t layers = 0;  // trunk layers of this kind (0 for "global")
};

struct Placement;  // plan/row_split.hpp

struct WeightArena {
    std::vector<const gguf::TensorInfo*> tensors;  // in upload (file) order
    std::vector<WeightGroup> groups;               // "global" first, then layer kinds in trunk order
    uint64_t bytes = 0;                            // the arena: sum of the slots
    uint64_t skipped_bytes = 0;                    // tensors of skipped blocks (never uploaded)
};

// With a row split (`placement`, verified), each tensor's slot holds only its GPU prefix rows (an
// empty slot for a tensor wholly on the CPU); `tensors` still lists every used weight.
WeightArena weight_arena(const model::BoundModel& model, const Placement* placement = nullptr);

}  // namespace dense::plan
