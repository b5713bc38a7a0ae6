#include "dense/pack_common/gdn_contracts.hpp"

#include "dense/pack_common/call_checks.hpp"
#include "dense/pack_common/norm_contracts.hpp"
#include "dense/pack_common/view_checks.hpp"
#include "sub_calls.hpp"

#include <cmath>

namespace dense::pack_common {

std::string check_conv1d_causal(const dense_op_call& c, Conv1dCall& out) {
    static const char* const src_roles[] = {"src0 (x)", "src1 (taps)", "src2 (state_in)"};
    static const char* const dst_roles[] = {"dst0 (y)", "dst1 (state_out)"};
    int64_t& channels = out.channels;
    int64_t& kernel = out.kernel;
    int64_t& tokens = out.tokens;
    return first_error(
        [&] { return check_2d(c.src[0], "src0 (x)"); },
        [&] {
            channels = c.src[0].ne[0];
            tokens = c.src[0].ne[1];
            return check_matrix(c.src[0], "src0 (x)", DENSE_TYPE_F32, channels, tokens, Rows::Strided);
        },
        [&] { return check_2d(c.src[1], "src1 (taps)"); },
        [&]() -> std::string {
            kernel = c.src[1].ne[0];
            if (kernel < 2) return "src1 (taps): kernel width ne[0] = " + std::to_string(kernel) + " must be >= 2";
            return check_matrix(c.src[1], "src1 (taps)", DENSE_TYPE_F32, kernel, channels, Rows::Contiguous);
        },
        [&] { return check_matrix(c.src[2], "src2 (state_in)", DENSE_TYPE_F32, kernel - 1, channels, Rows::Contiguous); },
        [&] { return check_matrix(c.dst[0], "dst0 (y)", DENSE_TYPE_F32, channels, tokens, Rows::Strided); },
        [&] {
            return check_matrix(c.dst[1], "dst1 (state_out)", DENSE_TYPE_F32, kernel - 1, channels, Rows::Contiguous);
        },
        [&] { return check_outputs_apart(c, src_roles, dst_roles, 1, 2); },
        [&] {
            return read_params(c, "dense_conv_params", DENSE_PACK_FIELD_END(dense_conv_params, apply_silu), &out.params);
        });
}

std::string check_gdn_gates(const dense_op_call& c, GdnGatesCall& out) {
    static const char* const src_roles[] = {"src0 (b)", "src1 (a)", "src2 (dt_bias)", "src3 (A)"};
    static const char* const dst_roles[] = {"dst0 (beta)", "dst1 (decay)"};
    return first_error(
        [&] { return check_2d(c.src[0], src_roles[0]); },
        [&]() -> std::string {
            out.heads = c.src[0].ne[0];
            out.tokens = c.src[0].ne[1];  // b, a, beta and decay carry the token axis; dt_bias and A do not
            for (uint32_t j = 0; j < 4; ++j)
                if (std::string e = check_matrix(c.src[j], src_roles[j], DENSE_TYPE_F32, out.heads,
                                                 j < 2 ? out.tokens : 1, Rows::Contiguous);
                    !e.empty())
                    return e;
            for (uint32_t i = 0; i < 2; ++i)
                if (std::string e =
                        check_matrix(c.dst[i], dst_roles[i], DENSE_TYPE_F32, out.heads, out.tokens, Rows::Contiguous);
                    !e.empty())
                    return e;
            return {};
        },
        [&] { return check_outputs_apart(c, src_roles, dst_roles); });
}

std::string check_gdn_decode(const dense_op_call& c, GdnDecodeCall& out) {
    static const char* const src_roles[] = {"src0 (q)",    "src1 (k)",     "src2 (v)",
                                            "src3 (beta)", "src4 (decay)", "src5 (state_in)"};
    static const char* const dst_roles[] = {"dst0 (o)", "dst1 (state_out)"};
    int64_t &dk = out.dk, &hk = out.hk, &dv = out.dv, &hv = out.hv, &state = out.state, &tokens = out.tokens;
    return first_error(
        [&] { return check_3d(c.src[0], "src0 (q)"); },
        [&] {
            dk = c.src[0].ne[0];
            hk = c.src[0].ne[1];
            tokens = c.src[0].ne[2];
            return check_token_slices(c.src[0], "src0 (q)", DENSE_TYPE_F32, dk, hk, tokens, Rows::Strided);
        },
        [&] { return check_token_slices(c.src[1], "src1 (k)", DENSE_TYPE_F32, dk, hk, tokens, Rows::Strided); },
        [&] { return check_3d(c.src[2], "src2 (v)"); },
        [&]() -> std::string {
            dv = c.src[2].ne[0];
            hv = c.src[2].ne[1];
            if (hv % hk != 0)
                return "Hv = " + std::to_string(hv) + " value heads are not a multiple of Hk = " + std::to_string(hk) +
                       " key heads";
            if (__builtin_mul_overflow(dk, dv, &state)) return "dk * dv overflows";
            return check_token_slices(c.src[2], "src2 (v)", DENSE_TYPE_F32, dv, hv, tokens, Rows::Strided);
        },
        [&] { return check_matrix(c.src[3], "src3 (beta)", DENSE_TYPE_F32, hv, tokens, Rows::Contiguous); },
        [&] { return check_matrix(c.src[4], "src4 (decay)", DENSE_TYPE_F32, hv, tokens, Rows::Contiguous); },
        [&] { return check_matrix(c.src[5], "src5 (state_in)", DENSE_TYPE_F32, state, hv, Rows::Contiguous); },
        [&] { return check_token_slices(c.dst[0], "dst0 (o)", DENSE_TYPE_F32, dv, hv, tokens, Rows::Contiguous); },
        [&] { return check_matrix(c.dst[1], "dst1 (state_out)", DENSE_TYPE_F32, state, hv, Rows::Contiguous); },
        [&] { return check_outputs_apart(c, src_roles, dst_roles, 1, 5); },
        [&] { return read_params(c, "dense_gdn_params", DENSE_PACK_FIELD_END(dense_gdn_params, scale), &out.params); },
        [&]() -> std::string {
            if (!std::isfinite(out.params.scale)) return "params scale is not finite";
            return {};
        });
}

std::string check_gdn_step(const dense_op_call& c, GdnStepCall& out) {
    static const char* const src_roles[] = {"src0 (x)",       "src1 (taps)", "src2 (conv state_in)",
                                            "src3 (b)",       "src4 (a)",    "src5 (dt_bias)",
                                            "src6 (A)",       "src7 (delta state_in)"};
    static const char* const dst_roles[] = {"dst0 (y)",    "dst1 (conv state_out)", "dst2 (beta)",
                                            "dst3 (decay)", "dst4 (o)",             "dst5 (delta state_out)"};
    int64_t &channels = out.channels, &kernel = out.kernel, &dk = out.dk, &hk = out.hk, &dv = out.dv, &hv = out.hv;
    int64_t state = 0;
    std::string err = first_error(
        [&] { return check_2d(c.src[0], src_roles[0]); },
        [&] {
            channels = c.src[0].ne[0];
            return check_matrix(c.src[0], src_roles[0], DENSE_TYPE_F32, channels, 1, Rows::Contiguous);
        },
        [&] { return check_2d(c.src[1], src_roles[1]); },
        [&]() -> std::string {
            kernel = c.src[1].ne[0];
            if (kernel < 2) return "src1 (taps): kernel width ne[0] = " + std::to_string(kernel) + " must be >= 2";
            return check_matrix(c.src[1], src_roles[1], DENSE_TYPE_F32, kernel, channels, Rows::Contiguous);
        },
        [&] { return check_matrix(c.src[2], src_roles[2], DENSE_TYPE_F32, kernel - 1, channels, Rows::Contiguous); },
        [&] { return check_2d(c.src[3], src_roles[3]); },
        [&]() -> std::string {
            hv = c.src[3].ne[0];
            for (uint32_t j = 3; j < 7; ++j)
                if (std::string e = check_matrix(c.src[j], src_roles[j], DENSE_TYPE_F32, hv, 1, Rows::Contiguous);
                    !e.empty())
                    return e;
            return {};
        },
        [&] { return check_2d(c.dst[4], dst_roles[4]); },
        [&] {
            dv = c.dst[4].ne[0];
            return check_matrix(c.dst[4], dst_roles[4], DENSE_TYPE_F32, dv, hv, Rows::Contiguous);
        },
        [&] { return check_2d(c.src[7], src_roles[7]); },
        [&]() -> std::string {
            state = c.src[7].ne[0];
            if (state % dv != 0)
                return "src7 (delta state_in): ne[0] = " + std::to_string(state) + " is not dk * dv for dv = " +
                       std::to_string(dv);
            dk = state / dv;
            const int64_t key_channels = channels - hv * dv;  // q and k heads: 2 Hk dk
            if (key_channels <= 0 || key_channels % (2 * dk) != 0)
                return "src0 (x): " + std::to_string(channels) + " channels are not 2 Hk dk + Hv dv for Hv = " +
                       std::to_string(hv) + ", dv = " + std::to_string(dv) + ", dk = " + std::to_string(dk);
            hk = key_channels / (2 * dk);
            return check_matrix(c.src[7], src_roles[7], DENSE_TYPE_F32, state, hv, Rows::Contiguous);
        },
        [&] { return check_matrix(c.dst[0], dst_roles[0], DENSE_TYPE_F32, channels, 1, Rows::Contiguous); },
        [&] { return check_matrix(c.dst[1], dst_roles[1], DENSE_TYPE_F32, kernel - 1, channels, Rows::Contiguous); },
        [&] { return check_matrix(c.dst[2], dst_roles[2], DENSE_TYPE_F32, hv, 1, Rows::Contiguous); },
        [&] { return check_matrix(c.dst[3], dst_roles[3], DENSE_TYPE_F32, hv, 1, Rows::Contiguous); },
        [&] { return check_matrix(c.dst[5], dst_roles[5], DENSE_TYPE_F32, state, hv, Rows::Contiguous); },
        [&] { return check_outputs_apart(c, src_roles, dst_roles); },
        [&] {
            return read_params(c, "dense_gdn_step_params", DENSE_PACK_FIELD_END(dense_gdn_step_params, apply_silu),
                               &out.params);
        });
    if (!err.empty()) return err;

    // The four calls, in the order they run.
    const int64_t key_dim = hk * dk;
    out.conv_src[0] = c.src[0];
    out.conv_src[1] = c.src[1];
    out.conv_src[2] = c.src[2];
    out.conv_dst[0] = c.dst[0];
    out.conv_dst[1] = c.dst[1];
    out.conv_params = dense::sdk::make_struct<dense_conv_params>();
    out.conv_params.apply_silu = out.params.apply_silu;
    out.conv = sub_call(c, DENSE_OP_CONV1D_CAUSAL, out.conv_src, 3, out.conv_dst, 2, &out.conv_params);

    out.l2_rows[0] = f32_part(c.dst[0], 0, dk, 2 * hk);
    out.l2_params = dense::sdk::make_struct<dense_norm_params>();
    out.l2_params.eps = out.params.l2_eps;
    out.l2 = sub_call(c, DENSE_OP_L2_NORM, out.l2_rows, 1, out.l2_rows, 1, &out.l2_params);

    for (int j = 0; j < 4; ++j) out.gates_src[j] = c.src[3 + j];
    out.gates_dst[0] = c.dst[2];
    out.gates_dst[1] = c.dst[3];
    out.gates = sub_call(c, DENSE_OP_GDN_GATES, out.gates_src, 4, out.gates_dst, 2, nullptr);

    out.decode_src[0] = f32_part(c.dst[0], 0, dk, hk);
    out.decode_src[1] = f32_part(c.dst[0], key_dim, dk, hk);
    out.decode_src[2] = f32_part(c.dst[0], 2 * key_dim, dv, hv);
    out.decode_src[3] = c.dst[2];
    out.decode_src[4] = c.dst[3];
    out.decode_src[5] = c.src[7];
    out.decode_dst[0] = c.dst[4];
    out.decode_dst[1] = c.dst[5];
    out.decode_params = dense::sdk::make_struct<dense_gdn_params>();
    out.decode_params.scale = out.params.scale;
    out.decode = sub_call(c, DENSE_OP_GDN_DECODE, out.decode_src, 6, out.decode_dst, 2, &out.decode_params);

    Conv1dCall conv;
    NormCall l2;
    dense_norm_params l2_params{};
    GdnGatesCall gates;
    GdnDecodeCall decode;
    return first_error([&] { return as_part("CONV1D_CAUSAL", check_conv1d_causal(out.conv, conv)); },
                       [&] { return as_part("L2_NORM", check_l2_norm_views(out.l2, l2)); },
                       [&] { return as_part("L2_NORM", check_norm_params(out.l2, l2_params)); },
                       [&] { return as_part("GDN_GATES", check_gdn_gates(out.gates, gates)); },
                       [&] { return as_part("GDN_DECODE", check_gdn_decode(out.decode, decode)); });
}

}  // namespace dense::pack_common
