// Copies from pageable host memory (the model's file mapping) into VRAM at page-locked speed: the CPU
// workers copy the bytes into one of a few page-locked bounce buffers, then the copy engine moves
// them on from there, asynchronously, while the workers fill the next buffer.
//
// Why: a split session's batched prompt step streams every host row of a split weight through the
// bus staging (exec/bus_copies.hpp). The bus share comes from its page-locked copy at ~50 GB/s, but
// the rest lies in the file mapping, and a copy from pageable memory goes through the driver's own
// staging, one thread at a time: on the H200 test machine a 7880MiB step of ~7.8 GB took ~0.55 s,
// most of it that pageable half (docs/perf-notes.md, session 15). Registering the mapping with the
// driver is not an option (exec/bus_rows.hpp). Fifteen idle workers copy to page-locked memory many
// times faster than the driver's one thread.
//
// A buffer is refilled only after the copy engine has read it: the copy from it is followed, on the
// same side stream, by a word of mapped host memory (ABI 1.7, written from that stream) that the host
// waits for before the next fill. So copy() may block the calling thread, and must never be called
// while the stream is being captured into a device graph (the word would be written only at a
// launch): only uncaptured steps (a split session's batched steps) use it.
#pragma once

#include "exec/cpu_workers.hpp"
#include "exec/device_memory.hpp"

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

namespace dense::exec {

class BounceBuffers {
public:
    // Whether `memory` can tell the host when a side stream's copy is done (words written from a side
    // stream, ABI 1.7) and `DENSE_BUS_BOUNCE` is not 0 (the A/B switch for measurements).
    static bool usable(const DeviceMemory& memory);

    // `count` page-locked buffers of `buffer_bytes` each (host memory, not in the VRAM bill); the
    // fills run on `workers`. Throws dense::Error(Device) when the driver refuses the memory.
    BounceBuffers(DeviceMemory& memory, CpuWorkers& workers, uint64_t buffer_bytes, uint32_t count);
    BounceBuffers(const BounceBuffers&) = delete;
    BounceBuffers& operator=(const BounceBuffers&) = delete;

    uint64_t buffer_bytes() const noexcept { return buffer_bytes_; }
    // dst (device memory) = `bytes` at `source` (pageable host memory), enqueued on `side`: waits
    // until the next buffer's previous copy is done, fills it on the workers, then enqueues the copy
    // from it and the word that reports it done. bytes <= buffer_bytes(). Throws dense::Error(Device)
    // when the device has not reported a copy done within a minute (a failed stream).
    void copy(void* side, void* dst, const void* source, uint64_t bytes);
    // Bytes that went through the buffers so far.
    uint64_t bytes_copied() const noexcept { return bytes_copied_; }

private:
    struct Buffer {
        std::byte* data = nullptr;
        uint32_t* done_word = nullptr;        // where the host reads the word (mapped memory)
        const void* done_device = nullptr;    // where the stream writes it
        uint32_t uses = 0;                    // copies enqueued from this buffer; the word says how many finished
    };
    void wait_until_read(const Buffer& b) const;
    void fill(std::byte* dst, const std::byte* source, uint64_t bytes);

    DeviceMemory& memory_;
    CpuWorkers& workers_;
    uint64_t buffer_bytes_;
    std::vector<Buffer> buffers_;
    uint32_t next_ = 0;
    uint64_t bytes_copied_ = 0;
};

}  // namespace dense::exec
