// GDN_DECODE on the GPU against the cpu-ref oracle over several tokens chained through the state, at
// the Qwen3.5-27B shape (dk = dv = 128, 16 key heads, 48 value heads, q/k/v read out of the 10240-wide
// conv output) with the state updated in place and ping-ponged between two banks, and at odd shapes
// (strided q/k/v, dk > 128 which takes the streaming kernel). Realistic inputs: q and k L2-normalised,
// beta in (0, 1), decay in (0.3, 1), a random non-zero starting state.
//
// Tolerance: output o and state after every step, |got - want| <= 2e-6 * max|want| + 2e-6 * |want|
// per element. Why: per step the GPU rounds the state twice (decay * S, then the fused S + k delta)
// where cpu-ref rounds once from double, and u, o are 128-term fp32 dot products (<= 9 * 2^-24 *
// sum |terms|, ~1e-6 of max|o| in the worst case); the differences carried in the state are
// contracted by decay <= 1 and by the delta-rule projection (|k| = 1, beta < 1), so over the chain
// they stay within a few ulp of the state's magnitude. Measured on an H200: worst 2e-7 of max|o|
// (a 10x margin).
#include "cuda/gpu_ops_support.hpp"

#include "kernels/ops.hpp"

#include <gtest/gtest.h>

namespace dense::test::cuda {
namespace {

struct GdnCase {
    int64_t dk, dv, hk, hv;
    int64_t qk_stride, v_stride;  // row strides of q/k and v (0 = contiguous)
    bool in_place;
    int steps;
    std::string label;
};

std::vector<float> l2_rows(std::vector<float> x, int64_t n) {
    for (std::size_t r = 0; r < x.size() / static_cast<std::size_t>(n); ++r) {
        double ss = 0;
        for (int64_t i = 0; i < n; ++i) ss += static_cast<double>(x[r * n + i]) * x[r * n + i];
        for (int64_t i = 0; i < n; ++i) x[r * n + i] = static_cast<float>(x[r * n + i] / std::sqrt(ss + 1e-6));
    }
    return x;
}

void check_gdn(GpuSession& gpu, const GdnCase& k, uint64_t seed, bool conv_layout) {
    std::mt19937_64 rng(seed);
    const int64_t head = k.dk * k.dv;
    std::vector<float> state = uniform(static_cast<std::size_t>(head * k.hv), rng, -0.5f, 0.5f);
    DevMatrix bank[2] = {upload_matrix(gpu, &state, head, k.hv), upload_matrix(gpu, nullptr, head, k.hv)};
    auto p = make_params<dense_gdn_params>();
    p.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(k.dk)));
    for (int step = 0; step < k.steps; ++step) {
        const auto q = l2_rows(uniform(static_cast<std::size_t>(k.dk * k.hk), rng), k.dk);
        const auto kk = l2_rows(uniform(static_cast<std::size_t>(k.dk * k.hk), rng), k.dk);
        const auto v = uniform(static_cast<std::size_t>(k.dv * k.hv), rng, -2.0f, 2.0f);
        const auto beta = uniform(static_cast<std::size_t>(k.hv), rng, 0.05f, 0.95f);
        const auto decay = uniform(static_cast<std::size_t>(k.hv), rng, 0.3f, 1.0f);
        std::vector<float> want_o(static_cast<std::size_t>(k.dv * k.hv)), want_state(state.size());
        cpuref::GdnDecodeArgs a;
        a.q = q.data();
        a.q_stride = k.dk;
        a.k = kk.data();
        a.k_stride = k.dk;
        a.v = v.data();
        a.v_stride = k.dv;
        a.beta = beta.data();
        a.decay = decay.data();
        a.state_in = state.data();
        a.state_out = want_state.data();
        a.o = want_o.data();
        a.dk = k.dk;
        a.dv = k.dv;
        a.hk = k.hk;
        a.hv = k.hv;
        a.scale = p.scale;
        cpuref::gdn_decode(a);

        DevMatrix conv, dq, dk, dv;
        dense_tensor_view qv{}, kv{}, vv{};
        if (conv_layout) {  // one buffer [q | k | v] as the conv output, contiguous head rows
            std::vector<float> packed = q;
            packed.insert(packed.end(), kk.begin(), kk.end());
            packed.insert(packed.end(), v.begin(), v.end());
            conv = upload_matrix(gpu, &packed, static_cast<int64_t>(packed.size()), 1);
            qv = f32_view(conv.row_ptr(0), k.dk, k.hk, k.dk);
            kv = f32_view(conv.row_ptr(0) + k.dk * k.hk, k.dk, k.hk, k.dk);
            vv = f32_view(conv.row_ptr(0) + 2 * k.dk * k.hk, k.dv, k.hv, k.dv);
        } else {
            dq = upload_matrix(gpu, &q, k.dk, k.hk, k.qk_stride);
            dk = upload_matrix(gpu, &kk, k.dk, k.hk, k.qk_stride);
            dv = upload_matrix(gpu, &v, k.dv, k.hv, k.v_stride);
            qv = dq.view;
            kv = dk.view;
            vv = dv.view;
        }
        DevMatrix dbeta = upload_matrix(gpu, &beta, k.hv, 1), ddecay = upload_matrix(gpu, &decay, k.hv, 1);
        DevMatrix o = upload_matrix(gpu, nullptr, k.dv, k.hv);
        const int in = k.in_place ? 0 : step % 2, out = k.in_place ? 0 : 1 - in;
        const std::string label = k.label + (k.in_place ? " in place" : " ping-pong") + " step " + std::to_string(step);
        run_op(gpu, DENSE_OP_GDN_DECODE, {qv, kv, vv, dbeta.view, ddecay.view, bank[in].view}, {o.view, bank[out].view},
               &p, label);
        if (::testing::Test::HasFatalFailure()) return;
        const auto got_o = download_matrix(gpu, o);
        EXPECT_TRUE(near_rel(got_o, want_o, 2e-6, 2e-6 * max_abs(want_o), "gdn o " + label));
        // The oracle continues from its own state and the GPU from the bank it just wrote, so the
        // differences of the steps accumulate over the chain.
        const auto got_state = download_matrix(gpu, bank[out]);
        EXPECT_TRUE(near_rel(got_state, want_state, 2e-6, 2e-6 * max_abs(want_state), "gdn state " + label));
        state = want_state;
    }
}

TEST(CudaGdnDecode, Qwen27bShapeChainedStepsInPlaceAndPingPong) {
    DENSE_REQUIRE_GPU(gpu);
    check_gdn(gpu, {128, 128, 16, 48, 0, 0, true, 4, "27B {128x128, 16/48}"}, 2001, true);
    if (HasFatalFailure()) return;
    check_gdn(gpu, {128, 128, 16, 48, 0, 0, false, 4, "27B {128x128, 16/48}"}, 2002, true);
}

TEST(CudaGdnDecode, OddShapesStridedAndLargeKeyDim) {
    DENSE_REQUIRE_GPU(gpu);
    check_gdn(gpu, {5, 7, 3, 6, 9, 11, true, 3, "odd {5x7, 3/6} strided"}, 2003, false);
    if (HasFatalFailure()) return;
    check_gdn(gpu, {160, 3, 2, 4, 170, 0, false, 3, "{160x3, 2/4} (dk > 128: streaming kernel)"}, 2004, false);
    if (HasFatalFailure()) return;
    check_gdn(gpu, {1, 1, 1, 1, 0, 0, true, 2, "{1x1, 1/1}"}, 2005, false);
    if (HasFatalFailure()) return;
    check_gdn(gpu, {32, 200, 1, 2000, 0, 0, false, 2, "{32x200, 1/2000} (many columns)"}, 2006, false);
}

}  // namespace
}  // namespace dense::test::cuda
