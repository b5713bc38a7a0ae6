// CONV1D_CAUSAL, GDN_GATES and GDN_DECODE: the Gated DeltaNet block's ops. The recurrent states may be
// updated in place (dst1 exactly src2 / src5) or ping-ponged between two buffers. Each takes the T
// tokens of a batched prefill step on its token axis (dense_abi.h, ABI 1.10) and runs them as T calls
// of one token in order: token 0 reads state_in, every later one the state_out its predecessor wrote
// (the kernels allow state_out to be state_in), so the result is the token-by-token result, bit for bit.
#include "pack/op_handlers.hpp"

#include "kernels/ops.hpp"

#include <cmath>

namespace dense::cpuref::pack {

std::string handle_conv1d_causal(const OpContext&, const dense_op_call& c, Phase phase) {
    dense_conv_params p{};
    int64_t channels = 0, kernel = 0, tokens = 0;
    static const char* const src_roles[] = {"src0 (x)", "src1 (taps)", "src2 (state_in)"};
    static const char* const dst_roles[] = {"dst0 (y)", "dst1 (state_out)"};
    std::string err = first_error(
        [&] { return check_counts(c, 3, 2); }, [&] { return check_2d(c.src[0], "src0 (x)"); },
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
            return read_params(c, "dense_conv_params", DENSE_CPUREF_FIELD_END(dense_conv_params, apply_silu), &p);
        });
    if (!err.empty() || phase == Phase::Check) return err;
    const int64_t xs = row_stride_elements(c.src[0]), ys = row_stride_elements(c.dst[0]);
    for (int64_t t = 0; t < tokens; ++t)
        conv1d_causal(f32_in(c.src[0]) + t * xs, f32_in(c.src[1]), t == 0 ? f32_in(c.src[2]) : f32_out(c.dst[1]),
                      f32_out(c.dst[0]) + t * ys, f32_out(c.dst[1]), channels, kernel, p.apply_silu != 0);
    return {};
}

// No params.
std::string handle_gdn_gates(const OpContext&, const dense_op_call& c, Phase phase) {
    int64_t heads = 0, tokens = 0;
    static const char* const src_roles[] = {"src0 (b)", "src1 (a)", "src2 (dt_bias)", "src3 (A)"};
    static const char* const dst_roles[] = {"dst0 (beta)", "dst1 (decay)"};
    std::string err = first_error(
        [&] { return check_counts(c, 4, 2); }, [&] { return check_2d(c.src[0], src_roles[0]); },
        [&]() -> std::string {
            heads = c.src[0].ne[0];
            tokens = c.src[0].ne[1];  // b, a, beta and decay carry the token axis; dt_bias and A do not
            for (uint32_t j = 0; j < 4; ++j)
                if (std::string e = check_matrix(c.src[j], src_roles[j], DENSE_TYPE_F32, heads, j < 2 ? tokens : 1,
                                                 Rows::Contiguous);
                    !e.empty())
                    return e;
            for (uint32_t i = 0; i < 2; ++i)
                if (std::string e =
                        check_matrix(c.dst[i], dst_roles[i], DENSE_TYPE_F32, heads, tokens, Rows::Contiguous);
                    !e.empty())
                    return e;
            return {};
        },
        [&] { return check_outputs_apart(c, src_roles, dst_roles); });
    if (!err.empty() || phase == Phase::Check) return err;
    for (int64_t t = 0; t < tokens; ++t)
        gdn_gates(f32_in(c.src[0]) + t * heads, f32_in(c.src[1]) + t * heads, f32_in(c.src[2]), f32_in(c.src[3]),
                  f32_out(c.dst[0]) + t * heads, f32_out(c.dst[1]) + t * heads, heads);
    return {};
}

std::string handle_gdn_decode(const OpContext&, const dense_op_call& c, Phase phase) {
    dense_gdn_params p{};
    int64_t dk = 0, hk = 0, dv = 0, hv = 0, state = 0, tokens = 0;
    static const char* const src_roles[] = {"src0 (q)",    "src1 (k)",     "src2 (v)",
                                            "src3 (beta)", "src4 (decay)", "src5 (state_in)"};
    static const char* const dst_roles[] = {"dst0 (o)", "dst1 (state_out)"};
    std::string err = first_error(
        [&] { return check_counts(c, 6, 2); }, [&] { return check_3d(c.src[0], "src0 (q)"); },
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
        [&] { return read_params(c, "dense_gdn_params", DENSE_CPUREF_FIELD_END(dense_gdn_params, scale), &p); },
        [&]() -> std::string {
            if (!std::isfinite(p.scale)) return "params scale is not finite";
            return {};
        });
    if (!err.empty() || phase == Phase::Check) return err;
    GdnDecodeArgs a;
    a.q = f32_in(c.src[0]);
    a.q_stride = row_stride_elements(c.src[0]);
    a.k = f32_in(c.src[1]);
    a.k_stride = row_stride_elements(c.src[1]);
    a.v = f32_in(c.src[2]);
    a.v_stride = row_stride_elements(c.src[2]);
    a.beta = f32_in(c.src[3]);
    a.decay = f32_in(c.src[4]);
    a.state_in = f32_in(c.src[5]);
    a.state_out = f32_out(c.dst[1]);
    a.o = f32_out(c.dst[0]);
    a.dk = dk;
    a.dv = dv;
    a.hk = hk;
    a.hv = hv;
    a.scale = p.scale;
    const int64_t qt = token_stride_elements(c.src[0]), kt = token_stride_elements(c.src[1]);
    const int64_t vt = token_stride_elements(c.src[2]), ot = token_stride_elements(c.dst[0]);
    for (int64_t t = 0; t < tokens; ++t) {
        GdnDecodeArgs at = a;
        at.q += t * qt;
        at.k += t * kt;
        at.v += t * vt;
        at.beta += t * hv;
        at.decay += t * hv;
        at.o += t * ot;
        if (t > 0) at.state_in = a.state_out;  // the state token t-1 left
        gdn_decode(at);
    }
    return {};
}

}  // namespace dense::cpuref::pack
