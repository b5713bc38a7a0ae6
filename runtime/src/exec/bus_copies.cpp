#include "exec/bus_copies.hpp"

#include "core/env_number.hpp"
#include "core/error.hpp"

#include <algorithm>
#include <map>
#include <string>

namespace dense::exec {

namespace {

// DENSE_BUS_COPY_PIECE_KIB overrides the piece size (a tuning knob for measurements; default 8 MiB,
// a whole default slot: on the H200 2 MiB pieces gave 9.12 tok/s at 8 GiB, 512 KiB 8.10, whole 8 MiB
// chunks 9.34 -- each copy costs more than a join waits behind one).
uint64_t copy_piece_bytes() { return env_whole_number("DENSE_BUS_COPY_PIECE_KIB", 8192, 64, uint64_t{1} << 30) << 10; }

unsigned copy_streams() { return static_cast<unsigned>(env_whole_number("DENSE_BUS_STREAMS", 2, 1, 4)); }

}  // namespace

BusCopies::BusCopies(const graph::Graph& g, DeviceMemory& memory, BounceBuffers* bounce)
    : memory_(memory), bounce_(bounce), piece_bytes_(copy_piece_bytes()), streams_(copy_streams()) {
    index_of_.assign(g.nodes.size(), -1);
    for (size_t i = 0; i < g.nodes.size(); ++i) {
        const auto& b = g.nodes[i].bus_copy;
        if (b.bytes == 0) continue;
        index_of_[i] = static_cast<int64_t>(copies_.size());
        copies_.push_back({i, b.source, b.slot_data, b.bytes, b.slot, g.nodes[i].phase == graph::Phase::LogitsOnly,
                           b.pageable, nullptr, nullptr});
        if (bounce_ != nullptr && b.pageable && b.bytes > bounce_->buffer_bytes())
            throw Error(ErrorKind::Internal, "bus copies: node '" + g.nodes[i].label + "' copies more than a bounce buffer holds");
        bytes_per_step_ += b.bytes;
    }
    if (copies_.empty()) return;
    if (!memory_.can_overlap_copies())
        throw Error(ErrorKind::Device, memory_.label() + " cannot copy weight rows beside the step (its pack is older "
                                       "than ABI 1.6); set bus_read_share: 0");
    fork_ = memory_.create_event();
    for (auto& c : copies_) {
        c.copied = memory_.create_event();
        c.consumed = memory_.create_event();
    }
    active_pos_.assign(copies_.size(), -1);
}

void BusCopies::begin_step(bool want_logits) {
    active_.clear();
    previous_reader_.clear();
    enqueued_ = read_ = 0;
    if (copies_.empty()) return;
    std::map<uint32_t, int64_t> last_in_slot;
    for (size_t k = 0; k < copies_.size(); ++k) {
        active_pos_[k] = -1;
        if (copies_[k].logits_only && !want_logits) continue;
        auto [it, fresh] = last_in_slot.try_emplace(copies_[k].slot, -1);
        previous_reader_.push_back(it->second);
        it->second = static_cast<int64_t>(active_.size());
        active_pos_[k] = static_cast<int64_t>(active_.size());
        active_.push_back(k);
    }
    if (active_.empty()) return;
    memory_.record_event(fork_, memory_.stream());
    for (unsigned s = 0; s < streams_; ++s) memory_.wait_event(memory_.side_stream(s), fork_);
    enqueue_allowed();
}

void BusCopies::enqueue_allowed() {
    while (enqueued_ < active_.size() && previous_reader_[enqueued_] < static_cast<int64_t>(read_)) {
        const Copy& c = copies_[active_[enqueued_]];
        void* side = memory_.side_stream(static_cast<unsigned>(enqueued_ % streams_));
        if (previous_reader_[enqueued_] >= 0)
            memory_.wait_event(side, copies_[active_[static_cast<size_t>(previous_reader_[enqueued_])]].consumed);
        if (c.pageable && bounce_ != nullptr) {
            // May wait for an earlier copy from the same bounce buffer: enqueued already, after the
            // reader it waits for, so it finishes without anything this thread has yet to enqueue.
            bounce_->copy(side, c.slot_data, c.source, c.bytes);
        } else {
            // In pieces of piece_bytes_ (by default a whole slot: one copy per chunk).
            for (uint64_t at = 0; at < c.bytes; at += piece_bytes_)
                memory_.to_device_on(side, static_cast<std::byte*>(c.slot_data) + at,
                                     static_cast<const std::byte*>(c.source) + at, std::min(piece_bytes_, c.bytes - at));
        }
        memory_.record_event(c.copied, side);
        ++enqueued_;
    }
}

void BusCopies::before(size_t node) {
    const int64_t k = index_of_.at(node);
    const int64_t pos = k < 0 ? -1 : active_pos_[static_cast<size_t>(k)];
    if (pos != static_cast<int64_t>(read_))
        throw Error(ErrorKind::Internal, "bus copies: node " + std::to_string(node) + " runs out of the planned order");
    enqueue_allowed();
    if (enqueued_ <= read_) throw Error(ErrorKind::Internal, "bus copies: a chunk runs before its copy was enqueued");
    memory_.wait_event(memory_.stream(), copies_[static_cast<size_t>(k)].copied);
}

void BusCopies::after(size_t node) {
    const Copy& c = copies_[static_cast<size_t>(index_of_.at(node))];
    memory_.record_event(c.consumed, memory_.stream());
    ++read_;
    enqueue_allowed();
}

}  // namespace dense::exec
