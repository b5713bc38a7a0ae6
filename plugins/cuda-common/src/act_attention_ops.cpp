// ROPE, KV_STORE and ATTN_DECODE (their call contracts are pack-common's, attention_contracts.hpp,
// the same as cpu-ref's). The position / n_kv inputs are I32 {1} tensors in device memory: the host
// checks their views, the kernels read their values (and handle an out-of-range value without going
// out of bounds, see kernels/act_launchers.hpp).
// ROPE and KV_STORE take the T tokens of a batched prefill step on their token axis (ABI 1.10) with
// I32 {T} positions, in one launch. ATTN_PREP (ABI 1.11) is a token step's two head norms, two ROPEs
// and KV_STORE in one kernel (ops_attn_prep.cu) where its shapes fit, else the five launches.
#include "act_handlers.hpp"

#include "kernels/act_launchers.hpp"
#include "kernels/env_switch.hpp"

#include <dense/pack_common/attention_contracts.hpp>

namespace dense::cuda::act {

std::string handle_rope(Invocation& inv) {
    const dense_op_call& c = inv.call;
    pack_common::RopeCall call;
    std::string err =
        first_error([&] { return check_counts(c, 2, 1); }, [&] { return pack_common::check_rope(c, call); });
    if (!err.empty() || inv.phase != Phase::Run) return err;
    RopeArgs a;
    a.x = f32_in(c.src[0]);
    a.x_stride = row_stride_elements(c.src[0]);
    a.y = f32_out(c.dst[0]);
    a.y_stride = row_stride_elements(c.dst[0]);
    a.head_dim = call.head_dim;
    a.heads = call.heads;
    a.n_rot = call.params.n_rot;
    a.position = i32_in(c.src[1]);
    a.freq_base = call.params.freq_base;
    a.freq_scale = call.params.freq_scale;
    a.tokens = call.tokens;
    a.x_tstride = token_stride_elements(c.src[0]);
    a.y_tstride = token_stride_elements(c.dst[0]);
    launch(inv, "rope launch", [&](cudaStream_t s) { return launch_rope_neox(a, s); });
    return {};
}

std::string handle_kv_store(Invocation& inv) {
    const dense_op_call& c = inv.call;
    pack_common::KvStoreCall call;
    std::string err =
        first_error([&] { return check_counts(c, 3, 2); }, [&] { return pack_common::check_kv_store(c, call); });
    if (!err.empty() || inv.phase != Phase::Run) return err;
    KvStoreArgs a;
    a.f16 = c.dst[0].type == DENSE_TYPE_F16;
    a.k = f32_in(c.src[0]);
    a.v = f32_in(c.src[1]);
    a.d = call.d;
    a.hkv = call.hkv;
    a.n_ctx = c.dst[0].ne[2];
    a.position = i32_in(c.src[2]);
    a.k_cache = c.dst[0].data;
    a.v_cache = c.dst[1].data;
    a.tokens = call.tokens;
    launch(inv, "kv_store launch", [&](cudaStream_t s) { return launch_kv_store(a, s); });
    return {};
}

// src4 (the sigmoid output gate) is optional.
std::string handle_attn_decode(Invocation& inv) {
    const dense_op_call& c = inv.call;
    pack_common::AttnDecodeCall call;
    AttnPlan plan;
    const int64_t& d = call.d;
    const int64_t& hq = call.hq;
    const int64_t& hkv = call.hkv;
    const int64_t& tokens = call.tokens;
    std::string err = first_error(
        [&] { return check_counts(c, c.n_src == 5 ? 5 : 4, 1); },
        [&] { return pack_common::check_attn_decode(c, call); },
        [&]() -> std::string {
            plan = plan_attention(d, hq, hkv, c.src[1].ne[2]);
            // grid.z: head blocks x the tokens of one launch
            if (plan.fits && plan.head_blocks * attn_tokens_per_launch(plan, tokens) <= 65535) return {};
            inv.refusal = DENSE_E_UNSUPPORTED;
            return "head_dim " + std::to_string(d) + " with " + std::to_string(hq / hkv) +
                   " query heads per KV head (" + std::to_string(hkv) +
                   " KV heads) is beyond this pack's attention kernel (shared memory or grid limits)";
        });
    if (!err.empty() || inv.phase == Phase::Check) return err;
    // One set of partials per token of a launch (plan.workspace_bytes apart: the kernels' token stride);
    // the launches of a long call take turns on it (attn_tokens_per_launch).
    inv.workspace_needed = plan.workspace_bytes * static_cast<uint64_t>(attn_tokens_per_launch(plan, tokens));
    if (inv.phase != Phase::Run) return {};
    if (inv.workspace_needed > 0) {
        if (std::string e = check_run_workspace(c, inv.workspace_needed, alignof(float)); !e.empty()) return e;
    }
    AttnArgs a;
    a.q = f32_in(c.src[0]);
    a.q_stride = row_stride_elements(c.src[0]);
    if (call.gated) {
        a.gate = f32_in(c.src[4]);
        a.gate_stride = row_stride_elements(c.src[4]);
    }
    a.f16 = c.src[1].type == DENSE_TYPE_F16;
    a.k_cache = c.src[1].data;
    a.v_cache = c.src[2].data;
    a.d = d;
    a.hq = hq;
    a.hkv = hkv;
    a.n_ctx = c.src[1].ne[2];
    a.n_kv = i32_in(c.src[3]);
    a.scale = call.params.scale;
    a.out = f32_out(c.dst[0]);
    a.workspace = static_cast<float*>(c.workspace);
    a.tokens = tokens;
    a.q_tstride = token_stride_elements(c.src[0]);
    a.gate_tstride = call.gated ? token_stride_elements(c.src[4]) : 0;
    a.out_tstride = token_stride_elements(c.dst[0]);
    launch(inv, "attn_decode launch", [&](cudaStream_t s) { return launch_attn_decode(a, plan, s); });
    return {};
}

std::string handle_attn_prep(Invocation& inv) {
    const dense_op_call& c = inv.call;
    pack_common::AttnPrepCall call;
    const std::string err =
        first_error([&] { return check_counts(c, 6, 4); }, [&] { return pack_common::check_attn_prep(c, call); });
    if (!err.empty() || inv.phase != Phase::Run) return err;
    AttnPrepArgs a;
    a.q = f32_in(c.src[0]);
    a.q_stride = row_stride_elements(c.src[0]);
    a.k = f32_in(c.src[1]);
    a.v = f32_in(c.src[2]);
    a.q_norm = f32_in(c.src[3]);
    a.k_norm = f32_in(c.src[4]);
    a.position = i32_in(c.src[5]);
    a.q_out = f32_out(c.dst[0]);
    a.k_out = f32_out(c.dst[1]);
    a.k_cache = c.dst[2].data;
    a.v_cache = c.dst[3].data;
    a.f16 = c.dst[2].type == DENSE_TYPE_F16;
    a.d = call.d;
    a.hq = call.hq;
    a.hkv = call.hkv;
    a.n_ctx = call.n_ctx;
    a.n_rot = call.params.n_rot;
    a.eps = call.params.eps;
    a.freq_base = call.params.freq_base;
    a.freq_scale = call.params.freq_scale;
    // The one kernel by default (opt-in from session 27, when it passed CudaAttnPrep.* but showed no
    // measurable gain; session 34 measured +0.45 % tg128 on the 27B, H100, three rounds alternating).
    if (attn_prep_fits(a) && env_switch_on("DENSE_CUDA_ATTN_PREP")) {
        launch(inv, "attn_prep launch", [&](cudaStream_t s) { return launch_attn_prep(a, s); });
        return {};
    }
    // Shapes the one kernel does not take, and DENSE_CUDA_ATTN_PREP=0: the five calls it stands for,
    // which are its contract.
    return run_parts(inv, {&call.norm_q, &call.norm_k, &call.rope_q, &call.rope_k, &call.kv_store});
}

}  // namespace dense::cuda::act
