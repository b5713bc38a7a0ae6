// CONV1D_CAUSAL, GDN_GATES and GDN_DECODE: the Gated DeltaNet block's ops; GDN_STEP (ABI 1.11) runs
// the four calls it stands for (pack-common's check_gdn_step builds them) with these handlers, so it is
// those calls' result by construction. The recurrent states may be updated in place (dst1 exactly
// src2 / src5) or ping-ponged between two buffers. Each of the three takes the T tokens of a batched
// prefill step on its token axis (dense_abi.h, ABI 1.10) and runs them as T calls
// of one token in order: token 0 reads state_in, every later one the state_out its predecessor wrote
// (the kernels allow state_out to be state_in), so the result is the token-by-token result, bit for bit.
// The calls' contracts are pack-common's (gdn_contracts.hpp), the same as the CUDA packs'.
#include "pack/op_handlers.hpp"

#include "kernels/ops.hpp"

#include <dense/pack_common/gdn_contracts.hpp>

namespace dense::cpuref::pack {

std::string handle_conv1d_causal(const OpContext&, const dense_op_call& c, Phase phase) {
    pack_common::Conv1dCall call;
    const std::string err =
        first_error([&] { return check_counts(c, 3, 2); }, [&] { return pack_common::check_conv1d_causal(c, call); });
    if (!err.empty() || phase == Phase::Check) return err;
    const int64_t channels = call.channels, kernel = call.kernel, tokens = call.tokens;
    const int64_t xs = row_stride_elements(c.src[0]), ys = row_stride_elements(c.dst[0]);
    for (int64_t t = 0; t < tokens; ++t)
        conv1d_causal(f32_in(c.src[0]) + t * xs, f32_in(c.src[1]), t == 0 ? f32_in(c.src[2]) : f32_out(c.dst[1]),
                      f32_out(c.dst[0]) + t * ys, f32_out(c.dst[1]), channels, kernel, call.params.apply_silu != 0);
    return {};
}

std::string handle_gdn_gates(const OpContext&, const dense_op_call& c, Phase phase) {
    pack_common::GdnGatesCall call;
    const std::string err =
        first_error([&] { return check_counts(c, 4, 2); }, [&] { return pack_common::check_gdn_gates(c, call); });
    if (!err.empty() || phase == Phase::Check) return err;
    const int64_t heads = call.heads, tokens = call.tokens;
    for (int64_t t = 0; t < tokens; ++t)
        gdn_gates(f32_in(c.src[0]) + t * heads, f32_in(c.src[1]) + t * heads, f32_in(c.src[2]), f32_in(c.src[3]),
                  f32_out(c.dst[0]) + t * heads, f32_out(c.dst[1]) + t * heads, heads);
    return {};
}

std::string handle_gdn_decode(const OpContext&, const dense_op_call& c, Phase phase) {
    pack_common::GdnDecodeCall call;
    const std::string err =
        first_error([&] { return check_counts(c, 6, 2); }, [&] { return pack_common::check_gdn_decode(c, call); });
    if (!err.empty() || phase == Phase::Check) return err;
    const int64_t dk = call.dk, hk = call.hk, dv = call.dv, hv = call.hv, tokens = call.tokens;
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
    a.scale = call.params.scale;
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

std::string handle_gdn_step(const OpContext& ctx, const dense_op_call& c, Phase phase) {
    pack_common::GdnStepCall call;
    const std::string err =
        first_error([&] { return check_counts(c, 8, 6); }, [&] { return pack_common::check_gdn_step(c, call); });
    if (!err.empty() || phase == Phase::Check) return err;
    return run_parts(ctx, {&call.conv, &call.l2, &call.gates, &call.decode});
}

}  // namespace dense::cpuref::pack
