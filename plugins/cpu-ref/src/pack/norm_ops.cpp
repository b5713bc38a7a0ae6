// RMS_NORM, L2_NORM, GATED_RMS_NORM: x {n, rows}; RMS_NORM and L2_NORM take strided rows and may run
// in place (dst exactly src0); GATED_RMS_NORM is contiguous and out of place, as the ABI says. The
// calls' contracts are pack-common's (norm_contracts.hpp), the same as the CUDA packs'.
#include "pack/op_handlers.hpp"

#include "kernels/ops.hpp"

#include <dense/pack_common/norm_contracts.hpp>

namespace dense::cpuref::pack {

std::string handle_rms_norm(const OpContext&, const dense_op_call& c, Phase phase) {
    pack_common::NormCall call;
    dense_norm_params p{};
    std::string err = first_error([&] { return check_counts(c, 2, 1); },
                                  [&] { return pack_common::check_rms_norm_views(c, call); },
                                  [&] { return pack_common::check_norm_params(c, p); });
    if (!err.empty() || phase == Phase::Check) return err;
    rms_norm(f32_in(c.src[0]), row_stride_elements(c.src[0]), f32_in(c.src[1]), f32_out(c.dst[0]),
             row_stride_elements(c.dst[0]), call.n, call.rows, p.eps);
    return {};
}

std::string handle_l2_norm(const OpContext&, const dense_op_call& c, Phase phase) {
    pack_common::NormCall call;
    dense_norm_params p{};
    std::string err = first_error([&] { return check_counts(c, 1, 1); },
                                  [&] { return pack_common::check_l2_norm_views(c, call); },
                                  [&] { return pack_common::check_norm_params(c, p); });
    if (!err.empty() || phase == Phase::Check) return err;
    for (int64_t t = 0; t < call.tokens; ++t)
        l2_norm(f32_in(c.src[0]) + t * token_stride_elements(c.src[0]), row_stride_elements(c.src[0]),
                f32_out(c.dst[0]) + t * token_stride_elements(c.dst[0]), row_stride_elements(c.dst[0]), call.n,
                call.rows, p.eps);
    return {};
}

std::string handle_gated_rms_norm(const OpContext&, const dense_op_call& c, Phase phase) {
    pack_common::NormCall call;
    dense_norm_params p{};
    std::string err = first_error([&] { return check_counts(c, 3, 1); },
                                  [&] { return pack_common::check_gated_rms_norm_views(c, call); },
                                  [&] { return pack_common::check_norm_params(c, p); });
    if (!err.empty() || phase == Phase::Check) return err;
    const int64_t n = call.n;
    gated_rms_norm(f32_in(c.src[0]), n, f32_in(c.src[1]), n, f32_in(c.src[2]), f32_out(c.dst[0]), n, n, call.rows,
                   p.eps);
    return {};
}

}  // namespace dense::cpuref::pack
