// The token axis of the CUDA pack's Gated DeltaNet ops, RoPE, KV store and attention (dense_abi.h,
// ABI 1.10), at the Qwen3.5-27B shapes and with the graph builder's layout (q|k|v heads inside T
// columns of the 10240-wide conv output, the state ping-ponged from bank A to bank B, the gate strided
// inside the query+gate projection): one launch over T tokens must leave exactly the bits of T
// one-token launches of the same pack, in order (outputs, recurrent state, caches: memcmp). The
// one-token launches are themselves tested against cpu-ref (ops_gdn_gpu_test.cpp and the norm, conv,
// gates, rope, kv-store and attention tests), so this is the whole contract of the axis. T = 16, a
// prompt step of 256 and odd T; the streaming delta-rule kernel (dk > 128) at a small shape;
// attention over short (one pass) and long (partitions + merge) histories, and a call long enough to
// run as several launches sharing one workspace.
#include "cuda/gpu_ops_support.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace dense::test::cuda {
namespace {

constexpr int64_t kConvC = 10240, kConvK = 4;

// F32 {ne0, ne1, tokens} on the GPU, token t at t * token_stride floats.
dense_tensor_view tokens_view(float* data, int64_t ne0, int64_t ne1, int64_t token_stride, int64_t tokens) {
    dense_tensor_view v = f32_view(data, ne0, ne1, ne0);
    v.ne[2] = tokens;
    v.nb[2] = v.nb[3] = token_stride * 4;
    return v;
}

DevMatrix flat(GpuSession& gpu, const std::vector<float>& v) {
    return upload_matrix(gpu, &v, static_cast<int64_t>(v.size()), 1);
}
DevMatrix flat_out(GpuSession& gpu, int64_t n) { return upload_matrix(gpu, nullptr, n, 1); }

// CONV1D_CAUSAL over T tokens in one launch against T one-token launches (bank A -> B, then B in
// place). The axis launch's state is ping-ponged or, with in_place, updated in the very buffer it reads.
void conv_over_tokens(GpuSession& gpu, int64_t channels, int64_t kernel, int64_t tokens, bool in_place,
                      std::mt19937_64& rng) {
    const std::string label = "C = " + std::to_string(channels) + " K = " + std::to_string(kernel) +
                              " T = " + std::to_string(tokens) + (in_place ? " in place" : " ping-pong");
    const int64_t keep = kernel - 1;
    auto conv = make_params<dense_conv_params>();
    conv.apply_silu = 1;
    const auto x = uniform(static_cast<std::size_t>(channels * tokens), rng, -3.0f, 3.0f);
    const auto taps = uniform(static_cast<std::size_t>(kernel * channels), rng);
    const auto window = uniform(static_cast<std::size_t>(keep * channels), rng, -2.0f, 2.0f);
    DevMatrix dx = flat(gpu, x), dtaps = upload_matrix(gpu, &taps, kernel, channels);
    const dense_tensor_view taps_v = dtaps.view;
    DevMatrix a1 = upload_matrix(gpu, &window, keep, channels), b1 = upload_matrix(gpu, nullptr, keep, channels);
    DevMatrix y1 = flat_out(gpu, channels * tokens);
    for (int64_t t = 0; t < tokens; ++t)
        run_op(gpu, DENSE_OP_CONV1D_CAUSAL,
               {f32_view(dx.row_ptr(0) + t * channels, channels, 1, channels), taps_v, (t == 0 ? a1 : b1).view},
               {f32_view(y1.row_ptr(0) + t * channels, channels, 1, channels), b1.view}, &conv, "conv token " + label);
    DevMatrix a2 = upload_matrix(gpu, &window, keep, channels), b2 = upload_matrix(gpu, nullptr, keep, channels);
    DevMatrix y2 = upload_matrix(gpu, nullptr, channels, tokens);
    DevMatrix& out_state = in_place ? a2 : b2;
    run_op(gpu, DENSE_OP_CONV1D_CAUSAL, {f32_view(dx.row_ptr(0), channels, tokens, channels), taps_v, a2.view},
           {y2.view, out_state.view}, &conv, "conv axis " + label);
    if (::testing::Test::HasFatalFailure()) return;
    const auto y = download_matrix(gpu, y2);
    EXPECT_TRUE(same_bits(download_matrix(gpu, y1), y)) << "conv y " << label;
    EXPECT_TRUE(same_bits(download_matrix(gpu, b1), download_matrix(gpu, out_state))) << "conv state " << label;
    if (!in_place) {
        EXPECT_TRUE(same_bits(download_matrix(gpu, a2), window)) << "conv state_in written " << label;
    }
    EXPECT_FALSE(same_bits(y, std::vector<float>(y.size(), 0.0f))) << "conv wrote nothing " << label;
}

void conv_and_gates(GpuSession& gpu, int64_t tokens, uint64_t seed) {
    std::mt19937_64 rng(seed);
    const std::string label = "T = " + std::to_string(tokens);
    conv_over_tokens(gpu, kConvC, kConvK, tokens, false, rng);
    if (::testing::Test::HasFatalFailure()) return;

    const int64_t h = 48;
    const auto b = uniform(static_cast<std::size_t>(h * tokens), rng, -4.0f, 4.0f);
    const auto a = uniform(static_cast<std::size_t>(h * tokens), rng, -4.0f, 4.0f);
    const auto dt = uniform(static_cast<std::size_t>(h), rng), big_a = uniform(static_cast<std::size_t>(h), rng, -3.0f, -0.1f);
    DevMatrix db = flat(gpu, b), da = flat(gpu, a), ddt = flat(gpu, dt), dA = flat(gpu, big_a);
    DevMatrix beta1 = flat_out(gpu, h * tokens), decay1 = flat_out(gpu, h * tokens);
    for (int64_t t = 0; t < tokens; ++t)
        run_op(gpu, DENSE_OP_GDN_GATES,
               {f32_view(db.row_ptr(0) + t * h, h, 1, h), f32_view(da.row_ptr(0) + t * h, h, 1, h), ddt.view, dA.view},
               {f32_view(beta1.row_ptr(0) + t * h, h, 1, h), f32_view(decay1.row_ptr(0) + t * h, h, 1, h)}, nullptr,
               "gates token " + label);
    DevMatrix beta2 = upload_matrix(gpu, nullptr, h, tokens), decay2 = upload_matrix(gpu, nullptr, h, tokens);
    run_op(gpu, DENSE_OP_GDN_GATES,
           {f32_view(db.row_ptr(0), h, tokens, h), f32_view(da.row_ptr(0), h, tokens, h), ddt.view, dA.view},
           {beta2.view, decay2.view}, nullptr, "gates axis " + label);
    if (::testing::Test::HasFatalFailure()) return;
    EXPECT_TRUE(same_bits(download_matrix(gpu, beta1), download_matrix(gpu, beta2))) << "beta " << label;
    EXPECT_TRUE(same_bits(download_matrix(gpu, decay1), download_matrix(gpu, decay2))) << "decay " << label;
}

// L2 norm of the q and k heads in place, then the delta rule, over T columns of the conv output.
void l2_and_delta_rule(GpuSession& gpu, int64_t dk, int64_t dv, int64_t hk, int64_t hv, int64_t tokens, uint64_t seed) {
    std::mt19937_64 rng(seed);
    const std::string label = "dk " + std::to_string(dk) + " T = " + std::to_string(tokens);
    const int64_t key_dim = hk * dk, len = 2 * key_dim + hv * dv, state = dk * dv;
    auto norm = make_params<dense_norm_params>();
    norm.eps = 1e-6f;
    auto gdn = make_params<dense_gdn_params>();
    gdn.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(dk)));
    const auto qkv = uniform(static_cast<std::size_t>(len * tokens), rng);
    const auto beta = uniform(static_cast<std::size_t>(hv * tokens), rng, 0.05f, 0.95f);
    const auto decay = uniform(static_cast<std::size_t>(hv * tokens), rng, 0.3f, 1.0f);
    const auto bank = uniform(static_cast<std::size_t>(state * hv), rng, -0.5f, 0.5f);
    DevMatrix dbeta = flat(gpu, beta), ddecay = flat(gpu, decay);

    DevMatrix x1 = flat(gpu, qkv), a1 = upload_matrix(gpu, &bank, state, hv), b1 = upload_matrix(gpu, nullptr, state, hv);
    DevMatrix o1 = flat_out(gpu, dv * hv * tokens);
    for (int64_t t = 0; t < tokens; ++t) {
        float* at = x1.row_ptr(0) + t * len;
        run_op(gpu, DENSE_OP_L2_NORM, {f32_view(at, dk, 2 * hk, dk)}, {f32_view(at, dk, 2 * hk, dk)}, &norm,
               "l2 token " + label);
        run_op(gpu, DENSE_OP_GDN_DECODE,
               {f32_view(at, dk, hk, dk), f32_view(at + key_dim, dk, hk, dk), f32_view(at + 2 * key_dim, dv, hv, dv),
                f32_view(dbeta.row_ptr(0) + t * hv, hv, 1, hv), f32_view(ddecay.row_ptr(0) + t * hv, hv, 1, hv),
                (t == 0 ? a1 : b1).view},
               {f32_view(o1.row_ptr(0) + t * dv * hv, dv, hv, dv), b1.view}, &gdn, "gdn token " + label);
        if (::testing::Test::HasFatalFailure()) return;
    }

    DevMatrix x2 = flat(gpu, qkv), a2 = upload_matrix(gpu, &bank, state, hv), b2 = upload_matrix(gpu, nullptr, state, hv);
    DevMatrix o2 = flat_out(gpu, dv * hv * tokens);
    float* x = x2.row_ptr(0);
    run_op(gpu, DENSE_OP_L2_NORM, {tokens_view(x, dk, 2 * hk, len, tokens)}, {tokens_view(x, dk, 2 * hk, len, tokens)},
           &norm, "l2 axis " + label);
    run_op(gpu, DENSE_OP_GDN_DECODE,
           {tokens_view(x, dk, hk, len, tokens), tokens_view(x + key_dim, dk, hk, len, tokens),
            tokens_view(x + 2 * key_dim, dv, hv, len, tokens), f32_view(dbeta.row_ptr(0), hv, tokens, hv),
            f32_view(ddecay.row_ptr(0), hv, tokens, hv), a2.view},
           {tokens_view(o2.row_ptr(0), dv, hv, dv * hv, tokens), b2.view}, &gdn, "gdn axis " + label);
    if (::testing::Test::HasFatalFailure()) return;
    EXPECT_TRUE(same_bits(download_matrix(gpu, x1), download_matrix(gpu, x2))) << "l2-normalised q|k|v " << label;
    EXPECT_TRUE(same_bits(download_matrix(gpu, o1), download_matrix(gpu, o2))) << "gdn o " << label;
    const auto s1 = download_matrix(gpu, b1), s2 = download_matrix(gpu, b2);
    EXPECT_TRUE(same_bits(s1, s2)) << "gdn state " << label;
    EXPECT_TRUE(same_bits(download_matrix(gpu, a2), bank)) << "gdn state_in written " << label;
    EXPECT_FALSE(same_bits(s2, bank)) << "the state did not move " << label;
}

// RoPE of T tokens' query heads at their own positions (in place), then the KV store of T tokens into
// their slots of an F16 cache, against one-token launches.
void rope_and_kv_store(GpuSession& gpu, int64_t tokens, uint64_t seed) {
    std::mt19937_64 rng(seed);
    const std::string label = "T = " + std::to_string(tokens);
    constexpr int64_t d = 256, hq = 24, hkv = 4, n_ctx = 64;
    auto rope = make_params<dense_rope_params>();
    rope.n_rot = 64;
    rope.mode = DENSE_ROPE_NEOX;
    rope.freq_base = 1e7f;
    rope.freq_scale = 1.0f;
    std::vector<int32_t> pos(static_cast<std::size_t>(tokens));
    for (int64_t t = 0; t < tokens; ++t) pos[static_cast<std::size_t>(t)] = static_cast<int32_t>(40 - tokens + t);
    DeviceBuffer dpos = gpu.alloc(pos.size() * 4);
    gpu.upload(dpos.get(), pos.data(), pos.size() * 4);
    const dense_tensor_view positions = cuda_view(dpos.get(), DENSE_TYPE_I32, 1, 4, {tokens});
    auto position = [&](int64_t t) {
        return cuda_view(static_cast<int32_t*>(dpos.get()) + t, DENSE_TYPE_I32, 1, 4, {1});
    };

    const auto q = uniform(static_cast<std::size_t>(d * hq * tokens), rng, -2.0f, 2.0f);
    DevMatrix q1 = flat(gpu, q), q2 = flat(gpu, q);
    for (int64_t t = 0; t < tokens; ++t) {
        float* at = q1.row_ptr(0) + t * d * hq;
        run_op(gpu, DENSE_OP_ROPE, {f32_view(at, d, hq, d), position(t)}, {f32_view(at, d, hq, d)}, &rope,
               "rope token " + label);
    }
    run_op(gpu, DENSE_OP_ROPE, {tokens_view(q2.row_ptr(0), d, hq, d * hq, tokens), positions},
           {tokens_view(q2.row_ptr(0), d, hq, d * hq, tokens)}, &rope, "rope axis " + label);
    if (::testing::Test::HasFatalFailure()) return;
    const auto got = download_matrix(gpu, q2);
    EXPECT_TRUE(same_bits(download_matrix(gpu, q1), got)) << "rope " << label;
    EXPECT_FALSE(same_bits(got, q)) << "rope changed nothing " << label;

    const auto k = uniform(static_cast<std::size_t>(d * hkv * tokens), rng, -2.0f, 2.0f);
    const auto v = uniform(static_cast<std::size_t>(d * hkv * tokens), rng, -2.0f, 2.0f);
    DevMatrix dk = flat(gpu, k), dv = flat(gpu, v);
    std::vector<uint16_t> fill(static_cast<std::size_t>(d * hkv * n_ctx));
    for (auto& h : fill) h = static_cast<uint16_t>(rng());
    DeviceBuffer caches[2][2];
    for (auto& pair : caches)
        for (auto& c : pair) {
            c = gpu.alloc(fill.size() * 2);
            gpu.upload(c.get(), fill.data(), fill.size() * 2);
        }
    auto cache = [&](int i, int j) { return cuda_view(caches[i][j].get(), DENSE_TYPE_F16, 1, 2, {d, hkv, n_ctx}); };
    for (int64_t t = 0; t < tokens; ++t)
        run_op(gpu, DENSE_OP_KV_STORE,
               {f32_view(dk.row_ptr(0) + t * d * hkv, d, hkv, d), f32_view(dv.row_ptr(0) + t * d * hkv, d, hkv, d),
                position(t)},
               {cache(0, 0), cache(0, 1)}, nullptr, "kv_store token " + label);
    run_op(gpu, DENSE_OP_KV_STORE,
           {tokens_view(dk.row_ptr(0), d, hkv, d * hkv, tokens), tokens_view(dv.row_ptr(0), d, hkv, d * hkv, tokens),
            positions},
           {cache(1, 0), cache(1, 1)}, nullptr, "kv_store axis " + label);
    if (::testing::Test::HasFatalFailure()) return;
    for (int j = 0; j < 2; ++j) {
        std::vector<uint16_t> a(fill.size()), b(fill.size());
        gpu.download(a.data(), caches[0][j].get(), a.size() * 2);
        gpu.download(b.data(), caches[1][j].get(), b.size() * 2);
        EXPECT_EQ(a, b) << (j == 0 ? "K" : "V") << " cache " << label;
        EXPECT_NE(b, fill) << "nothing stored " << label;
    }
}

TEST(CudaTokenAxis, RopeAndKvStoreOverTokensAreOneTokenLaunches) {
    DENSE_REQUIRE_GPU(gpu);
    for (int64_t tokens : {16, 5}) {
        rope_and_kv_store(gpu, tokens, 4400 + static_cast<uint64_t>(tokens));
        if (HasFatalFailure()) return;
    }
}

// Attention of T tokens over their own n_kv (the gate strided inside the query+gate projection, the
// workspace one set of partials per token) against one-token launches; short histories (one pass)
// and long ones (partitions + merge).
void attention(GpuSession& gpu, int64_t tokens, int32_t first_n_kv, int64_t n_ctx, uint64_t seed) {
    std::mt19937_64 rng(seed);
    const std::string label = "T = " + std::to_string(tokens) + " from n_kv " + std::to_string(first_n_kv);
    constexpr int64_t d = 256, hq = 24, hkv = 4;
    auto attn = make_params<dense_attn_params>();
    attn.scale = 0.0625f;
    std::vector<uint16_t> cache_host(static_cast<std::size_t>(d * hkv * n_ctx));
    DeviceBuffer caches[2];
    for (auto& c : caches) {
        for (auto& h : cache_host) h = static_cast<uint16_t>(0x3000 + rng() % 0x1000);  // finite halves
        c = gpu.alloc(cache_host.size() * 2);
        gpu.upload(c.get(), cache_host.data(), cache_host.size() * 2);
    }
    const dense_tensor_view kc = cuda_view(caches[0].get(), DENSE_TYPE_F16, 1, 2, {d, hkv, n_ctx});
    const dense_tensor_view vc = cuda_view(caches[1].get(), DENSE_TYPE_F16, 1, 2, {d, hkv, n_ctx});
    std::vector<int32_t> n_kv(static_cast<std::size_t>(tokens));
    for (int64_t t = 0; t < tokens; ++t) n_kv[static_cast<std::size_t>(t)] = first_n_kv + static_cast<int32_t>(t);
    DeviceBuffer dn = gpu.alloc(n_kv.size() * 4);
    gpu.upload(dn.get(), n_kv.data(), n_kv.size() * 4);
    const auto qg = uniform(static_cast<std::size_t>(2 * d * hq * tokens), rng);
    DevMatrix dqg = flat(gpu, qg), o1 = flat_out(gpu, d * hq * tokens), o2 = flat_out(gpu, d * hq * tokens);
    for (int64_t t = 0; t < tokens; ++t) {
        float* at = dqg.row_ptr(0) + t * 2 * d * hq;
        run_op(gpu, DENSE_OP_ATTN_DECODE,
               {f32_view(at, d, hq, 2 * d), kc, vc, cuda_view(static_cast<int32_t*>(dn.get()) + t, DENSE_TYPE_I32, 1, 4, {1}),
                f32_view(at + d, d, hq, 2 * d)},
               {f32_view(o1.row_ptr(0) + t * d * hq, d, hq, d)}, &attn, "attention token " + label);
        if (::testing::Test::HasFatalFailure()) return;
    }
    auto strided_tokens = [&](float* p) {
        dense_tensor_view v = f32_view(p, d, hq, 2 * d);
        v.ne[2] = tokens;
        v.nb[2] = v.nb[3] = 2 * d * hq * 4;
        return v;
    };
    run_op(gpu, DENSE_OP_ATTN_DECODE,
           {strided_tokens(dqg.row_ptr(0)), kc, vc, cuda_view(dn.get(), DENSE_TYPE_I32, 1, 4, {tokens}),
            strided_tokens(dqg.row_ptr(0) + d)},
           {tokens_view(o2.row_ptr(0), d, hq, d * hq, tokens)}, &attn, "attention axis " + label);
    if (::testing::Test::HasFatalFailure()) return;
    EXPECT_TRUE(same_bits(download_matrix(gpu, o1), download_matrix(gpu, o2))) << "attention " << label;
}

TEST(CudaTokenAxis, AttentionOverTokensIsOneTokenLaunches) {
    DENSE_REQUIRE_GPU(gpu);
    attention(gpu, 16, 1, 4096, 4500);     // one pass for the first tokens, then partitions
    if (HasFatalFailure()) return;
    attention(gpu, 5, 3000, 4096, 4501);   // partitions + merge
    if (HasFatalFailure()) return;
    attention(gpu, 16, 8180, 8192, 4502);  // the history's end
    if (HasFatalFailure()) return;
    // The 27B's context: each token's partials take ~1.6 MB (sm_90: 66 partitions), so the 200 tokens
    // run as launches of 82, 82 and 36 taking turns on one workspace (attn_tokens_per_launch).
    attention(gpu, 200, 33000, 33410, 4503);
}

TEST(CudaTokenAxis, ConvAndGatesOverTokensAreOneTokenLaunchesInOrder) {
    DENSE_REQUIRE_GPU(gpu);
    for (int64_t tokens : {16, 5}) {
        conv_and_gates(gpu, tokens, 4100 + static_cast<uint64_t>(tokens));
        if (HasFatalFailure()) return;
    }
}

// The conv runs the tokens whose windows lie inside the step's input in parallel and leaves the first
// K-1 tokens and the state to one item per channel (ops_conv.cu): steps shorter than, equal to and
// longer than K-1, widths 2 to 5, the state in place, a prompt step of 256, channels not a multiple of
// the block.
TEST(CudaTokenAxis, ConvTokensInParallelKeepTheBitsAtAnyWidthAndInPlace) {
    DENSE_REQUIRE_GPU(gpu);
    std::mt19937_64 rng(4150);
    for (bool in_place : {false, true}) {
        for (int64_t tokens : {1, 2, 3, 4, 256}) {
            conv_over_tokens(gpu, kConvC, kConvK, tokens, in_place, rng);
            if (HasFatalFailure()) return;
        }
        for (int64_t kernel : {2, 3, 5})
            for (int64_t tokens : {int64_t{1}, kernel - 1, kernel, int64_t{9}}) {
                conv_over_tokens(gpu, 300, kernel, tokens, in_place, rng);
                if (HasFatalFailure()) return;
            }
    }
}

TEST(CudaTokenAxis, L2NormAndDeltaRuleOverTokensAreOneTokenLaunchesInOrder) {
    DENSE_REQUIRE_GPU(gpu);
    for (int64_t tokens : {16, 5}) {
        l2_and_delta_rule(gpu, 128, 128, 16, 48, tokens, 4200 + static_cast<uint64_t>(tokens));
        if (HasFatalFailure()) return;
    }
    l2_and_delta_rule(gpu, 160, 3, 2, 4, 7, 4300);  // dk > 128: the streaming kernel
}

}  // namespace
}  // namespace dense::test::cuda
