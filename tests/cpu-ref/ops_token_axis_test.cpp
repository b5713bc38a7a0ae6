// The token axis of cpu-ref's Gated DeltaNet ops (dense_abi.h, ABI 1.10): one call over the T tokens
// of a batched prefill step must leave exactly what T calls of one token each leave, in token order
// (outputs and recurrent state, bit for bit), with the views laid out as the graph builder lays them
// (q|k|v heads inside T columns of the conv output, the state ping-ponged from bank A to bank B). And
// a token axis that does not line up (overlapping tokens, T differing between views) is refused.
#include "cpu-ref/op_reference.hpp"
#include "cpu-ref/ops_pack_support.hpp"

#include <cmath>
#include <cstring>
#include <random>

namespace {

using namespace dense;
using namespace dense::test;
using namespace dense::test::opref;

constexpr int64_t kDk = 128, kDv = 128, kHk = 16, kHv = 48, kConvC = 10240, kConvK = 4;
constexpr int64_t kTokens = 5;
constexpr float kEps = 1e-6f;

// F32 {ne0, ne1, T} with token t at t * token_stride elements.
dense_tensor_view f32_tokens(float* data, int64_t ne0, int64_t ne1, int64_t token_stride, int64_t tokens = kTokens) {
    dense_tensor_view v = f32(data, ne0, ne1);
    v.ne[2] = tokens;
    v.nb[2] = v.nb[3] = token_stride * 4;
    return v;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

class CpuRefTokenAxis : public CpuRefActivationOps {
protected:

    // supports() says no, and a run anyway is refused with one log line containing `needle`.
    void refused(dense_op_kind kind, const std::vector<dense_tensor_view>& src,
                 const std::vector<dense_tensor_view>& dst, const void* params, const std::string& needle) {
        const dense_op_impl* p = impl(kind);
        ASSERT_NE(p, nullptr);
        const auto call = make_call(kind, src, dst, params);
        EXPECT_EQ(p->supports(p->user, &call), 0u);
        const std::size_t logs = host_.logs.size();
        EXPECT_EQ(run(p, call), DENSE_E_INVALID_ARGUMENT);
        ASSERT_EQ(host_.logs.size(), logs + 1);
        EXPECT_NE(host_.logs.back().second.find(needle), std::string::npos) << host_.logs.back().second;
    }
};

TEST_F(CpuRefTokenAxis, ConvOverTokensIsTheTokenByTokenChain) {
    std::mt19937_64 rng(301);
    const auto conv = conv_params(true);
    auto taps = uniform(kConvK * kConvC, rng, -1.0f, 1.0f);
    const auto bank_a = uniform((kConvK - 1) * kConvC, rng, -2.0f, 2.0f);
    auto x = uniform(kConvC * kTokens, rng, -3.0f, 3.0f);
    // Token by token: token 0 from bank A into B, later tokens B in place (as the graph does).
    auto a1 = bank_a;
    std::vector<float> b1(bank_a.size()), y1(x.size());
    for (int64_t t = 0; t < kTokens; ++t)
        ok(DENSE_OP_CONV1D_CAUSAL,
           {f32(x.data() + t * kConvC, kConvC), f32(taps.data(), kConvK, kConvC),
            f32(t == 0 ? a1.data() : b1.data(), kConvK - 1, kConvC)},
           {f32(y1.data() + t * kConvC, kConvC), f32(b1.data(), kConvK - 1, kConvC)}, &conv);
    // One call over the token axis, ping-pong and in place.
    auto a2 = bank_a, in_place = bank_a;
    std::vector<float> b2(bank_a.size()), y2(x.size()), y3(x.size());
    ok(DENSE_OP_CONV1D_CAUSAL,
       {f32(x.data(), kConvC, kTokens), f32(taps.data(), kConvK, kConvC), f32(a2.data(), kConvK - 1, kConvC)},
       {f32(y2.data(), kConvC, kTokens), f32(b2.data(), kConvK - 1, kConvC)}, &conv);
    ok(DENSE_OP_CONV1D_CAUSAL,
       {f32(x.data(), kConvC, kTokens), f32(taps.data(), kConvK, kConvC), f32(in_place.data(), kConvK - 1, kConvC)},
       {f32(y3.data(), kConvC, kTokens), f32(in_place.data(), kConvK - 1, kConvC)}, &conv);
    EXPECT_TRUE(same_bits(y1, y2));
    EXPECT_TRUE(same_bits(y1, y3));
    EXPECT_TRUE(same_bits(b1, b2));
    EXPECT_TRUE(same_bits(b1, in_place));
    EXPECT_TRUE(same_bits(a2, bank_a)) << "state_in of a ping-pong call is read only";
    // The window after T tokens holds the last K-1 inputs of each channel.
    for (int64_t c = 0; c < kConvC; c += 1013)
        for (int64_t i = 0; i < kConvK - 1; ++i)
            EXPECT_EQ(b2[static_cast<std::size_t>(c * (kConvK - 1) + i)],
                      x[static_cast<std::size_t>((kTokens - (kConvK - 1) + i) * kConvC + c)]);
}

TEST_F(CpuRefTokenAxis, GatesOverTokensAreTheirColumns) {
    std::mt19937_64 rng(302);
    auto b = uniform(kHv * kTokens, rng, -4.0f, 4.0f), a = uniform(kHv * kTokens, rng, -4.0f, 4.0f);
    auto dt = uniform(kHv, rng, -1.0f, 1.0f), big_a = uniform(kHv, rng, -3.0f, -0.1f);
    std::vector<float> beta1(b.size()), decay1(b.size()), beta2(b.size()), decay2(b.size());
    for (int64_t t = 0; t < kTokens; ++t)
        ok(DENSE_OP_GDN_GATES,
           {f32(b.data() + t * kHv, kHv), f32(a.data() + t * kHv, kHv), f32(dt.data(), kHv), f32(big_a.data(), kHv)},
           {f32(beta1.data() + t * kHv, kHv), f32(decay1.data() + t * kHv, kHv)});
    ok(DENSE_OP_GDN_GATES,
       {f32(b.data(), kHv, kTokens), f32(a.data(), kHv, kTokens), f32(dt.data(), kHv), f32(big_a.data(), kHv)},
       {f32(beta2.data(), kHv, kTokens), f32(decay2.data(), kHv, kTokens)});
    EXPECT_TRUE(same_bits(beta1, beta2));
    EXPECT_TRUE(same_bits(decay1, decay2));
    EXPECT_GT(decay2.back(), 0.0f);
}

// The convolved q|k|v of T tokens (len floats each): L2 norm of the q and k heads in place, then the
// delta rule, against the same ops called token by token.
TEST_F(CpuRefTokenAxis, L2NormAndDeltaRuleOverTokensAreTheTokenByTokenChain) {
    std::mt19937_64 rng(303);
    const int64_t key_dim = kHk * kDk, len = 2 * key_dim + kHv * kDv;
    const auto norm = norm_params(kEps);
    const auto gdn = gdn_params(static_cast<float>(1.0 / std::sqrt(double(kDk))));
    const auto qkv0 = uniform(len * kTokens, rng, -1.0f, 1.0f);
    auto beta = uniform(kHv * kTokens, rng, 0.1f, 0.9f), decay = uniform(kHv * kTokens, rng, 0.6f, 1.0f);
    const auto bank_a = uniform(kDk * kDv * kHv, rng, -0.2f, 0.2f);

    auto qkv1 = qkv0, a1 = bank_a;
    std::vector<float> b1(bank_a.size()), o1(kDv * kHv * kTokens);
    for (int64_t t = 0; t < kTokens; ++t) {
        float* at = qkv1.data() + t * len;
        ok(DENSE_OP_L2_NORM, {f32(at, kDk, 2 * kHk)}, {f32(at, kDk, 2 * kHk)}, &norm);
        ok(DENSE_OP_GDN_DECODE,
           {f32(at, kDk, kHk), f32(at + key_dim, kDk, kHk), f32(at + 2 * key_dim, kDv, kHv),
            f32(beta.data() + t * kHv, kHv), f32(decay.data() + t * kHv, kHv),
            f32(t == 0 ? a1.data() : b1.data(), kDk * kDv, kHv)},
           {f32(o1.data() + t * kDv * kHv, kDv, kHv), f32(b1.data(), kDk * kDv, kHv)}, &gdn);
    }

    auto qkv2 = qkv0, a2 = bank_a;
    std::vector<float> b2(bank_a.size()), o2(o1.size());
    float* x = qkv2.data();
    ok(DENSE_OP_L2_NORM, {f32_tokens(x, kDk, 2 * kHk, len)}, {f32_tokens(x, kDk, 2 * kHk, len)}, &norm);
    EXPECT_TRUE(same_bits(qkv1, qkv2)) << "the L2 norm over the token axis differs from per-token calls";
    ok(DENSE_OP_GDN_DECODE,
       {f32_tokens(x, kDk, kHk, len), f32_tokens(x + key_dim, kDk, kHk, len), f32_tokens(x + 2 * key_dim, kDv, kHv, len),
        f32(beta.data(), kHv, kTokens), f32(decay.data(), kHv, kTokens), f32(a2.data(), kDk * kDv, kHv)},
       {f32_tokens(o2.data(), kDv, kHv, kDv * kHv), f32(b2.data(), kDk * kDv, kHv)}, &gdn);
    EXPECT_TRUE(same_bits(o1, o2));
    EXPECT_TRUE(same_bits(b1, b2));
    EXPECT_TRUE(same_bits(a2, bank_a)) << "state_in of a ping-pong call is read only";
    EXPECT_FALSE(same_bits(b2, bank_a));
}

// RoPE of the query heads of T tokens at their own positions, then the KV store of T tokens into
// their slots, against the same ops called token by token.
TEST_F(CpuRefTokenAxis, RopeAndKvStoreOverTokensAreTheTokenByTokenCalls) {
    std::mt19937_64 rng(305);
    constexpr int64_t d = 256, hq = 24, hkv = 4, n_ctx = 64, n_rot = 64;
    const auto rope = rope_params(n_rot, 1e7f);
    std::vector<int32_t> pos = {9, 10, 11, 12, 13};
    const auto q0 = uniform(d * hq * kTokens, rng, -2.0f, 2.0f);
    auto q1 = q0, q2 = q0;
    for (int64_t t = 0; t < kTokens; ++t)
        ok(DENSE_OP_ROPE, {f32(q1.data() + t * d * hq, d, hq), i32(&pos[static_cast<size_t>(t)])},
           {f32(q1.data() + t * d * hq, d, hq)}, &rope);
    dense_tensor_view positions = i32(pos.data());
    positions.ne[0] = kTokens;
    for (int i = 1; i < 4; ++i) positions.nb[i] = 4 * kTokens;
    ok(DENSE_OP_ROPE, {f32_tokens(q2.data(), d, hq, d * hq), positions}, {f32_tokens(q2.data(), d, hq, d * hq)}, &rope);
    EXPECT_TRUE(same_bits(q1, q2));
    EXPECT_FALSE(same_bits(q2, q0));

    const auto k = uniform(d * hkv * kTokens, rng, -2.0f, 2.0f), v = uniform(d * hkv * kTokens, rng, -2.0f, 2.0f);
    std::vector<uint16_t> kc1(d * hkv * n_ctx, 0x7E00), vc1(kc1.size(), 0x7E00), kc2 = kc1, vc2 = vc1;
    auto kv = [&](float* kp, float* vp, std::vector<uint16_t>& kc, std::vector<uint16_t>& vc, dense_tensor_view p,
                  int64_t tokens) {
        auto kview = f32_tokens(kp, d, hkv, d * hkv, tokens), vview = f32_tokens(vp, d, hkv, d * hkv, tokens);
        ok(DENSE_OP_KV_STORE, {kview, vview, p},
           {cache(kc.data(), DENSE_TYPE_F16, d, hkv, n_ctx), cache(vc.data(), DENSE_TYPE_F16, d, hkv, n_ctx)});
    };
    auto kk = k, vv = v;
    for (int64_t t = 0; t < kTokens; ++t)
        kv(kk.data() + t * d * hkv, vv.data() + t * d * hkv, kc1, vc1, i32(&pos[static_cast<size_t>(t)]), 1);
    kv(kk.data(), vv.data(), kc2, vc2, positions, kTokens);
    EXPECT_EQ(kc1, kc2);
    EXPECT_EQ(vc1, vc2);
    EXPECT_NE(kc2[static_cast<size_t>(pos[0] * d * hkv)], 0x7E00) << "slot of token 0 not written";
    EXPECT_EQ(kc2[0], 0x7E00) << "slot 0 (no token's) written";
}

// Attention of T tokens (each over its own n_kv, the gate strided inside the query+gate projection)
// against T one-token calls.
TEST_F(CpuRefTokenAxis, AttentionOverTokensIsTheOneTokenCalls) {
    std::mt19937_64 rng(306);
    constexpr int64_t d = 256, hq = 24, hkv = 4, n_ctx = 96;
    auto attn = dense::sdk::make_struct<dense_attn_params>();
    attn.scale = 0.0625f;
    std::vector<uint16_t> kc(d * hkv * n_ctx), vc(kc.size());
    for (auto* c : {&kc, &vc})
        for (auto& h : *c) h = static_cast<uint16_t>(0x3000 + rng() % 0x1000);  // finite halves in (0.125, 1)
    auto qg = uniform(2 * d * hq * kTokens, rng, -1.0f, 1.0f);
    std::vector<int32_t> n_kv = {60, 61, 62, 95, 96};
    std::vector<float> o1(d * hq * kTokens), o2(o1.size());
    for (int64_t t = 0; t < kTokens; ++t)
        ok(DENSE_OP_ATTN_DECODE,
           {f32(qg.data() + t * 2 * d * hq, d, hq, 2 * d), cache(kc.data(), DENSE_TYPE_F16, d, hkv, n_ctx),
            cache(vc.data(), DENSE_TYPE_F16, d, hkv, n_ctx), i32(&n_kv[static_cast<size_t>(t)]),
            f32(qg.data() + t * 2 * d * hq + d, d, hq, 2 * d)},
           {f32(o1.data() + t * d * hq, d, hq)}, &attn);
    dense_tensor_view lengths = i32(n_kv.data());
    lengths.ne[0] = kTokens;
    for (int i = 1; i < 4; ++i) lengths.nb[i] = 4 * kTokens;
    auto strided_tokens = [&](float* p) {
        dense_tensor_view v = f32(p, d, hq, 2 * d);
        v.ne[2] = kTokens;
        v.nb[2] = v.nb[3] = 2 * d * hq * 4;
        return v;
    };
    ok(DENSE_OP_ATTN_DECODE,
       {strided_tokens(qg.data()), cache(kc.data(), DENSE_TYPE_F16, d, hkv, n_ctx),
        cache(vc.data(), DENSE_TYPE_F16, d, hkv, n_ctx), lengths, strided_tokens(qg.data() + d)},
       {f32_tokens(o2.data(), d, hq, d * hq)}, &attn);
    EXPECT_TRUE(same_bits(o1, o2));
    EXPECT_FALSE(same_bits(std::vector<float>(o2.begin(), o2.begin() + d * hq),
                           std::vector<float>(o2.begin() + d * hq, o2.begin() + 2 * d * hq)))
        << "two tokens with different q attended alike";
}

TEST_F(CpuRefTokenAxis, MisalignedTokenAxesAreRefused) {
    std::mt19937_64 rng(304);
    const int64_t key_dim = kHk * kDk, len = 2 * key_dim + kHv * kDv;
    const auto norm = norm_params(kEps);
    const auto gdn = gdn_params(0.1f);
    const auto conv = conv_params(true);
    auto qkv = uniform(len * kTokens, rng);
    auto beta = uniform(kHv * kTokens, rng), decay = uniform(kHv * kTokens, rng);
    auto state = uniform(kDk * kDv * kHv, rng);
    std::vector<float> o(kDv * kHv * kTokens);
    float* x = qkv.data();
    const auto before = qkv;
    // Tokens of q overlapping (nb[2] shorter than one token's heads).
    refused(DENSE_OP_L2_NORM, {f32_tokens(x, kDk, 2 * kHk, kDk)}, {f32_tokens(x, kDk, 2 * kHk, kDk)}, &norm,
            "token stride nb[2]");
    // k with fewer tokens than q.
    refused(DENSE_OP_GDN_DECODE,
            {f32_tokens(x, kDk, kHk, len), f32_tokens(x + key_dim, kDk, kHk, len, kTokens - 1),
             f32_tokens(x + 2 * key_dim, kDv, kHv, len), f32(beta.data(), kHv, kTokens), f32(decay.data(), kHv, kTokens),
             f32(state.data(), kDk * kDv, kHv)},
            {f32_tokens(o.data(), kDv, kHv, kDv * kHv), f32(state.data(), kDk * kDv, kHv)}, &gdn, "src1 (k)");
    // beta for one token only.
    refused(DENSE_OP_GDN_DECODE,
            {f32_tokens(x, kDk, kHk, len), f32_tokens(x + key_dim, kDk, kHk, len),
             f32_tokens(x + 2 * key_dim, kDv, kHv, len), f32(beta.data(), kHv), f32(decay.data(), kHv, kTokens),
             f32(state.data(), kDk * kDv, kHv)},
            {f32_tokens(o.data(), kDv, kHv, kDv * kHv), f32(state.data(), kDk * kDv, kHv)}, &gdn, "src3 (beta)");
    // The conv's y with another token count than x.
    auto taps = uniform(kConvK * kConvC, rng);
    auto window = uniform((kConvK - 1) * kConvC, rng);
    std::vector<float> y(kConvC * kTokens);
    refused(DENSE_OP_CONV1D_CAUSAL,
            {f32(x, kConvC, kTokens), f32(taps.data(), kConvK, kConvC), f32(window.data(), kConvK - 1, kConvC)},
            {f32(y.data(), kConvC, kTokens - 1), f32(window.data(), kConvK - 1, kConvC)}, &conv, "dst0 (y)");
    EXPECT_TRUE(same_bits(qkv, before)) << "a refused call wrote";
}

}  // namespace
