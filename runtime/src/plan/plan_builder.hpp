// Making the bill of a session before creating it: builds the graph exactly as exec::Session will
// (same context, KV type, device kind and activation formats), lays it out, asks the device's pack
// for the op workspace, and bills it (session_bill.hpp).
//
// A plan can be made for a device that is not here (users plan before they buy a card): then no
// pack can be asked, so the activation formats are the ones dense-rt's CUDA packs pair (dense_abi.h:
// Q8_32 for quantized weights, F32 for float weights), the op workspace is billed as 0 (covered by
// the safety reserve), and the bill says so in its notes.
#pragma once

#include "model/model_binding.hpp"
#include "model/model_spec.hpp"
#include "packs/pack_manager.hpp"
#include "plan/row_split.hpp"
#include "plan/vram_bill.hpp"

#include <optional>
#include <string>

namespace dense::plan {

struct PlanTarget {
    dense_device_kind kind = DENSE_DEVICE_CUDA;
    // Index into PackManager::devices() of a device whose pack selects the ops (the exact plan);
    // empty for a device that is not here or has no usable pack.
    std::optional<size_t> device;
    std::string label;                   // "cuda:0 (NVIDIA H200)", "a CUDA device (not present here)"
    std::optional<uint64_t> free_bytes;  // what the device reports free (a simulated one: its total)
    bool simulated = false;              // DENSE_FAKE_DEVICES: can be planned for, never run on
    // Whether the device can read page-locked host memory in place (ABI 1.5 host_alloc_mapped), so
    // row-read tables may stay in host memory (plan/row_split.hpp). A device that is not here is
    // assumed to be served by dense-rt's own CUDA packs, which can.
    bool maps_host_memory = true;
};

struct PlanRequest {
    int64_t n_ctx = 4096;
    dense_type_id kv_type = DENSE_TYPE_F16;
    dense_type_id gemv_activation = DENSE_TYPE_NONE;  // as exec::SessionOptions::gemv_activation
    PlanTarget target;
    // A row split (verified by make_plan): the GPU weight arena bills only the prefix rows. The
    // graph is planned unsplit (its buffers are the same either way).
    std::optional<Placement> row_split;
    // With a row split: the share of its host rows copied to the device over the bus each token
    // (exec::SessionOptions::bus_read_share), which adds the staging ring (plan/bus_staging.hpp).
    double bus_read_share = 0.0;
    // Tokens per batched prefill step (exec::SessionOptions::prefill_chunk; < 0: the device's
    // default): adds the prefill buffers where the session would batch (plan/prefill_graph.hpp).
    int64_t prefill_chunk = -1;
    // The k a sampled run keeps on the device (exec::SessionOptions::device_top_k; 0: none): two
    // small outputs and the TOP_K node's workspace.
    int32_t device_top_k = 0;
};

// Prompt tokens per batched step of the session `request` describes (plan/prefill_graph.hpp,
// prefill_chunk_for: 1 for a row split without bus staging).
int64_t request_prefill_chunk(const PlanRequest& request);

// `packs` may be null when target.device is empty. Throws dense::Error: Config for a bad context or
// KV type, Model when the graph cannot be built, Pack when the device's packs lack an op.
VramBill make_plan(const model::BoundModel& model, const model::ModelSpec& spec, const packs::PackManager* packs,
                   const PlanRequest& request);

// The activation format a GEMV of `weight` consumes on a CUDA device no pack can be asked about.
dense_type_id assumed_gpu_activation(dense_type_id weight);

}  // namespace dense::plan
