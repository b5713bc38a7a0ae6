// The bill of one session from its built graph: what exec::Session allocates, in its order —
//   1. "model weights"   the weight arena (GPU only; see weight_arena.hpp)
//   2. "graph buffers"   the buffer arena: state banks, KV cache, activations, step inputs, logits
//   3. "op workspace"    only when some selected op asks for one
//   4. "bus staging"     only with bus rows (plan/bus_staging.hpp)
//   5. "prefill buffers" only with a batched prefill graph (plan/prefill_graph.hpp)
// itemized by what the bytes hold and by layer kind, plus the safety reserve (GPU only).
#pragma once

#include "graph/graph.hpp"
#include "model/model_binding.hpp"
#include "plan/row_split.hpp"
#include "plan/vram_bill.hpp"

#include <dense/abi/dense_abi.h>

#include <cstdint>
#include <optional>
#include <string>

namespace dense::plan {

// The label the weight arena is allocated with (exec/weight_store.cpp).
inline constexpr const char* kWeightsLabel = "model weights";

// VRAM a CUDA session needs beyond its own allocations, held back from every budget: the kernel
// images of the pack (loaded at the first launch; ~8 MiB for the sm90 pack today), the captured step
// graphs, the driver's per-launch and local-memory resizes, allocator slack. Deliberately generous:
// a plan that fits must run. The GPU plan test measures what the first step adds on top of the
// allocations against it (tests/plan/gpu_plan_test.cpp).
inline constexpr uint64_t kCudaSafetyReserve = uint64_t{256} << 20;

uint64_t safety_reserve(dense_device_kind kind) noexcept;

// `kv_type`: the KV cache type the graph was built with. `op_workspace`: the requested workspace
// bytes (op_workspace_bytes / planned_op_workspace; 0 = none), nullopt when no pack can be asked.
// `placement` (verified; null: every weight whole on the device): a GPU's weight arena holds only
// the prefix rows, and cpu_read_bytes counts the suffix rows the CPU reads per token.
// `bus_staging`: the staging ring for rows copied over the bus (bus_staging_bytes; 0 = none).
// `prefill`: the session's batched prefill graph (null: prompts run token by token).
VramBill bill_session(const model::BoundModel& model, const graph::Graph& graph, dense_device_kind kind,
                      dense_type_id kv_type, std::optional<uint64_t> op_workspace, const std::string& device_label,
                      const Placement* placement = nullptr, uint64_t bus_staging = 0,
                      const graph::Graph* prefill = nullptr);

}  // namespace dense::plan
