// The C callbacks (supports / run / workspace_bytes) of every activation op, dispatching on the
// OpContext's kind to the handlers of act_handlers.hpp. A bad call returns DENSE_E_INVALID_ARGUMENT
// with exactly one host log line (supports() and workspace_bytes() never log), and no exception
// crosses the ABI.
#include "activation_ops.hpp"

#include "act_handlers.hpp"
#include "call_envelope.hpp"

#include <cstddef>
#include <string>
#include <utility>

namespace dense::cuda {
namespace act {

std::string check_counts(const dense_op_call& c, uint32_t n_src, uint32_t n_dst) {
    std::string err = cuda::check_counts(c, n_src, n_dst);
    return err.empty() ? check_one_device(c) : err;
}

Handler activation_handler(dense_op_kind kind) noexcept {
    switch (kind) {
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
        default: return nullptr;
    }
}

std::string run_parts(Invocation& inv, std::initializer_list<const dense_op_call*> parts) {
    for (const dense_op_call* part : parts) {
        Invocation sub{inv.ctx, *part, Phase::Run};
        if (std::string e = activation_handler(part->op_kind)(sub); !e.empty()) return e;
        inv.launched = sub.launched;
        if (inv.launched != DENSE_OK) return {};
    }
    return {};
}

}  // namespace act

namespace {

using act::Invocation;
using act::Phase;

// Registry priority, as the dequant ops: the key includes the device kind, so this never competes
// with cpu-ref; it leaves room for faster kernels later.
constexpr int32_t kPriority = 10;

struct Outcome {
    dense_status status = DENSE_OK;
    std::string error;  // one line when the call was refused (status != DENSE_OK, nothing launched)
    uint64_t workspace = 0;
};

// The envelope checks common to every op, then the op's handler.
Outcome handle(const OpContext& ctx, const dense_op_call* raw, Phase phase) {
    Outcome out;
    // Fields past struct_size (an older, shorter call: workspace, workspace_bytes) read as zero.
    dense_op_call c{};
    if (Verdict v = read_call(raw, ctx.kind, c); v.status != DENSE_OK) return {v.status, std::move(v.error)};
    const act::Handler handler = act::activation_handler(ctx.kind);
    if (handler == nullptr)
        return {DENSE_E_UNSUPPORTED, "op kind " + std::to_string(ctx.kind) + " is not implemented"};
    Invocation inv{ctx, c, phase};
    std::string err = handler(inv);
    if (!err.empty()) return {inv.refusal, std::move(err)};
    out.status = inv.launched;
    out.workspace = inv.workspace_needed;
    return out;
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
    return dense::sdk::guarded(ctx->pack->host, ctx->name.c_str(), [&]() -> dense_status {
        const Outcome o = handle(*ctx, call, Phase::Run);
        if (!o.error.empty()) ctx->pack->host.error(ctx->name + ": " + o.error);  // launch failures logged already
        return o.status;
    });
}

// 0 for a call that would be refused (the host then learns why from run()).
uint64_t workspace_bytes_cb(void* user, const dense_op_call* call) noexcept {
    try {
        const auto* ctx = static_cast<const OpContext*>(user);
        if (ctx == nullptr) return 0;
        const Outcome o = handle(*ctx, call, Phase::Workspace);
        return o.status == DENSE_OK ? o.workspace : 0;
    } catch (...) {
        return 0;
    }
}

dense_op_impl make_activation_impl(OpContext& ctx) noexcept {
    auto impl = dense::sdk::make_struct<dense_op_impl>();
    impl.op_kind = ctx.kind;
    impl.weight_type = DENSE_TYPE_NONE;
    impl.act_type = ctx.fused_act;
    impl.device_kind = DENSE_DEVICE_CUDA;
    impl.priority = kPriority;
    impl.name = ctx.name.c_str();
    impl.user = &ctx;
    impl.supports = supports_cb;
    impl.run = run_cb;
    // Only ATTN_DECODE (split partials), TOP_K (group maxima and filtered keys) and ARGMAX (the parts' bests)
    // ask for scratch; the others need none (NULL tells the host so).
    const bool scratch = ctx.kind == DENSE_OP_ATTN_DECODE || ctx.kind == DENSE_OP_TOP_K || ctx.kind == DENSE_OP_ARGMAX;
    impl.workspace_bytes = scratch ? workspace_bytes_cb : nullptr;
    return impl;
}

}  // namespace

void plan_activation_ops(PackState& state) {
    static constexpr std::pair<dense_op_kind, const char*> kOps[] = {
        {DENSE_OP_RMS_NORM, "rms_norm"},
        {DENSE_OP_ROPE, "rope"},
        {DENSE_OP_ATTN_DECODE, "attn_decode"},
        {DENSE_OP_GDN_DECODE, "gdn_decode"},
        {DENSE_OP_CONV1D_CAUSAL, "conv1d_causal"},
        {DENSE_OP_SWIGLU, "swiglu"},
        {DENSE_OP_L2_NORM, "l2_norm"},
        {DENSE_OP_GATED_RMS_NORM, "gated_rms_norm"},
        {DENSE_OP_GDN_GATES, "gdn_gates"},
        {DENSE_OP_KV_STORE, "kv_store"},
        {DENSE_OP_CHECK_FINITE, "check_finite"},
        {DENSE_OP_ARGMAX, "argmax"},
        {DENSE_OP_TOP_K, "top_k"},
        {DENSE_OP_GDN_STEP, "gdn_step"},
        {DENSE_OP_ATTN_PREP, "attn_prep"},
    };
    for (const auto& [kind, label] : kOps) {
        OpContext ctx;
        ctx.pack = &state;
        ctx.kind = kind;
        ctx.name = state.name + "." + label;
        ctx.make_impl = make_activation_impl;
        state.ops.push_back(std::move(ctx));
    }
    // The same ops with a Q8_32 copy of their output (the input of the GEMV that follows them), so
    // the token step saves a quantize launch after each of them.
    static constexpr std::pair<dense_op_kind, const char*> kFused[] = {
        {DENSE_OP_RMS_NORM, "rms_norm+quantize_q8_32"},
        {DENSE_OP_GATED_RMS_NORM, "gated_rms_norm+quantize_q8_32"},
        {DENSE_OP_SWIGLU, "swiglu+quantize_q8_32"},
    };
    for (const auto& [kind, label] : kFused) {
        OpContext ctx;
        ctx.pack = &state;
        ctx.kind = kind;
        ctx.fused_act = DENSE_TYPE_Q8_32;
        ctx.name = state.name + "." + label;
        ctx.make_impl = make_activation_impl;
        state.ops.push_back(std::move(ctx));
    }
}

}  // namespace dense::cuda
