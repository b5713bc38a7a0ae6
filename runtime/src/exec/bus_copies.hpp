// The copies that bring a row split's bus rows (exec/bus_rows.hpp) into VRAM while the step runs.
//
// Each graph node with a Node::bus_copy reads its weight rows from a staging slot (a ring of
// plan::kBusStagingSlots slots, plan/bus_staging.hpp). Its copy runs on the device's second stream:
//
//   side stream:  [wait: the slot's previous reader ran] copy host -> slot, record "copied"
//   main stream:  ... wait "copied", the chunk's GEMV, record "consumed" ...
//
// (each copy in pieces of at most 8 MiB, DENSE_BUS_COPY_PIECE_KIB to measure others; DENSE_BUS_STREAMS
// side streams taking turns, default 2, so that two copy engines may serve them: 9.30 vs 8.42 tok/s
// with one, same run, H200 at 8 GiB), so the copy engine
// fills the next slots while the main stream computes, the CPU rows run and the
// joins wait, and it stays up to (slots - 1) chunks ahead. Copies are enqueued in the order their
// nodes run, each one as soon as the previous reader of its slot is enqueued on the main stream (the
// wait must name a recorded event). At the start of a step the side stream waits for the main
// stream once (so the copies of a captured step join its capture, and never overwrite a slot an
// earlier step may still read); every copy is waited for by its reader, so the side stream has
// nothing left over when the step ends.
//
// A copy whose source is pageable (Node::BusCopy::pageable: the file mapping, in a split session's
// batched steps) goes through `bounce` when one is given (exec/bounce_buffers.hpp): the workers copy
// it into a page-locked buffer first, on the thread that enqueues it, which may then wait for an
// earlier copy; so a BusCopies with bounce buffers must run uncaptured.
#pragma once

#include "exec/bounce_buffers.hpp"
#include "exec/device_memory.hpp"
#include "graph/graph.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace dense::exec {

class BusCopies {
public:
    // Takes every node of `g` with a bus copy. Throws dense::Error(Device) when `memory` cannot copy
    // beside the step (a pack before ABI 1.6). Pageable copies go through `bounce` where it is not
    // null (it must outlive this), else straight from their source.
    BusCopies(const graph::Graph& g, DeviceMemory& memory, BounceBuffers* bounce = nullptr);

    bool is_staged(size_t node) const { return index_of_.size() > node && index_of_[node] >= 0; }
    // The nodes that run this step (LogitsOnly ones only with logits). Enqueues the fork and the
    // first copies.
    void begin_step(bool want_logits);
    // Before node `node` (a staged one) runs: enqueues the copies now allowed, then the main
    // stream's wait for its own copy.
    void before(size_t node);
    // After it ran: records that its slot's bytes were read, and enqueues what that frees.
    void after(size_t node);
    // Bytes copied per step with logits (every staged node).
    uint64_t bytes_per_step() const noexcept { return bytes_per_step_; }

private:
    struct Copy {
        size_t node;
        const void* source;
        void* slot_data;
        uint64_t bytes;
        uint32_t slot;
        bool logits_only;
        bool pageable;
        void* copied;
        void* consumed;
    };
    void enqueue_allowed();

    DeviceMemory& memory_;
    BounceBuffers* bounce_;
    uint64_t piece_bytes_;           // copies go in pieces of at most this
    unsigned streams_;               // side streams the copies take turns on
    std::vector<Copy> copies_;       // in graph order
    std::vector<int64_t> index_of_;  // node -> index into copies_, or -1
    void* fork_ = nullptr;
    uint64_t bytes_per_step_ = 0;
    // This step: the copies that run, in order; for each, the position in `active_` of the previous
    // reader of its slot (-1: none this step).
    std::vector<size_t> active_;
    std::vector<int64_t> previous_reader_;
    std::vector<int64_t> active_pos_;  // copies_ index -> position in active_, or -1
    size_t enqueued_ = 0;  // copies of active_ enqueued on the side stream
    size_t read_ = 0;      // readers of active_ enqueued on the main stream (their "consumed" recorded)
};

}  // namespace dense::exec
