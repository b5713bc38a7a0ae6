// What one registered cpu-ref op implementation knows: its op kind, its formats, the host to log
// through. One OpContext per registration, owned by the pack state, passed back as `user`.
#pragma once

#include "kernels/formats.hpp"

#include <dense/sdk/pack.hpp>

#include <string>

namespace dense::cpuref::pack {

struct OpContext {
    dense::sdk::Host host;
    dense_op_kind kind = 0;
    const FormatKernels* weight = nullptr;  // DEQUANTIZE, EMBED_ROW, GEMV_Q: the weight / block format
    const FormatKernels* act = nullptr;     // QUANTIZE_ACT, GEMV_Q: the activation format
    std::string name;                       // e.g. "cpu-ref.gemv_q.q4_k"; also the impl's name
};

// A dense_op_impl for ctx (priority 0, CPU, key from ctx) whose callbacks dispatch on ctx.kind.
dense_op_impl make_op_impl(OpContext& ctx) noexcept;

}  // namespace dense::cpuref::pack
