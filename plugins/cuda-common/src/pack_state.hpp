// Everything one dense_pack_init creates; dense_pack.user points here and dense_pack_release
// deletes it. The op contexts live in a deque: the host keeps pointers to them (dense_op_impl.user),
// and a deque never moves an element when another is appended.
#pragma once

#include "formats.hpp"

#include <dense/abi/dense_abi.h>
#include <dense/sdk/pack.hpp>

#include <deque>
#include <string>

namespace dense::cuda {

struct PackState;

// What one registered op implementation needs at call time. Each op family (dequant_ops.hpp, ...)
// fills the contexts of its ops and supplies `make_impl`, which builds the dense_op_impl the host
// registers (its callbacks get the context back as `user`).
struct OpContext {
    const PackState* pack = nullptr;
    const CudaFormat* format = nullptr;      // the weight format; null for activation-only ops
    const CudaFormat* act_format = nullptr;  // the activation format a GEMV consumes; else null
    dense_op_kind kind = 0;
    // Activation ops registered with act_type Q8_32: they also write dst1, dst0 quantized (dense_abi.h,
    // "fused quantization"). DENSE_TYPE_NONE for the plain registration.
    dense_type_id fused_act = DENSE_TYPE_NONE;
    std::string name;  // "cuda-sm90.dequantize.q4_k": the impl name and the log prefix
    dense_op_impl (*make_impl)(OpContext& ctx) noexcept = nullptr;
};

struct PackState {
    explicit PackState(dense::sdk::Host h) : host(h) {}

    dense::sdk::Host host;
    std::string name;     // DENSE_CUDA_PACK_NAME
    std::string version;  // dense_pack.version
    dense_pack pack{};
    dense_device_api device{};
    std::deque<OpContext> ops;
};

}  // namespace dense::cuda
