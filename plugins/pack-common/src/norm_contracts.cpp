#include "dense/pack_common/norm_contracts.hpp"

#include "dense/pack_common/call_checks.hpp"
#include "dense/pack_common/view_checks.hpp"

#include <cmath>

namespace dense::pack_common {

namespace {

// src0 x {n, rows} F32 with rows as `layout` says; out.n and out.rows from it.
std::string check_x_matrix(const dense_op_call& c, Rows layout, NormCall& out) {
    if (std::string e = check_2d(c.src[0], "src0 (x)"); !e.empty()) return e;
    out.n = c.src[0].ne[0];
    out.rows = c.src[0].ne[1];
    return check_matrix(c.src[0], "src0 (x)", DENSE_TYPE_F32, out.n, out.rows, layout);
}

}  // namespace

std::string check_rms_norm_views(const dense_op_call& c, NormCall& out) {
    const int64_t& n = out.n;
    const int64_t& rows = out.rows;
    return first_error(
        [&] { return check_x_matrix(c, Rows::Strided, out); },
        [&] { return check_matrix(c.src[1], "src1 (weight)", DENSE_TYPE_F32, n, 1, Rows::Contiguous); },
        [&] { return check_matrix(c.dst[0], "dst", DENSE_TYPE_F32, n, rows, Rows::Strided); },
        [&] { return check_alias_or_disjoint(c.dst[0], "dst", c.src[0], "src0 (x)"); },
        [&] { return check_disjoint(c.dst[0], "dst", c.src[1], "src1 (weight)"); });
}

std::string check_l2_norm_views(const dense_op_call& c, NormCall& out) {
    int64_t& n = out.n;
    int64_t& rows = out.rows;
    int64_t& tokens = out.tokens;
    return first_error(
        [&] { return check_3d(c.src[0], "src0 (x)"); },
        [&] {
            n = c.src[0].ne[0];
            rows = c.src[0].ne[1];
            tokens = c.src[0].ne[2];  // each token's rows normalised alike
            return check_token_slices(c.src[0], "src0 (x)", DENSE_TYPE_F32, n, rows, tokens, Rows::Strided);
        },
        [&] { return check_token_slices(c.dst[0], "dst", DENSE_TYPE_F32, n, rows, tokens, Rows::Strided); },
        [&] { return check_alias_or_disjoint(c.dst[0], "dst", c.src[0], "src0 (x)"); });
}

std::string check_gated_rms_norm_views(const dense_op_call& c, NormCall& out) {
    const int64_t& n = out.n;
    const int64_t& rows = out.rows;
    return first_error(
        [&] { return check_x_matrix(c, Rows::Contiguous, out); },
        [&] { return check_matrix(c.src[1], "src1 (z)", DENSE_TYPE_F32, n, rows, Rows::Contiguous); },
        [&] { return check_matrix(c.src[2], "src2 (weight)", DENSE_TYPE_F32, n, 1, Rows::Contiguous); },
        [&] { return check_matrix(c.dst[0], "dst", DENSE_TYPE_F32, n, rows, Rows::Contiguous); },
        [&] { return check_disjoint(c.dst[0], "dst", c.src[0], "src0 (x)"); },
        [&] { return check_disjoint(c.dst[0], "dst", c.src[1], "src1 (z)"); },
        [&] { return check_disjoint(c.dst[0], "dst", c.src[2], "src2 (weight)"); });
}

std::string check_norm_params(const dense_op_call& c, dense_norm_params& out) {
    if (std::string e = read_params(c, "dense_norm_params", DENSE_PACK_FIELD_END(dense_norm_params, eps), &out);
        !e.empty())
        return e;
    if (!std::isfinite(out.eps) || out.eps < 0.0f) return "params eps = " + std::to_string(out.eps) + " is not >= 0";
    return {};
}

}  // namespace dense::pack_common
