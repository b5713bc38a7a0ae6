#include "dense/pack_common/gdn_contracts.hpp"

#include "dense/pack_common/call_checks.hpp"
#include "dense/pack_common/view_checks.hpp"

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

}  // namespace dense::pack_common
