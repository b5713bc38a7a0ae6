// ROPE, KV_STORE and ATTN_DECODE. The position / n_kv inputs are I32 {1} tensors read when the call
// runs (their range is checked then); everything else is checked before. ROPE and KV_STORE take the
// T tokens of a batched prefill step on their token axis (dense_abi.h, ABI 1.10), with I32 {T}
// positions, and ATTN_DECODE with I32 {T} n_kv: the same as T calls of one token, in order.
// The calls' contracts are pack-common's (attention_contracts.hpp), the same as the CUDA packs'.
#include "pack/op_handlers.hpp"

#include "kernels/ops.hpp"

#include <dense/pack_common/attention_contracts.hpp>

#include <vector>

namespace dense::cpuref::pack {

std::string handle_rope(const OpContext&, const dense_op_call& c, Phase phase) {
    pack_common::RopeCall call;
    std::vector<int32_t> pos;
    std::string err = first_error(
        [&] { return check_counts(c, 2, 1); }, [&] { return pack_common::check_rope(c, call); },
        [&]() -> std::string {
            if (phase == Phase::Check) return {};
            pos = read_i32s(c.src[1]);
            for (const int32_t v : pos)
                if (v < 0) return "position " + std::to_string(v) + " is negative";
            return {};
        });
    if (!err.empty() || phase == Phase::Check) return err;
    const dense_rope_params& p = call.params;
    for (int64_t t = 0; t < call.tokens; ++t)
        rope_neox(f32_in(c.src[0]) + t * token_stride_elements(c.src[0]), row_stride_elements(c.src[0]),
                  f32_out(c.dst[0]) + t * token_stride_elements(c.dst[0]), row_stride_elements(c.dst[0]), call.head_dim,
                  call.heads, p.n_rot, pos[static_cast<size_t>(t)], p.freq_base, p.freq_scale);
    return {};
}

std::string handle_kv_store(const OpContext&, const dense_op_call& c, Phase phase) {
    pack_common::KvStoreCall call;
    std::vector<int32_t> pos;
    std::string err = first_error(
        [&] { return check_counts(c, 3, 2); }, [&] { return pack_common::check_kv_store(c, call); },
        [&]() -> std::string {
            if (phase == Phase::Check) return {};
            pos = read_i32s(c.src[2]);
            for (const int32_t v : pos)
                if (v < 0 || v >= c.dst[0].ne[2])
                    return "position " + std::to_string(v) + " is outside the cache [0, " +
                           std::to_string(c.dst[0].ne[2]) + ")";
            return {};
        });
    if (!err.empty() || phase == Phase::Check) return err;
    const int64_t d = call.d;
    for (int64_t t = 0; t < call.tokens; ++t)
        kv_store(c.dst[0].type, f32_in(c.src[0]) + t * token_stride_elements(c.src[0]), d,
                 f32_in(c.src[1]) + t * token_stride_elements(c.src[1]), d, d, call.hkv, pos[static_cast<size_t>(t)],
                 c.dst[0].data, c.dst[1].data);
    return {};
}

// src4 (the sigmoid output gate) is optional.
std::string handle_attn_decode(const OpContext&, const dense_op_call& c, Phase phase) {
    pack_common::AttnDecodeCall call;
    std::vector<int32_t> n_kv;
    std::string err = first_error(
        [&] { return check_counts(c, c.n_src == 5 ? 5 : 4, 1); },
        [&] { return pack_common::check_attn_decode(c, call); },
        [&]() -> std::string {
            if (phase == Phase::Check) return {};
            n_kv = read_i32s(c.src[3]);
            for (const int32_t n : n_kv)
                if (n < 1 || n > c.src[1].ne[2])
                    return "n_kv = " + std::to_string(n) + " is outside [1, n_ctx = " + std::to_string(c.src[1].ne[2]) +
                           "]";
            return {};
        });
    if (!err.empty() || phase == Phase::Check) return err;
    AttnDecodeArgs a;
    a.q = f32_in(c.src[0]);
    a.q_stride = row_stride_elements(c.src[0]);
    if (call.gated) {
        a.gate = f32_in(c.src[4]);
        a.gate_stride = row_stride_elements(c.src[4]);
    }
    a.cache_type = c.src[1].type;
    a.k_cache = c.src[1].data;
    a.v_cache = c.src[2].data;
    a.d = call.d;
    a.hq = call.hq;
    a.hkv = call.hkv;
    a.scale = call.params.scale;
    a.out = f32_out(c.dst[0]);
    for (int64_t t = 0; t < call.tokens; ++t) {
        AttnDecodeArgs at = a;
        at.q += t * token_stride_elements(c.src[0]);
        if (call.gated) at.gate += t * token_stride_elements(c.src[4]);
        at.out += t * token_stride_elements(c.dst[0]);
        at.n_kv = n_kv[static_cast<size_t>(t)];
        attn_decode(at);
    }
    return {};
}

// ATTN_PREP (ABI 1.11): the five calls it stands for (pack-common's check_attn_prep builds them), run
// with these handlers, so it is those calls' result by construction. The position is checked against
// both ROPE's and KV_STORE's ranges first, so a refused call writes nothing (the norms run before).
std::string handle_attn_prep(const OpContext& ctx, const dense_op_call& c, Phase phase) {
    pack_common::AttnPrepCall call;
    const std::string err = first_error(
        [&] { return check_counts(c, 6, 4); }, [&] { return pack_common::check_attn_prep(c, call); },
        [&]() -> std::string {
            if (phase == Phase::Check) return {};
            const int32_t p = read_i32s(c.src[5]).at(0);
            if (p < 0 || p >= call.n_ctx)
                return "position " + std::to_string(p) + " is outside the cache [0, " + std::to_string(call.n_ctx) + ")";
            return {};
        });
    if (!err.empty() || phase == Phase::Check) return err;
    return run_parts(ctx, {&call.norm_q, &call.norm_k, &call.rope_q, &call.rope_k, &call.kv_store});
}

}  // namespace dense::cpuref::pack
