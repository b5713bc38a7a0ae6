// The dense_op_impl callbacks of the op families that validate a call into a struct of their own
// and then launch it (dequant_ops, gemv_ops, gemm_ops; the activation ops have their handler table
// instead): one copy of the envelope every such impl needs. The impl's user pointer is its
// OpContext.
//   Prepare(ctx, raw call, out): read the call (read_call) and validate it into `out`, or refuse.
//   Execute(ctx, prepared): select the device and launch, reporting a failure by the op's name.
#pragma once

#include "call_envelope.hpp"
#include "pack_state.hpp"

#include <dense/sdk/pack.hpp>

#include <cstdint>

namespace dense::cuda {

template <class Prepared, Verdict (*Prepare)(const OpContext&, const dense_op_call*, Prepared&),
          dense_status (*Execute)(const OpContext&, const Prepared&)>
struct PreparedOp {
    // Whether the call would be accepted; never throws (an exception counts as a refusal).
    static uint32_t supports(void* user, const dense_op_call* call) noexcept {
        try {
            const auto* ctx = static_cast<const OpContext*>(user);
            if (ctx == nullptr) return 0;
            Prepared p;
            return Prepare(*ctx, call, p).status == DENSE_OK ? 1u : 0u;
        } catch (...) {
            return 0;
        }
    }

    // A refused call is logged as one line naming the op and returns the refusal's status; an
    // accepted one is executed.
    static dense_status run(void* user, const dense_op_call* call) noexcept {
        const auto* ctx = static_cast<const OpContext*>(user);
        if (ctx == nullptr) return DENSE_E_INVALID_ARGUMENT;
        return dense::sdk::guarded(ctx->pack->host, ctx->name.c_str(), [&]() -> dense_status {
            Prepared p;
            const Verdict v = Prepare(*ctx, call, p);
            if (v.status != DENSE_OK) {
                ctx->pack->host.error(ctx->name + ": " + v.error);
                return v.status;
            }
            return Execute(*ctx, p);
        });
    }
};

}  // namespace dense::cuda
