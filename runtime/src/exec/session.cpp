#include "exec/session.hpp"

#include "core/error.hpp"

#include <cstring>

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

}  // namespace

Session::Session(const model::BoundModel& model, const model::ModelSpec& spec, const packs::PackManager& packs,
                 const SessionOptions& options) {
    const auto& device = packs.devices().at(options.device);
    if (device.kind() != DENSE_DEVICE_CPU)
        throw Error(ErrorKind::Device, "running on " + device.id() +
                                           " is not available yet: the executor runs CPU packs only (use placement: cpu)");
    graph::GraphOptions go;
    go.n_ctx = options.n_ctx;
    go.kv_type = options.kv_type;
    go.device_kind = device.kind();
    graph_[0] = graph::build_graph(model, spec, go);

    std::vector<uint64_t> sizes;
    for (const auto& b : graph_[0].buffers) sizes.push_back(b.bytes);
    buffers_ = std::make_unique<HostBuffers>(sizes);

    std::vector<void*> base(sizes.size());
    for (size_t i = 0; i < sizes.size(); ++i) base[i] = buffers_->data(i);
    graph_[1] = graph_[0];
    graph_[0].resolve(base);
    // Parity 1: every bank A <-> its bank B (buffers of one state are created as an adjacent pair).
    for (size_t i = 0; i + 1 < sizes.size(); ++i)
        if (graph_[0].buffers[i].kind == graph::BufferKind::StateBankA) std::swap(base[i], base[i + 1]);
    graph_[1].resolve(base);
    graph::select_ops(graph_[0], packs, options.device);
    for (size_t i = 0; i < graph_[0].nodes.size(); ++i) graph_[1].nodes[i].op = graph_[0].nodes[i].op;
}

void Session::write_i32(graph::BufferId b, int32_t v) { std::memcpy(buffers_->data(b), &v, 4); }

int32_t Session::read_i32(graph::BufferId b) const {
    int32_t v = 0;
    std::memcpy(&v, buffers_->data(b), 4);
    return v;
}

void Session::step(int32_t token, bool want_logits) {
    const graph::Graph& g = graph_[parity_];
    if (token < 0 || token >= g.n_vocab)
        throw Error(ErrorKind::Usage, "token id " + std::to_string(token) + " is out of range [0, " +
                                          std::to_string(g.n_vocab) + ")");
    if (position_ >= g.n_ctx)
        throw Error(ErrorKind::Usage, "context is full: " + std::to_string(g.n_ctx) +
                                          " tokens (raise `context` in the run config)");
    write_i32(g.inputs.token, token);
    write_i32(g.inputs.position, static_cast<int32_t>(position_));
    write_i32(g.inputs.n_kv, static_cast<int32_t>(position_ + 1));
    write_i32(g.inputs.status, 0);
    logits_valid_ = false;

    size_t next_layer_end = 0;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
        const graph::Node& n = g.nodes[i];
        if (n.phase == graph::Phase::LogitsOnly && !want_logits) continue;
        const dense_status s = n.op.impl.run(n.op.impl.user, &n.call);
        if (s != DENSE_OK)
            throw Error(s == DENSE_E_NUMERIC ? ErrorKind::Numeric : ErrorKind::Pack,
                        "step at position " + std::to_string(position_) + ": node '" + n.label + "' (" +
                            n.op.impl_name + " from pack " + n.op.pack + ") failed: " + status_text(s) +
                            "; the session state is unchanged");
        if (observer_ && next_layer_end < g.layer_end.size() && i == g.layer_end[next_layer_end]) {
            observer_(static_cast<int64_t>(next_layer_end), position_, hidden());
            ++next_layer_end;
        }
    }
    if (read_i32(g.inputs.status) != 0)
        throw Error(ErrorKind::Numeric, "step at position " + std::to_string(position_) + " (token " +
                                            std::to_string(token) +
                                            ") produced NaN or Inf; the step was not committed and the session "
                                            "state is unchanged");
    parity_ ^= 1;
    ++position_;
    logits_valid_ = want_logits;
}

std::span<const float> Session::logits() const {
    if (!logits_valid_) throw Error(ErrorKind::Internal, "logits requested for a step that did not compute them");
    const auto& g = graph_[0];
    return {static_cast<const float*>(buffers_->data(g.logits)), static_cast<size_t>(g.n_vocab)};
}

std::span<const float> Session::hidden() const {
    const auto& g = graph_[0];
    return {static_cast<const float*>(buffers_->data(g.hidden)), static_cast<size_t>(g.n_embd)};
}

void Session::reset() {
    for (size_t i = 0; i < buffers_->size(); ++i) std::memset(buffers_->data(i), 0, buffers_->bytes(i));
    parity_ = 0;
    position_ = 0;
    logits_valid_ = false;
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
        const auto* p = static_cast<const std::byte*>(buffers_->data(i));
        out.insert(out.end(), p, p + buffers_->bytes(i));
    }
    return out;
}

}  // namespace dense::exec
