#include "exec/bounce_buffers.hpp"

#include "core/env_number.hpp"
#include "core/error.hpp"
#include "core/units.hpp"
#include "exec/cpu_relax.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>


namespace dense::exec {

namespace {

// A fill is cut into pieces the workers claim one by one: an 8 MiB buffer is 32 of them, so 15
// workers each take two or three; large enough that claiming costs nothing against the copy.
constexpr uint64_t kFillPieceBytes = uint64_t{256} << 10;

struct Fill {
    std::byte* dst;
    const std::byte* source;
    uint64_t bytes;
    std::atomic<size_t> done{0};
};

void fill_piece(void* context, size_t index) {
    auto* f = static_cast<Fill*>(context);
    const uint64_t at = kFillPieceBytes * index;
    std::memcpy(f->dst + at, f->source + at, static_cast<size_t>(std::min(kFillPieceBytes, f->bytes - at)));
    f->done.fetch_add(1, std::memory_order_release);
}

}  // namespace

bool BounceBuffers::usable(const DeviceMemory& memory) {
    return memory.can_signal_host_from_side() && env_whole_number("DENSE_BUS_BOUNCE", 1, 0, 1) == 1;
}

BounceBuffers::BounceBuffers(DeviceMemory& memory, CpuWorkers& workers, uint64_t buffer_bytes, uint32_t count)
    : memory_(memory), workers_(workers), buffer_bytes_(buffer_bytes) {
    if (count == 0 || buffer_bytes == 0) throw Error(ErrorKind::Internal, "bounce buffers: none asked for");
    constexpr uint64_t kLine = 64;  // one cache line per word: the host polls one while the stream writes another
    const auto [words_host, words_device] = memory_.alloc_host_mapped(kLine * count);
    buffers_.resize(count);
    for (uint32_t i = 0; i < count; ++i) {
        Buffer& b = buffers_[i];
        b.data = static_cast<std::byte*>(memory_.alloc_host_locked(buffer_bytes));
        b.done_word = reinterpret_cast<uint32_t*>(static_cast<std::byte*>(words_host) + kLine * i);
        b.done_device = static_cast<const std::byte*>(words_device) + kLine * i;
        *b.done_word = 0;
    }
}

void BounceBuffers::wait_until_read(const Buffer& b) const {
    if (b.uses == 0) return;
    std::atomic_ref<uint32_t> word(*b.done_word);
    const auto start = std::chrono::steady_clock::now();
    for (uint32_t spins = 0; word.load(std::memory_order_acquire) != b.uses; ++spins) {
        if (spins < 4096) {
            cpu_relax();
            continue;
        }
        if (std::chrono::steady_clock::now() - start > std::chrono::seconds(60))
            throw Error(ErrorKind::Device, memory_.label() + ": a copy of weight rows from a bounce buffer did not finish "
                                                             "within a minute (the device's copy stream failed?)");
        std::this_thread::sleep_for(std::chrono::microseconds(10));
    }
}

void BounceBuffers::fill(std::byte* dst, const std::byte* source, uint64_t bytes) {
    Fill f{dst, source, bytes};
    const size_t pieces = static_cast<size_t>((bytes + kFillPieceBytes - 1) / kFillPieceBytes);
    workers_.submit(fill_piece, &f, pieces);
    // The fill is this thread's only work until it is done: spin (a few hundred microseconds).
    while (f.done.load(std::memory_order_acquire) != pieces) cpu_relax();
}

void BounceBuffers::copy(void* side, void* dst, const void* source, uint64_t bytes) {
    if (bytes > buffer_bytes_)
        throw Error(ErrorKind::Internal, "bounce buffers: a copy of " + format_bytes(bytes) + " exceeds a buffer of " +
                                             format_bytes(buffer_bytes_));
    Buffer& b = buffers_[next_];
    next_ = (next_ + 1) % static_cast<uint32_t>(buffers_.size());
    wait_until_read(b);
    fill(b.data, static_cast<const std::byte*>(source), bytes);
    memory_.to_device_on(side, dst, b.data, bytes);
    // Counted only once the word that reports it is enqueued: a failed enqueue must not leave the
    // next fill waiting for a word that never comes.
    memory_.write_word_on(side, b.done_device, b.uses + 1);
    ++b.uses;
    bytes_copied_ += bytes;
}

}  // namespace dense::exec
