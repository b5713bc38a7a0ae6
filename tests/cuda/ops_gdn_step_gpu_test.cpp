// GDN_STEP (ABI 1.11) on the GPU: one kernel for a Gated DeltaNet layer's CONV1D_CAUSAL, L2_NORM of the
// q and k heads, GDN_GATES and GDN_DECODE (ops_gdn_step.cu).
//
// 1. Byte for byte the four ops: the contract (dense_abi.h) is that GDN_STEP leaves exactly what the
//    four calls of the same pack leave, so every output — y (the conv output with q and k normalised),
//    the conv state, beta, decay, o and the delta state — is compared bit for bit with the four CUDA
//    launches on the same inputs, over several chained steps, at the 27B shape (dk = dv = 128, 16 key
//    heads, 48 value heads, 4 taps: 10240 channels), at an odd shape the kernel takes, and at shapes it
//    does not take (dk > 128, dv not a multiple of 8), which must fall back to the four launches.
//    Outputs start as poison, and download_matrix fails on any write outside a view.
// 2. Against cpu-ref (the four ops' oracle in double) on the same fresh random inputs. Tolerances:
//    y <= 4e-6 relative + 4e-6 of max|y| (the conv's K-term fp32 FMA chain, <= K 2^-24 of sum|terms|,
//    then SiLU's few ulp and the L2 norm's 2e-6, ops_norm.cu); o and the delta state <= 1e-5 relative +
//    1e-5 of their max (ops_gdn_gpu_test's 2e-6 per step, plus q and k that now differ from the oracle's
//    by the conv and norm's few ulp instead of being the same floats: each 128-term dot product
//    carries those ~4e-6 relative input errors); beta and decay as ops_elementwise_gpu_test.cpp bounds
//    GDN_GATES (2e-6 relative; decay 1e-6 (1 + |log decay| + |A (a + dt)|) relative).
#include "common/scoped_env.hpp"
#include "cuda/gpu_ops_support.hpp"

#include "kernels/ops.hpp"

#include <gtest/gtest.h>


namespace dense::test::cuda {
namespace {

struct StepShape {
    int64_t dk, dv, hk, hv, kernel;
    int steps;
    std::string label;
    int64_t channels() const { return 2 * hk * dk + hv * dv; }
};

struct Inputs {
    std::vector<float> x, taps, conv_state, b, a, dt_bias, A, delta_state;
};

Inputs random_inputs(const StepShape& s, std::mt19937_64& rng) {
    Inputs in;
    const auto c = static_cast<std::size_t>(s.channels());
    in.x = uniform(c, rng, -2.0f, 2.0f);
    in.taps = uniform(c * static_cast<std::size_t>(s.kernel), rng, -0.6f, 0.6f);
    in.conv_state = uniform(c * static_cast<std::size_t>(s.kernel - 1), rng, -2.0f, 2.0f);
    in.b = uniform(static_cast<std::size_t>(s.hv), rng, -3.0f, 3.0f);
    in.a = uniform(static_cast<std::size_t>(s.hv), rng, -3.0f, 3.0f);
    in.dt_bias = uniform(static_cast<std::size_t>(s.hv), rng, -1.0f, 1.0f);
    in.A = uniform(static_cast<std::size_t>(s.hv), rng, -2.0f, -0.05f);
    in.delta_state = uniform(static_cast<std::size_t>(s.dk * s.dv * s.hv), rng, -0.5f, 0.5f);
    return in;
}

// The six outputs of one step, downloaded.
struct Outputs {
    std::vector<float> y, conv_state, beta, decay, o, delta_state;
};

// Device buffers for one way of running the step: inputs uploaded, outputs poisoned.
struct StepBuffers {
    DevMatrix x, taps, conv_in, b, a, dt_bias, A, delta_in;
    DevMatrix y, conv_out, beta, decay, o, delta_out;

    StepBuffers(GpuSession& gpu, const StepShape& s, const Inputs& in) {
        const int64_t c = s.channels();
        x = upload_matrix(gpu, &in.x, c, 1);
        taps = upload_matrix(gpu, &in.taps, s.kernel, c);
        conv_in = upload_matrix(gpu, &in.conv_state, s.kernel - 1, c);
        b = upload_matrix(gpu, &in.b, s.hv, 1);
        a = upload_matrix(gpu, &in.a, s.hv, 1);
        dt_bias = upload_matrix(gpu, &in.dt_bias, s.hv, 1);
        A = upload_matrix(gpu, &in.A, s.hv, 1);
        delta_in = upload_matrix(gpu, &in.delta_state, s.dk * s.dv, s.hv);
        y = upload_matrix(gpu, nullptr, c, 1);
        conv_out = upload_matrix(gpu, nullptr, s.kernel - 1, c);
        beta = upload_matrix(gpu, nullptr, s.hv, 1);
        decay = upload_matrix(gpu, nullptr, s.hv, 1);
        o = upload_matrix(gpu, nullptr, s.dv, s.hv);
        delta_out = upload_matrix(gpu, nullptr, s.dk * s.dv, s.hv);
    }

    Outputs download(GpuSession& gpu) const {
        return {download_matrix(gpu, y),    download_matrix(gpu, conv_out), download_matrix(gpu, beta),
                download_matrix(gpu, decay), download_matrix(gpu, o),       download_matrix(gpu, delta_out)};
    }
};

dense_gdn_step_params step_params(const StepShape& s) {
    auto p = make_params<dense_gdn_step_params>();
    p.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(s.dk)));
    p.l2_eps = 1e-6f;
    p.apply_silu = 1;
    return p;
}

void run_fused(GpuSession& gpu, const StepShape& s, StepBuffers& d, const std::string& label) {
    const auto p = step_params(s);
    run_op(gpu, DENSE_OP_GDN_STEP,
           {d.x.view, d.taps.view, d.conv_in.view, d.b.view, d.a.view, d.dt_bias.view, d.A.view, d.delta_in.view},
           {d.y.view, d.conv_out.view, d.beta.view, d.decay.view, d.o.view, d.delta_out.view}, &p, label);
}

// The four ops GDN_STEP stands for, as the token step's graph ran them before (step_lowering.cpp).
void run_four(GpuSession& gpu, const StepShape& s, StepBuffers& d, const std::string& label) {
    const auto p = step_params(s);
    const int64_t key_dim = s.hk * s.dk;
    auto conv = make_params<dense_conv_params>();
    conv.apply_silu = p.apply_silu;
    run_op(gpu, DENSE_OP_CONV1D_CAUSAL, {d.x.view, d.taps.view, d.conv_in.view}, {d.y.view, d.conv_out.view}, &conv,
           label + " conv");
    if (::testing::Test::HasFatalFailure()) return;
    auto norm = make_params<dense_norm_params>();
    norm.eps = p.l2_eps;
    const dense_tensor_view qk = f32_view(d.y.row_ptr(0), s.dk, 2 * s.hk, s.dk);
    run_op(gpu, DENSE_OP_L2_NORM, {qk}, {qk}, &norm, label + " l2");
    if (::testing::Test::HasFatalFailure()) return;
    run_op(gpu, DENSE_OP_GDN_GATES, {d.b.view, d.a.view, d.dt_bias.view, d.A.view}, {d.beta.view, d.decay.view},
           nullptr, label + " gates");
    if (::testing::Test::HasFatalFailure()) return;
    auto gdn = make_params<dense_gdn_params>();
    gdn.scale = p.scale;
    run_op(gpu, DENSE_OP_GDN_DECODE,
           {f32_view(d.y.row_ptr(0), s.dk, s.hk, s.dk), f32_view(d.y.row_ptr(0) + key_dim, s.dk, s.hk, s.dk),
            f32_view(d.y.row_ptr(0) + 2 * key_dim, s.dv, s.hv, s.dv), d.beta.view, d.decay.view, d.delta_in.view},
           {d.o.view, d.delta_out.view}, &gdn, label + " decode");
}

// cpu-ref's four ops in double (the oracle of each).
Outputs oracle(const StepShape& s, const Inputs& in) {
    const int64_t c = s.channels(), key_dim = s.hk * s.dk;
    const auto p = step_params(s);
    Outputs out;
    out.y.resize(static_cast<std::size_t>(c));
    out.conv_state.resize(in.conv_state.size());
    cpuref::conv1d_causal(in.x.data(), in.taps.data(), in.conv_state.data(), out.y.data(), out.conv_state.data(), c,
                          s.kernel, true);
    cpuref::l2_norm(out.y.data(), s.dk, out.y.data(), s.dk, s.dk, 2 * s.hk, p.l2_eps);
    out.beta.resize(static_cast<std::size_t>(s.hv));
    out.decay.resize(static_cast<std::size_t>(s.hv));
    cpuref::gdn_gates(in.b.data(), in.a.data(), in.dt_bias.data(), in.A.data(), out.beta.data(), out.decay.data(),
                      s.hv);
    out.o.resize(static_cast<std::size_t>(s.dv * s.hv));
    out.delta_state.resize(in.delta_state.size());
    cpuref::GdnDecodeArgs a;
    a.q = out.y.data();
    a.q_stride = s.dk;
    a.k = out.y.data() + key_dim;
    a.k_stride = s.dk;
    a.v = out.y.data() + 2 * key_dim;
    a.v_stride = s.dv;
    a.beta = out.beta.data();
    a.decay = out.decay.data();
    a.state_in = in.delta_state.data();
    a.state_out = out.delta_state.data();
    a.o = out.o.data();
    a.dk = s.dk;
    a.dv = s.dv;
    a.hk = s.hk;
    a.hv = s.hv;
    a.scale = p.scale;
    cpuref::gdn_decode(a);
    return out;
}

void expect_same_bits(const Outputs& fused, const Outputs& four, const std::string& label) {
    EXPECT_TRUE(same_bits(fused.y, four.y)) << label << ": y";
    EXPECT_TRUE(same_bits(fused.conv_state, four.conv_state)) << label << ": conv state";
    EXPECT_TRUE(same_bits(fused.beta, four.beta)) << label << ": beta";
    EXPECT_TRUE(same_bits(fused.decay, four.decay)) << label << ": decay";
    EXPECT_TRUE(same_bits(fused.o, four.o)) << label << ": o";
    EXPECT_TRUE(same_bits(fused.delta_state, four.delta_state)) << label << ": delta state";
}

void expect_near_oracle(const Outputs& got, const Outputs& want, const Inputs& in, const std::string& label) {
    EXPECT_TRUE(near_rel(got.y, want.y, 4e-6, 4e-6 * max_abs(want.y), label + " y"));
    EXPECT_TRUE(std::equal(got.conv_state.begin(), got.conv_state.end(), want.conv_state.begin()))
        << label << ": the conv state is a copy of the window and must be exact";
    EXPECT_TRUE(near_rel(got.beta, want.beta, 2e-6, 0, label + " beta"));
    EXPECT_TRUE(within(
        got.decay, want.decay,
        [&](std::size_t h) {
            const double x = static_cast<double>(in.a[h]) + in.dt_bias[h];
            const double y = std::log(static_cast<double>(want.decay[h]));
            return 1e-6 * (1.0 + std::fabs(y) + std::fabs(static_cast<double>(in.A[h]) * x)) * want.decay[h];
        },
        label + " decay"));
    EXPECT_TRUE(near_rel(got.o, want.o, 1e-5, 1e-5 * max_abs(want.o), label + " o"));
    EXPECT_TRUE(near_rel(got.delta_state, want.delta_state, 1e-5, 1e-5 * max_abs(want.delta_state),
                         label + " delta state"));
}

// `steps` chained steps: each feeds the next its conv and delta states and takes fresh x, b and a.
void check_step(GpuSession& gpu, const StepShape& s, uint64_t seed) {
    std::mt19937_64 rng(seed);
    Inputs in = random_inputs(s, rng);
    for (int step = 0; step < s.steps; ++step) {
        const std::string label = s.label + " step " + std::to_string(step);
        StepBuffers fused(gpu, s, in), four(gpu, s, in);
        run_fused(gpu, s, fused, label + " GDN_STEP");
        if (::testing::Test::HasFatalFailure()) return;
        run_four(gpu, s, four, label);
        if (::testing::Test::HasFatalFailure()) return;
        const Outputs got = fused.download(gpu), want_bits = four.download(gpu);
        expect_same_bits(got, want_bits, label);
        expect_near_oracle(got, oracle(s, in), in, label);
        Inputs next = random_inputs(s, rng);
        next.taps = in.taps;
        next.dt_bias = in.dt_bias;
        next.A = in.A;
        next.conv_state = got.conv_state;
        next.delta_state = got.delta_state;
        in = std::move(next);
    }
}

TEST(CudaGdnStep, Qwen27bShapeIsTheFourOpsBitForBit) {
    DENSE_REQUIRE_GPU(gpu);
    const ScopedEnv kernel_default("DENSE_CUDA_GDN_STEP", nullptr);  // unset: the one kernel
    check_step(gpu, {128, 128, 16, 48, 4, 3, "27B {dk 128, dv 128, 16/48, K 4}"}, 3001);
}

TEST(CudaGdnStep, OddShapeTheKernelTakesIsTheFourOpsBitForBit) {
    DENSE_REQUIRE_GPU(gpu);
    const ScopedEnv kernel_default("DENSE_CUDA_GDN_STEP", nullptr);  // unset: the one kernel
    check_step(gpu, {5, 8, 3, 6, 3, 2, "odd {dk 5, dv 8, 3/6, K 3}"}, 3002);
    if (HasFatalFailure()) return;
    check_step(gpu, {100, 16, 1, 5, 2, 2, "{dk 100, dv 16, 1/5, K 2}"}, 3003);
}

TEST(CudaGdnStep, ShapesTheKernelDoesNotTakeRunTheFourLaunches) {
    DENSE_REQUIRE_GPU(gpu);
    const ScopedEnv kernel_default("DENSE_CUDA_GDN_STEP", nullptr);  // unset: the one kernel
    check_step(gpu, {160, 8, 2, 4, 4, 2, "{dk 160 > 128}"}, 3004);
    if (HasFatalFailure()) return;
    check_step(gpu, {16, 12, 2, 4, 4, 2, "{dv 12, not a multiple of 8}"}, 3005);
}

TEST(CudaGdnStep, SwitchedOffRunsTheFourLaunches) {
    DENSE_REQUIRE_GPU(gpu);
    const ScopedEnv kernel_off("DENSE_CUDA_GDN_STEP", "0");
    check_step(gpu, {128, 128, 16, 48, 4, 1, "27B, DENSE_CUDA_GDN_STEP=0"}, 3006);
}

}  // namespace
}  // namespace dense::test::cuda
