// One generation session on one device: the static graph (built once), its buffers, the KV cache,
// the recurrent state in two banks, and the token step.
//
// A step writes the token, its position and the number of attended positions into the step inputs,
// runs every node (the LM head only when logits are wanted), then reads the status word. Recurrent
// state is read from the active bank and written to the staging bank; only a step that finished with
// status 0 commits (the banks swap and the position advances). A step that hits NaN/Inf or an op
// error throws and leaves the previous state and position exactly as they were.
#pragma once

#include "graph/graph.hpp"
#include "graph/graph_builder.hpp"
#include "exec/host_buffers.hpp"
#include "model/model_binding.hpp"
#include "model/model_spec.hpp"
#include "packs/pack_manager.hpp"

#include <functional>
#include <memory>
#include <span>

namespace dense::exec {

struct SessionOptions {
    int64_t n_ctx = 4096;
    dense_type_id kv_type = DENSE_TYPE_F16;
    size_t device = 0;  // index into PackManager::devices(); only CPU devices run today
    int32_t threads = 0;
};

// Called after every trunk layer when set: (layer, position, hidden state after the layer).
using LayerObserver = std::function<void(int64_t layer, int64_t position, std::span<const float> hidden)>;

class Session {
public:
    Session(const model::BoundModel& model, const model::ModelSpec& spec, const packs::PackManager& packs,
            const SessionOptions& options);

    // Runs one token at the next position. want_logits = false runs state-only (no final norm, no LM
    // head). Throws dense::Error: Usage for a bad token id or a full context, Numeric for NaN/Inf,
    // Pack for an op failure; in every case the session's state is unchanged.
    void step(int32_t token, bool want_logits);

    std::span<const float> logits() const;   // valid after a step with want_logits
    std::span<const float> hidden() const;   // residual stream after the last step
    int64_t position() const noexcept { return position_; }
    int64_t n_ctx() const noexcept { return graph_[0].n_ctx; }
    int64_t n_vocab() const noexcept { return graph_[0].n_vocab; }
    size_t node_count() const noexcept { return graph_[0].nodes.size(); }
    uint64_t memory_bytes() const noexcept { return buffers_->total_bytes(); }

    void reset();  // position 0, state and caches zeroed
    void set_layer_observer(LayerObserver observer) { observer_ = std::move(observer); }

    // Bytes of the committed recurrent state of every layer (for tests of the commit rule).
    std::vector<std::byte> snapshot_state() const;

private:
    void write_i32(graph::BufferId b, int32_t v);
    int32_t read_i32(graph::BufferId b) const;

    graph::Graph graph_[2];  // [parity]: parity 1 has state banks A and B swapped
    std::unique_ptr<HostBuffers> buffers_;
    int parity_ = 0;
    int64_t position_ = 0;
    bool logits_valid_ = false;
    LayerObserver observer_;
};

}  // namespace dense::exec
