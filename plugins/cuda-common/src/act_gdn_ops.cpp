// CONV1D_CAUSAL, GDN_GATES and GDN_DECODE: the Gated DeltaNet block's ops (the calls' contracts are
// pack-common's gdn_contracts.hpp, the same as cpu-ref's), and GDN_STEP (ABI 1.11), the four of one
// token step in one kernel (ops_gdn_step.cu) where its shapes fit, else as the four launches. The
// recurrent states may be updated in place (dst1 exactly src2 / src5) or ping-ponged between two
// buffers. Each of the three takes the T tokens of a batched prefill step on its token axis
// (dense_abi.h, ABI 1.10) in one launch that leaves the bits of T one-token launches: the delta rule's
// kernel walks the tokens in order, the conv's runs the tokens whose windows lie inside the step's input
// in parallel (ops_conv.cu, ops_gdn.cu say why).
#include "act_handlers.hpp"

#include "kernels/act_launchers.hpp"
#include "kernels/env_switch.hpp"

#include <dense/pack_common/gdn_contracts.hpp>

namespace dense::cuda::act {

std::string handle_conv1d_causal(Invocation& inv) {
    const dense_op_call& c = inv.call;
    pack_common::Conv1dCall call;
    const std::string err =
        first_error([&] { return check_counts(c, 3, 2); }, [&] { return pack_common::check_conv1d_causal(c, call); });
    if (!err.empty() || inv.phase != Phase::Run) return err;
    const int64_t channels = call.channels, kernel = call.kernel, tokens = call.tokens;
    ConvArgs a;
    a.x = f32_in(c.src[0]);
    a.taps = f32_in(c.src[1]);
    a.state_in = f32_in(c.src[2]);
    a.y = f32_out(c.dst[0]);
    a.state_out = f32_out(c.dst[1]);
    a.channels = channels;
    a.kernel = kernel;
    a.tokens = tokens;
    a.x_stride = row_stride_elements(c.src[0]);
    a.y_stride = row_stride_elements(c.dst[0]);
    a.silu = call.params.apply_silu != 0;
    launch(inv, "conv1d_causal launch", [&](cudaStream_t s) { return launch_conv1d_causal(a, s); });
    return {};
}

std::string handle_gdn_gates(Invocation& inv) {
    const dense_op_call& c = inv.call;
    pack_common::GdnGatesCall call;
    const std::string err =
        first_error([&] { return check_counts(c, 4, 2); }, [&] { return pack_common::check_gdn_gates(c, call); });
    if (!err.empty() || inv.phase != Phase::Run) return err;
    const int64_t heads = call.heads, tokens = call.tokens;
    GdnGatesArgs a;
    a.b = f32_in(c.src[0]);
    a.a = f32_in(c.src[1]);
    a.dt_bias = f32_in(c.src[2]);
    a.A = f32_in(c.src[3]);
    a.beta = f32_out(c.dst[0]);
    a.decay = f32_out(c.dst[1]);
    a.heads = heads;
    a.tokens = tokens;
    launch(inv, "gdn_gates launch", [&](cudaStream_t s) { return launch_gdn_gates(a, s); });
    return {};
}

std::string handle_gdn_decode(Invocation& inv) {
    const dense_op_call& c = inv.call;
    pack_common::GdnDecodeCall call;
    const std::string err =
        first_error([&] { return check_counts(c, 6, 2); }, [&] { return pack_common::check_gdn_decode(c, call); });
    if (!err.empty() || inv.phase != Phase::Run) return err;
    const int64_t dk = call.dk, hk = call.hk, dv = call.dv, hv = call.hv, tokens = call.tokens;
    GdnArgs a;
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
    a.tokens = tokens;
    a.q_tstride = token_stride_elements(c.src[0]);
    a.k_tstride = token_stride_elements(c.src[1]);
    a.v_tstride = token_stride_elements(c.src[2]);
    a.o_tstride = token_stride_elements(c.dst[0]);
    launch(inv, "gdn_decode launch", [&](cudaStream_t s) { return launch_gdn_decode(a, s); });
    return {};
}

std::string handle_gdn_step(Invocation& inv) {
    const dense_op_call& c = inv.call;
    pack_common::GdnStepCall call;
    const std::string err =
        first_error([&] { return check_counts(c, 8, 6); }, [&] { return pack_common::check_gdn_step(c, call); });
    if (!err.empty() || inv.phase != Phase::Run) return err;
    GdnStepArgs a;
    a.x = f32_in(c.src[0]);
    a.taps = f32_in(c.src[1]);
    a.conv_in = f32_in(c.src[2]);
    a.b = f32_in(c.src[3]);
    a.a = f32_in(c.src[4]);
    a.dt_bias = f32_in(c.src[5]);
    a.A = f32_in(c.src[6]);
    a.state_in = f32_in(c.src[7]);
    a.y = f32_out(c.dst[0]);
    a.conv_out = f32_out(c.dst[1]);
    a.beta = f32_out(c.dst[2]);
    a.decay = f32_out(c.dst[3]);
    a.o = f32_out(c.dst[4]);
    a.state_out = f32_out(c.dst[5]);
    a.kernel = call.kernel;
    a.dk = call.dk;
    a.hk = call.hk;
    a.dv = call.dv;
    a.hv = call.hv;
    a.scale = call.params.scale;
    a.eps = call.params.l2_eps;
    a.silu = call.params.apply_silu != 0;
    if (gdn_step_fits(a) && env_switch_on("DENSE_CUDA_GDN_STEP")) {
        launch(inv, "gdn_step launch", [&](cudaStream_t s) { return launch_gdn_step(a, s); });
        return {};
    }
    // Shapes the one kernel does not take, and DENSE_CUDA_GDN_STEP=0 (the A/B switch): the four calls it
    // stands for, which are its contract.
    return run_parts(inv, {&call.conv, &call.l2, &call.gates, &call.decode});
}

}  // namespace dense::cuda::act
