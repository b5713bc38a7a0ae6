// cpu-ref's GDN_STEP (ABI 1.11) through the pack's C ABI is, bit for bit, cpu-ref's CONV1D_CAUSAL, L2_NORM of
// the q and k heads (in place), GDN_GATES and GDN_DECODE run one after the other on the same inputs: what
// dense_abi.h promises. This checks the call's split into the four (pack-common's check_gdn_step: the q,
// k and v parts of y, the gates' outputs as the delta rule's inputs) at the 27B shape and at odd ones.
#include "cpu-ref/ops_pack_support.hpp"

#include "kernels/ops.hpp"

#include <cmath>
#include <cstring>
#include <random>

namespace {

using namespace dense;
using namespace dense::test;

struct Shape {
    int64_t dk, dv, hk, hv, kernel;
    int64_t channels() const { return 2 * hk * dk + hv * dv; }
};

std::vector<float> uniform(std::size_t n, std::mt19937_64& rng, float lo, float hi) {
    std::uniform_real_distribution<float> u(lo, hi);
    std::vector<float> v(n);
    for (auto& x : v) x = u(rng);
    return v;
}

class CpuRefGdnStep : public PackHarness {
protected:
    void check(const Shape& s, uint64_t seed) {
        std::mt19937_64 rng(seed);
        const int64_t c = s.channels(), key_dim = s.hk * s.dk, state = s.dk * s.dv * s.hv;
        auto x = uniform(static_cast<std::size_t>(c), rng, -2, 2);
        auto taps = uniform(static_cast<std::size_t>(c * s.kernel), rng, -0.6f, 0.6f);
        auto conv_in = uniform(static_cast<std::size_t>(c * (s.kernel - 1)), rng, -2, 2);
        auto b = uniform(static_cast<std::size_t>(s.hv), rng, -3, 3), a = uniform(static_cast<std::size_t>(s.hv), rng, -3, 3);
        auto dt = uniform(static_cast<std::size_t>(s.hv), rng, -1, 1), A = uniform(static_cast<std::size_t>(s.hv), rng, -2, -0.05f);
        auto delta_in = uniform(static_cast<std::size_t>(state), rng, -0.5f, 0.5f);
        std::vector<float> y(static_cast<std::size_t>(c), -7.0f), conv_out(conv_in.size(), -7.0f);
        std::vector<float> beta(static_cast<std::size_t>(s.hv), -7.0f), decay(beta), o(static_cast<std::size_t>(s.dv * s.hv), -7.0f);
        std::vector<float> delta_out(delta_in.size(), -7.0f);

        const dense_op_impl* impl = host_.find(DENSE_OP_GDN_STEP, DENSE_TYPE_NONE, DENSE_TYPE_NONE);
        ASSERT_NE(impl, nullptr);
        const auto p = gdn_step_params(static_cast<float>(1.0 / std::sqrt(static_cast<double>(s.dk))), 1e-6f);
        const dense_tensor_view src[] = {f32(x.data(), c),        f32(taps.data(), s.kernel, c),
                                         f32(conv_in.data(), s.kernel - 1, c), f32(b.data(), s.hv),
                                         f32(a.data(), s.hv),     f32(dt.data(), s.hv),
                                         f32(A.data(), s.hv),     f32(delta_in.data(), s.dk * s.dv, s.hv)};
        const dense_tensor_view dst[] = {f32(y.data(), c),           f32(conv_out.data(), s.kernel - 1, c),
                                         f32(beta.data(), s.hv),     f32(decay.data(), s.hv),
                                         f32(o.data(), s.dv, s.hv),  f32(delta_out.data(), s.dk * s.dv, s.hv)};
        auto call = dense::sdk::make_struct<dense_op_call>();
        call.op_kind = DENSE_OP_GDN_STEP;
        call.n_src = 8;
        call.src = src;
        call.n_dst = 6;
        call.dst = dst;
        call.params = &p;
        ASSERT_EQ(impl->supports(impl->user, &call), 1u);
        ASSERT_EQ(run(impl, call), DENSE_OK) << (host_.logs.empty() ? "" : host_.logs.back().second);

        // The four ops on their own, as the token step ran them before GDN_STEP.
        std::vector<float> wy(y.size()), wconv(conv_out.size()), wbeta(beta.size()), wdecay(decay.size());
        std::vector<float> wo(o.size()), wdelta(delta_out.size());
        cpuref::conv1d_causal(x.data(), taps.data(), conv_in.data(), wy.data(), wconv.data(), c, s.kernel, true);
        cpuref::l2_norm(wy.data(), s.dk, wy.data(), s.dk, s.dk, 2 * s.hk, p.l2_eps);
        cpuref::gdn_gates(b.data(), a.data(), dt.data(), A.data(), wbeta.data(), wdecay.data(), s.hv);
        cpuref::GdnDecodeArgs g;
        g.q = wy.data();
        g.q_stride = s.dk;
        g.k = wy.data() + key_dim;
        g.k_stride = s.dk;
        g.v = wy.data() + 2 * key_dim;
        g.v_stride = s.dv;
        g.beta = wbeta.data();
        g.decay = wdecay.data();
        g.state_in = delta_in.data();
        g.state_out = wdelta.data();
        g.o = wo.data();
        g.dk = s.dk;
        g.dv = s.dv;
        g.hk = s.hk;
        g.hv = s.hv;
        g.scale = p.scale;
        cpuref::gdn_decode(g);
        const auto same = [](const std::vector<float>& u, const std::vector<float>& v) {
            return u.size() == v.size() && std::memcmp(u.data(), v.data(), u.size() * sizeof(float)) == 0;
        };
        EXPECT_TRUE(same(y, wy)) << "y";
        EXPECT_TRUE(same(conv_out, wconv)) << "conv state";
        EXPECT_TRUE(same(beta, wbeta)) << "beta";
        EXPECT_TRUE(same(decay, wdecay)) << "decay";
        EXPECT_TRUE(same(o, wo)) << "o";
        EXPECT_TRUE(same(delta_out, wdelta)) << "delta state";
        EXPECT_TRUE(host_.logs.empty());
    }
};

TEST_F(CpuRefGdnStep, Qwen27bShapeIsItsFourOps) { check({128, 128, 16, 48, 4}, 4001); }

TEST_F(CpuRefGdnStep, OddShapesAreTheirFourOps) {
    check({4, 3, 2, 6, 3}, 4002);
    check({1, 1, 1, 1, 2}, 4003);
    check({160, 5, 3, 3, 5}, 4004);
}

}  // namespace
