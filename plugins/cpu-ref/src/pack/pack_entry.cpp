// The cpu-ref kernel pack: the three exported entry points (DENSE_PACK_ENTRY_POINTS) and the list of
// ops it registers. cpu-ref is the numerical oracle: simple scalar code, priority 0, so any faster
// implementation of the same (op, weight type, activation type, CPU) key is preferred over it.
#include "pack/op_context.hpp"

#include <memory>
#include <utility>
#include <vector>

#ifndef DENSE_CPUREF_VERSION
#define DENSE_CPUREF_VERSION "0.0.0"
#endif

namespace dense::cpuref::pack {
namespace {

// Everything init creates; release deletes it. OpContexts are heap-allocated one by one so the
// pointers handed to the host stay valid.
struct PackState {
    dense_pack pack = dense::sdk::make_struct<dense_pack>();
    std::vector<std::unique_ptr<OpContext>> ops;
};

// Design: a CPU pack scores 1 plus a bit per ISA feature it was built with; cpu-ref uses none.
uint32_t score(const dense_hw_desc& hw) {
    return hw.device_kind == DENSE_DEVICE_CPU ? 1u : 0u;
}

// Name: "cpu-ref.<kind>.<weight or act>"; a GEMV_Q against an activation other than the weight's own
// act_type also names the activation ("cpu-ref.gemv_q.q4_k.q8_32").
void add_op(PackState& s, const dense::sdk::Host& host, dense_op_kind kind, const char* kind_name,
            const FormatKernels* weight, const FormatKernels* act) {
    auto ctx = std::make_unique<OpContext>(OpContext{host, kind, weight, act, {}});
    ctx->name = std::string("cpu-ref.") + kind_name;
    if (weight != nullptr || act != nullptr)
        ctx->name += std::string(".") + (weight != nullptr ? weight->name : act->name);
    if (weight != nullptr && act != nullptr && act->type != weight->act_type) ctx->name += std::string(".") + act->name;
    s.ops.push_back(std::move(ctx));
}

// The registration list:
//   DEQUANTIZE, EMBED_ROW:  every storable type (weight_type = the type, act_type NONE);
//   GEMV_Q:                 every storable type with its activation format (formats.hpp), and every
//                           quantized type also with Q8_32 (the oracle of the CUDA packs' GEMV);
//   GEMM_Q:                 the same (weight, activation) pairs as GEMV_Q (ABI 1.9; each column is
//                           that GEMV_Q, gemm_ops.cpp);
//   QUANTIZE_ACT:           every activation format (Q8_K, Q8_0, Q8_32, and F32/F16/BF16 for the
//                           float weights, so every GEMV_Q act type has a producer), weight_type NONE;
//   GEMV_Q_MULTI:           one per activation format, weight_type NONE (any list of formats that
//                           have a GEMV against it: the single GEMVs one after the other);
//   every activation op:    one impl each, weight_type and act_type NONE (one impl takes all the
//                           input types its op allows, e.g. both F16 and F32 KV caches).
void plan_ops(PackState& s, const dense::sdk::Host& host) {
    for (const FormatKernels& f : all_formats()) {
        if (!f.storable) continue;
        add_op(s, host, DENSE_OP_DEQUANTIZE, "dequantize", &f, nullptr);
        add_op(s, host, DENSE_OP_EMBED_ROW, "embed_row", &f, nullptr);
        for (const auto& [kind, name] : {std::pair{DENSE_OP_GEMV_Q, "gemv_q"}, std::pair{DENSE_OP_GEMM_Q, "gemm_q"}}) {
            add_op(s, host, kind, name, &f, &format(f.act_type));
            if (f.vec_dot_q8_32 != nullptr) add_op(s, host, kind, name, &f, &format(DENSE_TYPE_Q8_32));
        }
    }
    for (const FormatKernels& f : all_formats())
        if (f.quantize != nullptr) {
            add_op(s, host, DENSE_OP_QUANTIZE_ACT, "quantize_act", nullptr, &f);
            add_op(s, host, DENSE_OP_GEMV_Q_MULTI, "gemv_q_multi", nullptr, &f);
        }
    static constexpr std::pair<dense_op_kind, const char*> kActivationOps[] = {
        {DENSE_OP_RMS_NORM, "rms_norm"},         {DENSE_OP_ROPE, "rope"},
        {DENSE_OP_ATTN_DECODE, "attn_decode"},   {DENSE_OP_GDN_DECODE, "gdn_decode"},
        {DENSE_OP_CONV1D_CAUSAL, "conv1d_causal"}, {DENSE_OP_SWIGLU, "swiglu"},
        {DENSE_OP_L2_NORM, "l2_norm"},           {DENSE_OP_GATED_RMS_NORM, "gated_rms_norm"},
        {DENSE_OP_GDN_GATES, "gdn_gates"},       {DENSE_OP_KV_STORE, "kv_store"},
        {DENSE_OP_CHECK_FINITE, "check_finite"}, {DENSE_OP_GDN_STEP, "gdn_step"},
        {DENSE_OP_ATTN_PREP, "attn_prep"},       {DENSE_OP_ARGMAX, "argmax"},
        {DENSE_OP_TOP_K, "top_k"},
    };
    for (const auto& [kind, name] : kActivationOps) add_op(s, host, kind, name, nullptr, nullptr);
}

dense_status init(dense::sdk::Host host, dense_pack** out) {
    auto state = std::make_unique<PackState>();
    state->pack.name = "cpu-ref";
    state->pack.version = DENSE_CPUREF_VERSION;
    state->pack.device_kind = DENSE_DEVICE_CPU;
    state->pack.device = nullptr;
    state->pack.user = state.get();
    plan_ops(*state, host);
    for (auto& ctx : state->ops) {
        const dense_status st = host.register_op(make_op_impl(*ctx));
        if (st != DENSE_OK) {
            // The host refuses a pack whose init fails and drops what it registered.
            host.error("cpu-ref: registering " + ctx->name + " failed with status " + std::to_string(st));
            return st;
        }
    }
    *out = &state.release()->pack;
    return DENSE_OK;
}

void release(dense_pack* pack) {
    if (pack != nullptr) delete static_cast<PackState*>(pack->user);
}

}  // namespace
}  // namespace dense::cpuref::pack

DENSE_PACK_ENTRY_POINTS(dense::cpuref::pack::score, dense::cpuref::pack::init, dense::cpuref::pack::release)
