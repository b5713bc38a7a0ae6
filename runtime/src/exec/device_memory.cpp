#include "exec/device_memory.hpp"

#include "core/error.hpp"
#include "core/units.hpp"
#include "plan/allocation_size.hpp"

#include <atomic>
#include <chrono>
#include <cstring>
#include <new>
#include <vector>

namespace dense::exec {

namespace {

constexpr uint64_t kAlign = plan::kAllocationAlignment;
uint64_t rounded(uint64_t n) { return plan::allocation_size(n); }

class HostMemory final : public DeviceMemory {
public:
    ~HostMemory() override {
        for (void* p : blocks_) ::operator delete[](p, std::align_val_t{kAlign});
    }
    dense_device_kind kind() const noexcept override { return DENSE_DEVICE_CPU; }
    std::string label() const override { return "cpu"; }
    void* alloc(uint64_t bytes, const std::string& what) override {
        const uint64_t n = rounded(bytes);
        void* p = nullptr;
        try {
            p = ::operator new[](n, std::align_val_t{kAlign});
        } catch (const std::bad_alloc&) {
            throw Error(ErrorKind::Device, "cannot allocate " + format_bytes(n) + " of host memory for " + what);
        }
        std::memset(p, 0, n);
        blocks_.push_back(p);
        total_ += n;
        account(what, n);
        return p;
    }
    void zero(void* dst, uint64_t bytes) override { std::memset(dst, 0, bytes); }
    void to_device(void* dst, const void* src, uint64_t bytes) override { std::memcpy(dst, src, bytes); }
    void to_host(void* dst, const void* src, uint64_t bytes) override { std::memcpy(dst, src, bytes); }
    void sync() override {}
    void copy(void* dst, const void* src, uint64_t bytes) override { std::memmove(dst, src, bytes); }
    void* stream() const noexcept override { return nullptr; }
    uint64_t allocated_bytes() const noexcept override { return total_; }
    // Everything enqueued "on the stream" here has already run when the call returns (copies are
    // memcpy, ops run inside their call), so a host function is simply called now.
    bool can_call_host() const noexcept override { return true; }
    void call_host(void (*fn)(void*), void* arg) override { fn(arg); }
    // Likewise a copy "beside the step" is a memcpy now, and events order nothing that is not
    // already in order.
    bool can_overlap_copies() const noexcept override { return true; }
    void* create_event() override { return &event_token_; }
    void to_device_on(void*, void* dst, const void* src, uint64_t bytes) override { std::memcpy(dst, src, bytes); }
    bool can_signal_host_from_side() const noexcept override { return true; }
    void write_word_on(void*, const void* word, uint32_t value) override {
        std::atomic_ref<uint32_t>(*static_cast<uint32_t*>(const_cast<void*>(word))).store(value, std::memory_order_release);
    }
    // Only for such words: can_map_host() stays false, since no kernel reads host memory over a bus here.
    std::pair<void*, void*> alloc_host_mapped(uint64_t bytes) override {
        void* p = alloc_host(bytes);
        std::memset(p, 0, bytes);
        return {p, p};
    }
    // CPU ops run synchronously inside their call, so a mark is just the time it is recorded.
    bool can_time() const noexcept override { return true; }
    void* create_marks(uint32_t count) override { return new std::vector<Clock::time_point>(count); }
    void record_mark(void* marks, uint32_t index) override { static_cast<Marks*>(marks)->at(index) = Clock::now(); }
    double elapsed_ms(void* marks, uint32_t from, uint32_t to) override {
        const auto& m = *static_cast<Marks*>(marks);
        return std::chrono::duration<double, std::milli>(m.at(to) - m.at(from)).count();
    }
    void destroy_marks(void* marks) noexcept override { delete static_cast<Marks*>(marks); }

private:
    using Clock = std::chrono::steady_clock;
    using Marks = std::vector<Clock::time_point>;
    std::vector<void*> blocks_;
    uint64_t total_ = 0;
    char event_token_ = 0;
};

class PackMemory final : public DeviceMemory {
public:
    PackMemory(dense_device_api api, void* user, uint32_t index, std::string label)
        : api_(api), user_(user), index_(index), label_(std::move(label)) {
        check(api_.stream_create(user_, index_, &stream_), "creating a stream");
    }
    ~PackMemory() override {
        side_streams_.push_back(stream_);
        for (void* s : side_streams_)
            if (s != nullptr) {
                api_.stream_sync(user_, index_, s);
                api_.stream_destroy(user_, index_, s);
            }
        for (void* e : events_) api_.event_destroy(user_, index_, e);
        for (void* g : graphs_)
            if (g != nullptr) api_.graph_destroy(user_, index_, g);
        for (void* p : blocks_) api_.free(user_, index_, p);
        for (void* p : pinned_) api_.host_free(user_, index_, p);
    }
    dense_device_kind kind() const noexcept override { return DENSE_DEVICE_CUDA; }
    std::string label() const override { return label_; }
    void* alloc(uint64_t bytes, const std::string& what) override {
        const uint64_t n = rounded(bytes);
        void* p = nullptr;
        const dense_status s = api_.alloc(user_, index_, n, &p);
        if (s != DENSE_OK || p == nullptr)
            throw Error(ErrorKind::Device, "cannot allocate " + format_bytes(n) + " on " + label_ + " for " + what +
                                               (s == DENSE_E_OUT_OF_MEMORY ? " (out of device memory)" : ""));
        blocks_.push_back(p);
        total_ += n;
        account(what, n);
        zero(p, n);
        return p;
    }
    void zero(void* dst, uint64_t bytes) override {
        if (api_.memset_async != nullptr) {
            check(api_.memset_async(user_, index_, dst, 0, bytes, stream_), "clearing device memory");
            return;
        }
        // An ABI 1.0 pack has no memset: copy from a zeroed host block, in chunks.
        static const std::vector<std::byte> zeros(size_t{4} << 20);
        for (uint64_t off = 0; off < bytes; off += zeros.size()) {
            const uint64_t n = std::min<uint64_t>(zeros.size(), bytes - off);
            check(api_.copy_to_device(user_, index_, static_cast<std::byte*>(dst) + off, zeros.data(), n, stream_),
                  "clearing device memory");
        }
        sync();  // the host block is shared by every call
    }
    bool can_copy_on_device() const noexcept override { return api_.copy_on_device != nullptr; }
    void copy(void* dst, const void* src, uint64_t bytes) override {
        if (api_.copy_on_device == nullptr)
            throw Error(ErrorKind::Device, label_ + ": the pack's device API (ABI 1.0) cannot copy on the device");
        check(api_.copy_on_device(user_, index_, dst, src, bytes, stream_), "copying on the device");
    }
    bool can_capture() const noexcept override {
        return api_.capture_begin != nullptr && api_.capture_end != nullptr && api_.graph_launch != nullptr &&
               api_.graph_destroy != nullptr;
    }
    void begin_capture() override { check(api_.capture_begin(user_, index_, stream_), "starting a graph capture"); }
    void* end_capture() override {
        void* graph = nullptr;
        check(api_.capture_end(user_, index_, stream_, &graph), "finishing a graph capture");
        graphs_.push_back(graph);
        return graph;
    }
    void launch(void* graph) override { check(api_.graph_launch(user_, index_, graph, stream_), "launching the step graph"); }
    void release_graph(void* graph) noexcept override {
        for (auto& g : graphs_)
            if (g == graph) {
                api_.graph_destroy(user_, index_, g);
                g = nullptr;
            }
    }
    void to_device(void* dst, const void* src, uint64_t bytes) override {
        check(api_.copy_to_device(user_, index_, dst, src, bytes, stream_), "copying to the device");
    }
    void to_host(void* dst, const void* src, uint64_t bytes) override {
        check(api_.copy_to_host(user_, index_, dst, src, bytes, stream_), "copying from the device");
    }
    // The copy stream too: after a failed step it may hold copies no reader waited for.
    void sync() override {
        check(api_.stream_sync(user_, index_, stream_), "waiting for the device");
        for (void* s : side_streams_)
            if (s != nullptr) check(api_.stream_sync(user_, index_, s), "waiting for a copy stream");
    }
    void* stream() const noexcept override { return stream_; }
    uint64_t allocated_bytes() const noexcept override { return total_; }
    bool can_call_host() const noexcept override { return api_.launch_host_fn != nullptr; }
    void call_host(void (*fn)(void*), void* arg) override {
        if (api_.launch_host_fn == nullptr)
            throw Error(ErrorKind::Device, label_ + ": the pack's device API (before ABI 1.4) cannot run host functions");
        check(api_.launch_host_fn(user_, index_, fn, arg, stream_), "enqueueing a host function");
    }
    bool can_signal_host() const noexcept override {
        return api_.stream_write_u32 != nullptr && api_.stream_wait_u32 != nullptr && can_map_host();
    }
    void write_word(const void* device_word, uint32_t value) override {
        check(api_.stream_write_u32(user_, index_, stream_, device_word, value), "writing a word to host memory");
    }
    void wait_word(const void* device_word, uint32_t value) override {
        check(api_.stream_wait_u32(user_, index_, stream_, device_word, value), "waiting for a word in host memory");
    }
    bool can_signal_host_from_side() const noexcept override { return can_signal_host() && can_overlap_copies(); }
    void write_word_on(void* on_stream, const void* device_word, uint32_t value) override {
        check(api_.stream_write_u32(user_, index_, on_stream, device_word, value), "writing a word to host memory");
    }
    bool can_map_host() const noexcept override { return api_.host_alloc_mapped != nullptr && api_.host_free != nullptr; }
    std::pair<void*, void*> alloc_host_mapped(uint64_t bytes) override {
        if (!can_map_host())
            throw Error(ErrorKind::Device, label_ + ": the pack's device API (before ABI 1.5) cannot map host memory");
        void* host = nullptr;
        const void* device = nullptr;
        check(api_.host_alloc_mapped(user_, index_, bytes, &host, &device),
              ("allocating " + format_bytes(bytes) + " of mapped page-locked host memory").c_str());
        pinned_.push_back(host);
        std::memset(host, 0, bytes);
        return {host, const_cast<void*>(device)};
    }
    bool can_overlap_copies() const noexcept override {
        return api_.event_create != nullptr && api_.event_destroy != nullptr && api_.event_record != nullptr &&
               api_.stream_wait_event != nullptr;
    }
    void* side_stream(unsigned index) override {
        if (index >= side_streams_.size()) side_streams_.resize(index + 1, nullptr);
        if (side_streams_[index] == nullptr)
            check(api_.stream_create(user_, index_, &side_streams_[index]), "creating a copy stream");
        return side_streams_[index];
    }
    void* create_event() override {
        if (!can_overlap_copies())
            throw Error(ErrorKind::Device, label_ + ": the pack's device API (before ABI 1.6) has no events");
        void* e = nullptr;
        check(api_.event_create(user_, index_, &e), "creating an event");
        events_.push_back(e);
        return e;
    }
    void record_event(void* event, void* on_stream) override {
        check(api_.event_record(user_, index_, event, on_stream), "recording an event");
    }
    void wait_event(void* on_stream, void* event) override {
        check(api_.stream_wait_event(user_, index_, on_stream, event), "waiting for an event");
    }
    void to_device_on(void* on_stream, void* dst, const void* src, uint64_t bytes) override {
        check(api_.copy_to_device(user_, index_, dst, src, bytes, on_stream), "copying to the device beside the step");
    }
    void* alloc_host_locked(uint64_t bytes) override {
        if (api_.host_alloc == nullptr || api_.host_free == nullptr)
            throw Error(ErrorKind::Device, label_ + ": the pack's device API (before ABI 1.3) has no page-locked memory");
        void* p = nullptr;
        check(api_.host_alloc(user_, index_, bytes, &p),
              ("allocating " + format_bytes(bytes) + " of page-locked host memory").c_str());
        pinned_.push_back(p);
        return p;
    }
    void* alloc_host(uint64_t bytes) override {
        void* p = nullptr;
        if (api_.host_alloc != nullptr && api_.host_free != nullptr &&
            api_.host_alloc(user_, index_, bytes, &p) == DENSE_OK && p != nullptr) {
            pinned_.push_back(p);
            std::memset(p, 0, bytes);
            return p;
        }
        // An older pack, or no page-locked memory left: plain memory works, only slower.
        return DeviceMemory::alloc_host(bytes);
    }
    bool can_time() const noexcept override {
        return api_.marks_create != nullptr && api_.mark_record != nullptr && api_.marks_elapsed_ms != nullptr &&
               api_.marks_destroy != nullptr;
    }
    void* create_marks(uint32_t count) override {
        void* marks = nullptr;
        check(api_.marks_create(user_, index_, count, &marks), "creating timing marks");
        return marks;
    }
    void record_mark(void* marks, uint32_t index) override {
        check(api_.mark_record(user_, index_, marks, index, stream_), "recording a timing mark");
    }
    double elapsed_ms(void* marks, uint32_t from, uint32_t to) override {
        float ms = 0;
        check(api_.marks_elapsed_ms(user_, index_, marks, from, to, &ms), "reading timing marks");
        return ms;
    }
    void destroy_marks(void* marks) noexcept override { api_.marks_destroy(user_, index_, marks); }

private:
    void check(dense_status s, const char* what) const {
        if (s != DENSE_OK)
            throw Error(ErrorKind::Device, label_ + ": " + what + " failed (status " + std::to_string(s) +
                                               "; the pack logged the driver's message)");
    }
    dense_device_api api_;
    void* user_;
    uint32_t index_;
    std::string label_;
    void* stream_ = nullptr;
    std::vector<void*> side_streams_;
    std::vector<void*> events_;
    std::vector<void*> blocks_;
    std::vector<void*> pinned_;
    std::vector<void*> graphs_;
    uint64_t total_ = 0;
};

}  // namespace

std::unique_ptr<DeviceMemory> make_host_memory() { return std::make_unique<HostMemory>(); }

std::unique_ptr<DeviceMemory> make_pack_memory(const packs::PackManager& packs, size_t device) {
    const auto& d = packs.devices().at(device);
    if (d.simulated) throw Error(ErrorKind::Device, d.id() + " is simulated (DENSE_FAKE_DEVICES): nothing can run on it");
    const packs::PackRecord* pack = packs.chosen_pack(device);
    if (pack == nullptr) throw Error(ErrorKind::Device, "no usable kernel pack for " + d.id());
    const auto api = pack->device_api();
    if (!api || !api->alloc || !api->free || !api->copy_to_device || !api->copy_to_host || !api->stream_create ||
        !api->stream_destroy || !api->stream_sync)
        throw Error(ErrorKind::Device, "pack " + pack->name + " has no complete device API for " + d.id());
    return std::make_unique<PackMemory>(*api, pack->info.user, d.hw.device_index,
                                        d.id() + " (" + d.name() + ")");
}

}  // namespace dense::exec
