// GEMV_Q_MULTI (ABI 1.8): k GEMVs on one activation in one call. cpu-ref runs them one after the
// other with exactly GEMV_Q's arithmetic, so a device pack's multi-output launch has an oracle that
// is, by construction, the single GEMVs' oracle too.
#include "pack/op_handlers.hpp"

#include <vector>

namespace dense::cpuref::pack {
namespace {

constexpr uint32_t kMinMatrices = 2;
constexpr uint32_t kMaxMatrices = 16;

// Matrix i's checks: a format cpu-ref multiplies against this activation type, the shared input
// length, a dst of its row count, dst disjoint from every source and every other dst.
std::string check_matrix(const OpContext& ctx, const dense_op_call& c, uint32_t k, uint32_t i) {
    const std::string w_role = "src" + std::to_string(i) + " (weight)";
    const std::string d_role = "dst" + std::to_string(i);
    const dense_tensor_view& w = c.src[i];
    const dense_tensor_view& d = c.dst[i];
    const FormatKernels* wf = find_format(w.type);
    if (wf == nullptr || !wf->storable || !has_vec_dot(w.type, ctx.act->type))
        return w_role + ": " + type_label(w.type) + " has no GEMV against " + ctx.act->name + " in cpu-ref";
    std::string err = first_error(
        [&] { return check_contiguous(w, w_role.c_str(), *wf); },
        [&] { return check_shape(w, w_role.c_str(), {c.src[k].ne[0], w.ne[1], 1, 1}); },
        [&] { return check_contiguous(d, d_role.c_str(), format(DENSE_TYPE_F32)); },
        [&] { return check_shape(d, d_role.c_str(), {w.ne[1], 1, 1, 1}); });
    if (!err.empty()) return err;
    for (uint32_t j = 0; j <= k; ++j) {
        const std::string s_role = "src" + std::to_string(j);
        if (err = check_disjoint(d, d_role.c_str(), c.src[j], s_role.c_str()); !err.empty()) return err;
    }
    for (uint32_t j = 0; j < i; ++j) {
        const std::string o_role = "dst" + std::to_string(j);
        if (err = check_disjoint(d, d_role.c_str(), c.dst[j], o_role.c_str()); !err.empty()) return err;
    }
    return {};
}

}  // namespace

std::string handle_gemv_q_multi(const OpContext& ctx, const dense_op_call& c, Phase phase) {
    const uint32_t k = c.n_dst;
    if (k < kMinMatrices || k > kMaxMatrices)
        return "expected 2 to 16 matrices (destinations), got " + std::to_string(k);
    if (std::string err = check_counts(c, k + 1, k); !err.empty()) return err;
    if (c.params != nullptr) return "takes no params (it never accumulates)";
    const std::string a_role = "src" + std::to_string(k) + " (activation)";
    if (std::string err = first_error([&] { return check_contiguous(c.src[k], a_role.c_str(), *ctx.act); },
                                      [&] { return check_shape(c.src[k], a_role.c_str(), {c.src[k].ne[0], 1, 1, 1}); });
        !err.empty())
        return err;
    for (uint32_t i = 0; i < k; ++i)
        if (std::string err = check_matrix(ctx, c, k, i); !err.empty()) return err;
    if (phase == Phase::Check) return {};
    for (uint32_t i = 0; i < k; ++i)
        gemv_act(c.src[i].type, ctx.act->type, c.src[i].data, c.src[k].ne[0], c.src[i].ne[1], c.src[k].data,
                 static_cast<float*>(c.dst[i].data));
    return {};
}

}  // namespace dense::cpuref::pack
