#include "exec/session.hpp"

#include "core/error.hpp"
#include "core/type_table.hpp"
#include "exec/host_nodes.hpp"
#include "graph/attn_prep_fusion.hpp"
#include "graph/gdn_step_fusion.hpp"
#include "graph/gemv_lists.hpp"
#include "graph/view_extent.hpp"
#include "packs/activation_choice.hpp"
#include "plan/buffer_arena.hpp"
#include "plan/bus_share.hpp"
#include "plan/row_split.hpp"
#include "plan/bus_staging.hpp"
#include "plan/graph_options.hpp"
#include "plan/op_workspace.hpp"
#include "plan/prefill_graph.hpp"
#include "plan/session_bill.hpp"
#include "plan/weight_arena.hpp"

#include <algorithm>
#include <cstring>
#include <set>
#include <spdlog/spdlog.h>

namespace dense::exec {

namespace {

std::string status_text(dense_status s) {
    switch (s) {
        case DENSE_OK: return "ok";
        case DENSE_E_UNSUPPORTED: return "unsupported";
        case DENSE_E_INVALID_ARGUMENT: return "invalid argument";
        case DENSE_E_OUT_OF_MEMORY: return "out of memory";
        case DENSE_E_DEVICE: return "device error";
        case DENSE_E_NUMERIC: return "NaN/Inf";
        case DENSE_E_INTERNAL: return "internal error";
        case DENSE_E_ABI: return "ABI mismatch";
        default: return "status " + std::to_string(s);
    }
}

// The resolution base of parity 1: every bank A <-> its bank B (the two banks of one state are
// adjacent buffers, state_banks() in graph/step_lowering.cpp).
void swap_state_banks(const graph::Graph& g, std::vector<void*>& base) {
    for (size_t i = 0; i + 1 < base.size(); ++i)
        if (g.buffers[i].kind == graph::BufferKind::StateBankA) std::swap(base[i], base[i + 1]);
}

// Whether the graph has a node of `op` (the optional heads: ARGMAX, TOP_K).
bool has_op_node(const graph::Graph& g, dense_op_kind op) {
    return std::any_of(g.nodes.begin(), g.nodes.end(), [op](const graph::Node& n) { return n.key.op == op; });
}

}  // namespace

Session::Session(const model::BoundModel& model, const model::ModelSpec& spec, const packs::PackManager& packs,
                 const SessionOptions& options) {
    const auto& device = packs.devices().at(options.device);
    repeat_nodes_ = options.repeat_nodes;
    // A placement is checked before anything is allocated. `placed`: anything off the GPU arena (CPU
    // rows or host tables); `split`: CPU rows, which need the host nodes.
    const plan::Placement* placed = options.row_split && options.row_split->moves_any() ? &*options.row_split : nullptr;
    const plan::Placement* split = placed != nullptr && placed->splits_any() ? placed : nullptr;
    std::map<const gguf::TensorInfo*, int64_t> device_rows;  // of the matrices (host tables are read whole)
    if (placed != nullptr) plan::verify_exact_cover(model, spec, *placed);
    if (split != nullptr)
        for (const auto* t : plan::weight_arena(model).tensors)
            if (!split->in_host_table(std::string(t->name))) device_rows[t] = split->gpu_rows(std::string(t->name));
    memory_ = device.kind() == DENSE_DEVICE_CPU ? make_host_memory() : make_pack_memory(packs, options.device);
    if (split != nullptr) require_host_functions(*memory_);  // before the upload
    weights_ = std::make_unique<WeightStore>(model, *memory_, kUploadBatchBytes, !options.keep_page_cache, placed);

    // The graph options a plan of this session uses too (plan/graph_options.hpp): same graph, same bill.
    graph::GraphOptions go =
        plan::session_graph_options(packs, options.device, options.n_ctx, options.kv_type, options.gemv_activation,
                                    options.device_top_k);
    go.weight_pointer = [this](const gguf::TensorInfo* t) { return weights_->pointer(t); };
    gemm_free_order_ = go.gemm_free_order;
    if (split != nullptr)
        go.device_rows = [&device_rows](const gguf::TensorInfo* t) {
            auto it = device_rows.find(t);
            return it == device_rows.end() ? t->ne[1] : it->second;
        };
    // The device's share of the host rows, copied over the bus each token from a page-locked copy
    // into a ring of staging slots (exec/bus_rows.hpp, exec/bus_copies.hpp).
    std::map<const gguf::TensorInfo*, int64_t> bus_rows;
    // The ring serves the token step's bus share and the batched steps, which stream every host row
    // through it (at share 0 too). A pack that cannot copy beside the step (before ABI 1.6) gets no
    // ring for the prompts: token by token then, as prefill_chunk_for says.
    // `bus_read_share: auto` is measured and chosen below, once the ring exists (plan/bus_share.hpp);
    // it bills the ring as any positive share does. A CPU session, or a pack that cannot copy beside
    // the step, has no bus: share 0.
    const bool auto_share = plan::is_auto_bus_share(options.bus_read_share);
    const bool has_bus = split != nullptr && device.kind() != DENSE_DEVICE_CPU && memory_->can_overlap_copies();
    bus_share_ = auto_share ? (has_bus ? 1.0 : 0.0) : options.bus_read_share;
    if (auto_share && split != nullptr && !has_bus)
        bus_share_note_ = "0 (no bus: a CPU session, or a pack that cannot copy beside the step)";
    if (split != nullptr) cpu_workers_ = std::make_unique<CpuWorkers>(static_cast<unsigned>(std::max(options.threads, 0)));
    const uint64_t bus_staging = plan::bus_staging_bytes(
        bus_share_, split, memory_->can_overlap_copies() ? options.prefill_chunk : int64_t{1}, device.kind());
    if (bus_staging > 0) {
        void* ring = memory_->alloc(bus_staging, plan::kBusStagingLabel);
        if (auto_share && has_bus) {
            // A probe that fails (a pack without some GEMV, page-locked memory refused) costs the
            // choice, not the run: the CPU then reads every host row, as before `auto`.
            try {
                const int64_t cpu_jobs = plan::cpu_jobs_per_step(model, spec, [&device_rows](const gguf::TensorInfo* t) {
                    auto it = device_rows.find(t);
                    return it != device_rows.end() && it->second < t->ne[1] * t->ne[2] * t->ne[3];
                });
                bus_share_ = choose_auto_bus_share(packs, options.device, device_rows, go,
                                                   plan::row_read_tables(model, spec), cpu_jobs, ring, bus_staging);
            } catch (const Error& e) {
                if (e.kind() != ErrorKind::Pack && e.kind() != ErrorKind::Device) throw;
                bus_share_ = 0;
                bus_share_note_ = std::string("0 (the rates could not be measured: ") + e.what() + ")";
                spdlog::warn("bus_read_share auto: {}", bus_share_note_);
            }
        }
        std::vector<const gguf::TensorInfo*> tensors;
        for (const auto& [t, keep] : device_rows) {
            const int64_t n = bus_rows_for(t->ne[1] - keep, bus_share_);
            if (n <= 0) continue;
            bus_rows[t] = n;
            tensors.push_back(t);
        }
        bus_rows_ = std::make_unique<BusRows>(
            *memory_, tensors, [&device_rows](const gguf::TensorInfo* t) { return device_rows.at(t); },
            [&bus_rows](const gguf::TensorInfo* t) { return bus_rows.at(t); }, !options.keep_page_cache);
        go.bus_rows = [&bus_rows](const gguf::TensorInfo* t) {
            auto it = bus_rows.find(t);
            return it == bus_rows.end() ? int64_t{0} : it->second;
        };
        go.bus_source = [this](const gguf::TensorInfo* t) { return bus_rows_->host_rows(t); };
        go.bus_staging = {ring, plan::bus_staging_slots(), plan::bus_staging_slot_bytes()};
    }
    graph_[0] = graph::build_graph(model, spec, go);

    // Every buffer in one arena, at the slots the plan lays out; the step inputs are packed back to
    // back there, so a step uploads them with one copy.
    const auto& in = graph_[0].inputs;
    if (in.position != in.token + 1 || in.n_kv != in.token + 2 || in.status != in.token + 3 || in.greedy != in.token + 4)
        throw Error(ErrorKind::Internal, "graph step inputs are not adjacent");
    const plan::BufferArena arena = plan::buffer_arena(graph_[0], model);
    auto* arena_base = static_cast<std::byte*>(memory_->alloc(arena.bytes, plan::kGraphBuffersLabel));
    buffers_.resize(graph_[0].buffers.size());
    for (const auto& slot : arena.slots) buffers_[slot.buffer] = arena_base + slot.offset;
    step_inputs_ = static_cast<int32_t*>(buffers_[in.token]);
    if (buffers_[in.status] != step_inputs_ + 3 || buffers_[in.greedy] != step_inputs_ + 4)
        throw Error(ErrorKind::Internal, "step inputs are not packed");
    // The top k's ids and values right after the greedy word: the same copy brings them back.
    if (in.top_k_ids != 0) {
        const int32_t k = go.top_k_on_device;
        if (in.top_k_ids != in.token + 5 || in.top_k_values != in.token + 6)
            throw Error(ErrorKind::Internal, "graph top-k outputs do not follow the step inputs");
        if (buffers_[in.top_k_ids] != step_inputs_ + 5 || buffers_[in.top_k_values] != step_inputs_ + 5 + k)
            throw Error(ErrorKind::Internal, "top-k outputs are not packed after the step inputs");
    }

    std::vector<void*> base = buffers_;
    graph_[0].resolve(base);
    graph::select_ops(graph_[0], packs, options.device);
    greedy_on_device_ = has_op_node(graph_[0], DENSE_OP_ARGMAX);
    const bool has_top_k = has_op_node(graph_[0], DENSE_OP_TOP_K);
    if (has_top_k != (in.top_k_ids != 0)) throw Error(ErrorKind::Internal, "graph TOP_K node without its outputs");
    top_k_ = has_top_k ? go.top_k_on_device : 0;
    // GEMVs on one input as one list call where the pack has it (graph/gemv_lists.hpp); parity 1 is
    // a copy of the merged graph, resolved with the banks swapped.
    graph::merge_gemv_lists(graph_[0], packs, options.device);
    // A Gated DeltaNet layer's four small ops after its projections as one call (graph/gdn_step_fusion.hpp).
    graph::fuse_gdn_steps(graph_[0], packs, options.device);
    // And a full-attention layer's head norms, RoPE and KV store (graph/attn_prep_fusion.hpp).
    graph::fuse_attn_preps(graph_[0], packs, options.device);
    graph_[1] = graph_[0];
    swap_state_banks(graph_[0], base);
    graph_[1].resolve(base);
    hidden_source_ = buffers_[graph_[0].hidden];

    // The batched prefill step, where the session can batch and the packs have its ops (GEMM_Q):
    // built by the plan's rule (plan/prefill_graph.hpp), so the plan bills the same buffers.
    prefill_chunk_ =
        plan::prefill_chunk_for(options.prefill_chunk, device.kind(), split != nullptr, bus_staging > 0, &prefill_note_);
    if (prefill_chunk_ > 1) build_batched_steps(model, spec, packs, options.device, go, buffers_);
    if (prefill_chunk_ == 1 && !prefill_note_.empty())
        spdlog::info("prompts run token by token: {}", prefill_note_);

    // One workspace, sized for the hungriest node, shared by all (nodes run one after another). The
    // plan bills the token step's and the full chunk's; a smaller batched step that would need more
    // is left out (never seen: an op's workspace grows with the tokens of its call).
    const bool batched = !batched_.empty();
    const uint64_t workspace =
        std::max(plan::op_workspace_bytes(graph_[0]), batched ? plan::op_workspace_bytes(batched_[0].graph[0]) : 0);
    std::erase_if(batched_, [&](const BatchedStep& b) {
        const bool over = plan::op_workspace_bytes(b.graph[0]) > workspace;
        if (over) spdlog::debug("batched prefill step of {} tokens left out: its op workspace exceeds the plan's", b.tokens);
        return over;
    });
    void* ws = workspace ? memory_->alloc(workspace, plan::kWorkspaceLabel) : nullptr;
    std::vector<graph::Graph*> graphs = {&graph_[0], &graph_[1]};
    for (BatchedStep& b : batched_) graphs.insert(graphs.end(), {&b.graph[0], &b.graph[1]});
    for (size_t gi = 0; gi < graphs.size(); ++gi) {
        graph::Graph* g = graphs[gi];
        for (size_t i = 0; i < g->nodes.size(); ++i) {
            auto& n = g->nodes[i];
            if (gi % 2 == 1) n.op = graphs[gi - 1]->nodes[i].op;  // parity 1 runs parity 0's ops
            n.call.stream = memory_->stream();
            n.call.workspace = ws;
            n.call.workspace_bytes = workspace;
            n.call.n_threads = static_cast<uint32_t>(std::max(options.threads, 0));
        }
    }
    // The CPU rows of a split run on host threads beside the rest of the step (exec/host_nodes.hpp):
    // beside the device's stream on a GPU, beside the other ops on the CPU.
    if (split != nullptr) {
        kernel_copy_ = KernelCopy::make(packs, options.device, *memory_);
        for (int p = 0; p < 2; ++p)
            host_nodes_[p] = std::make_unique<HostNodes>(graph_[p], *memory_, *cpu_workers_, kernel_copy_.get());
    }
    if (bus_staging > 0) {
        for (int p = 0; p < 2; ++p) bus_copies_[p] = std::make_unique<BusCopies>(graph_[p], *memory_);
        // The batched steps' copies from the file mapping go through page-locked bounce buffers that
        // the (otherwise idle) CPU workers fill; those steps run uncaptured (run_batch), as the
        // bounce buffers require.
        uint64_t pageable_bytes = 0;
        for (const BatchedStep& b : batched_)
            for (const auto& n : b.graph[0].nodes)
                if (n.bus_copy.pageable) pageable_bytes = std::max(pageable_bytes, n.bus_copy.bytes);
        if (pageable_bytes > 0 && cpu_workers_ && BounceBuffers::usable(*memory_)) {
            try {
                bounce_ = std::make_unique<BounceBuffers>(*memory_, *cpu_workers_, pageable_bytes, kBounceBuffers);
            } catch (const Error& e) {
                if (e.kind() != ErrorKind::Device) throw;
                // Slower prompts, not a failed session: the copies then go straight from the mapping.
                spdlog::warn("no page-locked bounce buffers for the prompt steps' copies ({}); they copy from the file "
                             "mapping directly, several times slower",
                             e.what());
            }
        }
        for (BatchedStep& b : batched_)
            for (int p = 0; p < 2; ++p)
                if (std::any_of(b.graph[p].nodes.begin(), b.graph[p].nodes.end(),
                                [](const graph::Node& n) { return n.bus_copy.bytes > 0; }))
                    b.bus[p] = std::make_unique<BusCopies>(b.graph[p], *memory_, bounce_.get());
    }
    // A prompt's last token may end a batched step when the head can then run alone: it has no CPU
    // part and no bus copy, which run only in the order of a whole step (exec/host_nodes.hpp,
    // exec/bus_copies.hpp); else that token takes a token step with logits.
    head_alone_ = !batched_.empty() && memory_->can_copy_on_device();
    for (const graph::Graph& g : graph_)
        for (const graph::Node& n : g.nodes)
            if (n.phase == graph::Phase::LogitsOnly && (n.split_cpu_part || n.bus_copy.bytes > 0)) head_alone_ = false;
    device_graph_ = options.device_graph && memory_->can_capture();
    logits_host_ = {static_cast<float*>(memory_->alloc_host(static_cast<uint64_t>(graph_[0].n_vocab) * 4)),
                    static_cast<size_t>(graph_[0].n_vocab)};
    step_io_host_ = static_cast<int32_t*>(memory_->alloc_host((kStepIoWords + 2 * static_cast<size_t>(top_k_)) *
                                                              sizeof(int32_t)));
    hidden_host_.resize(static_cast<size_t>(graph_[0].n_embd));

    // What was allocated must be the plan's bill of this session, label by label: budgets are
    // checked against plans made before a session exists, so a drift would make them all wrong.
    bill_ = plan::bill_session(model, graph_[0], device.kind(), options.kv_type, workspace, memory_->label(), placed,
                               bus_staging, batched ? &batched_[0].graph[0] : nullptr);
    const auto planned = bill_.bytes_by_label();
    const auto& allocated = memory_->allocated_by_label();
    if (planned != allocated) {
        auto of = [](const std::map<std::string, uint64_t>& m, const std::string& label) {
            auto it = m.find(label);
            return it == m.end() ? uint64_t{0} : it->second;
        };
        std::set<std::string> labels;
        for (const auto& [label, bytes] : planned) labels.insert(label);
        for (const auto& [label, bytes] : allocated) labels.insert(label);
        std::string diff;
        for (const auto& label : labels)
            if (of(planned, label) != of(allocated, label))
                diff += " '" + label + "': planned " + std::to_string(of(planned, label)) + " bytes, allocated " +
                        std::to_string(of(allocated, label)) + ";";
        throw Error(ErrorKind::Internal, "the session's allocations differ from its VRAM plan:" + diff);
    }
}

// The batched graphs' own buffers live in the "prefill buffers" arena, laid out for the full chunk;
// their KV caches and state banks are the token step's buffers of the same name (the same memory, so
// every step carries one state). Smaller steps reuse the arena: only one step runs at a time.
void Session::build_batched_steps(const model::BoundModel& model, const model::ModelSpec& spec,
                                  const packs::PackManager& packs, size_t device, const graph::GraphOptions& go,
                                  const std::vector<void*>& token_step_base) {
    std::optional<graph::Graph> full = plan::batched_graph(model, spec, go, prefill_chunk_, &packs, device, &prefill_note_);
    if (!full) {
        prefill_chunk_ = 1;
        return;
    }
    std::map<std::string, void*> shared;
    for (size_t i = 0; i < graph_[0].buffers.size(); ++i)
        if (plan::shared_with_token_step(graph_[0].buffers[i].kind)) shared[graph_[0].buffers[i].name] = token_step_base[i];
    const plan::BufferArena arena = plan::prefill_arena(*full, model);
    auto* arena_base = static_cast<std::byte*>(memory_->alloc(arena.bytes, plan::kPrefillBuffersLabel));
    add_batched_step(std::move(*full), arena, arena_base, shared, packs, device);
    // The rest of a prompt after its whole chunks: powers of two below the chunk, largest first.
    int64_t t = 1;
    while (t * 2 < prefill_chunk_) t *= 2;
    for (; t >= 2; t /= 2) {
        std::string why;
        std::optional<graph::Graph> g = plan::batched_graph(model, spec, go, t, &packs, device, &why);
        if (!g) {
            spdlog::debug("no batched prefill step of {} tokens: {}", t, why);
            continue;
        }
        const plan::BufferArena a = plan::prefill_arena(*g, model);
        if (a.bytes > arena.bytes) {  // not expected: every buffer shrinks with the tokens
            spdlog::debug("no batched prefill step of {} tokens: its buffers need {} bytes, the arena has {}", t,
                          a.bytes, arena.bytes);
            continue;
        }
        add_batched_step(std::move(*g), a, arena_base, shared, packs, device);
    }
    const auto words = static_cast<size_t>(prefill_chunk_);
    batched_io_host_ = static_cast<int32_t*>(memory_->alloc_host((3 * words + 1) * sizeof(int32_t)));
}

void Session::add_batched_step(graph::Graph g, const plan::BufferArena& arena, std::byte* arena_base,
                               const std::map<std::string, void*>& shared, const packs::PackManager& packs,
                               size_t device) {
    BatchedStep& b = batched_.emplace_back();
    b.tokens = g.tokens;
    b.buffers.assign(g.buffers.size(), nullptr);
    for (const auto& slot : arena.slots) {
        const graph::Buffer& buf = g.buffers[slot.buffer];
        if (!plan::shared_with_token_step(buf.kind)) {
            b.buffers[slot.buffer] = arena_base + slot.offset;
            continue;
        }
        auto it = shared.find(buf.name);
        if (it == shared.end())
            throw Error(ErrorKind::Internal, "the batched prefill graph's buffer '" + buf.name + "' is not the token step's");
        b.buffers[slot.buffer] = it->second;
    }
    const auto& in = g.inputs;
    const auto words = static_cast<size_t>(g.tokens);
    b.inputs = static_cast<int32_t*>(b.buffers[in.token]);
    if (b.buffers[in.position] != b.inputs + words || b.buffers[in.n_kv] != b.inputs + 2 * words ||
        b.buffers[in.status] != b.inputs + 3 * words)
        throw Error(ErrorKind::Internal, "batched step inputs are not packed");
    std::vector<void*> base = b.buffers;
    g.resolve(base);
    graph::select_ops(g, packs, device);
    b.graph[0] = std::move(g);
    b.graph[1] = b.graph[0];
    swap_state_banks(b.graph[0], base);
    b.graph[1].resolve(base);
}

std::vector<int64_t> Session::prefill_step_sizes() const {
    std::vector<int64_t> sizes;
    for (const BatchedStep& b : batched_) sizes.push_back(b.tokens);
    return sizes;
}

// Every id in range and room for all of them in the context, before anything runs.
void Session::check_prompt(std::span<const int32_t> tokens) const {
    const graph::Graph& g = graph_[0];
    for (size_t i = 0; i < tokens.size(); ++i)
        if (tokens[i] < 0 || tokens[i] >= g.n_vocab)
            throw Error(ErrorKind::Usage, "prompt token " + std::to_string(i) + ": id " + std::to_string(tokens[i]) +
                                              " is out of range [0, " + std::to_string(g.n_vocab) + ")");
    if (position_ + static_cast<int64_t>(tokens.size()) > g.n_ctx)
        throw Error(ErrorKind::Usage, std::to_string(tokens.size()) + " prompt tokens at position " +
                                          std::to_string(position_) + " do not fit the context of " +
                                          std::to_string(g.n_ctx) + " tokens (raise `context` in the run config)");
}

void Session::prefill(std::span<const int32_t> tokens, bool last_logits) {
    check_prompt(tokens);
    if (last_logits && tokens.empty()) throw Error(ErrorKind::Usage, "an empty prompt has no last token to give logits");
    // The last token may end a batched step only where the head can run alone after it.
    const size_t batchable = last_logits && !head_alone_ ? tokens.size() - 1 : tokens.size();
    size_t i = 0;
    if (!observer_)  // the layer observer sees every token: token by token then
        for (BatchedStep& b : batched_) {
            if (!batched_tail_pays(b)) continue;
            for (const auto t = static_cast<size_t>(b.tokens); batchable - i >= t; i += t)
                run_batch(b, tokens.subspan(i, t));
        }
    if (last_logits && i == tokens.size()) {
        run_head_alone();
        return;
    }
    for (; i < tokens.size(); ++i) step(tokens[i], last_logits && i + 1 == tokens.size());
}

// A split session's batched step streams every host row over the bus whatever its token count, so
// its cost is nearly fixed: on the H200 at 7880MiB ~0.18 s with the bounce buffers (~0.55 s
// without) against ~0.1 s for a token step (docs/perf-notes.md, sessions 15 and 16). Below
// kMinStreamedTailStep tokens the tail's batched steps cost about as much as its tokens one by one,
// or more; the full chunk always runs batched.
bool Session::batched_tail_pays(const BatchedStep& b) const {
    return &b == &batched_.front() || !b.bus[0] ||
           b.tokens >= (bounce_ ? kMinStreamedTailStep : kMinStreamedTailStepWithoutBounce);
}

void Session::run_head_alone() {
    if (!head_alone_) throw Error(ErrorKind::Internal, "the LM head cannot run alone in this session");
    const graph::Graph& g = graph_[parity_];
    int32_t* io = step_io_host_;
    io[3] = 0;
    invalidate_outputs();
    try {
        // The head reads the token step's residual stream: the batched step left it elsewhere.
        if (hidden_source_ != buffers_[g.hidden])
            memory_->copy(buffers_[g.hidden], hidden_source_, static_cast<uint64_t>(g.n_embd) * sizeof(float));
        memory_->to_device(step_inputs_ + 3, io + 3, sizeof(int32_t));
        run_nodes(g, true, nullptr, true);
        read_back_outputs(true);
    } catch (...) {
        sync_ignoring_errors();
        throw;
    }
    if (io[3] != 0)
        throw Error(ErrorKind::Numeric, "the logits of the prompt's last token (position " + std::to_string(position_ - 1) +
                                            ") have NaN or Inf; the prompt itself is committed (the session is at "
                                            "position " + std::to_string(position_) + ")");
    logits_valid_ = true;
    greedy_valid_ = greedy_on_device_;
    top_k_valid_ = top_k_ > 0;
}

void Session::run_batch(BatchedStep& b, std::span<const int32_t> tokens, void* marks) {
    const graph::Graph& g = b.graph[parity_];
    const auto t_count = static_cast<size_t>(g.tokens);
    int32_t* io = batched_io_host_;
    for (size_t t = 0; t < t_count; ++t) {
        io[t] = tokens[t];
        io[t_count + t] = static_cast<int32_t>(position_ + static_cast<int64_t>(t));
        io[2 * t_count + t] = static_cast<int32_t>(position_ + static_cast<int64_t>(t) + 1);
    }
    io[3 * t_count] = 0;
    invalidate_outputs();
    try {
        memory_->to_device(b.inputs, io, (3 * t_count + 1) * sizeof(int32_t));
        if (marks != nullptr || b.bus[parity_])
            run_nodes(g, false, marks);
        else
            run_step(g, false, b.captured[parity_]);
        memory_->to_host(io + 3 * t_count, b.inputs + 3 * t_count, 4);
        memory_->sync();
    } catch (...) {
        sync_ignoring_errors();
        throw;
    }
    if (io[3 * t_count] != 0)
        throw Error(ErrorKind::Numeric, "prompt tokens at positions " + std::to_string(position_) + ".." +
                                            std::to_string(position_ + static_cast<int64_t>(t_count) - 1) +
                                            " produced NaN or Inf; they were not committed and the session state is "
                                            "that of position " + std::to_string(position_));
    parity_ ^= 1;
    position_ += static_cast<int64_t>(t_count);
    steps_ += t_count;
    ++batched_steps_;
    hidden_source_ = static_cast<const std::byte*>(b.buffers[g.hidden]) +
                     (t_count - 1) * static_cast<size_t>(g.n_embd) * sizeof(float);
}

// After a failure (or at the end): nothing enqueued may still run when the caller goes on; a second
// error here is not the one to report.
void Session::sync_ignoring_errors() noexcept {
    try {
        memory_->sync();
    } catch (...) {
    }
}

Session::~Session() {
    // Nothing of a step may still run when the staging and the workers go.
    sync_ignoring_errors();
    for (auto& h : host_nodes_)
        if (h) h->drain();
}

HostSplitStats Session::host_split_stats() const {
    HostSplitStats total;
    for (const auto& h : host_nodes_) {
        if (!h) continue;
        const HostSplitStats s = h->stats();
        total.jobs += s.jobs;
        total.cpu_ms += s.cpu_ms;
        total.thread_ms += s.thread_ms;
        total.threads = s.threads;
        total.wait_ms += s.wait_ms;
        total.waits_timed = total.waits_timed && s.waits_timed;
        total.bytes_to_host += s.bytes_to_host;
        total.bytes_to_device += s.bytes_to_device;
    }
    return total;
}

namespace {
// bench --repeat-nodes' rule: a word names a node when the node's implementation name contains it.
bool names_node(const std::string& word, const graph::Node& n) {
    return n.op.impl_name.find(word) != std::string::npos;
}
}  // namespace

size_t Session::nodes_matching(const std::string& word) const {
    return static_cast<size_t>(std::count_if(graph_[0].nodes.begin(), graph_[0].nodes.end(),
                                             [&](const graph::Node& n) { return names_node(word, n); }));
}

std::vector<std::string> Session::packs_used() const {
    std::vector<std::string> names;
    for (const graph::Node& n : graph_[0].nodes)
        if (std::find(names.begin(), names.end(), n.op.pack) == names.end()) names.push_back(n.op.pack);
    return names;
}

bool Session::repeated(const graph::Node& n) const {
    return std::any_of(repeat_nodes_.begin(), repeat_nodes_.end(), [&](const std::string& w) { return names_node(w, n); });
}

void Session::run_nodes(const graph::Graph& g, bool want_logits, void* marks, bool head_only) {
    size_t next_layer_end = 0;
    // Only the token step has CPU parts; it and the batched steps of a split session have bus copies
    // (never in a head that runs alone: head_alone_).
    const bool token_step = !head_only && (&g == &graph_[0] || &g == &graph_[1]);
    HostNodes* host = token_step ? host_nodes_[&g == &graph_[0] ? 0 : 1].get() : nullptr;
    BusCopies* bus = token_step ? bus_copies_[&g == &graph_[0] ? 0 : 1].get() : nullptr;
    for (const BatchedStep& b : batched_)
        for (int p = 0; p < 2 && bus == nullptr; ++p)
            if (&g == &b.graph[p]) bus = b.bus[p].get();
    if (host != nullptr) host->begin_step();
    if (bus != nullptr) bus->begin_step(want_logits);
    if (marks != nullptr) memory_->record_mark(marks, 0);
    for (size_t i = 0; i < g.nodes.size(); ++i) {
        const graph::Node& n = g.nodes[i];
        if ((n.phase == graph::Phase::LogitsOnly && !want_logits) || (head_only && n.phase != graph::Phase::LogitsOnly)) {
            if (marks != nullptr) memory_->record_mark(marks, static_cast<uint32_t>(i + 1));
            continue;
        }
        if (host != nullptr) host->join_before(n);
        if (host != nullptr && host->is_host(i)) {
            host->start(i);  // runs beside the nodes after it; joined before a node that needs it
            if (marks != nullptr) memory_->record_mark(marks, static_cast<uint32_t>(i + 1));
        } else {
            const bool staged = bus != nullptr && bus->is_staged(i);
            if (staged) bus->before(i);  // waits for the copy of its rows into its staging slot
            dense_status s = n.op.impl.run(n.op.impl.user, &n.call);
            if (s == DENSE_OK && repeated(n)) s = n.op.impl.run(n.op.impl.user, &n.call);  // timing experiments only
            if (staged) bus->after(i);
            if (marks != nullptr) memory_->record_mark(marks, static_cast<uint32_t>(i + 1));
            if (s != DENSE_OK)
                throw Error(s == DENSE_E_NUMERIC ? ErrorKind::Numeric : ErrorKind::Pack,
                            "step at position " + std::to_string(position_) + ": node '" + n.label + "' (" +
                                n.op.impl_name + " from pack " + n.op.pack + ") failed: " + status_text(s) +
                                "; the session state is unchanged");
        }
        // A layer may end with the CPU part of a split (every row on the CPU): still its last node.
        if (observer_ && next_layer_end < g.layer_end.size() && i == g.layer_end[next_layer_end]) {
            if (host != nullptr) host->join_all();  // the layer's CPU rows belong to its output
            memory_->to_host(hidden_host_.data(), buffers_[g.hidden], hidden_host_.size() * 4);
            memory_->sync();
            observer_(static_cast<int64_t>(next_layer_end), position_, hidden_host_);
            ++next_layer_end;
        }
    }
    if (host != nullptr) host->join_all();
}

// The captured graph reads token, position and n_kv from step_inputs_ on the device, so one capture
// per (parity, want_logits) serves every later token.
void Session::run_step(const graph::Graph& g, bool want_logits, void*& graph) {
    if (!device_graph_ || observer_) {
        run_nodes(g, want_logits);
        return;
    }
    if (graph == nullptr) {
        memory_->begin_capture();
        try {
            run_nodes(g, want_logits);
        } catch (...) {
            try {
                memory_->release_graph(memory_->end_capture());
            } catch (...) {
            }
            throw;
        }
        graph = memory_->end_capture();
    }
    memory_->launch(graph);
}

void Session::step(int32_t token, bool want_logits) { step_with(token, want_logits, nullptr); }

namespace {
// Timing marks of one profiled step, destroyed however the step ends.
struct MarksGuard {
    DeviceMemory& memory;
    void* marks;
    MarksGuard(DeviceMemory& m, uint32_t count) : memory(m), marks(m.create_marks(count)) {}
    ~MarksGuard() { memory.destroy_marks(marks); }
    MarksGuard(const MarksGuard&) = delete;
    MarksGuard& operator=(const MarksGuard&) = delete;
};
}  // namespace

std::vector<NodeTime> Session::profile_step(int32_t token, bool want_logits) {
    if (!memory_->can_time())
        throw Error(ErrorKind::Device, memory_->label() + ": the pack cannot time a step (it needs ABI 1.3 timing marks)");
    const graph::Graph& g = graph_[parity_];
    const MarksGuard guard(*memory_, static_cast<uint32_t>(g.nodes.size() + 1));
    step_with(token, want_logits, guard.marks);  // on success, nothing is in flight any more
    return node_times(g, guard.marks, want_logits);
}

std::vector<NodeTime> Session::profile_prefill_step(std::span<const int32_t> tokens) {
    if (!memory_->can_time())
        throw Error(ErrorKind::Device, memory_->label() + ": the pack cannot time a step (it needs ABI 1.3 timing marks)");
    if (batched_.empty() || tokens.size() != static_cast<size_t>(prefill_chunk_))
        throw Error(ErrorKind::Usage, "a prompt profile needs batched prefill and exactly prefill_chunk (" +
                                          std::to_string(prefill_chunk_) + ") tokens, got " +
                                          std::to_string(tokens.size()));
    check_prompt(tokens);
    BatchedStep& b = batched_.front();
    const graph::Graph& g = b.graph[parity_];
    const MarksGuard guard(*memory_, static_cast<uint32_t>(g.nodes.size() + 1));
    run_batch(b, tokens, guard.marks);  // on success, nothing is in flight any more
    return node_times(g, guard.marks, false);
}

std::vector<NodeTime> Session::node_times(const graph::Graph& g, void* marks, bool want_logits) const {
    std::vector<NodeTime> out;
    out.reserve(g.nodes.size());
    for (size_t i = 0; i < g.nodes.size(); ++i) {
        const graph::Node& n = g.nodes[i];
        if (n.phase == graph::Phase::LogitsOnly && !want_logits) continue;
        NodeTime t;
        t.label = n.label;
        t.op = packs::to_string(n.key);
        t.layer = n.layer;
        t.ms = memory_->elapsed_ms(marks, static_cast<uint32_t>(i), static_cast<uint32_t>(i + 1));
        // The weight a GEMV or GEMM streams in full (norm weights are too small to matter; the
        // embedding reads one row of its table).
        if (n.key.op == DENSE_OP_GEMV_Q || n.key.op == DENSE_OP_GEMV_Q_MULTI || n.key.op == DENSE_OP_GEMM_Q)
            for (const auto& src : n.src)
                if (src.external) t.weight_bytes += graph::view_reach(src.view);
        out.push_back(std::move(t));
    }
    return out;
}

void Session::step_with(int32_t token, bool want_logits, void* marks) {
    const graph::Graph& g = graph_[parity_];
    if (token < 0 || token >= g.n_vocab)
        throw Error(ErrorKind::Usage, "token id " + std::to_string(token) + " is out of range [0, " +
                                          std::to_string(g.n_vocab) + ")");
    if (position_ >= g.n_ctx)
        throw Error(ErrorKind::Usage, "context is full: " + std::to_string(g.n_ctx) +
                                          " tokens (raise `context` in the run config)");
    int32_t* io = step_io_host_;  // host side of the step inputs: nothing of an earlier step uses it now
    io[0] = token;
    io[1] = static_cast<int32_t>(position_);
    io[2] = static_cast<int32_t>(position_ + 1);
    io[3] = 0;
    invalidate_outputs();
    try {
        memory_->to_device(step_inputs_, io, 4 * sizeof(int32_t));
        if (marks != nullptr)
            run_nodes(g, want_logits, marks);
        else
            run_step(g, want_logits, step_graph_[parity_][want_logits ? 1 : 0]);
        read_back_outputs(want_logits);
        for (auto& h : host_nodes_)
            if (h) h->throw_if_failed(position_);
    } catch (...) {
        sync_ignoring_errors();  // nothing of this step may still be in flight when the caller continues
        for (auto& h : host_nodes_)
            if (h) h->drain();
        throw;
    }
    if (io[3] != 0)
        throw Error(ErrorKind::Numeric, "step at position " + std::to_string(position_) + " (token " +
                                            std::to_string(token) +
                                            ") produced NaN or Inf; the step was not committed and the session "
                                            "state is unchanged");
    parity_ ^= 1;
    ++position_;
    ++steps_;
    logits_valid_ = want_logits;
    greedy_valid_ = want_logits && greedy_on_device_;
    top_k_valid_ = want_logits && top_k_ > 0;
    hidden_source_ = buffers_[g.hidden];
}

void Session::invalidate_outputs() noexcept {
    logits_valid_ = false;
    greedy_valid_ = false;
    top_k_valid_ = false;
    logits_fresh_ = false;
    hidden_fresh_ = false;
}

// The status word, and the greedy word after it where the graph chose the token, and the k ids and
// values after that where it kept the top k (with them the greedy word comes too, unused where the graph
// has no ARGMAX): one small copy. The logits stay on the device until logits() asks for them.
void Session::read_back_outputs(bool want_logits) {
    size_t words = 1;
    if (want_logits && top_k_ > 0) words = 2 + 2 * static_cast<size_t>(top_k_);
    else if (want_logits && greedy_on_device_) words = 2;
    memory_->to_host(step_io_host_ + 3, step_inputs_ + 3, words * sizeof(int32_t));
    memory_->sync();
}

std::span<const float> Session::logits() const {
    if (!logits_valid_) throw Error(ErrorKind::Internal, "logits requested for a step that did not compute them");
    if (!logits_fresh_) {
        memory_->to_host(logits_host_.data(), buffers_[graph_[0].logits], logits_host_.size() * 4);
        memory_->sync();
        logits_fresh_ = true;
    }
    return logits_host_;
}

std::optional<int32_t> Session::greedy_token() const noexcept {
    if (!greedy_valid_) return std::nullopt;
    return step_io_host_[4];
}

std::optional<TopCandidates> Session::top_k() const noexcept {
    if (!top_k_valid_) return std::nullopt;
    const auto k = static_cast<size_t>(top_k_);
    // The values are F32 words of the same copy (TOP_K's dst1).
    return TopCandidates{{step_io_host_ + kStepIoWords, k},
                         {reinterpret_cast<const float*>(step_io_host_ + kStepIoWords + k), k}};
}

std::span<const float> Session::hidden() const {
    if (!hidden_fresh_) {
        memory_->to_host(hidden_host_.data(), hidden_source_, hidden_host_.size() * 4);
        memory_->sync();
        hidden_fresh_ = true;
    }
    return hidden_host_;
}

void Session::reset() {
    for (size_t i = 0; i < buffers_.size(); ++i) memory_->zero(buffers_[i], graph_[0].buffers[i].bytes);
    memory_->sync();
    parity_ = 0;
    position_ = 0;
    invalidate_outputs();
}

void Session::skip_positions_for_bench(int64_t n) {
    if (n < 0 || position_ + n > graph_[0].n_ctx)
        throw Error(ErrorKind::Usage, "bench depth " + std::to_string(position_ + n) + " does not fit the context of " +
                                          std::to_string(graph_[0].n_ctx) + " tokens");
    position_ += n;
    invalidate_outputs();
}

std::vector<std::byte> Session::snapshot_state() const {
    std::vector<std::byte> out;
    const auto& g = graph_[0];
    for (size_t i = 0; i < g.buffers.size(); ++i) {
        const auto kind = g.buffers[i].kind;
        // The committed bank: A when parity is 0, B when 1.
        const bool committed = (kind == graph::BufferKind::StateBankA && parity_ == 0) ||
                               (kind == graph::BufferKind::StateBankB && parity_ == 1);
        if (!committed) continue;
        const size_t at = out.size();
        out.resize(at + g.buffers[i].bytes);
        memory_->to_host(out.data() + at, buffers_[i], g.buffers[i].bytes);
    }
    memory_->sync();
    return out;
}

}  // namespace dense::exec
