// The memory bill of one session on one device, made before anything is allocated.
//
// It holds two views of the same bytes:
//   allocations  every DeviceMemory::alloc the session makes, with the label it passes: the weight
//                arena (GPU only), the graph-buffer arena, the op workspace. exec::Session allocates
//                exactly these (and checks its DeviceMemory's per-label accounting against them),
//                so the bill cannot drift from what is allocated.
//   lines        the same bytes itemized by what they hold (weights, KV cache, recurrent state,
//                activations, workspace, staging) and by layer kind, plus the safety reserve.
// Sum of lines == allocated() + reserve == peak().
#pragma once

#include <dense/abi/dense_abi.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace dense::plan {

enum class Item {
    Weights,         // the weight arena (GPU); on the CPU weights are read from the file mapping
    KvCache,         // K and V of every full-attention layer, all context positions
    RecurrentState,  // conv windows and delta-rule matrices, two banks (active + staging) per layer
    Activations,     // decode scratch: one buffer per activation name, reused by every layer
    Workspace,       // the op workspace (sized for the hungriest op; shared by all)
    Staging,         // what crosses to the host every step: step inputs in, logits out
    Reserve,         // not allocated by dense-rt: driver, kernel images, graph objects, allocator slack
    PrefillScratch   // the batched prefill step's own buffers (plan/prefill_graph.hpp); appended last
};

const char* to_string(Item item) noexcept;  // "weights", "kv_cache", ... (JSON keys)
const char* title(Item item) noexcept;      // "KV cache", ... (the printed bill)

// One DeviceMemory::alloc of the session.
struct Allocation {
    std::string label;   // as passed to DeviceMemory::alloc
    uint64_t bytes = 0;  // as allocated (allocation_size of the request)
};

// One line of the itemized bill.
struct BillLine {
    Item item = Item::Activations;
    std::string layer_kind;  // "recurrent", "full_attention", "global" (weights outside layers), or ""
    uint64_t bytes = 0;
    int64_t count = 0;   // what `unit` counts
    std::string unit;    // "tensors", "layers", "buffers", ...
    std::string detail;  // how the bytes come about
};

struct VramBill {
    std::string device;  // "cuda:0 (NVIDIA H200)", "cpu", "a CUDA device (not present here)"
    dense_device_kind device_kind = DENSE_DEVICE_CUDA;
    int64_t n_ctx = 0;
    dense_type_id kv_type = DENSE_TYPE_F16;
    std::vector<Allocation> allocations;  // in the order the session makes them
    std::vector<BillLine> lines;
    uint64_t reserve = 0;
    uint64_t weight_bytes = 0;        // the weight arena (0 on the CPU)
    uint64_t kv_bytes_per_token = 0;  // K + V of all full-attention layers, per context position
    // Weight bytes the CPU reads per token from the file mapping: the suffix rows of a row split
    // (plan/row_split.hpp). Not device memory, so in no line and not in the peak.
    uint64_t cpu_read_bytes = 0;
    std::vector<std::string> notes;   // assumptions the bill rests on (a device that is not here, ...)

    uint64_t allocated() const noexcept;
    uint64_t peak() const noexcept { return allocated() + reserve; }
    uint64_t bytes_of(Item item) const noexcept;             // sum of the lines of one item
    std::map<std::string, uint64_t> bytes_by_label() const;  // allocations summed per label
};

}  // namespace dense::plan
