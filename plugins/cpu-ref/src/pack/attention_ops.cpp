// ROPE, KV_STORE and ATTN_DECODE. The position / n_kv inputs are I32 {1} tensors read when the call
// runs (their range is checked then); everything else is checked before. ROPE and KV_STORE take the
// T tokens of a batched prefill step on their token axis (dense_abi.h, ABI 1.10), with I32 {T}
// positions, and ATTN_DECODE with I32 {T} n_kv: the same as T calls of one token, in order.
#include "pack/op_handlers.hpp"

#include "kernels/ops.hpp"

#include <dense/pack_common/attention_contracts.hpp>

#include <cmath>
#include <vector>

namespace dense::cpuref::pack {

using pack_common::check_rope_params;  // dense/pack_common/attention_contracts.hpp

std::string handle_rope(const OpContext&, const dense_op_call& c, Phase phase) {
    dense_rope_params p{};
    int64_t head_dim = 0, heads = 0, tokens = 0;
    std::vector<int32_t> pos;
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
        [&] {
            return read_params(c, "dense_rope_params", DENSE_PACK_FIELD_END(dense_rope_params, freq_scale), &p);
        },
        [&] { return check_rope_params(p, head_dim); },
        [&]() -> std::string {
            if (phase == Phase::Check) return {};
            pos = read_i32s(c.src[1]);
            for (const int32_t v : pos)
                if (v < 0) return "position " + std::to_string(v) + " is negative";
            return {};
        });
    if (!err.empty() || phase == Phase::Check) return err;
    for (int64_t t = 0; t < tokens; ++t)
        rope_neox(f32_in(c.src[0]) + t * token_stride_elements(c.src[0]), row_stride_elements(c.src[0]),
                  f32_out(c.dst[0]) + t * token_stride_elements(c.dst[0]), row_stride_elements(c.dst[0]), head_dim,
                  heads, p.n_rot, pos[static_cast<size_t>(t)], p.freq_base, p.freq_scale);
    return {};
}

std::string handle_kv_store(const OpContext&, const dense_op_call& c, Phase phase) {
    int64_t d = 0, hkv = 0, tokens = 0;
    std::vector<int32_t> pos;
    const char* src_roles[3] = {"src0 (k)", "src1 (v)", "src2 (position)"};
    const char* dst_roles[2] = {"dst0 (K cache)", "dst1 (V cache)"};
    std::string err = first_error(
        [&] { return check_counts(c, 3, 2); }, [&] { return check_3d(c.src[0], "src0 (k)"); },
        [&] {
            d = c.src[0].ne[0];
            hkv = c.src[0].ne[1];
            tokens = c.src[0].ne[2];
            return check_token_slices(c.src[0], "src0 (k)", DENSE_TYPE_F32, d, hkv, tokens, Rows::Contiguous);
        },
        [&] { return check_token_slices(c.src[1], "src1 (v)", DENSE_TYPE_F32, d, hkv, tokens, Rows::Contiguous); },
        [&]() -> std::string {  // dense_abi.h: the tokens of k and v are contiguous
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
        [&]() -> std::string {
            for (uint32_t i = 0; i < 2; ++i)
                for (uint32_t j = 0; j < 3; ++j)
                    if (std::string e = check_disjoint(c.dst[i], dst_roles[i], c.src[j], src_roles[j]); !e.empty())
                        return e;
            return check_disjoint(c.dst[1], dst_roles[1], c.dst[0], dst_roles[0]);
        },
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
    for (int64_t t = 0; t < tokens; ++t)
        kv_store(c.dst[0].type, f32_in(c.src[0]) + t * token_stride_elements(c.src[0]), d,
                 f32_in(c.src[1]) + t * token_stride_elements(c.src[1]), d, d, hkv, pos[static_cast<size_t>(t)],
                 c.dst[0].data, c.dst[1].data);
    return {};
}

// src4 (the sigmoid output gate) is optional.
std::string handle_attn_decode(const OpContext&, const dense_op_call& c, Phase phase) {
    dense_attn_params p{};
    const bool gated = c.n_src == 5;
    int64_t d = 0, hq = 0, hkv = 0, tokens = 0;
    std::vector<int32_t> n_kv;
    const char* src_roles[5] = {"src0 (q)", "src1 (K cache)", "src2 (V cache)", "src3 (n_kv)", "src4 (gate)"};
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
        [&]() -> std::string {
            for (uint32_t j = 0; j < c.n_src; ++j)
                if (std::string e = check_disjoint(c.dst[0], "dst", c.src[j], src_roles[j]); !e.empty()) return e;
            return {};
        },
        [&] { return read_params(c, "dense_attn_params", DENSE_PACK_FIELD_END(dense_attn_params, scale), &p); },
        [&]() -> std::string {
            if (!std::isfinite(p.scale)) return "params scale is not finite";
            return {};
        },
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
    if (gated) {
        a.gate = f32_in(c.src[4]);
        a.gate_stride = row_stride_elements(c.src[4]);
    }
    a.cache_type = c.src[1].type;
    a.k_cache = c.src[1].data;
    a.v_cache = c.src[2].data;
    a.d = d;
    a.hq = hq;
    a.hkv = hkv;
    a.scale = p.scale;
    a.out = f32_out(c.dst[0]);
    for (int64_t t = 0; t < tokens; ++t) {
        AttnDecodeArgs at = a;
        at.q += t * token_stride_elements(c.src[0]);
        if (gated) at.gate += t * token_stride_elements(c.src[4]);
        at.out += t * token_stride_elements(c.dst[0]);
        at.n_kv = n_kv[static_cast<size_t>(t)];
        attn_decode(at);
    }
    return {};
}

}  // namespace dense::cpuref::pack
