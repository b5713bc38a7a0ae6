// RMS_NORM, L2_NORM, GATED_RMS_NORM: x {n, rows}. RMS_NORM and L2_NORM take strided rows and may run
// in place (dst exactly src0); GATED_RMS_NORM is contiguous and out of place, as the ABI (and cpu-ref)
// says.
#include "act_handlers.hpp"

#include "act_quantized_copy.hpp"
#include "kernels/act_launchers.hpp"

#include <cmath>

namespace dense::cuda::act {
namespace {

std::string read_norm_params(const dense_op_call& c, dense_norm_params* p) {
    if (std::string e = read_params(c, "dense_norm_params", DENSE_PACK_FIELD_END(dense_norm_params, eps), p);
        !e.empty())
        return e;
    if (!std::isfinite(p->eps) || p->eps < 0.0f) return "params eps = " + std::to_string(p->eps) + " is not >= 0";
    return {};
}

}  // namespace

std::string handle_rms_norm(Invocation& inv) {
    const dense_op_call& c = inv.call;
    const bool fused = inv.ctx.fused_act != DENSE_TYPE_NONE;
    dense_norm_params p{};
    int64_t n = 0, rows = 0;
    std::string err = first_error(
        [&] { return check_counts(c, 2, fused ? 2 : 1); }, [&] { return check_2d(c.src[0], "src0 (x)"); },
        [&] {
            n = c.src[0].ne[0];
            rows = c.src[0].ne[1];
            return check_matrix(c.src[0], "src0 (x)", DENSE_TYPE_F32, n, rows, Rows::Strided);
        },
        [&] { return check_matrix(c.src[1], "src1 (weight)", DENSE_TYPE_F32, n, 1, Rows::Contiguous); },
        [&] { return check_matrix(c.dst[0], "dst", DENSE_TYPE_F32, n, rows, Rows::Strided); },
        [&] { return check_alias_or_disjoint(c.dst[0], "dst", c.src[0], "src0 (x)"); },
        [&] { return check_disjoint(c.dst[0], "dst", c.src[1], "src1 (weight)"); },
        [&] { return fused ? check_quantized_copy(c, n, rows) : std::string(); },
        [&] { return read_norm_params(c, &p); });
    if (!err.empty() || inv.phase != Phase::Run) return err;
    NormArgs a;
    if (fused) a.quantized = quantized_copy_target(c);
    a.x = f32_in(c.src[0]);
    a.x_stride = row_stride_elements(c.src[0]);
    a.w = f32_in(c.src[1]);
    a.y = f32_out(c.dst[0]);
    a.y_stride = row_stride_elements(c.dst[0]);
    a.n = n;
    a.rows = rows;
    a.eps = p.eps;
    launch(inv, "rms_norm launch", [&](cudaStream_t s) { return launch_rms_norm(a, s); });
    return {};
}

std::string handle_l2_norm(Invocation& inv) {
    const dense_op_call& c = inv.call;
    dense_norm_params p{};
    int64_t n = 0, rows = 0, tokens = 0;
    std::string err = first_error(
        [&] { return check_counts(c, 1, 1); }, [&] { return check_3d(c.src[0], "src0 (x)"); },
        [&] {
            n = c.src[0].ne[0];
            rows = c.src[0].ne[1];
            tokens = c.src[0].ne[2];  // the token axis (ABI 1.10): each token's rows normalised alike
            return check_token_slices(c.src[0], "src0 (x)", DENSE_TYPE_F32, n, rows, tokens, Rows::Strided);
        },
        [&] { return check_token_slices(c.dst[0], "dst", DENSE_TYPE_F32, n, rows, tokens, Rows::Strided); },
        [&] { return check_alias_or_disjoint(c.dst[0], "dst", c.src[0], "src0 (x)"); },
        [&] { return read_norm_params(c, &p); });
    if (!err.empty() || inv.phase != Phase::Run) return err;
    NormArgs a;
    a.x = f32_in(c.src[0]);
    a.x_stride = row_stride_elements(c.src[0]);
    a.y = f32_out(c.dst[0]);
    a.y_stride = row_stride_elements(c.dst[0]);
    a.n = n;
    a.rows = rows;
    a.eps = p.eps;
    a.tokens = tokens;
    a.x_tstride = token_stride_elements(c.src[0]);
    a.y_tstride = token_stride_elements(c.dst[0]);
    launch(inv, "l2_norm launch", [&](cudaStream_t s) { return launch_l2_norm(a, s); });
    return {};
}

std::string handle_gated_rms_norm(Invocation& inv) {
    const dense_op_call& c = inv.call;
    const bool fused = inv.ctx.fused_act != DENSE_TYPE_NONE;
    dense_norm_params p{};
    int64_t n = 0, rows = 0;
    std::string err = first_error(
        [&] { return check_counts(c, 3, fused ? 2 : 1); }, [&] { return check_2d(c.src[0], "src0 (x)"); },
        [&] {
            n = c.src[0].ne[0];
            rows = c.src[0].ne[1];
            return check_matrix(c.src[0], "src0 (x)", DENSE_TYPE_F32, n, rows, Rows::Contiguous);
        },
        [&] { return check_matrix(c.src[1], "src1 (z)", DENSE_TYPE_F32, n, rows, Rows::Contiguous); },
        [&] { return check_matrix(c.src[2], "src2 (weight)", DENSE_TYPE_F32, n, 1, Rows::Contiguous); },
        [&] { return check_matrix(c.dst[0], "dst", DENSE_TYPE_F32, n, rows, Rows::Contiguous); },
        [&] { return check_disjoint(c.dst[0], "dst", c.src[0], "src0 (x)"); },
        [&] { return check_disjoint(c.dst[0], "dst", c.src[1], "src1 (z)"); },
        [&] { return check_disjoint(c.dst[0], "dst", c.src[2], "src2 (weight)"); },
        [&] { return fused ? check_quantized_copy(c, n, rows) : std::string(); },
        [&] { return read_norm_params(c, &p); });
    if (!err.empty() || inv.phase != Phase::Run) return err;
    NormArgs a;
    if (fused) a.quantized = quantized_copy_target(c);
    a.x = f32_in(c.src[0]);
    a.x_stride = n;
    a.z = f32_in(c.src[1]);
    a.z_stride = n;
    a.w = f32_in(c.src[2]);
    a.y = f32_out(c.dst[0]);
    a.y_stride = n;
    a.n = n;
    a.rows = rows;
    a.eps = p.eps;
    launch(inv, "gated_rms_norm launch", [&](cudaStream_t s) { return launch_gated_rms_norm(a, s); });
    return {};
}

}  // namespace dense::cuda::act
