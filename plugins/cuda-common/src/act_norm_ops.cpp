// RMS_NORM, L2_NORM, GATED_RMS_NORM: x {n, rows}. RMS_NORM and L2_NORM take strided rows and may run
// in place (dst exactly src0); GATED_RMS_NORM is contiguous and out of place, as the ABI says. The
// calls' contracts are pack-common's (norm_contracts.hpp), the same as cpu-ref's; a fused quantized
// copy is checked between the views and the params.
#include "act_handlers.hpp"

#include "act_quantized_copy.hpp"
#include "kernels/act_launchers.hpp"

#include <dense/pack_common/norm_contracts.hpp>

namespace dense::cuda::act {

std::string handle_rms_norm(Invocation& inv) {
    const dense_op_call& c = inv.call;
    const bool fused = inv.ctx.fused_act != DENSE_TYPE_NONE;
    pack_common::NormCall call;
    dense_norm_params p{};
    const int64_t& n = call.n;
    const int64_t& rows = call.rows;
    std::string err = first_error(
        [&] { return check_counts(c, 2, fused ? 2 : 1); }, [&] { return pack_common::check_rms_norm_views(c, call); },
        [&] { return fused ? check_quantized_copy(c, n, rows) : std::string(); },
        [&] { return pack_common::check_norm_params(c, p); });
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
    pack_common::NormCall call;
    dense_norm_params p{};
    const int64_t& n = call.n;
    const int64_t& rows = call.rows;
    const int64_t& tokens = call.tokens;
    std::string err = first_error([&] { return check_counts(c, 1, 1); },
                                  [&] { return pack_common::check_l2_norm_views(c, call); },
                                  [&] { return pack_common::check_norm_params(c, p); });
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
    pack_common::NormCall call;
    dense_norm_params p{};
    const int64_t& n = call.n;
    const int64_t& rows = call.rows;
    std::string err = first_error(
        [&] { return check_counts(c, 3, fused ? 2 : 1); },
        [&] { return pack_common::check_gated_rms_norm_views(c, call); },
        [&] { return fused ? check_quantized_copy(c, n, rows) : std::string(); },
        [&] { return pack_common::check_norm_params(c, p); });
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
