// One op invocation built by hand, outside a model graph: what the micro-benchmarks time. Views are
// contiguous (ggml strides from the type table); the impl is chosen by the registry exactly as the
// graph builder would choose it for the same call on the same device.
#pragma once

#include "packs/pack_manager.hpp"

#include <dense/abi/dense_abi.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace dense::bench {

// A contiguous view of `data` (ne[0] elements per row, in blocks of `type`).
dense_tensor_view contiguous_view(void* data, dense_type_id type, const packs::DeviceInfo& device,
                                  std::array<int64_t, 4> ne);

// Bytes a contiguous tensor of `type` with these dims occupies. Throws dense::Error(Internal) when
// ne[0] is not a multiple of the block size.
uint64_t tensor_bytes(dense_type_id type, std::array<int64_t, 4> ne);

class OpCall {
public:
    // Selects the best impl of `key` for this call on packs.devices()[device]; throws
    // dense::Error(Pack) naming the key when no pack implements it.
    OpCall(const packs::PackManager& packs, size_t device, packs::OpKey key, std::vector<dense_tensor_view> src,
           std::vector<dense_tensor_view> dst, const void* params, void* stream);
    OpCall(const OpCall&) = delete;
    OpCall& operator=(const OpCall&) = delete;

    // Enqueues the op; throws dense::Error(Pack) with the impl name on a non-OK status.
    void run() const;
    const std::string& impl_name() const noexcept { return impl_name_; }
    uint64_t workspace_bytes() const;
    void set_workspace(void* ws, uint64_t bytes) noexcept;

private:
    std::vector<dense_tensor_view> src_, dst_;
    dense_op_call call_{};
    dense_op_impl impl_{};
    std::string impl_name_;
};

}  // namespace dense::bench
