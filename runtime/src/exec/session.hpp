// One generation session on one device: the static graph (built once), its buffers, the KV cache,
// the recurrent state in two banks, the weights where the ops read them, and the token step.
//
// A step writes the token, its position and the number of attended positions into the step inputs,
// runs every node on one stream with no host round trip (the LM head only when logits are wanted),
// then reads back the status word (and, with logits, the device's greedy choice and k best logits
// where the graph makes them; the logits themselves only when logits() asks). Recurrent state is
// read from the active bank and written to the staging bank; only a step that finished with status 0
// commits (the banks swap and the position advances). A step that hits NaN/Inf or an op error throws
// and leaves the previous state and position exactly as they were.
#pragma once

#include "exec/bus_copies.hpp"
#include "exec/bus_rows.hpp"
#include "exec/device_memory.hpp"
#include "exec/host_nodes.hpp"
#include "exec/weight_store.hpp"
#include "graph/graph.hpp"
#include "graph/graph_builder.hpp"
#include "model/model_binding.hpp"
#include "model/model_spec.hpp"
#include "packs/pack_manager.hpp"
#include "plan/buffer_arena.hpp"
#include "plan/row_split.hpp"
#include "plan/vram_bill.hpp"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace dense::exec {

struct SessionOptions {
    int64_t n_ctx = 4096;
    dense_type_id kv_type = DENSE_TYPE_F16;
    size_t device = 0;  // index into PackManager::devices()
    int32_t threads = 0;
    // Capture the token step as a device graph once and replay it (GPU packs of ABI >= 1.1). Off:
    // every op is called every token (debugging; the layer observer always runs uncaptured).
    bool device_graph = true;
    // GEMV activation format to use wherever a pack pairs it with the weight (NONE: the device's
    // own choice). Tests set Q8_32 on cpu-ref to hold the GPU to the same activation rounding.
    dense_type_id gemv_activation = DENSE_TYPE_NONE;
    // Output-row split of GEMV weights (plan/row_split.hpp): rows past a weight's GPU prefix run as a
    // second GEMV node on the CPU, from the mapping. Empty, or one that moves no row: no split. It
    // must be an exact cover (verified when the session is made). The CPU rows run on `threads` host
    // threads (0: all hardware threads but one) beside the rest of the step (exec/host_nodes.hpp):
    // overlapped with the device's rows on a GPU, with the other ops on the CPU (where the result is
    // bit-identical to no split).
    std::optional<plan::Placement> row_split;
    // GPU sessions: keep the uploaded weights' pages in the page cache (they still leave this
    // process). Off by default, so a 15 GB model does not stay in the machine's memory after load.
    bool keep_page_cache = false;
    // Sessions with a row split: the share (0..1) of each split weight's host rows that the device
    // computes itself, copied over the bus each token from a page-locked copy made at load, beside
    // the CPU workers (exec/bus_rows.hpp, exec/bus_copies.hpp); costs plan::bus_staging_bytes of
    // device memory. 0: the CPU reads every row that is not in VRAM. (On a CPU session the "copy"
    // is a memcpy: useful to tests only.) plan::kAutoBusShare (< 0): measured and chosen at load
    // (plan/bus_share.hpp, exec/split_rates.hpp); 0 on the CPU.
    double bus_read_share = 0.0;
    // Timing experiments only (`dense-rt bench --repeat-nodes`): every node whose implementation name
    // contains one of these words runs twice per step, so the bench's difference against a run without
    // it is that node's marginal cost inside the captured step (launch, critical path and what the
    // nodes around it can no longer overlap). Most nodes give the same output twice (a recurrent op
    // reads one state bank and writes the other), but one that adds into its output (a residual GEMV)
    // or works in place does not, which is why only the bench sets it and labels its table.
    std::vector<std::string> repeat_nodes;
    // Tokens per batched prefill step (plan/prefill_graph.hpp; < 0: the device's default, 64 on a
    // GPU, 1 on the CPU; 0 or 1: token by token; the VRAM plan may lower the default, cli/vram_guard). prefill() runs whole chunks of a prompt as one
    // state-only step each, which reads every weight once per chunk. Sessions with a row split
    // prefill token by token.
    int64_t prefill_chunk = -1;
    // The sampler's top_k when a run samples without penalties (cli/cmd_generate.cpp), 0 = none: the
    // token step then ends with the k best (id, logit) pairs on the device where its packs implement
    // TOP_K (ABI 1.15; 1 <= k <= DENSE_TOP_K_MAX), read back with the status word (top_k()), and the
    // logits cross the bus only when logits() asks for them.
    int32_t device_top_k = 0;
};

// The k best logits of a step as the device chose them (Session::top_k): ids[i], values[i] for
// i < k, best first (value descending, equal values by the lower id); past the candidates (fewer than
// k logits other than -inf) id -1 and value -inf. Valid until the next step, prefill or reset.
struct TopCandidates {
    std::span<const int32_t> ids;
    std::span<const float> values;
};

// One node's share of a profiled step (Session::profile_step).
struct NodeTime {
    std::string label;        // "blk.3.attn_q gemv_q(q4_k, q8_32, cuda)"
    std::string op;           // "gemv_q(q4_k, q8_32, cuda)"
    int64_t layer = -1;
    double ms = 0;            // device time from the end of the node before to the end of this one
    uint64_t weight_bytes = 0;  // GEMV nodes: bytes of the weight matrix it streams; others 0
};

// Called after every trunk layer when set: (layer, position, hidden state after the layer). On a
// GPU this copies the hidden state back after each layer: for debugging, not for speed.
using LayerObserver = std::function<void(int64_t layer, int64_t position, std::span<const float> hidden)>;

class Session {
public:
    Session(const model::BoundModel& model, const model::ModelSpec& spec, const packs::PackManager& packs,
            const SessionOptions& options);
    ~Session();
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

    // Runs one token at the next position. want_logits = false runs state-only (no final norm, no LM
    // head). Throws dense::Error: Usage for a bad token id or a full context, Numeric for NaN/Inf,
    // Pack/Device for an op or device failure; in every case the session's state is unchanged.
    void step(int32_t token, bool want_logits);
    // Runs `tokens` at the next positions: whole chunks of prefill_chunk() tokens as one batched step
    // each, then what is left in batched steps of the powers of two below the chunk, largest first
    // (a 16-token chunk leaves at most 15 = 8 + 4 + 2 + 1: three batched steps and one token step,
    // not 15 token steps; a split session, whose batched steps each stream the host rows, uses only
    // those of kMinStreamedTailStep tokens or more, kMinStreamedTailStepWithoutBounce without bounce
    // buffers). State-only, or with `last_logits` the logits of the last token (logits()), exactly
    // as a step with logits would leave them: where the last token ends a batched step, the LM head
    // then runs alone on its hidden state (a 512-token prompt at chunk 64 is 8 batched steps, not
    // 7 + 32 + 16 + ... + 1 and a token step). Every id is checked and the context is checked to
    // hold them all before anything runs (Usage errors; also an empty prompt with `last_logits`).
    // Each batched step commits like a step; on an error the session is left at the last committed
    // step, which position() tells. NaN/Inf in logits the head computed alone is a Numeric error
    // with the whole prompt committed (position() after its last token), where a token step with
    // logits would have left that token uncommitted.
    void prefill(std::span<const int32_t> tokens, bool last_logits = false);
    // Tokens per batched prefill step (1: token by token) and, when 1 although more was asked, why.
    int64_t prefill_chunk() const noexcept { return prefill_chunk_; }
    // Whether the batched steps' GEMM_Q nodes ask for the free order (ABI 1.13; within rounding of
    // token by token) rather than the exact one (bit for bit): DENSE_PREFILL_EXACT=1 says exact.
    bool prefill_free_order() const noexcept { return prefill_chunk_ > 1 && gemm_free_order_; }
    const std::string& prefill_note() const noexcept { return prefill_note_; }
    // The token counts of the batched steps prefill() uses, largest first (empty: token by token).
    std::vector<int64_t> prefill_step_sizes() const;
    // Batched prefill steps committed since the session was made (steps_run() counts their tokens).
    uint64_t batched_steps_run() const noexcept { return batched_steps_; }
    // The same step, run node by node (never the captured graph) with a timing mark after every
    // node: where a step's time goes. Slower than step() (no graph, marks between kernels, so no
    // overlap of one kernel's tail with the next one's start); commits exactly like step(). Throws
    // dense::Error(Device) when the device's pack cannot time (ABI < 1.3).
    std::vector<NodeTime> profile_step(int32_t token, bool want_logits);
    // One batched prefill step of prefill_chunk() prompt tokens, run node by node with a timing mark
    // after each node (as profile_step; committed like a prefill). Needs prefill_chunk() > 1.
    std::vector<NodeTime> profile_prefill_step(std::span<const int32_t> tokens);

    // Valid after a step with want_logits. Copied back from the device on the first call after such a
    // step (a greedy run that takes greedy_token() never copies them).
    std::span<const float> logits() const;
    // After a step with want_logits, where the graph chose the next token greedily on the device
    // (ARGMAX, ABI 1.12): that choice, which is text::greedy_token(logits()) exactly; else nullopt
    // (the device's packs lack ARGMAX, or the last step computed no logits).
    std::optional<int32_t> greedy_token() const noexcept;
    // After a step with want_logits, where the graph kept the k best logits on the device (TOP_K, ABI
    // 1.15; SessionOptions::device_top_k): those, the candidates text::sorted_candidates(logits(), k)
    // gives, bit for bit, padded; else nullopt (no device_top_k, packs without TOP_K, or the last step
    // computed no logits).
    std::optional<TopCandidates> top_k() const noexcept;
    std::span<const float> hidden() const;   // residual stream after the last step
    int64_t position() const noexcept { return position_; }
    uint64_t steps_run() const noexcept { return steps_; }  // committed steps since the session was made
    int64_t n_ctx() const noexcept { return graph_[0].n_ctx; }
    int64_t n_vocab() const noexcept { return graph_[0].n_vocab; }
    size_t node_count() const noexcept { return graph_[0].nodes.size(); }
    // Nodes of the token step whose implementation name contains `word` (bench --repeat-nodes checks
    // every word names some).
    size_t nodes_matching(const std::string& word) const;
    // The packs whose ops the token step runs, in the order of their first node (a GPU session with a
    // row split: the GPU's pack, then the CPU rows' pack). A CPU session's step runs cpu-ref's ops,
    // whichever CPU pack scores highest: the CPU packs that beat it serve only a split's CPU rows.
    std::vector<std::string> packs_used() const;
    uint64_t memory_bytes() const noexcept { return memory_->allocated_bytes(); }
    // The plan's bill of this session; its allocations are exactly what was allocated (checked when
    // the session is created), per DeviceMemory label.
    const plan::VramBill& bill() const noexcept { return bill_; }
    const std::map<std::string, uint64_t>& allocated_by_label() const noexcept { return memory_->allocated_by_label(); }
    const WeightStore& weights() const noexcept { return *weights_; }
    std::string device_label() const { return memory_->label(); }
    // A GPU session's row split: what its CPU parts did so far (all zero without a split).
    HostSplitStats host_split_stats() const;
    // Bytes of weight rows copied to the device over the bus per step (0 without).
    uint64_t bus_weight_bytes() const noexcept { return bus_rows_ ? bus_rows_->bus_bytes() : 0; }
    // The bus share this session runs with (SessionOptions::bus_read_share, or what `auto` chose),
    // and for `auto` the rates and prediction it was chosen from (empty otherwise).
    double bus_read_share() const noexcept { return bus_share_; }
    const std::string& bus_share_note() const noexcept { return bus_share_note_; }
    // Bytes of weight rows the batched steps copied from the file mapping through page-locked bounce
    // buffers so far (exec/bounce_buffers.hpp); 0 where they copy straight from the mapping.
    uint64_t bounced_bytes() const noexcept { return bounce_ ? bounce_->bytes_copied() : 0; }

    void reset();  // position 0, state and caches zeroed

    // Benchmarks only: moves the position forward by n without computing anything, so the next step
    // attends over n more KV positions (whatever the cache holds there: zeros after reset()). This
    // measures a step's cost at depth without paying for the prefill; it is not a valid model state.
    // Throws dense::Error(Usage) past the context.
    void skip_positions_for_bench(int64_t n);
    void set_layer_observer(LayerObserver observer) { observer_ = std::move(observer); }

    // Bytes of the committed recurrent state of every layer (for tests of the commit rule).
    std::vector<std::byte> snapshot_state() const;

private:
    // Batched prefill (plan/prefill_graph.hpp): one per token count prefill() uses. All of them
    // live in the prefill arena laid out for the full chunk (a smaller count needs less: checked
    // when built) and share the step's KV caches and state banks.
    struct BatchedStep {
        int64_t tokens = 0;
        graph::Graph graph[2];       // [parity]: parity 1 has state banks A and B swapped
        std::vector<void*> buffers;  // one per graph buffer
        int32_t* inputs = nullptr;   // T tokens, T positions, T n_kv, status: adjacent
        void* captured[2] = {};      // [parity] device graphs, captured on first use
        // A row split's host rows streamed through the bus staging (graph/step_lowering.cpp): such a
        // step runs node by node (its copies read the file mapping, which a capture cannot).
        std::unique_ptr<BusCopies> bus[2];
    };

    void step_with(int32_t token, bool want_logits, void* marks);
    // memory_->sync(), swallowing its error: after a failed step, before the original is rethrown.
    void sync_ignoring_errors() noexcept;
    // Usage errors for a prompt id out of range or a prompt that does not fit the context.
    void check_prompt(std::span<const int32_t> tokens) const;
    // Whether prefill() uses batched step `b` for the rest of a prompt (see session.cpp).
    static constexpr int64_t kMinStreamedTailStep = 4;
    static constexpr int64_t kMinStreamedTailStepWithoutBounce = 8;
    bool batched_tail_pays(const BatchedStep& b) const;
    // The token step's LM head (its LogitsOnly nodes) alone, on the hidden state of the last committed
    // token of a batched step (copied into the token step's residual stream): logits without
    // another step. Only where head_alone_ (no row split or bus copy in the head).
    void run_head_alone();
    // Every output of the last step (logits, greedy choice, top k, hidden state) marked stale.
    void invalidate_outputs() noexcept;
    // After a step's nodes: the status word (and, with logits, the greedy word and the top k) to the
    // host; syncs.
    void read_back_outputs(bool want_logits);
    // One batched prefill step of b.tokens tokens (node by node with `marks`, for a profile).
    void run_batch(BatchedStep& b, std::span<const int32_t> tokens, void* marks = nullptr);
    // The time of every node of `g` between the timing marks of a run with marks.
    std::vector<NodeTime> node_times(const graph::Graph& g, void* marks, bool want_logits) const;
    // `head_only`: only the LogitsOnly nodes (run_head_alone).
    void run_nodes(const graph::Graph& g, bool want_logits, void* marks = nullptr, bool head_only = false);
    bool repeated(const graph::Node& n) const;  // SessionOptions::repeat_nodes names its implementation
    // Replays `g`'s captured device graph (captured into `captured` on first use) or runs it node by node.
    void run_step(const graph::Graph& g, bool want_logits, void*& captured);
    // The batched steps of prefill_chunk_ tokens and of the powers of two below it (prefill_chunk_
    // falls to 1 when the full chunk cannot be built; a smaller count that cannot is left out).
    void build_batched_steps(const model::BoundModel& model, const model::ModelSpec& spec,
                             const packs::PackManager& packs, size_t device, const graph::GraphOptions& go,
                             const std::vector<void*>& token_step_base);
    // Resolves `g` onto the prefill arena at `arena_base` (and the token step's shared buffers),
    // selects its ops and appends it as a batched step.
    void add_batched_step(graph::Graph g, const plan::BufferArena& arena, std::byte* arena_base,
                          const std::map<std::string, void*>& shared, const packs::PackManager& packs, size_t device);

    // `bus_read_share: auto`: measures the CPU's rate on the split weight with the most host rows,
    // the GPU's on each format in VRAM (the ring as scratch), the bus's, and returns
    // plan::choose_bus_share's share (row_read_tables: weights read one row per token);
    // sets bus_share_note_. Needs cpu_workers_ (exec/session_bus_share.cpp).
    double choose_auto_bus_share(const packs::PackManager& packs, size_t device,
                                 const std::map<const gguf::TensorInfo*, int64_t>& device_rows,
                                 const graph::GraphOptions& go, const std::vector<std::string>& row_read_tables,
                                 int64_t cpu_jobs, void* ring, uint64_t ring_bytes);

    std::unique_ptr<DeviceMemory> memory_;
    std::unique_ptr<WeightStore> weights_;
    // The rows copied to the GPU over the bus, in page-locked host memory owned by memory_.
    std::unique_ptr<BusRows> bus_rows_;
    std::unique_ptr<BusCopies> bus_copies_[2];  // [parity]
    graph::Graph graph_[2];       // [parity]: parity 1 has state banks A and B swapped
    std::vector<void*> buffers_;  // one per graph buffer
    // token, position, n_kv, status, greedy, then with top_k_ > 0 the k ids and the k values:
    // adjacent, one copy per step each way
    int32_t* step_inputs_ = nullptr;
    static constexpr size_t kStepIoWords = 5;  // token, position, n_kv, status, greedy
    int32_t* step_io_host_ = nullptr;  // their host side (page-locked where the pack can)
    bool greedy_on_device_ = false;    // the token graph ends with ARGMAX into step_inputs_[4]
    int32_t top_k_ = 0;                // k of the token graph's TOP_K into step_inputs_[5, 5 + 2k); 0: none
    int parity_ = 0;
    bool device_graph_ = false;
    void* step_graph_[2][2] = {};  // [parity][want_logits], captured on first use
    int64_t prefill_chunk_ = 1;
    bool gemm_free_order_ = false;
    std::string prefill_note_;
    std::vector<std::string> repeat_nodes_;  // SessionOptions::repeat_nodes
    bool head_alone_ = false;  // the token step's head can run alone (run_head_alone)
    std::vector<BatchedStep> batched_;  // token counts descending: the full chunk first
    int32_t* batched_io_host_ = nullptr;  // host side of the step inputs, sized for the full chunk
    uint64_t batched_steps_ = 0;
    const void* hidden_source_ = nullptr;  // where hidden() reads the last token's residual stream
    int64_t position_ = 0;
    uint64_t steps_ = 0;
    bool logits_valid_ = false;
    bool greedy_valid_ = false;     // step_io_host_[4] holds the last step's device choice
    bool top_k_valid_ = false;      // step_io_host_[5, 5 + 2 top_k_) hold the last step's k best
    mutable bool logits_fresh_ = false;  // logits_host_ holds the last step's logits
    std::span<float> logits_host_;  // page-locked where the pack can: the copy back is one fast DMA
    mutable std::vector<float> hidden_host_;
    mutable bool hidden_fresh_ = false;
    LayerObserver observer_;
    plan::VramBill bill_;
    double bus_share_ = 0;
    std::string bus_share_note_;
    // A GPU session's row split (declared last: destroyed first, after ~Session synced the stream).
    std::unique_ptr<CpuWorkers> cpu_workers_;
    std::unique_ptr<KernelCopy> kernel_copy_;  // the split's small copies by kernel (exec/kernel_copy.hpp)
    std::unique_ptr<HostNodes> host_nodes_[2];  // [parity]
    // The batched steps' copies from the file mapping (exec/bounce_buffers.hpp): four buffers, so the
    // workers fill one while the copy engines drain up to three.
    static constexpr uint32_t kBounceBuffers = 4;
    std::unique_ptr<BounceBuffers> bounce_;
};

}  // namespace dense::exec
