// Host memory for a graph's buffers when it runs on the CPU: one 64-byte-aligned, zero-filled
// allocation per buffer, made once when the session starts (never per token).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace dense::exec {

class HostBuffers {
public:
    // One allocation per entry of `bytes` (0 bytes -> a valid 64-byte block, so views are non-null).
    explicit HostBuffers(const std::vector<uint64_t>& bytes);

    void* data(size_t i) const noexcept { return blocks_[i].get(); }
    size_t size() const noexcept { return blocks_.size(); }
    uint64_t bytes(size_t i) const noexcept { return sizes_[i]; }
    uint64_t total_bytes() const noexcept;

private:
    struct Free {
        void operator()(std::byte* p) const noexcept { ::operator delete[](p, std::align_val_t{64}); }
    };
    std::vector<std::unique_ptr<std::byte[], Free>> blocks_;
    std::vector<uint64_t> sizes_;
};

}  // namespace dense::exec
