#include "graph/step_lowering.hpp"

#include "core/error.hpp"
#include "core/type_table.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace dense::graph {

namespace {

// Chunks of bus rows start at multiples of the CUDA GEMV's 8-row warp tile, like every split point
// (plan::kSplitRowTile; the plan stage builds on this one, so the constant is repeated, not included).
constexpr int64_t kBusRowTile = 8;

template <class P>
std::vector<std::byte> params_bytes(P p) {
    p.hdr = {static_cast<uint16_t>(DENSE_ABI_MAJOR), static_cast<uint16_t>(DENSE_ABI_MINOR), static_cast<uint32_t>(sizeof(P))};
    std::vector<std::byte> out(sizeof(P));
    std::memcpy(out.data(), &p, sizeof(P));
    return out;
}

const TypeInfo& type_info(dense_type_id id) {
    const TypeInfo* t = global_type_table().find(id);
    if (t == nullptr) throw Error(ErrorKind::Internal, "graph: unknown type id " + std::to_string(id));
    return *t;
}

// ggml strides for a contiguous tensor: nb[0] = bytes per block, nb[1] = bytes per row, ...
void contiguous_strides(dense_tensor_view& v) {
    const TypeInfo& t = type_info(v.type);
    v.nb[0] = t.block_bytes;
    v.nb[1] = static_cast<int64_t>(TypeTable::row_bytes(t, v.ne[0]).value_or(0));
    v.nb[2] = v.nb[1] * v.ne[1];
    v.nb[3] = v.nb[2] * v.ne[2];
}

// "rows [first, end)", for the labels of a split weight's nodes.
std::string row_range(int64_t first, int64_t end) {
    return "rows [" + std::to_string(first) + ", " + std::to_string(end) + ")";
}

std::string step_where(const model::RecipeStep& step, const std::string& prefix) {
    return "recipe step '" + step.op + "'" + (prefix.empty() ? "" : " of " + prefix);
}

}  // namespace

Lowering::Lowering(const model::BoundModel& model, const GraphOptions& options)
    : model_(model), options_(options), tokens_(options.tokens) {
    const auto words = static_cast<uint64_t>(tokens_) * 4;
    graph_.inputs.token = new_buffer("in:token", BufferKind::StepInput, words);
    graph_.inputs.position = new_buffer("in:position", BufferKind::StepInput, words);
    graph_.inputs.n_kv = new_buffer("in:n_kv", BufferKind::StepInput, words);
    graph_.inputs.status = new_buffer("in:status", BufferKind::StepInput, 4);
    graph_.inputs.greedy = new_buffer("out:greedy", BufferKind::StepInput, 4);
    if (options.top_k_on_device > 0 && tokens_ == 1) {  // right after greedy: read back in one copy
        const auto k_bytes = static_cast<uint64_t>(options.top_k_on_device) * 4;
        graph_.inputs.top_k_ids = new_buffer("out:top_k_ids", BufferKind::StepInput, k_bytes);
        graph_.inputs.top_k_values = new_buffer("out:top_k_values", BufferKind::StepInput, k_bytes);
    }
    graph_.tokens = tokens_;
    graph_.n_embd = hp("n_embd");
    graph_.n_vocab = hp("n_vocab");
    graph_.n_ctx = options.n_ctx;
}

const std::map<std::string, Lowering::Emit>& Lowering::lowerings() {
    static const std::map<std::string, Emit> table = {
        {"embed_row", &Lowering::embed_row},
        {"rms_norm", &Lowering::rms_norm},
        {"rms_norm_heads", &Lowering::rms_norm_heads},
        {"gemv", &Lowering::gemv},
        {"gemv_add", &Lowering::gemv_add},
        {"conv1d_causal_silu", &Lowering::conv1d_causal_silu},
        {"gdn_gates", &Lowering::gdn_gates},
        {"l2_norm_heads", &Lowering::l2_norm_heads},
        {"gated_delta_rule", &Lowering::gated_delta_rule},
        {"gated_rms_norm", &Lowering::gated_rms_norm},
        {"rope_neox", &Lowering::rope_neox},
        {"attention_gated", &Lowering::attention_gated},
        {"swiglu", &Lowering::swiglu},
    };
    return table;
}

void Lowering::lower(const model::RecipeStep& step, const model::BoundLayer* layer, Phase phase) {
    current_layer_ = layer ? layer->index : -1;
    auto it = lowerings().find(step.op);
    if (it == lowerings().end())
        throw Error(ErrorKind::Model, "recipe op '" + step.op + "' has no lowering in this runtime");
    (this->*(it->second))(step, layer, phase);
}

void Lowering::end_layer() { graph_.layer_end.push_back(graph_.nodes.size() - 1); }

void Lowering::check_finite(const std::string& activation, Phase phase) {
    const BufferId b = use(activation, "status check");
    emit("check_finite(" + activation + ")", DENSE_OP_CHECK_FINITE, DENSE_TYPE_NONE, DENSE_TYPE_NONE,
         {f32(b, elements_of(activation) * tokens_)}, {i32(graph_.inputs.status)}, {}, phase);
}

void Lowering::argmax(const std::string& activation, Phase phase) {
    const BufferId b = use(activation, "greedy choice");
    emit("argmax(" + activation + ")", DENSE_OP_ARGMAX, DENSE_TYPE_NONE, DENSE_TYPE_NONE,
         {f32(b, elements_of(activation))}, {i32(graph_.inputs.greedy)}, {}, phase);
}

void Lowering::top_k(const std::string& activation, Phase phase) {
    if (graph_.inputs.top_k_ids == 0) throw Error(ErrorKind::Internal, "graph: TOP_K without its outputs");
    const BufferId b = use(activation, "top-k choice");
    const int64_t k = options_.top_k_on_device;
    emit("top_k(" + activation + ")", DENSE_OP_TOP_K, DENSE_TYPE_NONE, DENSE_TYPE_NONE,
         {f32(b, elements_of(activation))}, {i32_words(graph_.inputs.top_k_ids, k), f32(graph_.inputs.top_k_values, k)},
         {}, phase);
}

Graph Lowering::finish() {
    for (const auto& [b, n] : elements_) graph_.buffers[b].bytes = static_cast<uint64_t>(n) * 4;
    graph_.hidden = use("h", "graph output");
    if (tokens_ == 1) {  // a batched graph is state-only: no head, no logits
        graph_.logits = use("logits", "graph output");
        graph_.buffers[graph_.logits].kind = BufferKind::Output;
    }
    return std::move(graph_);
}

// ---- buffers and views -----------------------------------------------------------------------

BufferId Lowering::new_buffer(const std::string& name, BufferKind kind, uint64_t bytes, int64_t layer) {
    graph_.buffers.push_back(Buffer{name, kind, bytes, layer});
    return static_cast<BufferId>(graph_.buffers.size() - 1);
}

BufferId Lowering::define(const std::string& name, int64_t elements) {
    auto it = names_.find(name);
    BufferId b;
    if (it != names_.end() && graph_.buffers[it->second].name == name) {
        b = it->second;
    } else {  // new name (or a name that was an alias of another buffer so far): its own buffer
        b = new_buffer(name, BufferKind::Activation, 0);
        names_[name] = b;
    }
    auto& n = elements_[b];
    n = std::max(n, elements * tokens_);  // T columns of `elements` (current_len_ is per token)
    current_len_[name] = elements;
    wrote(b);
    return b;
}

BufferId Lowering::use(const std::string& name, const std::string& where) const {
    auto it = names_.find(name);
    if (it == names_.end()) throw Error(ErrorKind::Model, where + ": activation '" + name + "' was never produced");
    return it->second;
}

int64_t Lowering::elements_of(const std::string& name) const {
    auto it = current_len_.find(name);
    return it == current_len_.end() ? 0 : it->second;
}

ViewRef Lowering::f32(BufferId b, int64_t ne0, int64_t ne1, int64_t offset, int64_t row_stride) const {
    ViewRef r;
    r.buffer = b;
    r.offset = static_cast<uint64_t>(offset) * 4;
    r.view.type = DENSE_TYPE_F32;
    r.view.device_kind = options_.device_kind;
    r.view.ne[0] = ne0;
    r.view.ne[1] = ne1;
    r.view.ne[2] = 1;
    r.view.ne[3] = 1;
    r.view.nb[0] = 4;
    r.view.nb[1] = (row_stride ? row_stride : ne0) * 4;
    r.view.nb[2] = r.view.nb[1] * ne1;
    r.view.nb[3] = r.view.nb[2];
    return r;
}

ViewRef Lowering::f32_tokens(BufferId b, int64_t ne0, int64_t ne1, int64_t offset, int64_t row_stride,
                             int64_t token_stride) const {
    ViewRef r = f32(b, ne0, ne1, offset, row_stride);
    r.view.ne[2] = tokens_;
    r.view.nb[2] = token_stride * 4;
    r.view.nb[3] = r.view.nb[2];  // ne[3] = 1, as f32() leaves it
    return r;
}

ViewRef Lowering::i32_tokens(BufferId b) const { return i32_words(b, tokens_); }

ViewRef Lowering::i32_words(BufferId b, int64_t n) const {
    ViewRef r = i32(b, 0);
    r.view.ne[0] = n;
    for (int i = 1; i < 4; ++i) r.view.nb[i] = 4 * n;
    return r;
}

ViewRef Lowering::i32(BufferId b, int64_t element) const {
    ViewRef r;
    r.buffer = b;
    r.offset = static_cast<uint64_t>(element) * 4;
    r.view.type = DENSE_TYPE_I32;
    r.view.device_kind = options_.device_kind;
    for (int i = 0; i < 4; ++i) {
        r.view.ne[i] = 1;
        r.view.nb[i] = 4;
    }
    return r;
}

const gguf::TensorInfo* Lowering::tensor(const model::BoundLayer* layer, const std::string& role) const {
    const auto& map = layer ? layer->tensors : model_.globals;
    auto it = map.find(role);
    return it == map.end() ? nullptr : it->second;
}

ViewRef Lowering::weight(const model::BoundLayer* layer, const std::string& role, const model::RecipeStep& step) const {
    const gguf::TensorInfo* t = tensor(layer, role);
    if (t == nullptr && !step.fallback_weight.empty()) t = tensor(layer, step.fallback_weight);
    if (t == nullptr) throw Error(ErrorKind::Model, step_where(step, prefix(layer)) + ": weight '" + role + "' is absent");
    ViewRef r;
    r.external = true;
    r.external_ptr = options_.weight_pointer ? options_.weight_pointer(t) : t->data.data();
    r.view.type = t->type;
    r.view.device_kind = options_.device_kind;
    for (int i = 0; i < 4; ++i) r.view.ne[i] = t->ne[static_cast<size_t>(i)];
    contiguous_strides(r.view);
    return r;
}

std::pair<BufferId, BufferId> Lowering::state_banks(const std::string& state, int64_t layer, uint64_t bytes) {
    const std::string key = state + "@" + std::to_string(layer);
    auto it = banks_.find(key);
    if (it != banks_.end()) return it->second;
    const BufferId a = new_buffer("state:" + key + ":A", BufferKind::StateBankA, bytes, layer);
    const BufferId b = new_buffer("state:" + key + ":B", BufferKind::StateBankB, bytes, layer);
    banks_[key] = {a, b};
    return {a, b};
}

// `n` elements per token; the quantized copy holds all T columns as one vector (GEMM_Q's layout).
ViewRef Lowering::quantized_input(const std::string& name, int64_t n_per_token, dense_type_id act, Phase phase) {
    const BufferId x = use(name, "gemv input");
    const int64_t n = n_per_token * tokens_;
    if (act == DENSE_TYPE_F32) return f32(x, n);
    const TypeInfo& t = type_info(act);
    const auto bytes = TypeTable::row_bytes(t, n);
    if (!bytes || !TypeTable::row_bytes(t, n_per_token))  // no block may span two tokens' columns
        throw Error(ErrorKind::Model, "activation '" + name + "' of " + std::to_string(n_per_token) +
                                          " elements is not a multiple of the " + t.name + " block");
    auto make_view = [&](BufferId q) {
        ViewRef r;
        r.buffer = q;
        r.view.type = act;
        r.view.device_kind = options_.device_kind;
        r.view.ne[0] = n;
        r.view.ne[1] = r.view.ne[2] = r.view.ne[3] = 1;
        contiguous_strides(r.view);
        return r;
    };
    if (auto it = quant_.find({x, act}); it != quant_.end()) return make_view(it->second);
    const std::string qname = "q:" + name + ":" + t.name;
    auto qit = names_.find(qname);
    const BufferId q = qit != names_.end() ? qit->second : new_buffer(qname, BufferKind::Activation, 0);
    names_[qname] = q;
    graph_.buffers[q].bytes = std::max(graph_.buffers[q].bytes, *bytes);
    if (!fuse_quantize_into_producer(x, n, act, make_view(q), phase))
        emit("quantize(" + name + " -> " + t.name + ")", DENSE_OP_QUANTIZE_ACT, DENSE_TYPE_NONE, act, {f32(x, n)},
             {make_view(q)}, {}, phase);
    quant_[{x, act}] = q;
    return make_view(q);
}

// The node that last wrote x becomes "op + quantize" when it is a norm or SwiGLU that wrote exactly
// the n floats of x (contiguous, from offset 0, rows of whole blocks) in this phase, and the device's packs implement that
// op with a quantized copy in `act`. Moving the quantized write earlier is safe: q is x's own
// quantized buffer, and nothing reads it between that node and here — the copy cached for x was
// dropped when that node wrote x (wrote()), and q holds nothing else.
bool Lowering::fuse_quantize_into_producer(BufferId x, int64_t n, dense_type_id act, const ViewRef& q, Phase phase) {
    if (!options_.fuses_quantize) return false;
    auto it = last_writer_.find(x);
    if (it == last_writer_.end()) return false;
    Node& producer = graph_.nodes[it->second];
    const dense_op_kind op = producer.key.op;
    if (op != DENSE_OP_RMS_NORM && op != DENSE_OP_GATED_RMS_NORM && op != DENSE_OP_SWIGLU) return false;
    if (producer.phase != phase || producer.key.act != DENSE_TYPE_NONE || producer.dst.size() != 1) return false;
    const ViewRef& y = producer.dst[0];
    const bool whole_x = !y.external && y.buffer == x && y.offset == 0 && y.view.type == DENSE_TYPE_F32 &&
                         y.view.ne[0] * y.view.ne[1] == n && y.view.nb[1] == y.view.ne[0] * 4 &&
                         y.view.ne[0] % type_info(act).block_elements == 0;  // no block spans two rows
    if (!whole_x || !options_.fuses_quantize(op, act)) return false;
    producer.key.act = act;
    producer.dst.push_back(q);
    producer.label += " + quantize(" + std::string(type_info(act).name) + ")";
    return true;
}

void Lowering::emit(std::string label, dense_op_kind op, dense_type_id weight_type, dense_type_id act_type,
                    std::vector<ViewRef> src, std::vector<ViewRef> dst, std::vector<std::byte> params, Phase phase) {
    Node n;
    n.label = std::move(label);
    n.layer = current_layer_;
    n.phase = phase;
    n.key = packs::OpKey{op, weight_type, act_type, options_.device_kind};
    n.src = std::move(src);
    n.dst = std::move(dst);
    n.params = std::move(params);
    for (const auto& d : n.dst)
        if (!d.external) {
            wrote(d.buffer);
            last_writer_[d.buffer] = graph_.nodes.size();
        }
    graph_.nodes.push_back(std::move(n));
}

void Lowering::wrote(BufferId b) {
    for (auto it = quant_.begin(); it != quant_.end();) it = it->first.first == b ? quant_.erase(it) : std::next(it);
}

int64_t Lowering::hp(const std::string& name, const model::BoundLayer* layer) const {
    auto v = model_.hparams.number(name, layer ? std::optional<int64_t>(layer->index) : std::nullopt);
    if (!v || !std::holds_alternative<int64_t>(*v))
        throw Error(ErrorKind::Model, "graph: hparam '" + name + "' is not an integer for this model");
    return std::get<int64_t>(*v);
}

float Lowering::hpf(const std::string& name) const {
    auto v = model_.hparams.number(name);
    if (!v) throw Error(ErrorKind::Model, "graph: hparam '" + name + "' is missing");
    return static_cast<float>(std::holds_alternative<double>(*v) ? std::get<double>(*v)
                                                                 : static_cast<double>(std::get<int64_t>(*v)));
}

dense_type_id gemv_activation(const GraphOptions& options, dense_type_id weight_type) {
    return options.activation_for ? options.activation_for(weight_type) : type_info(weight_type).act_type;
}

dense_type_id Lowering::activation(dense_type_id weight_type) const { return gemv_activation(options_, weight_type); }

std::string Lowering::prefix(const model::BoundLayer* layer) const {
    return layer ? "blk." + std::to_string(layer->index) : std::string();
}

namespace {
void require(bool ok, const model::RecipeStep& step, const std::string& where, const std::string& what) {
    if (!ok) throw Error(ErrorKind::Model, step_where(step, where) + ": " + what);
}
std::string tensor_name(const gguf::TensorInfo* t) { return t ? std::string(t->name) : "?"; }
}  // namespace

// ---- lowerings -------------------------------------------------------------------------------

void Lowering::embed_row(const model::RecipeStep& s, const model::BoundLayer* layer, Phase phase) {
    const ViewRef w = weight(layer, s.weights.at(0), s);
    const int64_t d = w.view.ne[0];
    const BufferId h = define(s.outputs.at(0), d);
    for (int64_t t = 0; t < tokens_; ++t)
        emit("embed_row(" + s.weights[0] + ")" + column(t), DENSE_OP_EMBED_ROW, w.view.type, DENSE_TYPE_NONE,
             {w, i32(graph_.inputs.token, t)}, {f32(h, d, 1, t * d)}, {}, phase);
}

void Lowering::rms_norm(const model::RecipeStep& s, const model::BoundLayer* layer, Phase phase) {
    const ViewRef w = weight(layer, s.weights.at(0), s);
    const int64_t n = w.view.ne[0];
    const std::string& in = s.inputs.at(0);
    require(elements_of(in) == n, s, prefix(layer),
            "input '" + in + "' has " + std::to_string(elements_of(in)) + " elements, the norm weight " + std::to_string(n));
    const BufferId x = use(in, step_where(s, prefix(layer)));
    const BufferId y = s.outputs.at(0) == in ? x : define(s.outputs.at(0), n);
    if (y == x) current_len_[in] = n;
    emit(prefix(layer) + " rms_norm(" + s.weights[0] + ")", DENSE_OP_RMS_NORM, DENSE_TYPE_NONE, DENSE_TYPE_NONE,
         {f32(x, n, tokens_), w}, {f32(y, n, tokens_)}, params_bytes(dense_norm_params{{}, hpf("rms_eps"), 0}),
         phase);
}

// Per-head RMSNorm of the query heads (inside the interleaved query+gate projection: each head's
// slice is [query | gate], the query is its first head_dim values) and of the key heads.
void Lowering::rms_norm_heads(const model::RecipeStep& s, const model::BoundLayer* layer, Phase phase) {
    require(s.inputs.size() == s.weights.size() && s.inputs.size() == s.outputs.size() && s.inputs.size() == 2, s,
            prefix(layer), "expects [query, key] inputs, weights and outputs");
    const int64_t heads[2] = {hp("n_head"), hp("n_head_kv")};
    for (size_t i = 0; i < 2; ++i) {
        const ViewRef w = weight(layer, s.weights[i], s);
        const int64_t d = w.view.ne[0];
        const int64_t len = elements_of(s.inputs[i]);
        require(len % (heads[i] * d) == 0, s, prefix(layer),
                "input '" + s.inputs[i] + "' (" + std::to_string(len) + ") is not " + std::to_string(heads[i]) +
                    " heads of a multiple of " + std::to_string(d));
        const int64_t slice = len / heads[i];
        const BufferId x = use(s.inputs[i], step_where(s, prefix(layer)));
        const BufferId y = define(s.outputs[i], d * heads[i]);
        emit(prefix(layer) + " rms_norm_heads(" + s.weights[i] + ")", DENSE_OP_RMS_NORM, DENSE_TYPE_NONE,
             DENSE_TYPE_NONE, {f32(x, d, heads[i] * tokens_, 0, slice), w}, {f32(y, d, heads[i] * tokens_)},
             params_bytes(dense_norm_params{{}, hpf("rms_eps"), 0}), phase);
    }
}

void Lowering::gemv(const model::RecipeStep& s, const model::BoundLayer* layer, Phase phase) {
    const ViewRef w = weight(layer, s.weights.at(0), s);
    const gguf::TensorInfo* t = tensor(layer, s.weights[0]);
    if (t == nullptr) t = tensor(layer, s.fallback_weight);
    const int64_t in = w.view.ne[0], out = w.view.ne[1];
    const std::string& x = s.inputs.at(0);
    require(elements_of(x) == in, s, prefix(layer),
            "input '" + x + "' has " + std::to_string(elements_of(x)) + " elements, '" + tensor_name(t) + "' expects " +
                std::to_string(in));
    const dense_type_id act = activation(w.view.type);
    const ViewRef xq = quantized_input(x, in, act, phase);
    const BufferId y = define(s.outputs.at(0), out);
    emit_gemv(tensor_name(t) + " gemv", t, w, xq, y, act, false, phase);
}

void Lowering::gemv_add(const model::RecipeStep& s, const model::BoundLayer* layer, Phase phase) {
    const ViewRef w = weight(layer, s.weights.at(0), s);
    const gguf::TensorInfo* t = tensor(layer, s.weights[0]);
    const int64_t in = w.view.ne[0], out = w.view.ne[1];
    require(s.inputs.size() == 2 && s.outputs.at(0) == s.inputs[1], s, prefix(layer),
            "expects [x, residual] inputs and writes the residual");
    const std::string& x = s.inputs[0];
    const std::string& r = s.inputs[1];
    require(elements_of(x) == in && elements_of(r) == out, s, prefix(layer),
            "'" + tensor_name(t) + "' {" + std::to_string(in) + ", " + std::to_string(out) + "} does not fit '" + x +
                "' (" + std::to_string(elements_of(x)) + ") -> '" + r + "' (" + std::to_string(elements_of(r)) + ")");
    const dense_type_id act = activation(w.view.type);
    const ViewRef xq = quantized_input(x, in, act, phase);
    const BufferId h = use(r, step_where(s, prefix(layer)));
    emit_gemv(tensor_name(t) + " gemv+residual", t, w, xq, h, act, true, phase);
}

void Lowering::emit_gemv(const std::string& label, const gguf::TensorInfo* t, const ViewRef& w, const ViewRef& xq,
                         BufferId y, dense_type_id act, bool accumulate, Phase phase) {
    const int64_t rows = w.view.ne[1];
    const auto params = [&] { return accumulate ? params_bytes(dense_gemv_params{{}, 1, 0}) : std::vector<std::byte>{}; };
    const auto gemm_params = [&] {
        if (!options_.gemm_free_order) return params();
        return params_bytes(dense_gemv_params{{}, accumulate ? 1u : 0u, DENSE_GEMM_ORDER_FREE});
    };
    const int64_t keep = options_.device_rows && t != nullptr ? options_.device_rows(t) : rows;
    const int64_t bus_rows = options_.bus_rows && t != nullptr ? options_.bus_rows(t) : 0;
    if (tokens_ > 1 && keep >= rows && bus_rows <= 0) {  // one GEMM_Q reads the weight once for all T columns
        emit(label, DENSE_OP_GEMM_Q, w.view.type, act, {w, xq}, {f32(y, rows, tokens_)}, gemm_params(), phase);
        return;
    }
    if (tokens_ == 1 && keep >= rows) {
        emit(label, DENSE_OP_GEMV_Q, w.view.type, act, {w, xq}, {f32(y, rows)}, params(), phase);
        return;
    }
    if (keep < 0 || keep > rows || w.view.ne[2] != 1 || w.view.ne[3] != 1)
        throw Error(ErrorKind::Internal, "graph: row split of '" + tensor_name(t) + "' at row " + std::to_string(keep) +
                                             " of " + std::to_string(rows) + " is not a split of a 2-D GEMV weight");
    const int64_t bus = options_.bus_source ? std::clamp<int64_t>(bus_rows, 0, rows - keep) : 0;
    const int64_t cpu_first = keep + bus;
    if (tokens_ > 1) {
        // A batched step streams every host row through the bus staging, once for its T columns: the
        // device computes the whole weight (the copies, not the CPU, bound a prompt step: a CPU part
        // would read its rows T times). The bus share comes from its page-locked copy, the rest
        // straight from the file mapping.
        if (keep > 0)
            emit(label + " " + row_range(0, keep), DENSE_OP_GEMM_Q, w.view.type, act, {row_view(w, w.external_ptr, 0, keep), xq},
                 {f32(y, keep, tokens_, 0, rows)}, gemm_params(), phase);
        if (bus > 0)
            emit_bus_chunks(label, t, w, xq, y, act, params(), phase, keep, keep + bus, options_.bus_source(t), keep, "");
        if (cpu_first < rows)
            emit_bus_chunks(label, t, w, xq, y, act, params(), phase, cpu_first, rows, t->data.data(), 0,
                            " from the file", true);
        return;
    }
    // The CPU's rows come first: on a GPU the executor starts them on host threads (exec/host_nodes.hpp)
    // and the device's rows, next, run meanwhile. The CPU reads them from the file mapping, wherever
    // the device's copy lives.
    // Its activation and output views say CPU too: on a GPU the op sees host staging copies of them.
    if (cpu_first < rows) {
        ViewRef cpu_w = row_view(w, t->data.data(), cpu_first, rows);
        ViewRef cpu_x = xq, cpu_y = f32(y, rows - cpu_first, 1, cpu_first);
        for (ViewRef* v : {&cpu_w, &cpu_x, &cpu_y}) {
            v->view.device_kind = DENSE_DEVICE_CPU;
            v->view.device_index = 0;
        }
        emit(label + " " + row_range(cpu_first, rows) + " on the cpu", DENSE_OP_GEMV_Q, w.view.type, act, {cpu_w, cpu_x},
             {cpu_y}, params(), phase);
        graph_.nodes.back().key.device = DENSE_DEVICE_CPU;
        graph_.nodes.back().split_cpu_part = true;
    }
    // The device's own rows first: they keep the GPU busy while the bus chunks' copies land.
    if (keep > 0)
        emit(label + " " + row_range(0, keep), DENSE_OP_GEMV_Q, w.view.type, act, {row_view(w, w.external_ptr, 0, keep), xq},
             {f32(y, keep)}, params(), phase);
    // The device's share of the host rows: ordinary device GEMVs, one per chunk that fits a staging
    // slot, each reading its rows from the slot that a copy from page-locked host memory fills
    // beside the step (exec/bus_copies.hpp).
    if (bus > 0) emit_bus_chunks(label, t, w, xq, y, act, params(), phase, keep, keep + bus, options_.bus_source(t), keep, "");
}

// Rows [first, end) of the weight: ne[1] = the range's rows, data advanced by whole rows from `base`.
ViewRef Lowering::row_view(const ViewRef& w, const void* base, int64_t first, int64_t end) {
    ViewRef r = w;
    r.external_ptr = static_cast<const std::byte*>(base) + static_cast<uint64_t>(w.view.nb[1]) * first;
    r.view.ne[1] = end - first;
    contiguous_strides(r.view);
    return r;
}

// Rows [first, end) of weight t as device GEMVs (GEMMs in a batched step) on staging slots, one per
// chunk that fits a slot, each carrying the copy that fills its slot (Node::bus_copy) from `source`,
// where row `source_row` of the weight lies (in pageable memory when `pageable`).
void Lowering::emit_bus_chunks(const std::string& label, const gguf::TensorInfo* t, const ViewRef& w, const ViewRef& xq,
                               BufferId y, dense_type_id act, const std::vector<std::byte>& params, Phase phase,
                               int64_t first, int64_t end, const void* source, int64_t source_row,
                               const std::string& from, bool pageable) {
    const int64_t rows = w.view.ne[1];
    const auto& staging = options_.bus_staging;
    const uint64_t row_bytes = static_cast<uint64_t>(w.view.nb[1]);
    const int64_t chunk_rows = staging.slots == 0 || row_bytes == 0
                                   ? 0
                                   : static_cast<int64_t>(staging.slot_bytes / row_bytes) / kBusRowTile * kBusRowTile;
    if (staging.base == nullptr || chunk_rows <= 0)
        throw Error(ErrorKind::Internal, "graph: no bus staging slot holds " + std::to_string(kBusRowTile) + " rows of '" +
                                             tensor_name(t) + "'");
    const auto* src = static_cast<const std::byte*>(source);
    for (int64_t a = first; a < end; a += chunk_rows) {
        const int64_t b = std::min(end, a + chunk_rows);
        const uint32_t slot = next_bus_slot_;
        next_bus_slot_ = (next_bus_slot_ + 1) % staging.slots;
        void* slot_data = static_cast<std::byte*>(staging.base) + staging.slot_bytes * slot;
        const std::string what = label + " " + row_range(a, b) + " copied over the bus" + from;
        if (tokens_ > 1)
            emit(what, DENSE_OP_GEMM_Q, w.view.type, act, {row_view(w, slot_data, 0, b - a), xq},
                 {f32(y, b - a, tokens_, a, rows)}, params, phase);
        else
            emit(what, DENSE_OP_GEMV_Q, w.view.type, act, {row_view(w, slot_data, 0, b - a), xq}, {f32(y, b - a, 1, a)},
                 params, phase);
        graph_.nodes.back().bus_copy = {src + row_bytes * static_cast<uint64_t>(a - source_row), slot_data,
                                        row_bytes * static_cast<uint64_t>(b - a), slot, pageable};
    }
}

void Lowering::conv1d_causal_silu(const model::RecipeStep& s, const model::BoundLayer* layer, Phase phase) {
    const ViewRef taps = weight(layer, s.weights.at(0), s);
    const int64_t k = taps.view.ne[0], c = taps.view.ne[1];
    require(elements_of(s.inputs.at(0)) == c, s, prefix(layer), "input length differs from the conv channels");
    const BufferId x = use(s.inputs[0], step_where(s, prefix(layer)));
    const auto [a, b] = state_banks(s.state.empty() ? "conv" : s.state, layer->index, static_cast<uint64_t>((k - 1) * c) * 4);
    const BufferId y = define(s.outputs.at(0), c);
    // Token 0 reads the committed bank A; later tokens update bank B in place (dense_abi.h allows it).
    // With the token axis, one call does exactly that for all T tokens.
    if (batch_token_ops()) {
        emit(prefix(layer) + " conv1d_causal+silu (" + std::to_string(tokens_) + " tokens)", DENSE_OP_CONV1D_CAUSAL,
             DENSE_TYPE_NONE, DENSE_TYPE_NONE, {f32(x, c, tokens_), taps, f32(a, k - 1, c)},
             {f32(y, c, tokens_), f32(b, k - 1, c)}, params_bytes(dense_conv_params{{}, 1, 0}), phase);
        return;
    }
    for (int64_t t = 0; t < tokens_; ++t)
        emit(prefix(layer) + " conv1d_causal+silu" + column(t), DENSE_OP_CONV1D_CAUSAL, DENSE_TYPE_NONE,
             DENSE_TYPE_NONE, {f32(x, c, 1, t * c), taps, f32(t == 0 ? a : b, k - 1, c)},
             {f32(y, c, 1, t * c), f32(b, k - 1, c)}, params_bytes(dense_conv_params{{}, 1, 0}), phase);
}

void Lowering::gdn_gates(const model::RecipeStep& s, const model::BoundLayer* layer, Phase phase) {
    require(s.inputs.size() == 2 && s.weights.size() == 2 && s.outputs.size() == 2, s, prefix(layer),
            "expects [b, a] inputs, [dt_bias, A] weights, [beta, decay] outputs");
    const int64_t h = elements_of(s.inputs[0]);
    require(elements_of(s.inputs[1]) == h, s, prefix(layer), "b and a differ in length");
    const BufferId b = use(s.inputs[0], "gdn_gates"), a = use(s.inputs[1], "gdn_gates");
    const ViewRef dt = weight(layer, s.weights[0], s), big_a = weight(layer, s.weights[1], s);
    const BufferId beta = define(s.outputs[0], h), decay = define(s.outputs[1], h);
    if (batch_token_ops()) {
        emit(prefix(layer) + " gdn_gates (" + std::to_string(tokens_) + " tokens)", DENSE_OP_GDN_GATES,
             DENSE_TYPE_NONE, DENSE_TYPE_NONE, {f32(b, h, tokens_), f32(a, h, tokens_), dt, big_a},
             {f32(beta, h, tokens_), f32(decay, h, tokens_)}, {}, phase);
        return;
    }
    for (int64_t t = 0; t < tokens_; ++t)
        emit(prefix(layer) + " gdn_gates" + column(t), DENSE_OP_GDN_GATES, DENSE_TYPE_NONE, DENSE_TYPE_NONE,
             {f32(b, h, 1, t * h), f32(a, h, 1, t * h), dt, big_a}, {f32(beta, h, 1, t * h), f32(decay, h, 1, t * h)},
             {}, phase);
}

// L2 norm of every query and key head of the convolved q|k|v channels, in place. The q heads fill
// [0, key_dim) and the k heads [key_dim, 2 key_dim), so when key_dim = hk * dk (always, for qwen35)
// they are 2 hk consecutive rows of dk: one op instead of two (one kernel fewer per layer on a GPU).
void Lowering::l2_norm_heads(const model::RecipeStep& s, const model::BoundLayer* layer, Phase phase) {
    const int64_t dk = hp("ssm_state_size"), hk = hp("ssm_group_count"), key_dim = hp("key_dim");
    const std::string& in = s.inputs.at(0);
    require(elements_of(in) >= 2 * key_dim, s, prefix(layer), "input shorter than the q and k channels");
    const BufferId x = use(in, step_where(s, prefix(layer)));
    const auto p = params_bytes(dense_norm_params{{}, hpf("rms_eps"), 0});
    const int64_t len = elements_of(in);
    if (batch_token_ops()) {  // token t's heads `len` elements after token t-1's
        const std::string all = " (" + std::to_string(tokens_) + " tokens)";
        if (key_dim == hk * dk) {
            emit(prefix(layer) + " l2_norm(q and k heads)" + all, DENSE_OP_L2_NORM, DENSE_TYPE_NONE, DENSE_TYPE_NONE,
                 {f32_tokens(x, dk, 2 * hk, 0, 0, len)}, {f32_tokens(x, dk, 2 * hk, 0, 0, len)}, p, phase);
        } else {
            emit(prefix(layer) + " l2_norm(q heads)" + all, DENSE_OP_L2_NORM, DENSE_TYPE_NONE, DENSE_TYPE_NONE,
                 {f32_tokens(x, dk, hk, 0, 0, len)}, {f32_tokens(x, dk, hk, 0, 0, len)}, p, phase);
            emit(prefix(layer) + " l2_norm(k heads)" + all, DENSE_OP_L2_NORM, DENSE_TYPE_NONE, DENSE_TYPE_NONE,
                 {f32_tokens(x, dk, hk, key_dim, 0, len)}, {f32_tokens(x, dk, hk, key_dim, 0, len)}, p, phase);
        }
        names_[s.outputs.at(0)] = x;
        current_len_[s.outputs[0]] = len;
        return;
    }
    for (int64_t t = 0; t < tokens_; ++t) {
        const int64_t at = t * len;  // token t's q|k|v channels
        if (key_dim == hk * dk) {
            emit(prefix(layer) + " l2_norm(q and k heads)" + column(t), DENSE_OP_L2_NORM, DENSE_TYPE_NONE,
                 DENSE_TYPE_NONE, {f32(x, dk, 2 * hk, at)}, {f32(x, dk, 2 * hk, at)}, p, phase);
        } else {
            emit(prefix(layer) + " l2_norm(q heads)" + column(t), DENSE_OP_L2_NORM, DENSE_TYPE_NONE, DENSE_TYPE_NONE,
                 {f32(x, dk, hk, at)}, {f32(x, dk, hk, at)}, p, phase);
            emit(prefix(layer) + " l2_norm(k heads)" + column(t), DENSE_OP_L2_NORM, DENSE_TYPE_NONE, DENSE_TYPE_NONE,
                 {f32(x, dk, hk, at + key_dim)}, {f32(x, dk, hk, at + key_dim)}, p, phase);
        }
    }
    names_[s.outputs.at(0)] = x;  // same buffer, now normalised
    current_len_[s.outputs[0]] = elements_of(in);
}

void Lowering::gated_delta_rule(const model::RecipeStep& s, const model::BoundLayer* layer, Phase phase) {
    const int64_t dk = hp("ssm_state_size"), hk = hp("ssm_group_count"), hv = hp("ssm_time_step_rank");
    const int64_t dv = hp("ssm_head_v_dim"), key_dim = hp("key_dim");
    require(s.inputs.size() == 3, s, prefix(layer), "expects [qkv, beta, decay] inputs");
    require(elements_of(s.inputs[0]) == 2 * key_dim + hv * dv, s, prefix(layer), "q|k|v length mismatch");
    const BufferId x = use(s.inputs[0], "gated_delta_rule");
    const BufferId beta = use(s.inputs[1], "gated_delta_rule"), decay = use(s.inputs[2], "gated_delta_rule");
    const auto [a, b] = state_banks(s.state.empty() ? "delta" : s.state, layer->index,
                                    static_cast<uint64_t>(dk * dv * hv) * 4);
    const BufferId o = define(s.outputs.at(0), dv * hv);
    const int64_t len = elements_of(s.inputs[0]);
    const auto p = params_bytes(dense_gdn_params{{}, static_cast<float>(1.0 / std::sqrt(static_cast<double>(dk))), 0});
    // Token 0 reads the committed bank A; later tokens update bank B in place (dense_abi.h allows it).
    // With the token axis, one call runs the state through all T tokens.
    if (batch_token_ops()) {
        emit(prefix(layer) + " gated_delta_rule (" + std::to_string(tokens_) + " tokens)", DENSE_OP_GDN_DECODE,
             DENSE_TYPE_NONE, DENSE_TYPE_NONE,
             {f32_tokens(x, dk, hk, 0, 0, len), f32_tokens(x, dk, hk, key_dim, 0, len),
              f32_tokens(x, dv, hv, 2 * key_dim, 0, len), f32(beta, hv, tokens_), f32(decay, hv, tokens_),
              f32(a, dk * dv, hv)},
             {f32_tokens(o, dv, hv, 0, 0, dv * hv), f32(b, dk * dv, hv)}, p, phase);
        return;
    }
    for (int64_t t = 0; t < tokens_; ++t) {
        const int64_t at = t * len;
        emit(prefix(layer) + " gated_delta_rule" + column(t), DENSE_OP_GDN_DECODE, DENSE_TYPE_NONE, DENSE_TYPE_NONE,
             {f32(x, dk, hk, at), f32(x, dk, hk, at + key_dim), f32(x, dv, hv, at + 2 * key_dim),
              f32(beta, hv, 1, t * hv), f32(decay, hv, 1, t * hv), f32(t == 0 ? a : b, dk * dv, hv)},
             {f32(o, dv, hv, t * dv * hv), f32(b, dk * dv, hv)}, p, phase);
    }
}

void Lowering::gated_rms_norm(const model::RecipeStep& s, const model::BoundLayer* layer, Phase phase) {
    const ViewRef w = weight(layer, s.weights.at(0), s);
    const int64_t d = w.view.ne[0];
    const int64_t len = elements_of(s.inputs.at(0));
    require(len % d == 0 && elements_of(s.inputs.at(1)) == len, s, prefix(layer), "o and z must be heads of the norm width");
    const BufferId o = use(s.inputs[0], "gated_rms_norm"), z = use(s.inputs[1], "gated_rms_norm");
    const BufferId y = define(s.outputs.at(0), len);
    emit(prefix(layer) + " gated_rms_norm", DENSE_OP_GATED_RMS_NORM, DENSE_TYPE_NONE, DENSE_TYPE_NONE,
         {f32(o, d, len / d * tokens_), f32(z, d, len / d * tokens_), w}, {f32(y, d, len / d * tokens_)},
         params_bytes(dense_norm_params{{}, hpf("rms_eps"), 0}), phase);
}

void Lowering::rope_neox(const model::RecipeStep& s, const model::BoundLayer* layer, Phase phase) {
    require(s.inputs.size() == s.outputs.size(), s, prefix(layer), "one output per input");
    const int64_t d = hp("head_dim");
    const auto p = params_bytes(dense_rope_params{{}, static_cast<int32_t>(hp("n_rot")), DENSE_ROPE_NEOX,
                                                  hpf("rope_base"), 1.0f});
    for (size_t i = 0; i < s.inputs.size(); ++i) {
        const int64_t len = elements_of(s.inputs[i]);
        require(len % d == 0, s, prefix(layer), "input '" + s.inputs[i] + "' is not whole heads");
        const BufferId x = use(s.inputs[i], "rope");
        if (batch_token_ops()) {
            emit(prefix(layer) + " rope(" + s.inputs[i] + ") (" + std::to_string(tokens_) + " tokens)", DENSE_OP_ROPE,
                 DENSE_TYPE_NONE, DENSE_TYPE_NONE,
                 {f32_tokens(x, d, len / d, 0, 0, len), i32_tokens(graph_.inputs.position)},
                 {f32_tokens(x, d, len / d, 0, 0, len)}, p, phase);
        } else {
            for (int64_t t = 0; t < tokens_; ++t)
                emit(prefix(layer) + " rope(" + s.inputs[i] + ")" + column(t), DENSE_OP_ROPE, DENSE_TYPE_NONE,
                     DENSE_TYPE_NONE, {f32(x, d, len / d, t * len), i32(graph_.inputs.position, t)},
                     {f32(x, d, len / d, t * len)}, p, phase);
        }
        names_[s.outputs[i]] = x;  // rotated in place
        current_len_[s.outputs[i]] = len;
    }
}

// Stores this token's K and V, then attends over positions 0..n_kv-1 with the sigmoid output gate
// taken from the second half of every head's query+gate slice.
void Lowering::attention_gated(const model::RecipeStep& s, const model::BoundLayer* layer, Phase phase) {
    require(s.inputs.size() == 4, s, prefix(layer), "expects [q, k, v, query+gate] inputs");
    const int64_t d = hp("head_dim"), hq = hp("n_head"), hkv = hp("n_head_kv");
    require(elements_of(s.inputs[0]) == d * hq && elements_of(s.inputs[1]) == d * hkv &&
                elements_of(s.inputs[2]) == d * hkv && elements_of(s.inputs[3]) == 2 * d * hq,
            s, prefix(layer), "q/k/v/gate lengths do not match the head counts");
    const BufferId q = use(s.inputs[0], "attention"), k = use(s.inputs[1], "attention");
    const BufferId v = use(s.inputs[2], "attention"), qg = use(s.inputs[3], "attention");
    auto it = kv_.find(layer->index);
    if (it == kv_.end()) {
        const uint64_t bytes = static_cast<uint64_t>(d * hkv) * static_cast<uint64_t>(options_.n_ctx) *
                               type_info(options_.kv_type).block_bytes;
        const BufferId kc = new_buffer("kv:" + std::to_string(layer->index) + ":K", BufferKind::KvCache, bytes, layer->index);
        const BufferId vc = new_buffer("kv:" + std::to_string(layer->index) + ":V", BufferKind::KvCache, bytes, layer->index);
        it = kv_.emplace(layer->index, std::make_pair(kc, vc)).first;
    }
    auto cache_view = [&](BufferId b) {
        ViewRef r;
        r.buffer = b;
        r.view.type = options_.kv_type;
        r.view.device_kind = options_.device_kind;
        r.view.ne[0] = d;
        r.view.ne[1] = hkv;
        r.view.ne[2] = options_.n_ctx;
        r.view.ne[3] = 1;
        contiguous_strides(r.view);
        return r;
    };
    const double scale_hp = hpf("attn_scale");
    const float scale = scale_hp != 0.0 ? static_cast<float>(scale_hp)
                                        : static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
    const BufferId o = define(s.outputs.at(0), d * hq);
    // Token by token: token t's K and V land in its slot before it attends over n_kv[t] = its
    // position + 1 slots, so no token of a batched step sees a later one. With the token axis all T
    // slots are written first: token t still reads only slots < n_kv[t], the same values.
    if (batch_token_ops()) {
        emit(prefix(layer) + " kv_store (" + std::to_string(tokens_) + " tokens)", DENSE_OP_KV_STORE,
             DENSE_TYPE_NONE, DENSE_TYPE_NONE,
             {f32_tokens(k, d, hkv, 0, 0, d * hkv), f32_tokens(v, d, hkv, 0, 0, d * hkv),
              i32_tokens(graph_.inputs.position)},
             {cache_view(it->second.first), cache_view(it->second.second)}, {}, phase);
        emit(prefix(layer) + " attention+gate (" + std::to_string(tokens_) + " tokens)", DENSE_OP_ATTN_DECODE,
             DENSE_TYPE_NONE, DENSE_TYPE_NONE,
             {f32_tokens(q, d, hq, 0, 0, d * hq), cache_view(it->second.first), cache_view(it->second.second),
              i32_tokens(graph_.inputs.n_kv), f32_tokens(qg, d, hq, d, 2 * d, 2 * d * hq)},
             {f32_tokens(o, d, hq, 0, 0, d * hq)}, params_bytes(dense_attn_params{{}, scale, 0}), phase);
        return;
    }
    for (int64_t t = 0; t < tokens_; ++t) {
        emit(prefix(layer) + " kv_store" + column(t), DENSE_OP_KV_STORE, DENSE_TYPE_NONE, DENSE_TYPE_NONE,
             {f32(k, d, hkv, t * d * hkv), f32(v, d, hkv, t * d * hkv), i32(graph_.inputs.position, t)},
             {cache_view(it->second.first), cache_view(it->second.second)}, {}, phase);
        emit(prefix(layer) + " attention+gate" + column(t), DENSE_OP_ATTN_DECODE, DENSE_TYPE_NONE, DENSE_TYPE_NONE,
             {f32(q, d, hq, t * d * hq), cache_view(it->second.first), cache_view(it->second.second),
              i32(graph_.inputs.n_kv, t), f32(qg, d, hq, t * 2 * d * hq + d, 2 * d)},
             {f32(o, d, hq, t * d * hq)}, params_bytes(dense_attn_params{{}, scale, 0}), phase);
    }
}

void Lowering::swiglu(const model::RecipeStep& s, const model::BoundLayer* layer, Phase phase) {
    const int64_t n = elements_of(s.inputs.at(0));
    require(elements_of(s.inputs.at(1)) == n, s, prefix(layer), "gate and up differ in length");
    const BufferId g = use(s.inputs[0], "swiglu"), u = use(s.inputs[1], "swiglu");
    const BufferId y = define(s.outputs.at(0), n);
    emit(prefix(layer) + " swiglu", DENSE_OP_SWIGLU, DENSE_TYPE_NONE, DENSE_TYPE_NONE,
         {f32(g, n * tokens_), f32(u, n * tokens_)}, {f32(y, n * tokens_)}, {}, phase);
}

}  // namespace dense::graph
