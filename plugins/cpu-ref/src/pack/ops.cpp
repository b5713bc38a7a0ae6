// The C callbacks (supports/run) of every cpu-ref op, dispatching on the OpContext's kind to the
// handlers of op_handlers.hpp. Every call is validated completely before any byte is touched; a bad
// call returns DENSE_E_INVALID_ARGUMENT with exactly one host log line (supports() never logs), and
// no exception crosses the ABI.
#include "pack/op_handlers.hpp"

#include <cstddef>
#include <string>
#include <utility>

namespace dense::cpuref::pack {


OpHandler handler_for(dense_op_kind kind) noexcept {
    switch (kind) {
        case DENSE_OP_DEQUANTIZE: return handle_dequantize;
        case DENSE_OP_QUANTIZE_ACT: return handle_quantize_act;
        case DENSE_OP_GEMV_Q: return handle_gemv_q;
        case DENSE_OP_GEMV_Q_MULTI: return handle_gemv_q_multi;
        case DENSE_OP_GEMM_Q: return handle_gemm_q;
        case DENSE_OP_EMBED_ROW: return handle_embed_row;
        case DENSE_OP_RMS_NORM: return handle_rms_norm;
        case DENSE_OP_ROPE: return handle_rope;
        case DENSE_OP_ATTN_DECODE: return handle_attn_decode;
        case DENSE_OP_GDN_DECODE: return handle_gdn_decode;
        case DENSE_OP_CONV1D_CAUSAL: return handle_conv1d_causal;
        case DENSE_OP_SWIGLU: return handle_swiglu;
        case DENSE_OP_L2_NORM: return handle_l2_norm;
        case DENSE_OP_GATED_RMS_NORM: return handle_gated_rms_norm;
        case DENSE_OP_GDN_GATES: return handle_gdn_gates;
        case DENSE_OP_GDN_STEP: return handle_gdn_step;
        case DENSE_OP_ATTN_PREP: return handle_attn_prep;
        case DENSE_OP_KV_STORE: return handle_kv_store;
        case DENSE_OP_CHECK_FINITE: return handle_check_finite;
        case DENSE_OP_ARGMAX: return handle_argmax;
        case DENSE_OP_TOP_K: return handle_top_k;
        default: return nullptr;  // ATTN_PREFILL, GDN_PREFILL: not in cpu-ref
    }
}

std::string run_parts(const OpContext& ctx, std::initializer_list<const dense_op_call*> parts) {
    for (const dense_op_call* part : parts)
        if (std::string e = handler_for(part->op_kind)(ctx, *part, Phase::Run); !e.empty()) return e;
    return {};
}

namespace {

struct Verdict {
    dense_status status = DENSE_OK;
    std::string error;  // one line when status != DENSE_OK
};

// The envelope checks common to every op, then the op's handler (which runs it in Phase::Run).
Verdict handle(const OpContext& ctx, const dense_op_call* raw, Phase phase) {
    if (raw == nullptr) return {DENSE_E_INVALID_ARGUMENT, "call is NULL"};
    if (raw->hdr.abi_major != DENSE_ABI_MAJOR)
        return {DENSE_E_ABI, "call has ABI major " + std::to_string(raw->hdr.abi_major) + ", this pack speaks " +
                                 std::to_string(DENSE_ABI_MAJOR)};
    if (!dense::sdk::has_bytes(raw, offsetof(dense_op_call, params) + sizeof(void*)))
        return {DENSE_E_INVALID_ARGUMENT, "call struct_size " + std::to_string(raw->hdr.struct_size) + " is too small"};
    const dense_op_call c = dense::sdk::read_struct(raw);
    if (c.op_kind != ctx.kind)
        return {DENSE_E_INVALID_ARGUMENT, "op kind " + std::to_string(c.op_kind) + " routed to an impl of kind " +
                                              std::to_string(ctx.kind)};
    const OpHandler handler = handler_for(ctx.kind);
    if (handler == nullptr)
        return {DENSE_E_UNSUPPORTED, "op kind " + std::to_string(ctx.kind) + " is not implemented"};
    std::string err = handler(ctx, c, phase);
    if (!err.empty()) return {DENSE_E_INVALID_ARGUMENT, std::move(err)};
    return {};
}

uint32_t supports_cb(void* user, const dense_op_call* call) noexcept {
    try {
        const auto* ctx = static_cast<const OpContext*>(user);
        if (ctx == nullptr) return 0;
        return handle(*ctx, call, Phase::Check).status == DENSE_OK ? 1u : 0u;
    } catch (...) {
        return 0;
    }
}

dense_status run_cb(void* user, const dense_op_call* call) noexcept {
    const auto* ctx = static_cast<const OpContext*>(user);
    if (ctx == nullptr) return DENSE_E_INVALID_ARGUMENT;
    return dense::sdk::guarded(ctx->host, ctx->name.c_str(), [&]() -> dense_status {
        const Verdict v = handle(*ctx, call, Phase::Run);
        if (v.status != DENSE_OK) ctx->host.error(ctx->name + ": " + v.error);
        return v.status;
    });
}

}  // namespace

dense_op_impl make_op_impl(OpContext& ctx) noexcept {
    auto impl = dense::sdk::make_struct<dense_op_impl>();
    impl.op_kind = ctx.kind;
    impl.weight_type = ctx.weight != nullptr ? ctx.weight->type : DENSE_TYPE_NONE;
    impl.act_type = ctx.act != nullptr ? ctx.act->type : DENSE_TYPE_NONE;
    impl.device_kind = DENSE_DEVICE_CPU;
    impl.priority = 0;  // the oracle: any faster implementation of the same key wins
    impl.name = ctx.name.c_str();
    impl.user = &ctx;
    impl.supports = supports_cb;
    impl.run = run_cb;
    impl.workspace_bytes = nullptr;  // needs none
    return impl;
}

}  // namespace dense::cpuref::pack
