// Builds the static graph of a bound model: the model description's recipes, lowered step by step
// into op calls that the registry resolves to pack implementations on one device.
//
// Order: the head recipe's embed_row step, then for each trunk layer the recipe of its kind followed
// by the ffn recipe, then the rest of the head recipe (final norm, LM head), which only runs for
// tokens whose logits are wanted. A status check (NaN/Inf) closes the trunk and the head.
#pragma once

#include "gguf/gguf_file.hpp"
#include "graph/graph.hpp"
#include "model/model_binding.hpp"
#include "model/model_spec.hpp"
#include "packs/pack_manager.hpp"

#include <functional>

namespace dense::graph {

struct GraphOptions {
    int64_t n_ctx = 4096;                     // KV cache slots per full-attention layer
    // Tokens one run of the graph takes (batched prefill, exec/session.hpp). 1: the token step, with
    // the LM head. T > 1: a state-only step over T consecutive prompt tokens (no head, no logits):
    // every activation holds T columns; norms, SwiGLU and the gated norm run once over all of them,
    // each GEMV is one GEMM_Q (dense_abi.h) that reads its weight once for the T tokens, and the ops
    // that depend on the position or carry state (embedding, convolution, gates, delta rule, RoPE, KV
    // store, attention) run once per token in order, so token t sees the state token t-1 left. The
    // step inputs hold T tokens, T positions and T n_kv words. Needs no row split and no bus rows.
    int64_t tokens = 1;
    // T > 1 only: the ops that take a token axis (dense_abi.h, ABI 1.10: convolution, gates, L2 norm,
    // delta rule, RoPE, KV store, attention) run once for all T tokens instead of once per token (one
    // launch per layer instead of T; the pack walks the tokens in order; the KV store of all T tokens
    // comes before their attention, each token reading only slots < its n_kv). False: one call per
    // token, for packs that refuse the axis (plan/prefill_graph.cpp tries both).
    bool token_axes = true;
    dense_type_id kv_type = DENSE_TYPE_F16;   // F16 or F32
    dense_device_kind device_kind = DENSE_DEVICE_CPU;  // where the nodes will run
    // Where a weight's bytes are read from (the mapping, or an uploaded copy). Empty: the mapping.
    std::function<const void*(const gguf::TensorInfo*)> weight_pointer;
    // The activation type a weight format's GEMV consumes on this device (Q8_K on the CPU reference,
    // Q8_32 on GPUs). Empty: the type table's pairing.
    std::function<dense_type_id(dense_type_id weight_type)> activation_for;
    // Whether the device's packs implement `op` with a quantized copy of its output in `act`
    // (dense_abi.h, "fused quantization"). Where they do, the op that produces a GEMV input writes
    // the quantized input too, instead of a separate QUANTIZE_ACT node. Empty: never.
    std::function<bool(dense_op_kind op, dense_type_id act)> fuses_quantize;
    // Whether the device's packs implement ARGMAX (optional, ABI 1.12): then the token step ends with
    // the greedy choice over the logits on the device (StepInputs::greedy), so a greedy run copies 4
    // bytes back a token instead of the vocabulary's logits.
    bool greedy_on_device = false;
    // k > 0 where the device's packs implement TOP_K (optional, ABI 1.15; 1 <= k <= DENSE_TOP_K_MAX)
    // and a sampled run keeps the k best logits: then the token step ends with the k best (id, logit)
    // pairs on the device (StepInputs::top_k_ids, top_k_values), so that run copies 8k bytes back a
    // token instead of the vocabulary's logits. 0: none. Ignored by batched graphs (no logits).
    int32_t top_k_on_device = 0;
    // The GEMM_Q nodes of a batched step ask for DENSE_GEMM_ORDER_FREE (ABI 1.13, 1.14): each column then
    // equals its token step's GEMV up to the order and rounding of its block terms, not bit for bit, and a
    // pack may decode each weight tile once for many columns. false: every batched step leaves the
    // token-by-token bits (what the bit-for-bit prefill tests ask for).
    bool gemm_free_order = false;
    // Output-row split of GEMV weights onto the CPU (plan/row_split.hpp): how many leading output
    // rows of a weight the device reads from `weight_pointer`; rows [that, rows) become a second
    // GEMV node keyed to the CPU that reads them from the file mapping and writes the rest of the
    // output (marked split_cpu_part, lowered before the device's rows so the executor can start it
    // first). Empty, or a value >= the weight's rows: no split. Asked for GEMV weights only (the
    // planner's exact-cover verifier refuses a placement that splits any other weight).
    std::function<int64_t(const gguf::TensorInfo*)> device_rows;
    // Of a split weight's rows past device_rows, how many leading ones the DEVICE computes from a
    // page-locked host copy that is copied over the bus each token (exec/bus_rows.hpp,
    // exec/bus_copies.hpp): rows [device_rows, device_rows + bus_rows) become GEMV nodes on the
    // device, one per chunk of at most bus_staging.slot_bytes, each reading its rows from a staging
    // slot in VRAM (slots taken round robin over the whole graph) and carrying the copy that fills
    // the slot (Node::bus_copy: from bus_source(t), where t's first bus row lies in host memory); the
    // CPU node keeps the rest. Empty or 0: the CPU reads every host row.
    std::function<int64_t(const gguf::TensorInfo*)> bus_rows;
    std::function<const void*(const gguf::TensorInfo*)> bus_source;
    struct BusStaging {
        void* base = nullptr;  // slots * slot_bytes of device memory
        uint32_t slots = 0;
        uint64_t slot_bytes = 0;
    } bus_staging;
};

// The activation type the GEMV of `weight_type` consumes under `options`: activation_for, else the
// type table's pairing (Internal error for a type the table does not know).
dense_type_id gemv_activation(const GraphOptions& options, dense_type_id weight_type);

// The node list with symbolic buffers; nothing allocated yet. Throws dense::Error(Model) when a recipe
// step cannot be lowered for this model.
Graph build_graph(const model::BoundModel& model, const model::ModelSpec& spec, const GraphOptions& options);

// After Graph::resolve (real pointers, so supports() sees the real call): picks each node's
// implementation on `device`. Throws dense::Error(Pack) naming the node, op and types when no usable
// pack implements it.
void select_ops(Graph& graph, const packs::PackManager& packs, size_t device);

}  // namespace dense::graph
