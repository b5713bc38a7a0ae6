// RMS_NORM, L2_NORM, GATED_RMS_NORM: x {n, rows}; RMS_NORM and L2_NORM take strided rows and may run
// in place (dst exactly src0); GATED_RMS_NORM is contiguous and out of place, as the ABI says.
#include "pack/op_handlers.hpp"

#include "kernels/ops.hpp"

#include <cmath>

namespace dense::cpuref::pack {
namespace {

std::string read_norm_params(const dense_op_call& c, dense_norm_params* p) {
    if (std::string e = read_params(c, "dense_norm_params", DENSE_PACK_FIELD_END(dense_norm_params, eps), p);
        !e.empty())
        return e;
    if (!std::isfinite(p->eps) || p->eps < 0.0f) return "params eps = " + std::to_string(p->eps) + " is not >= 0";
    return {};
}

}  // namespace

std::string handle_rms_norm(const OpContext&, const dense_op_call& c, Phase phase) {
    dense_norm_params p{};
    int64_t n = 0, rows = 0;
    std::string err = first_error(
        [&] { return check_counts(c, 2, 1); }, [&] { return check_2d(c.src[0], "src0 (x)"); },
        [&] {
            n = c.src[0].ne[0];
            rows = c.src[0].ne[1];
            return check_matrix(c.src[0], "src0 (x)", DENSE_TYPE_F32, n, rows, Rows::Strided);
        },
        [&] { return check_matrix(c.src[1], "src1 (weight)", DENSE_TYPE_F32, n, 1, Rows::Contiguous); },
        [&] { return check_matrix(c.dst[0], "dst", DENSE_TYPE_F32, n, rows, Rows::Strided); },
        [&] { return check_alias_or_disjoint(c.dst[0], "dst", c.src[0], "src0 (x)"); },
        [&] { return check_disjoint(c.dst[0], "dst", c.src[1], "src1 (weight)"); },
        [&] { return read_norm_params(c, &p); });
    if (!err.empty() || phase == Phase::Check) return err;
    rms_norm(f32_in(c.src[0]), row_stride_elements(c.src[0]), f32_in(c.src[1]), f32_out(c.dst[0]),
             row_stride_elements(c.dst[0]), n, rows, p.eps);
    return {};
}

std::string handle_l2_norm(const OpContext&, const dense_op_call& c, Phase phase) {
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
    if (!err.empty() || phase == Phase::Check) return err;
    for (int64_t t = 0; t < tokens; ++t)
        l2_norm(f32_in(c.src[0]) + t * token_stride_elements(c.src[0]), row_stride_elements(c.src[0]),
                f32_out(c.dst[0]) + t * token_stride_elements(c.dst[0]), row_stride_elements(c.dst[0]), n, rows, p.eps);
    return {};
}

std::string handle_gated_rms_norm(const OpContext&, const dense_op_call& c, Phase phase) {
    dense_norm_params p{};
    int64_t n = 0, rows = 0;
    std::string err = first_error(
        [&] { return check_counts(c, 3, 1); }, [&] { return check_2d(c.src[0], "src0 (x)"); },
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
        [&] { return read_norm_params(c, &p); });
    if (!err.empty() || phase == Phase::Check) return err;
    gated_rms_norm(f32_in(c.src[0]), n, f32_in(c.src[1]), n, f32_in(c.src[2]), f32_out(c.dst[0]), n, n, rows, p.eps);
    return {};
}

}  // namespace dense::cpuref::pack
