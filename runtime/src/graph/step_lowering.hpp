// Lowering of recipe steps (models/<arch>.yaml) into graph nodes. Each recipe op the core knows
// (model::known_recipe_ops) has one lowering here that decides the exact views: e.g. the query
// heads inside the interleaved query+gate projection, or the q/k/v channel ranges of the Gated
// DeltaNet convolution output. Shapes come from the bound model's hparams by name, so another
// architecture built from the same ops needs only a new YAML file.
//
// Activations are F32 buffers named after the recipe's activation names and shared by all layers
// (sized for the largest use). GEMV inputs are quantized once per producing step into the weight
// format's activation type (the QUANTIZE_ACT node is inserted here, as ggml's vec_dot_type does).
#pragma once

#include "graph/graph.hpp"
#include "graph/graph_builder.hpp"
#include "model/model_binding.hpp"

#include <map>
#include <string>
#include <utility>

namespace dense::graph {

class Lowering {
public:
    Lowering(const model::BoundModel& model, const GraphOptions& options);

    // layer == nullptr for head steps (weights from the globals).
    void lower(const model::RecipeStep& step, const model::BoundLayer* layer, Phase phase);
    void end_layer();
    void check_finite(const std::string& activation, Phase phase);
    // ARGMAX of `activation` into the step's greedy word (StepInputs::greedy).
    void argmax(const std::string& activation, Phase phase);
    // TOP_K of `activation` into the step's top-k outputs (StepInputs::top_k_ids, top_k_values; a token
    // graph built with GraphOptions::top_k_on_device > 0).
    void top_k(const std::string& activation, Phase phase);
    Graph finish();

private:
    using Emit = void (Lowering::*)(const model::RecipeStep&, const model::BoundLayer*, Phase);
    static const std::map<std::string, Emit>& lowerings();

    void embed_row(const model::RecipeStep&, const model::BoundLayer*, Phase);
    void rms_norm(const model::RecipeStep&, const model::BoundLayer*, Phase);
    void rms_norm_heads(const model::RecipeStep&, const model::BoundLayer*, Phase);
    void gemv(const model::RecipeStep&, const model::BoundLayer*, Phase);
    void gemv_add(const model::RecipeStep&, const model::BoundLayer*, Phase);
    void conv1d_causal_silu(const model::RecipeStep&, const model::BoundLayer*, Phase);
    void gdn_gates(const model::RecipeStep&, const model::BoundLayer*, Phase);
    void l2_norm_heads(const model::RecipeStep&, const model::BoundLayer*, Phase);
    void gated_delta_rule(const model::RecipeStep&, const model::BoundLayer*, Phase);
    void gated_rms_norm(const model::RecipeStep&, const model::BoundLayer*, Phase);
    void rope_neox(const model::RecipeStep&, const model::BoundLayer*, Phase);
    void attention_gated(const model::RecipeStep&, const model::BoundLayer*, Phase);
    void swiglu(const model::RecipeStep&, const model::BoundLayer*, Phase);

    // ---- buffers and views ----
    BufferId new_buffer(const std::string& name, BufferKind kind, uint64_t bytes, int64_t layer = -1);
    BufferId define(const std::string& name, int64_t elements);  // F32 activation, grown to the largest use
    BufferId use(const std::string& name, const std::string& where) const;
    int64_t elements_of(const std::string& name) const;
    ViewRef f32(BufferId b, int64_t ne0, int64_t ne1 = 1, int64_t offset = 0, int64_t row_stride = 0) const;
    // The T = tokens_ slices {ne0, ne1} of a token axis (dense_abi.h, ABI 1.10), token t's starting
    // token_stride elements after token t-1's.
    ViewRef f32_tokens(BufferId b, int64_t ne0, int64_t ne1, int64_t offset, int64_t row_stride,
                       int64_t token_stride) const;
    // I32 {T}: every token's word of a step input (positions), for a token axis.
    ViewRef i32_tokens(BufferId b) const;
    // I32 {n}: n contiguous words from the buffer's start (a step input or output).
    ViewRef i32_words(BufferId b, int64_t n) const;
    // Whether the token-axis ops run once for all tokens (GraphOptions::token_axes) or once per token.
    bool batch_token_ops() const noexcept { return tokens_ > 1 && options_.token_axes; }
    ViewRef i32(BufferId b, int64_t element = 0) const;
    ViewRef weight(const model::BoundLayer* layer, const std::string& role, const model::RecipeStep& step) const;
    const gguf::TensorInfo* tensor(const model::BoundLayer* layer, const std::string& role) const;
    std::pair<BufferId, BufferId> state_banks(const std::string& state, int64_t layer, uint64_t bytes);
    ViewRef quantized_input(const std::string& name, int64_t n, dense_type_id act, Phase phase);

    // A GEMV of `t` (view `w`) on `xq` into `y` from element 0 (accumulating when `accumulate`) —
    // a GEMM_Q of T columns in a batched step — as one node, or split: a device node over the rows
    // options_.device_rows keeps, device nodes over bus-copied chunks of the host rows, and (token
    // step only) a CPU node over the rest; a batched step sends every host row over the bus.
    void emit_gemv(const std::string& label, const gguf::TensorInfo* t, const ViewRef& w, const ViewRef& xq,
                   BufferId y, dense_type_id act, bool accumulate, Phase phase);
    // Rows [first, end) of t as device GEMVs/GEMMs (with emit_gemv's `params`) on staging slots, each
    // with the copy that fills its slot from `source` (where weight row `source_row` lies; pageable
    // memory, the file mapping, when `pageable`); `from` ends their labels.
    void emit_bus_chunks(const std::string& label, const gguf::TensorInfo* t, const ViewRef& w, const ViewRef& xq,
                         BufferId y, dense_type_id act, const std::vector<std::byte>& params, Phase phase,
                         int64_t first, int64_t end, const void* source, int64_t source_row, const std::string& from,
                         bool pageable = false);
    static ViewRef row_view(const ViewRef& w, const void* base, int64_t first, int64_t end);
    void emit(std::string label, dense_op_kind op, dense_type_id weight_type, dense_type_id act_type,
              std::vector<ViewRef> src, std::vector<ViewRef> dst, std::vector<std::byte> params, Phase phase);
    void wrote(BufferId b);
    bool fuse_quantize_into_producer(BufferId x, int64_t n, dense_type_id act, const ViewRef& q, Phase phase);

    int64_t hp(const std::string& name, const model::BoundLayer* layer = nullptr) const;
    float hpf(const std::string& name) const;
    std::string prefix(const model::BoundLayer* layer) const;
    dense_type_id activation(dense_type_id weight_type) const;

    const model::BoundModel& model_;
    GraphOptions options_;
    Graph graph_;
    std::map<std::string, BufferId> names_;                         // activation name -> buffer
    std::map<BufferId, int64_t> elements_;                          // F32 elements of activation buffers
    std::map<std::string, int64_t> current_len_;                    // length of each name's latest value
    std::map<std::pair<BufferId, dense_type_id>, BufferId> quant_;  // quantized copies valid now
    std::map<BufferId, size_t> last_writer_;                        // buffer -> node that last wrote it
    std::map<std::string, std::pair<BufferId, BufferId>> banks_;    // "conv@3" -> (A, B)
    std::map<int64_t, std::pair<BufferId, BufferId>> kv_;           // layer -> (K, V)
    int64_t current_layer_ = -1;
    int64_t tokens_ = 1;  // T: columns of every activation (GraphOptions::tokens)
    // " [t]" on the label of a per-token node of a batched graph; nothing in a token step.
    std::string column(int64_t t) const { return tokens_ > 1 ? " [" + std::to_string(t) + "]" : std::string(); }
    uint32_t next_bus_slot_ = 0;  // staging slots are handed out round robin (graph_builder.hpp)
};

}  // namespace dense::graph
