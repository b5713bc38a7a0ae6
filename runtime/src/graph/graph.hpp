// The static graph of a whole network: a flat list of op calls for one token step, built once per
// session from the model description's recipes and the op registry. Nothing in it is allocated per
// token: every tensor view points into buffers that exist before the first step.
//
// Buffers are referenced symbolically while building (BufferId + byte offset) and resolved to
// pointers once all sizes are known (resolve()), so one buffer per activation name serves every
// layer ("workspaces reused across layers of the same shape").
#pragma once

#include "packs/op_registry.hpp"

#include <dense/abi/dense_abi.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace dense::graph {

using BufferId = uint32_t;

enum class BufferKind {
    Activation,  // scratch, rewritten every step
    StepInput,   // I32 token / position / n_kv / status words, written by the executor (and greedy, top-k, read)
    KvCache,     // per full-attention layer K or V, all positions
    StateBankA,  // recurrent state, bank A (conv window or delta-rule matrix) per layer
    StateBankB,  // the same, bank B
    Output       // logits
};

struct Buffer {
    std::string name;
    BufferKind kind = BufferKind::Activation;
    uint64_t bytes = 0;
    int64_t layer = -1;  // for per-layer state / caches
};

// Where a view's data lives before resolution: a graph buffer or an external pointer (weights).
struct ViewRef {
    bool external = false;
    BufferId buffer = 0;
    uint64_t offset = 0;              // bytes into the buffer
    const void* external_ptr = nullptr;
    dense_tensor_view view{};         // type, ne, nb filled at build time; data set by resolve()
};

enum class Phase {
    Always,    // runs every step (embedding + trunk)
    LogitsOnly // final norm + LM head: skipped for state-only prompt tokens
};

struct Node {
    std::string label;  // "blk.3.attn_q gemv_q(q4_k, q8_k, cpu)"
    int64_t layer = -1; // -1 = outside the trunk (embedding, head)
    Phase phase = Phase::Always;
    packs::OpKey key;                // what the node needs: op kind, weight/activation type, device kind
    packs::OpCandidate op;           // the implementation chosen for it (select_ops)
    std::vector<ViewRef> src, dst;
    std::vector<std::byte> params;   // the op's param struct (starts with dense_abi_header) or empty
    // The CPU rows of a row-split GEMV: the executor runs it on host threads beside the rest of the
    // step (exec/host_nodes.hpp) instead of calling it in line.
    bool split_cpu_part = false;
    // Rows of a split weight that reach the device by copy (exec/bus_copies.hpp): before the node
    // runs, `bytes` from host memory at `source` must have been copied into staging slot
    // `slot`, which the node's weight view (src[0]) reads. bytes == 0: an ordinary node.
    struct BusCopy {
        const void* source = nullptr;
        void* slot_data = nullptr;
        uint64_t bytes = 0;
        uint32_t slot = 0;
        // `source` lies in pageable memory (the file mapping, in a split session's batched steps) rather
        // than in page-locked memory: the copy may go through a bounce buffer (exec/bounce_buffers.hpp).
        bool pageable = false;
    } bus_copy;
    // Filled by resolve(): the call the executor hands to op.impl.run.
    std::vector<dense_tensor_view> src_views, dst_views;
    dense_op_call call{};
};

// Named step inputs the executor writes before each step: token, position and n_kv are I32 {T}
// (one word per token of the step, GraphOptions::tokens), status is I32 {1}. After them greedy, I32
// {1}, an output: the ARGMAX of the logits where the graph has that node (GraphOptions::
// greedy_on_device), read back with the status word in one copy. In a token graph with
// GraphOptions::top_k_on_device = k > 0, two more outputs follow it: top_k_ids, I32 {k}, and
// top_k_values, F32 {k}, the TOP_K of the logits, read back in that same copy (0 when absent).
struct StepInputs {
    BufferId token = 0;
    BufferId position = 0;
    BufferId n_kv = 0;
    BufferId status = 0;
    BufferId greedy = 0;
    BufferId top_k_ids = 0;
    BufferId top_k_values = 0;
};

struct Graph {
    std::vector<Buffer> buffers;
    std::vector<Node> nodes;
    StepInputs inputs;
    BufferId hidden = 0;        // the residual stream h {n_embd}
    BufferId logits = 0;        // {n_vocab}; none in a batched (state-only) graph
    int64_t tokens = 1;         // tokens per run (GraphOptions::tokens)
    int64_t n_embd = 0;
    int64_t n_vocab = 0;
    int64_t n_ctx = 0;
    std::vector<size_t> layer_end;  // index of the last node of each trunk layer (for --dump-layers)

    // Points every view at `base[buffer] + offset` (weights stay external) and fills each node's
    // dense_op_call. `base` has one pointer per buffer. Recurrent state ops read bank A and write
    // bank B; the executor keeps a second copy of the graph resolved with A and B swapped, and
    // alternates between the two as steps commit.
    void resolve(const std::vector<void*>& base);
};

// Fills n.call from n.src_views / n.dst_views / n.params (the last part of Graph::resolve, for a node
// whose views are already resolved).
void bind_call(Node& n);

}  // namespace dense::graph
