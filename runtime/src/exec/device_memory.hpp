// Where a session's buffers live and how bytes move there: host memory for CPU packs, or a GPU
// through the chosen pack's device API (dense_device_api). Every transfer goes on the session's one
// stream; sync() waits for it. Allocations happen when the session starts, never per token.
#pragma once

#include "core/error.hpp"
#include "packs/pack_manager.hpp"

#include <dense/abi/dense_abi.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace dense::exec {

class DeviceMemory {
public:
    virtual ~DeviceMemory() = default;
    virtual dense_device_kind kind() const noexcept = 0;
    virtual std::string label() const = 0;
    // `bytes` of zeroed memory, 256-byte aligned, taking plan::allocation_size(bytes); throws
    // dense::Error(Device) with the amount on failure.
    virtual void* alloc(uint64_t bytes, const std::string& what) = 0;
    virtual void zero(void* dst, uint64_t bytes) = 0;
    virtual void to_device(void* dst, const void* src, uint64_t bytes) = 0;  // async on stream()
    virtual void to_host(void* dst, const void* src, uint64_t bytes) = 0;    // async on stream()
    virtual void sync() = 0;
    virtual void* stream() const noexcept = 0;  // NULL on the CPU
    virtual uint64_t allocated_bytes() const noexcept = 0;
    // What alloc() took, summed per `what` label: a session checks it against its plan's bill.
    const std::map<std::string, uint64_t>& allocated_by_label() const noexcept { return by_label_; }
    // dst = src, both in this memory (async on stream()); only where can_copy_on_device().
    virtual void copy(void* dst, const void* src, uint64_t bytes) = 0;
    virtual bool can_copy_on_device() const noexcept { return true; }

    // Recording the work enqueued on stream() into a replayable device graph (a CUDA graph): the
    // token step is captured once and replayed every token. Only when can_capture().
    virtual bool can_capture() const noexcept { return false; }
    virtual void begin_capture() {}
    virtual void* end_capture() { return nullptr; }   // the graph; owned by this memory until released
    virtual void launch(void* /*graph*/) {}
    virtual void release_graph(void* /*graph*/) noexcept {}

    // Host functions on stream() (ABI 1.4): fn(arg) runs on a host thread once the work enqueued
    // before it is done, and the work enqueued after it waits until it returns; a captured graph
    // runs it at every launch. How a row split's CPU rows join the device's step (exec/host_nodes.hpp).
    virtual bool can_call_host() const noexcept { return false; }
    virtual void call_host(void (*/*fn*/)(void*), void* /*arg*/) {}

    // A second stream for copies that run beside the step, ordered against stream() by events
    // (ABI 1.6): how weight rows in page-locked host memory reach the device while it computes
    // (exec/bus_copies.hpp). Events and the side stream are owned by this memory. On the CPU
    // everything runs at once, in enqueue order, so the same schedule runs there too.
    // ABI 1.7: a 32-bit word of mapped host memory (its device address from alloc_host_mapped)
    // written / waited for on stream(), in order with the rest of it (stream memory operations).
    virtual bool can_signal_host() const noexcept { return false; }
    virtual void write_word(const void* /*device_word*/, uint32_t /*value*/) {}
    virtual void wait_word(const void* /*device_word*/, uint32_t /*value*/) {}
    // The same write on another stream (a side stream's copy reporting that it has read its source:
    // exec/bounce_buffers.hpp). On the CPU a copy has run when it is enqueued, so the word is simply
    // stored, in "mapped" memory that is plain host memory there.
    virtual bool can_signal_host_from_side() const noexcept { return false; }
    virtual void write_word_on(void* /*on_stream*/, const void* /*device_word*/, uint32_t /*value*/) {
        throw Error(ErrorKind::Device, label() + " cannot write words of host memory from a stream");
    }
    virtual bool can_overlap_copies() const noexcept { return false; }
    virtual void* side_stream(unsigned /*index*/ = 0) { return nullptr; }  // each made at its first call
    virtual void* create_event() { throw Error(ErrorKind::Device, label() + " has no events"); }
    virtual void record_event(void* /*event*/, void* /*on_stream*/) {}
    virtual void wait_event(void* /*on_stream*/, void* /*event*/) {}
    virtual void to_device_on(void* /*on_stream*/, void* /*dst*/, const void* /*src*/, uint64_t /*bytes*/) {
        throw Error(ErrorKind::Device, label() + " cannot copy beside the step");
    }

    // Page-locked host memory that the device's kernels read and write in place, over the bus (ABI
    // 1.5): returns {where the host reads and writes, where kernels do}; owned by this memory. Host
    // memory, so not in the VRAM bill. How a row split's activations and CPU results cross without a
    // copy engine (exec/host_nodes.hpp). Throws dense::Error(Device) when the pack cannot, or the
    // driver refuses.
    virtual bool can_map_host() const noexcept { return false; }
    virtual std::pair<void*, void*> alloc_host_mapped(uint64_t /*bytes*/) {
        throw Error(ErrorKind::Device, label() + " cannot map host memory");
    }

    // Host memory that transfers to and from this device run fastest from: page-locked where the
    // pack can (ABI 1.3), else plain. Owned by this memory; host memory, so not in the VRAM bill.
    virtual void* alloc_host(uint64_t bytes) {
        plain_host_.emplace_back(std::make_unique<std::byte[]>(static_cast<size_t>(bytes)));
        return plain_host_.back().get();
    }
    // The same, but page-locked or nothing: copies from it may be captured into a device graph and
    // run at the bus's speed. Throws dense::Error(Device) with the amount when the pack cannot or
    // the driver refuses. Plain memory on the CPU, where nothing crosses a bus.
    virtual void* alloc_host_locked(uint64_t bytes) { return DeviceMemory::alloc_host(bytes); }

    // Timing marks on stream(), for the bench's per-op profile (only when can_time()): `count` marks,
    // each recorded after the work enqueued before it; elapsed_ms(a, b) waits for mark b.
    virtual bool can_time() const noexcept { return false; }
    virtual void* create_marks(uint32_t /*count*/) { return nullptr; }
    virtual void record_mark(void* /*marks*/, uint32_t /*index*/) {}
    virtual double elapsed_ms(void* /*marks*/, uint32_t /*from*/, uint32_t /*to*/) { return 0; }
    virtual void destroy_marks(void* /*marks*/) noexcept {}

protected:
    void account(const std::string& what, uint64_t bytes) { by_label_[what] += bytes; }

private:
    std::map<std::string, uint64_t> by_label_;
    std::vector<std::unique_ptr<std::byte[]>> plain_host_;
};

// Plain host memory (CPU packs): transfers are memcpy, sync is a no-op.
std::unique_ptr<DeviceMemory> make_host_memory();

// Memory of device `device` through its pack's device API. Throws dense::Error(Device) if the
// pack has none.
std::unique_ptr<DeviceMemory> make_pack_memory(const packs::PackManager& packs, size_t device);

}  // namespace dense::exec
