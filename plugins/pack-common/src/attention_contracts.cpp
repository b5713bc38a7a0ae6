#include "dense/pack_common/attention_contracts.hpp"

#include "dense/pack_common/call_checks.hpp"
#include "dense/pack_common/norm_contracts.hpp"
#include "dense/pack_common/view_checks.hpp"
#include "sub_calls.hpp"

#include <cmath>

namespace dense::pack_common {

std::string check_rope_params(const dense_rope_params& p, int64_t head_dim) {
    if (p.mode != DENSE_ROPE_NEOX)
        return "params mode = " + std::to_string(p.mode) + ", only DENSE_ROPE_NEOX (" +
               std::to_string(DENSE_ROPE_NEOX) + ") exists";
    if (p.n_rot < 2 || p.n_rot % 2 != 0 || p.n_rot > head_dim)
        return "params n_rot = " + std::to_string(p.n_rot) + " must be even and in [2, head_dim = " +
               std::to_string(head_dim) + "]";
    if (!std::isfinite(p.freq_base) || p.freq_base <= 0.0f)
        return "params freq_base = " + std::to_string(p.freq_base) + " must be finite and > 0";
    if (!std::isfinite(p.freq_scale) || p.freq_scale <= 0.0f)
        return "params freq_scale = " + std::to_string(p.freq_scale) + " must be finite and > 0";
    return {};
}

std::string check_rope(const dense_op_call& c, RopeCall& out) {
    int64_t& head_dim = out.head_dim;
    int64_t& heads = out.heads;
    int64_t& tokens = out.tokens;
    return first_error(
        [&] { return check_3d(c.src[0], "src0 (x)"); },
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
            return read_params(c, "dense_rope_params", DENSE_PACK_FIELD_END(dense_rope_params, freq_scale),
                               &out.params);
        },
        [&] { return check_rope_params(out.params, head_dim); });
}

std::string check_kv_store(const dense_op_call& c, KvStoreCall& out) {
    static const char* const src_roles[] = {"src0 (k)", "src1 (v)", "src2 (position)"};
    static const char* const dst_roles[] = {"dst0 (K cache)", "dst1 (V cache)"};
    int64_t& d = out.d;
    int64_t& hkv = out.hkv;
    int64_t& tokens = out.tokens;
    return first_error(
        [&] { return check_3d(c.src[0], "src0 (k)"); },
        [&] {
            d = c.src[0].ne[0];
            hkv = c.src[0].ne[1];
            tokens = c.src[0].ne[2];
            return check_token_slices(c.src[0], "src0 (k)", DENSE_TYPE_F32, d, hkv, tokens, Rows::Contiguous);
        },
        [&] { return check_token_slices(c.src[1], "src1 (v)", DENSE_TYPE_F32, d, hkv, tokens, Rows::Contiguous); },
        [&]() -> std::string {  // dense_abi.h: token t's k and v start at t * d * hkv (contiguous tokens)
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
}

std::string check_attn_decode(const dense_op_call& c, AttnDecodeCall& out) {
    static const char* const src_roles[] = {"src0 (q)", "src1 (K cache)", "src2 (V cache)", "src3 (n_kv)",
                                            "src4 (gate)"};
    static const char* const dst_roles[] = {"dst"};
    int64_t& d = out.d;
    int64_t& hq = out.hq;
    int64_t& hkv = out.hkv;
    int64_t& tokens = out.tokens;
    out.gated = c.n_src == 5;
    return first_error(
        [&] { return check_3d(c.src[0], "src0 (q)"); },
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
            return out.gated
                       ? check_token_slices(c.src[4], "src4 (gate)", DENSE_TYPE_F32, d, hq, tokens, Rows::Strided)
                       : "";
        },
        [&] { return check_token_slices(c.dst[0], "dst", DENSE_TYPE_F32, d, hq, tokens, Rows::Contiguous); },
        [&] { return check_outputs_apart(c, src_roles, dst_roles); },
        [&] {
            return read_params(c, "dense_attn_params", DENSE_PACK_FIELD_END(dense_attn_params, scale), &out.params);
        },
        [&]() -> std::string {
            if (!std::isfinite(out.params.scale)) return "params scale is not finite";
            return {};
        });
}

std::string check_attn_prep(const dense_op_call& c, AttnPrepCall& out) {
    static const char* const src_roles[] = {"src0 (q)",      "src1 (k)",      "src2 (v)",
                                            "src3 (q norm)", "src4 (k norm)", "src5 (position)"};
    static const char* const dst_roles[] = {"dst0 (q_out)", "dst1 (k_out)", "dst2 (K cache)", "dst3 (V cache)"};
    int64_t &d = out.d, &hq = out.hq, &hkv = out.hkv;
    std::string err = first_error(
        [&] { return check_2d(c.src[0], src_roles[0]); },
        [&] {
            d = c.src[0].ne[0];
            hq = c.src[0].ne[1];
            return check_matrix(c.src[0], src_roles[0], DENSE_TYPE_F32, d, hq, Rows::Strided);
        },
        [&] { return check_2d(c.src[1], src_roles[1]); },
        [&] {
            hkv = c.src[1].ne[1];
            return check_matrix(c.src[1], src_roles[1], DENSE_TYPE_F32, d, hkv, Rows::Contiguous);
        },
        [&] { return check_matrix(c.src[2], src_roles[2], DENSE_TYPE_F32, d, hkv, Rows::Contiguous); },
        [&] { return check_matrix(c.src[3], src_roles[3], DENSE_TYPE_F32, d, 1, Rows::Contiguous); },
        [&] { return check_matrix(c.src[4], src_roles[4], DENSE_TYPE_F32, d, 1, Rows::Contiguous); },
        [&] { return check_i32_scalar(c.src[5], src_roles[5]); },
        [&] { return check_matrix(c.dst[0], dst_roles[0], DENSE_TYPE_F32, d, hq, Rows::Contiguous); },
        [&] { return check_matrix(c.dst[1], dst_roles[1], DENSE_TYPE_F32, d, hkv, Rows::Contiguous); },
        [&] { return check_outputs_apart(c, src_roles, dst_roles); },
        [&] {
            return read_params(c, "dense_attn_prep_params", DENSE_PACK_FIELD_END(dense_attn_prep_params, freq_scale),
                               &out.params);
        });
    if (!err.empty()) return err;
    out.n_ctx = c.dst[2].ne[2];

    out.norm_params = dense::sdk::make_struct<dense_norm_params>();
    out.norm_params.eps = out.params.eps;
    out.rope_params = dense::sdk::make_struct<dense_rope_params>();
    out.rope_params.n_rot = out.params.n_rot;
    out.rope_params.mode = out.params.mode;
    out.rope_params.freq_base = out.params.freq_base;
    out.rope_params.freq_scale = out.params.freq_scale;
    out.q_out[0] = c.dst[0];
    out.k_out[0] = c.dst[1];
    out.norm_q_src[0] = c.src[0];
    out.norm_q_src[1] = c.src[3];
    out.norm_q = sub_call(c, DENSE_OP_RMS_NORM, out.norm_q_src, 2, out.q_out, 1, &out.norm_params);
    out.norm_k_src[0] = c.src[1];
    out.norm_k_src[1] = c.src[4];
    out.norm_k = sub_call(c, DENSE_OP_RMS_NORM, out.norm_k_src, 2, out.k_out, 1, &out.norm_params);
    out.rope_q_src[0] = c.dst[0];
    out.rope_q_src[1] = c.src[5];
    out.rope_q = sub_call(c, DENSE_OP_ROPE, out.rope_q_src, 2, out.q_out, 1, &out.rope_params);
    out.rope_k_src[0] = c.dst[1];
    out.rope_k_src[1] = c.src[5];
    out.rope_k = sub_call(c, DENSE_OP_ROPE, out.rope_k_src, 2, out.k_out, 1, &out.rope_params);
    out.kv_src[0] = c.dst[1];
    out.kv_src[1] = c.src[2];
    out.kv_src[2] = c.src[5];
    out.kv_dst[0] = c.dst[2];
    out.kv_dst[1] = c.dst[3];
    out.kv_store = sub_call(c, DENSE_OP_KV_STORE, out.kv_src, 3, out.kv_dst, 2, nullptr);

    NormCall norm_q, norm_k;
    dense_norm_params norm_params{};
    RopeCall rope_q, rope_k;
    KvStoreCall kv;
    return first_error([&] { return as_part("RMS_NORM (q)", check_rms_norm_views(out.norm_q, norm_q)); },
                       [&] { return as_part("RMS_NORM (q)", check_norm_params(out.norm_q, norm_params)); },
                       [&] { return as_part("RMS_NORM (k)", check_rms_norm_views(out.norm_k, norm_k)); },
                       [&] { return as_part("ROPE (q)", check_rope(out.rope_q, rope_q)); },
                       [&] { return as_part("ROPE (k)", check_rope(out.rope_k, rope_k)); },
                       [&] { return as_part("KV_STORE", check_kv_store(out.kv_store, kv)); });
}

}  // namespace dense::pack_common
