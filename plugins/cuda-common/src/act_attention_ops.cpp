// ROPE, KV_STORE and ATTN_DECODE (same views as cpu-ref's attention_ops.cpp). The position / n_kv inputs
// are I32 {1} tensors in device memory: the host checks their views, the kernels read their values
// (and handle an out-of-range value without going out of bounds, see kernels/act_launchers.hpp).
// ROPE and KV_STORE take the T tokens of a batched prefill step on their token axis (ABI 1.10) with
// I32 {T} positions, in one launch.
#include "act_handlers.hpp"

#include "kernels/act_launchers.hpp"

#include <dense/pack_common/attention_contracts.hpp>

#include <cmath>

namespace dense::cuda::act {

using pack_common::check_rope_params;  // dense/pack_common/attention_contracts.hpp

std::string handle_rope(Invocation& inv) {
    const dense_op_call& c = inv.call;
    dense_rope_params p{};
    int64_t head_dim = 0, heads = 0, tokens = 0;
    std::string err = first_error(
        [&] { return check_counts(c, 2, 1); }, [&] { return check_3d(c.src[0], "src0 (x)"); },
        [&] {
            head_dim = c.src[0].ne[0];
            heads = c.src[0].ne[1];
            tokens = c.src[0].ne[2];
            return check_token_slices(c.src[0], "src0 (x)", DENSE_TYPE_F32, head_dim, heads, tokens, Rows::Strided);
        },
        [&] { return check_matrix(c.src[1], "src1 (position)", DENSE_TYPE_I32, tokens, 1, Rows::Contiguous); },
        [&] { return check_token_slices(c.dst[0], "dst", DENSE_TYPE_F32, head_dim, heads, tokens, Rows::Strided); },
        [&] { return check_alias_or_disjoint(c.dst[0], "dst", c.src[0], "src0 (x)"); },
        [&] { return check_disjoint(c.dst[0], "dst", c.src[1], "src1 (position)"); },
        [&] { return read_params(c, "dense_rope_params", DENSE_PACK_FIELD_END(dense_rope_params, freq_scale), &p); },
        [&] { return check_rope_params(p, head_dim); });
    if (!err.empty() || inv.phase != Phase::Run) return err;
    RopeArgs a;
    a.x = f32_in(c.src[0]);
    a.x_stride = row_stride_elements(c.src[0]);
    a.y = f32_out(c.dst[0]);
    a.y_stride = row_stride_elements(c.dst[0]);
    a.head_dim = head_dim;
    a.heads = heads;
    a.n_rot = p.n_rot;
    a.position = i32_in(c.src[1]);
    a.freq_base = p.freq_base;
    a.freq_scale = p.freq_scale;
    a.tokens = tokens;
    a.x_tstride = token_stride_elements(c.src[0]);
    a.y_tstride = token_stride_elements(c.dst[0]);
    launch(inv, "rope launch", [&](cudaStream_t s) { return launch_rope_neox(a, s); });
    return {};
}

std::string handle_kv_store(Invocation& inv) {
    const dense_op_call& c = inv.call;
    int64_t d = 0, hkv = 0, tokens = 0;
    static const char* const src_roles[] = {"src0 (k)", "src1 (v)", "src2 (position)"};
    static const char* const dst_roles[] = {"dst0 (K cache)", "dst1 (V cache)"};
    std::string err = first_error(
        [&] { return check_counts(c, 3, 2); }, [&] { return check_3d(c.src[0], "src0 (k)"); },
        [&] {
            d = c.src[0].ne[0];
            hkv = c.src[0].ne[1];
            tokens = c.src[0].ne[2];
            return check_token_slices(c.src[0], "src0 (k)", DENSE_TYPE_F32, d, hkv, tokens, Rows::Contiguous);
        },
        [&] { return check_token_slices(c.src[1], "src1 (v)", DENSE_TYPE_F32, d, hkv, tokens, Rows::Contiguous); },
        [&]() -> std::string {  // the kernel reads token t's k and v at t * d * hkv: contiguous tokens
            for (int i = 0; i < 2; ++i)
                if (tokens > 1 && c.src[i].nb[2] != d * hkv * 4)
                    return std::string(src_roles[i]) + ": token stride nb[2] = " + std::to_string(c.src[i].nb[2]) +
                           ", expected " + std::to_string(d * hkv * 4) + " (contiguous tokens)";
            return {};
        },
        [&] { return check_matrix(c.src[2], "src2 (position)", DENSE_TYPE_I32, tokens, 1, Rows::Contiguous); },
        [&] { return check_cache(c.dst[0], "dst0 (K cache)", d, hkv); },
        [&] { return check_cache(c.dst[1], "dst1 (V cache)", d, hkv); },
        [&]() -> std::string {
            if (c.dst[1].type != c.dst[0].type || c.dst[1].ne[2] != c.dst[0].ne[2])
                return "dst1 (V cache) differs from dst0 (K cache) in type or n_ctx";
            return {};
        },
        [&] { return check_outputs_apart(c, src_roles, dst_roles); });
    if (!err.empty() || inv.phase != Phase::Run) return err;
    KvStoreArgs a;
    a.f16 = c.dst[0].type == DENSE_TYPE_F16;
    a.k = f32_in(c.src[0]);
    a.v = f32_in(c.src[1]);
    a.d = d;
    a.hkv = hkv;
    a.n_ctx = c.dst[0].ne[2];
    a.position = i32_in(c.src[2]);
    a.k_cache = c.dst[0].data;
    a.v_cache = c.dst[1].data;
    a.tokens = tokens;
    launch(inv, "kv_store launch", [&](cudaStream_t s) { return launch_kv_store(a, s); });
    return {};
}

// src4 (the sigmoid output gate) is optional.
std::string handle_attn_decode(Invocation& inv) {
    const dense_op_call& c = inv.call;
    dense_attn_params p{};
    const bool gated = c.n_src == 5;
    int64_t d = 0, hq = 0, hkv = 0, tokens = 0;
    static const char* const src_roles[] = {"src0 (q)", "src1 (K cache)", "src2 (V cache)", "src3 (n_kv)",
                                            "src4 (gate)"};
    static const char* const dst_roles[] = {"dst"};
    AttnPlan plan;
    std::string err = first_error(
        [&] { return check_counts(c, gated ? 5 : 4, 1); }, [&] { return check_3d(c.src[0], "src0 (q)"); },
        [&] {
            d = c.src[0].ne[0];
            hq = c.src[0].ne[1];
            tokens = c.src[0].ne[2];
            return check_token_slices(c.src[0], "src0 (q)", DENSE_TYPE_F32, d, hq, tokens, Rows::Strided);
        },
        [&] {
            hkv = c.src[1].ne[1];
            return check_cache(c.src[1], "src1 (K cache)", d, hkv);
        },
        [&]() -> std::string {
            if (hq % hkv != 0)
                return "Hq = " + std::to_string(hq) + " query heads are not a multiple of Hkv = " +
                       std::to_string(hkv) + " KV heads";
            return {};
        },
        [&] { return check_cache(c.src[2], "src2 (V cache)", d, hkv); },
        [&]() -> std::string {
            if (c.src[2].type != c.src[1].type || c.src[2].ne[2] != c.src[1].ne[2])
                return "src2 (V cache) differs from src1 (K cache) in type or n_ctx";
            return {};
        },
        [&] { return check_matrix(c.src[3], "src3 (n_kv)", DENSE_TYPE_I32, tokens, 1, Rows::Contiguous); },
        [&] {
            return gated ? check_token_slices(c.src[4], "src4 (gate)", DENSE_TYPE_F32, d, hq, tokens, Rows::Strided)
                         : "";
        },
        [&] { return check_token_slices(c.dst[0], "dst", DENSE_TYPE_F32, d, hq, tokens, Rows::Contiguous); },
        [&] { return check_outputs_apart(c, src_roles, dst_roles); },
        [&] { return read_params(c, "dense_attn_params", DENSE_PACK_FIELD_END(dense_attn_params, scale), &p); },
        [&]() -> std::string {
            if (!std::isfinite(p.scale)) return "params scale is not finite";
            return {};
        },
        [&]() -> std::string {
            plan = plan_attention(d, hq, hkv, c.src[1].ne[2]);
            if (plan.fits && plan.head_blocks * tokens <= 65535) return {};  // grid.z: head blocks x tokens
            inv.refusal = DENSE_E_UNSUPPORTED;
            return "head_dim " + std::to_string(d) + " with " + std::to_string(hq / hkv) +
                   " query heads per KV head (" + std::to_string(hkv) +
                   " KV heads) is beyond this pack's attention kernel (shared memory or grid limits)";
        });
    if (!err.empty() || inv.phase == Phase::Check) return err;
    // One set of partials per token (plan.workspace_bytes apart: the kernels' token stride).
    inv.workspace_needed = plan.workspace_bytes * static_cast<uint64_t>(tokens);
    if (inv.phase != Phase::Run) return {};
    if (inv.workspace_needed > 0) {
        if (c.workspace == nullptr || c.workspace_bytes < inv.workspace_needed)
            return "workspace is " + std::string(c.workspace == nullptr ? "NULL" : "smaller") + " (" +
                   std::to_string(c.workspace_bytes) + " bytes), this call needs " +
                   std::to_string(inv.workspace_needed) + " bytes (see workspace_bytes())";
        if (reinterpret_cast<uintptr_t>(c.workspace) % alignof(float) != 0)
            return "workspace is not aligned to 4 bytes";
    }
    AttnArgs a;
    a.q = f32_in(c.src[0]);
    a.q_stride = row_stride_elements(c.src[0]);
    if (gated) {
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
    a.scale = p.scale;
    a.out = f32_out(c.dst[0]);
    a.workspace = static_cast<float*>(c.workspace);
    a.tokens = tokens;
    a.q_tstride = token_stride_elements(c.src[0]);
    a.gate_tstride = gated ? token_stride_elements(c.src[4]) : 0;
    a.out_tstride = token_stride_elements(c.dst[0]);
    launch(inv, "attn_decode launch", [&](cudaStream_t s) { return launch_attn_decode(a, plan, s); });
    return {};
}

}  // namespace dense::cuda::act
