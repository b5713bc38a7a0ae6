// How many bytes one device allocation of `requested` bytes takes: the one rounding rule the plan
// bills with and exec::DeviceMemory allocates with (it includes this header), so a bill and what a
// session allocates cannot disagree by a rounding.
#pragma once

#include <cstdint>

namespace dense::plan {

// Every allocation and every buffer slot starts 256-byte aligned: what cudaMalloc guarantees and
// the widest vector load a kernel pack may issue on a buffer start.
inline constexpr uint64_t kAllocationAlignment = 256;

constexpr uint64_t align_up(uint64_t bytes) noexcept {
    return (bytes + kAllocationAlignment - 1) / kAllocationAlignment * kAllocationAlignment;
}

// A zero-byte request still takes one aligned unit (a distinct, valid pointer).
constexpr uint64_t allocation_size(uint64_t requested) noexcept {
    return requested == 0 ? kAllocationAlignment : align_up(requested);
}

}  // namespace dense::plan
