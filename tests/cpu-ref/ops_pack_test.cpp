// The cpu-ref activation ops through the pack's C entry points (pack_harness.hpp), as the executor
// will call them: registration, results at the real Qwen3.5-27B shapes against the independent
// references of op_reference.hpp (views laid out as the graph lays them out: query heads strided
// inside the interleaved query+gate projection, q/k/v heads inside the conv output, in-place norms
// and RoPE, ping-pong and in-place recurrent states), the I32 inputs, and the extended EMBED_ROW /
// GEMV_Q. Malformed calls are in ops_pack_refusal_test.cpp.
#include "cpu-ref/op_reference.hpp"
#include "cpu-ref/ops_pack_support.hpp"

#include "kernels/formats.hpp"

#include <bit>

namespace {

using namespace dense;
using namespace dense::test;
using namespace dense::test::opref;

constexpr int64_t kEmbd = 5120, kHeadDim = 256, kHq = 24, kHkv = 4, kNRot = 64;
constexpr float kBase = 1e7f;
constexpr int64_t kDk = 128, kDv = 128, kHk = 16, kHv = 48, kConvC = 10240, kConvK = 4, kFf = 17408;
constexpr float kEps = 1e-6f;

using CpuRefOpsPack = CpuRefActivationOps;

std::vector<float> take(const float* p, int64_t n) {
    return {p, p + n};
}

TEST_F(CpuRefOpsPack, RegistersEveryActivationOpOnceWithoutTypes) {
    const std::pair<dense_op_kind, std::string> ops[] = {
        {DENSE_OP_RMS_NORM, "rms_norm"},     {DENSE_OP_ROPE, "rope"},           {DENSE_OP_ATTN_DECODE, "attn_decode"},
        {DENSE_OP_GDN_DECODE, "gdn_decode"}, {DENSE_OP_CONV1D_CAUSAL, "conv1d_causal"}, {DENSE_OP_SWIGLU, "swiglu"},
        {DENSE_OP_L2_NORM, "l2_norm"},       {DENSE_OP_GATED_RMS_NORM, "gated_rms_norm"},
        {DENSE_OP_GDN_GATES, "gdn_gates"},   {DENSE_OP_KV_STORE, "kv_store"},   {DENSE_OP_CHECK_FINITE, "check_finite"},
        {DENSE_OP_ARGMAX, "argmax"},         {DENSE_OP_TOP_K, "top_k"}};
    for (const auto& [kind, name] : ops) {
        int count = 0;
        for (std::size_t i = 0; i < host_.ops.size(); ++i) {
            if (host_.ops[i].op_kind != kind) continue;
            ++count;
            EXPECT_EQ(host_.ops[i].weight_type, DENSE_TYPE_NONE) << name;
            EXPECT_EQ(host_.ops[i].act_type, DENSE_TYPE_NONE) << name;
            EXPECT_EQ(host_.ops[i].device_kind, DENSE_DEVICE_CPU) << name;
            EXPECT_EQ(host_.ops[i].priority, 0) << name;
            EXPECT_NE(host_.ops[i].supports, nullptr) << name;
            EXPECT_EQ(host_.names[i], "cpu-ref." + name);
        }
        EXPECT_EQ(count, 1) << name;
    }
    for (dense_op_kind absent : {DENSE_OP_ATTN_PREFILL, DENSE_OP_GDN_PREFILL})
        for (const auto& impl : host_.ops) EXPECT_NE(impl.op_kind, absent);
    EXPECT_TRUE(host_.logs.empty());
}

TEST_F(CpuRefOpsPack, NormsAtRealShapesStridedAndInPlace) {
    std::mt19937_64 rng(201);
    const auto norm = norm_params(kEps);
    // Hidden state: out of place.
    auto h = uniform(kEmbd, rng, -3.0f, 3.0f);
    const auto w = uniform(kEmbd, rng, 0.5f, 1.5f);
    std::vector<float> xn(kEmbd);
    ok(DENSE_OP_RMS_NORM, {f32(h.data(), kEmbd), f32(const_cast<float*>(w.data()), kEmbd)}, {f32(xn.data(), kEmbd)}, &norm);
    EXPECT_TRUE(all_near(xn, ref_rms_norm(h, w, kEps)));
    // Query heads inside the interleaved projection {256, 24} with stride 512 -> a contiguous q.
    auto qg = uniform(2 * kHeadDim * kHq, rng, -2.0f, 2.0f);
    const auto qn = uniform(kHeadDim, rng, 0.5f, 1.5f);
    std::vector<float> q(kHeadDim * kHq);
    ok(DENSE_OP_RMS_NORM, {f32(qg.data(), kHeadDim, kHq, 2 * kHeadDim), f32(const_cast<float*>(qn.data()), kHeadDim)},
       {f32(q.data(), kHeadDim, kHq)}, &norm);
    for (int64_t hd = 0; hd < kHq; ++hd)
        EXPECT_TRUE(all_near(take(q.data() + hd * kHeadDim, kHeadDim),
                             ref_rms_norm(take(qg.data() + 2 * hd * kHeadDim, kHeadDim), qn, kEps)));
    // Key heads in place.
    auto k = uniform(kHeadDim * kHkv, rng, -2.0f, 2.0f);
    const auto k0 = k;
    ok(DENSE_OP_RMS_NORM, {f32(k.data(), kHeadDim, kHkv), f32(const_cast<float*>(qn.data()), kHeadDim)},
       {f32(k.data(), kHeadDim, kHkv)}, &norm);
    for (int64_t g = 0; g < kHkv; ++g)
        EXPECT_TRUE(all_near(take(k.data() + g * kHeadDim, kHeadDim), ref_rms_norm(take(k0.data() + g * kHeadDim, kHeadDim), qn, kEps)));
    // L2 norm of the q and k heads inside the conv output, in place (as the graph does).
    auto conv = uniform(kConvC, rng, -1.0f, 1.0f);
    const auto conv0 = conv;
    for (int64_t offset : {int64_t{0}, kHk * kDk})
        ok(DENSE_OP_L2_NORM, {f32(conv.data() + offset, kDk, kHk)}, {f32(conv.data() + offset, kDk, kHk)}, &norm);
    for (int64_t r = 0; r < 2 * kHk; ++r)
        EXPECT_TRUE(all_near(take(conv.data() + r * kDk, kDk), ref_l2_norm(take(conv0.data() + r * kDk, kDk), kEps)));
    EXPECT_TRUE(std::equal(conv.begin() + 2 * kHk * kDk, conv.end(), conv0.begin() + 2 * kHk * kDk)) << "v untouched";
    // Gated RMS norm of the GDN output {128, 48}.
    const auto o = uniform(kDv * kHv, rng, -1.0f, 1.0f), z = uniform(kDv * kHv, rng, -5.0f, 5.0f);
    const auto sw = uniform(kDv, rng, 0.5f, 1.5f);
    std::vector<float> og(kDv * kHv);
    ok(DENSE_OP_GATED_RMS_NORM,
       {f32(const_cast<float*>(o.data()), kDv, kHv), f32(const_cast<float*>(z.data()), kDv, kHv),
        f32(const_cast<float*>(sw.data()), kDv)},
       {f32(og.data(), kDv, kHv)}, &norm);
    for (int64_t hd = 0; hd < kHv; ++hd)
        EXPECT_TRUE(all_near(take(og.data() + hd * kDv, kDv),
                             ref_gated_rms_norm(take(o.data() + hd * kDv, kDv), take(z.data() + hd * kDv, kDv), sw, kEps)));
}

TEST_F(CpuRefOpsPack, SwigluAndGatesAtRealShapes) {
    std::mt19937_64 rng(202);
    const auto g = uniform(kFf, rng, -6.0f, 6.0f), u = uniform(kFf, rng, -2.0f, 2.0f);
    std::vector<float> s(kFf);
    ok(DENSE_OP_SWIGLU, {f32(const_cast<float*>(g.data()), kFf), f32(const_cast<float*>(u.data()), kFf)}, {f32(s.data(), kFf)});
    std::vector<double> want(kFf);
    for (std::size_t i = 0; i < want.size(); ++i) want[i] = ref_silu(g[i]) * u[i];
    EXPECT_TRUE(all_near(s, want));

    auto b = uniform(kHv, rng, -5.0f, 5.0f), a = uniform(kHv, rng, -5.0f, 25.0f);
    auto dt = uniform(kHv, rng, -1.0f, 1.0f), A = uniform(kHv, rng, -3.0f, -0.05f);
    std::vector<float> beta(kHv), decay(kHv);
    ok(DENSE_OP_GDN_GATES, {f32(b.data(), kHv), f32(a.data(), kHv), f32(dt.data(), kHv), f32(A.data(), kHv)},
       {f32(beta.data(), kHv), f32(decay.data(), kHv)});
    std::vector<double> wb(kHv), wd(kHv);
    for (std::size_t i = 0; i < wb.size(); ++i) {
        wb[i] = ref_sigmoid(b[i]);
        wd[i] = std::exp(ref_softplus(static_cast<double>(a[i]) + dt[i]) * A[i]);
    }
    EXPECT_TRUE(all_near(beta, wb));
    EXPECT_TRUE(all_near(decay, wd));
}

TEST_F(CpuRefOpsPack, RopeInPlaceOnStridedHeadsReadsThePositionInput) {
    std::mt19937_64 rng(203);
    const auto rope = rope_params(kNRot, kBase);
    for (int32_t pos : {0, 3, 4095, 200000}) {
        // Query heads rotated in place inside a buffer with stride 512 (the gaps must survive).
        auto buf = uniform(2 * kHeadDim * kHq, rng, -2.0f, 2.0f);
        const auto before = buf;
        int32_t p = pos;
        ok(DENSE_OP_ROPE, {f32(buf.data(), kHeadDim, kHq, 2 * kHeadDim), i32(&p)}, {f32(buf.data(), kHeadDim, kHq, 2 * kHeadDim)},
           &rope);
        for (int64_t h = 0; h < kHq; ++h) {
            const auto got = take(buf.data() + 2 * h * kHeadDim, kHeadDim);
            const auto in = take(before.data() + 2 * h * kHeadDim, kHeadDim);
            EXPECT_TRUE(all_near(got, ref_rope(in, kNRot, pos, kBase))) << "pos " << pos;
            EXPECT_TRUE(std::equal(got.begin() + kNRot, got.end(), in.begin() + kNRot)) << "dims >= n_rot untouched";
            if (pos == 0) {
                EXPECT_EQ(std::memcmp(got.data(), in.data(), got.size() * 4), 0) << "position 0 is the identity";
            }
            EXPECT_EQ(std::memcmp(buf.data() + (2 * h + 1) * kHeadDim, before.data() + (2 * h + 1) * kHeadDim, kHeadDim * 4), 0)
                << "the gate half between query heads is untouched";
        }
    }
}

// KV_STORE then ATTN_DECODE, token by token over several positions, as the executor runs them; the
// reference attends over everything stored so far (fp16-rounded values for the F16 cache, via the
// independent _Float16 oracle).
TEST_F(CpuRefOpsPack, KvStoreAttentionRoundTripOverSeveralPositions) {
    if (!kHaveFloat16) GTEST_SKIP() << "this compiler has no _Float16 to serve as the fp16 oracle";
    std::mt19937_64 rng(204);
    const int64_t n_ctx = 8;
    const auto attn = attn_params(static_cast<float>(1.0 / std::sqrt(double(kHeadDim))));
    for (dense_type_id type : {DENSE_TYPE_F16, DENSE_TYPE_F32}) {
        const std::size_t elem = type == DENSE_TYPE_F16 ? 2 : 4;
        std::vector<float> kc(static_cast<std::size_t>(kHeadDim * kHkv * n_ctx) * elem / 4, std::nanf(""));
        std::vector<float> vc(kc.size(), std::nanf(""));  // NaN beyond n_kv: a read past it would show
        std::vector<FRows> ks, vs;
        for (int32_t pos = 0; pos < 6; ++pos) {
            auto k = uniform(kHeadDim * kHkv, rng, -1.5f, 1.5f), v = uniform(kHeadDim * kHkv, rng, -1.0f, 1.0f);
            for (int64_t i = 0; i < kHeadDim * kHkv; ++i) v[static_cast<std::size_t>(i)] += 0.3f * static_cast<float>(i / kHeadDim);
            int32_t p = pos, n_kv = pos + 1;
            ok(DENSE_OP_KV_STORE, {f32(k.data(), kHeadDim, kHkv), f32(v.data(), kHeadDim, kHkv), i32(&p)},
               {cache(kc.data(), type, kHeadDim, kHkv, n_ctx), cache(vc.data(), type, kHeadDim, kHkv, n_ctx)});
            FRows kr(kHkv), vr(kHkv);
            for (std::size_t g = 0; g < kr.size(); ++g) {
                kr[g] = take(k.data() + g * kHeadDim, kHeadDim);
                vr[g] = take(v.data() + g * kHeadDim, kHeadDim);
                if (type == DENSE_TYPE_F16)
                    for (auto* r : {&kr[g], &vr[g]})
                        for (float& x : *r) x = ref_fp16_value(ref_fp16_bits(x));
            }
            ks.push_back(kr);
            vs.push_back(vr);
            // Query and gate interleaved per head, as the attn_q projection delivers them.
            auto qg = uniform(2 * kHeadDim * kHq, rng, -2.0f, 2.0f);
            std::vector<float> out(kHeadDim * kHq);
            ok(DENSE_OP_ATTN_DECODE,
               {f32(qg.data(), kHeadDim, kHq, 2 * kHeadDim), cache(kc.data(), type, kHeadDim, kHkv, n_ctx),
                cache(vc.data(), type, kHeadDim, kHkv, n_ctx), i32(&n_kv), f32(qg.data() + kHeadDim, kHeadDim, kHq, 2 * kHeadDim)},
               {f32(out.data(), kHeadDim, kHq)}, &attn);
            FRows q(kHq), gate(kHq);
            for (std::size_t h = 0; h < q.size(); ++h) {
                q[h] = take(qg.data() + 2 * h * kHeadDim, kHeadDim);
                gate[h] = take(qg.data() + (2 * h + 1) * kHeadDim, kHeadDim);
            }
            const auto want = ref_attention(q, ks, vs, &gate, attn.scale, [](std::size_t h) { return h / (kHq / kHkv); });
            EXPECT_TRUE(all_near(out, flatten(want))) << "type " << type << " pos " << pos;
            if (pos > 0) {
                const auto wrong = ref_attention(q, ks, vs, &gate, attn.scale, [](std::size_t h) { return h % kHkv; });
                EXPECT_GT(max_abs_diff(out, flatten(wrong)), 0.01) << "h % Hkv would not be caught";
            }
            // Without the gate (src4 absent).
            std::vector<float> plain(out.size());
            ok(DENSE_OP_ATTN_DECODE,
               {f32(qg.data(), kHeadDim, kHq, 2 * kHeadDim), cache(kc.data(), type, kHeadDim, kHkv, n_ctx),
                cache(vc.data(), type, kHeadDim, kHkv, n_ctx), i32(&n_kv)},
               {f32(plain.data(), kHeadDim, kHq)}, &attn);
            EXPECT_TRUE(all_near(plain, flatten(ref_attention(q, ks, vs, nullptr, attn.scale,
                                                              [](std::size_t h) { return h / (kHq / kHkv); }))));
        }
    }
}

TEST_F(CpuRefOpsPack, ConvOverSeveralStepsPingPongAndInPlaceAgree) {
    std::mt19937_64 rng(205);
    const auto conv = conv_params(true);
    const auto taps = uniform(kConvK * kConvC, rng, -1.0f, 1.0f);
    FRows taps_rows(kConvC);
    for (std::size_t c = 0; c < taps_rows.size(); ++c) taps_rows[c] = take(taps.data() + c * kConvK, kConvK);
    std::vector<float> bank_a((kConvK - 1) * kConvC, 0.0f), bank_b(bank_a.size()), in_place(bank_a.size(), 0.0f);
    FRows ref_state(kConvC, std::vector<float>(kConvK - 1, 0.0f));  // a sequence starts from zeros
    for (int step = 0; step < 5; ++step) {
        auto x = uniform(kConvC, rng, -3.0f, 3.0f);
        std::vector<float> y(kConvC), y2(kConvC);
        auto& from = step % 2 == 0 ? bank_a : bank_b;
        auto& to = step % 2 == 0 ? bank_b : bank_a;
        ok(DENSE_OP_CONV1D_CAUSAL,
           {f32(x.data(), kConvC), f32(const_cast<float*>(taps.data()), kConvK, kConvC), f32(from.data(), kConvK - 1, kConvC)},
           {f32(y.data(), kConvC), f32(to.data(), kConvK - 1, kConvC)}, &conv);
        ok(DENSE_OP_CONV1D_CAUSAL,
           {f32(x.data(), kConvC), f32(const_cast<float*>(taps.data()), kConvK, kConvC), f32(in_place.data(), kConvK - 1, kConvC)},
           {f32(y2.data(), kConvC), f32(in_place.data(), kConvK - 1, kConvC)}, &conv);
        EXPECT_TRUE(all_near(y, ref_conv_step(x, taps_rows, ref_state, true))) << "step " << step;
        EXPECT_EQ(std::memcmp(y.data(), y2.data(), y.size() * 4), 0);
        EXPECT_EQ(std::memcmp(to.data(), in_place.data(), to.size() * 4), 0);
        for (int64_t c = 0; c < kConvC; c += 997)  // newest state column = this step's input
            EXPECT_EQ(to[static_cast<std::size_t>(c * (kConvK - 1) + kConvK - 2)], x[static_cast<std::size_t>(c)]);
    }
}

// GDN_DECODE on q/k/v views into the convolved q|k|v vector, the state ping-ponged between two banks
// and, separately, updated in place; both agree bit for bit and match the reference.
TEST_F(CpuRefOpsPack, GdnDecodeOnConvOutputViewsOverSeveralSteps) {
    std::mt19937_64 rng(206);
    const auto gdn = gdn_params(static_cast<float>(1.0 / std::sqrt(double(kDk))));
    const int64_t state_elems = kDk * kDv * kHv;
    std::vector<float> bank_a = uniform(static_cast<std::size_t>(state_elems), rng, -0.2f, 0.2f), bank_b(bank_a.size());
    std::vector<float> in_place = bank_a;
    for (int step = 0; step < 3; ++step) {
        auto qkv = uniform(kConvC, rng, -1.0f, 1.0f);
        for (int64_t r = 0; r < 2 * kHk; ++r) {  // unit q and k heads, as after the L2 norm
            const auto n = ref_l2_norm(take(qkv.data() + r * kDk, kDk), 1e-6);
            for (int64_t i = 0; i < kDk; ++i) qkv[static_cast<std::size_t>(r * kDk + i)] = static_cast<float>(n[static_cast<std::size_t>(i)]);
        }
        auto beta = uniform(kHv, rng, 0.1f, 0.9f), decay = uniform(kHv, rng, 0.6f, 1.0f);
        auto& from = step % 2 == 0 ? bank_a : bank_b;
        auto& to = step % 2 == 0 ? bank_b : bank_a;
        const State S = [&] {
            State s(kHv, std::vector<std::vector<double>>(kDk, std::vector<double>(kDv)));
            for (int64_t h = 0; h < kHv; ++h)
                for (int64_t i = 0; i < kDk; ++i)
                    for (int64_t j = 0; j < kDv; ++j)
                        s[static_cast<std::size_t>(h)][static_cast<std::size_t>(i)][static_cast<std::size_t>(j)] =
                            from[static_cast<std::size_t>(h * kDk * kDv + j * kDk + i)];
            return s;
        }();
        std::vector<float> o(kDv * kHv), o2(o.size());
        auto views = [&](std::vector<float>& state_in) {
            return std::vector<dense_tensor_view>{f32(qkv.data(), kDk, kHk), f32(qkv.data() + kHk * kDk, kDk, kHk),
                                                  f32(qkv.data() + 2 * kHk * kDk, kDv, kHv), f32(beta.data(), kHv),
                                                  f32(decay.data(), kHv), f32(state_in.data(), kDk * kDv, kHv)};
        };
        ok(DENSE_OP_GDN_DECODE, views(from), {f32(o.data(), kDv, kHv), f32(to.data(), kDk * kDv, kHv)}, &gdn);
        ok(DENSE_OP_GDN_DECODE, views(in_place), {f32(o2.data(), kDv, kHv), f32(in_place.data(), kDk * kDv, kHv)}, &gdn);
        EXPECT_EQ(std::memcmp(o.data(), o2.data(), o.size() * 4), 0);
        EXPECT_EQ(std::memcmp(to.data(), in_place.data(), to.size() * 4), 0);
        FRows q(kHk), k(kHk), v(kHv);
        for (std::size_t r = 0; r < q.size(); ++r) {
            q[r] = take(qkv.data() + r * kDk, kDk);
            k[r] = take(qkv.data() + (kHk + r) * kDk, kDk);
        }
        for (std::size_t h = 0; h < v.size(); ++h) v[h] = take(qkv.data() + 2 * kHk * kDk + h * kDv, kDv);
        const auto want = ref_gdn_step(q, k, v, beta, decay, S, gdn.scale, [](std::size_t h) { return h % kHk; });
        EXPECT_TRUE(all_near(o, flatten(want.o))) << "step " << step;
        const auto grouped = ref_gdn_step(q, k, v, beta, decay, S, gdn.scale, [](std::size_t h) { return h / (kHv / kHk); });
        EXPECT_GT(max_abs_diff(o, flatten(grouped.o)), 1e-3) << "h / 3 would not be caught";
    }
}

TEST_F(CpuRefOpsPack, CheckFiniteSetsTheStatusWordOnlyForNanOrInf) {
    std::mt19937_64 rng(207);
    auto x = uniform(kEmbd, rng, -3.0f, 3.0f);
    x[10] = 3.0e38f;
    for (int32_t preset : {0, 7}) {
        int32_t status = preset;
        ok(DENSE_OP_CHECK_FINITE, {f32(x.data(), kEmbd)}, {i32(&status)});
        EXPECT_EQ(status, preset) << "finite input leaves the status word as it was";
    }
    for (float bad : {std::nanf(""), std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()}) {
        auto y = x;
        y[kEmbd - 1] = bad;
        int32_t status = 0;
        ok(DENSE_OP_CHECK_FINITE, {f32(y.data(), kEmbd)}, {i32(&status)});
        EXPECT_EQ(status, 1) << bad;
    }
}

// ARGMAX is std::max_element: the first of equal maxima, NaN never chosen unless it is element 0.
TEST_F(CpuRefOpsPack, ArgmaxIsTheFirstLargestElementAsMaxElementGivesIt) {
    std::mt19937_64 rng(209);
    const int64_t n = 151936;  // a real vocabulary, not a multiple of 4 tokens' worth of lanes
    auto x = uniform(n, rng, -20.0f, 20.0f);
    const auto argmax = [&](std::vector<float>& v) {
        int32_t index = -1;
        ok(DENSE_OP_ARGMAX, {f32(v.data(), static_cast<int64_t>(v.size()))}, {i32(&index)});
        return index;
    };
    const auto max_element_index = [](const std::vector<float>& v) {
        return static_cast<int32_t>(std::max_element(v.begin(), v.end()) - v.begin());
    };
    EXPECT_EQ(argmax(x), max_element_index(x));
    x[77777] = 25.0f;
    x[120000] = 25.0f;  // a tie: the lower index
    x[5] = std::nanf("");  // a NaN past index 0 is never chosen
    EXPECT_EQ(argmax(x), 77777);
    x[n - 1] = std::numeric_limits<float>::infinity();
    EXPECT_EQ(argmax(x), n - 1);
    x[0] = std::nanf("");  // element 0 NaN: nothing compares larger, 0 stays
    EXPECT_EQ(argmax(x), 0);
    EXPECT_EQ(argmax(x), max_element_index(x));
    std::vector<float> low(37, -std::numeric_limits<float>::infinity());
    EXPECT_EQ(argmax(low), 0);
    low[36] = -1e30f;
    EXPECT_EQ(argmax(low), 36);
    std::vector<float> one{-3.0f};
    EXPECT_EQ(argmax(one), 0);
}

// TOP_K is a sort of the valid elements (neither NaN nor -inf) by value descending, equal values by the
// lower index, cut to k and padded with (-1, -inf): against std::sort at the 27B's vocabulary with
// planted ties (equal values, -0.0 beside +0.0), NaN and -inf elements, fewer candidates than k, none.
TEST_F(CpuRefOpsPack, TopKIsTheSortedValidElementsCutToKAndPadded) {
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    struct Result {
        std::vector<int32_t> ids;
        std::vector<float> values;
    };
    const auto top_k = [&](std::vector<float>& x, int64_t k) {
        Result r{std::vector<int32_t>(static_cast<std::size_t>(k), -7),
                 std::vector<float>(static_cast<std::size_t>(k), 12345.0f)};
        ok(DENSE_OP_TOP_K, {f32(x.data(), static_cast<int64_t>(x.size()))},
           {i32s(r.ids.data(), k), f32(r.values.data(), k)});
        return r;
    };
    // The oracle written out: every valid element, std::sort, cut, padded.
    const auto sorted = [](const std::vector<float>& x, int64_t k) {
        std::vector<std::pair<float, int32_t>> c;
        for (std::size_t i = 0; i < x.size(); ++i)
            if (!std::isnan(x[i]) && x[i] != -std::numeric_limits<float>::infinity())
                c.push_back({x[i], static_cast<int32_t>(i)});
        std::sort(c.begin(), c.end(), [](const auto& a, const auto& b) {
            return a.first != b.first ? a.first > b.first : a.second < b.second;
        });
        Result r;
        for (int64_t i = 0; i < k; ++i) {
            const bool some = static_cast<std::size_t>(i) < c.size();
            r.ids.push_back(some ? c[static_cast<std::size_t>(i)].second : -1);
            r.values.push_back(some ? c[static_cast<std::size_t>(i)].first : -std::numeric_limits<float>::infinity());
        }
        return r;
    };
    const auto expect_same = [](const Result& got, const Result& want, const std::string& what) {
        ASSERT_EQ(got.ids.size(), want.ids.size()) << what;
        for (std::size_t i = 0; i < want.ids.size(); ++i) {
            EXPECT_EQ(got.ids[i], want.ids[i]) << what << ", slot " << i;
            EXPECT_EQ(std::bit_cast<uint32_t>(got.values[i]), std::bit_cast<uint32_t>(want.values[i]))
                << what << ", slot " << i << ": " << got.values[i] << " vs " << want.values[i];
        }
    };
    std::mt19937_64 rng(210);
    const int64_t n = 248320;
    for (const int64_t k : {int64_t{1}, int64_t{40}, int64_t{64}}) {
        const std::string at_k = "k = " + std::to_string(k);
        auto x = uniform(n, rng, -20.0f, 20.0f);
        expect_same(top_k(x, k), sorted(x, k), at_k + ", random");
        // Ties among the best: equal values (the lower index first), -0.0 beside +0.0 (equal: by index).
        std::uniform_int_distribution<int64_t> at(0, n - 1);
        for (int i = 0; i < 30; ++i) x[static_cast<std::size_t>(at(rng))] = 21.0f + static_cast<float>(i % 4);
        for (int i = 0; i < 20; ++i) x[static_cast<std::size_t>(at(rng))] = nan;
        for (int i = 0; i < 20; ++i) x[static_cast<std::size_t>(at(rng))] = -inf;
        x[3] = inf;  // +inf is a candidate, the best one
        const Result planted = top_k(x, k);
        expect_same(planted, sorted(x, k), at_k + ", ties, NaN, -inf");
        EXPECT_EQ(planted.ids[0], 3) << at_k;
        for (std::size_t i = 0; i + 1 < planted.ids.size(); ++i) {
            if (planted.values[i] == planted.values[i + 1]) {
                EXPECT_LT(planted.ids[i], planted.ids[i + 1]) << at_k;
            }
        }
        // Every value at or below zero but a few -0.0 and +0.0: the zeros lead, by index, bits kept.
        std::vector<float> z = uniform(n, rng, -20.0f, -1.0f);
        for (int i = 0; i < 50; ++i) z[static_cast<std::size_t>(at(rng))] = i % 2 == 0 ? -0.0f : 0.0f;
        const Result zeros = top_k(z, k);
        expect_same(zeros, sorted(z, k), at_k + ", signed zeros");
        for (std::size_t i = 0; i < zeros.ids.size() && zeros.values[i] == 0.0f; ++i)
            EXPECT_EQ(std::signbit(zeros.values[i]), std::signbit(z[static_cast<std::size_t>(zeros.ids[i])])) << at_k;
    }
    // Fewer candidates than k: the rest padded with (-1, -inf).
    std::vector<float> few = {-inf, 2.0f, nan, -0.0f, 2.0f, 0.0f, -inf};
    const Result padded = top_k(few, 40);
    expect_same(padded, sorted(few, 40), "n < k");
    EXPECT_EQ((std::vector<int32_t>(padded.ids.begin(), padded.ids.begin() + 5)),
              (std::vector<int32_t>{1, 4, 3, 5, -1}));
    EXPECT_TRUE(std::signbit(padded.values[2])) << "-0.0 comes back as -0.0";
    // No candidate at all: every slot padded.
    std::vector<float> none(1000, -inf);
    none[500] = nan;
    const Result empty = top_k(none, 64);
    expect_same(empty, sorted(none, 64), "all -inf or NaN");
    EXPECT_EQ(empty.ids, std::vector<int32_t>(64, -1));
    std::vector<float> one{-3.0f};
    expect_same(top_k(one, 1), Result{{0}, {-3.0f}}, "n = k = 1");
}

TEST_F(CpuRefOpsPack, EmbedRowTakesItsRowFromAnI32Input) {
    std::mt19937_64 rng(208);
    const int64_t d = 64, vocab = 9;
    for (dense_type_id type : {DENSE_TYPE_F32, DENSE_TYPE_Q8_0}) {
        const std::size_t logs_at_start = host_.logs.size();
        const auto& f = cpuref::format(type);
        std::vector<uint8_t> table(static_cast<std::size_t>(cpuref::row_bytes(type, d * vocab)));
        if (type == DENSE_TYPE_F32) {
            const auto values = uniform(static_cast<std::size_t>(d * vocab), rng);
            std::memcpy(table.data(), values.data(), table.size());
        } else {
            const auto values = uniform(static_cast<std::size_t>(d * vocab), rng);
            cpuref::quantize_activation(DENSE_TYPE_Q8_0, values.data(), table.data(), d * vocab);
        }
        std::vector<float> all(static_cast<std::size_t>(d * vocab));
        cpuref::dequantize_row(type, table.data(), all.data(), d * vocab);
        const dense_op_impl* e = host_.find(DENSE_OP_EMBED_ROW, type, DENSE_TYPE_NONE);
        ASSERT_NE(e, nullptr);
        dense_tensor_view tv{};
        tv.data = table.data();
        tv.type = type;
        tv.ne[0] = d;
        tv.ne[1] = vocab;
        tv.ne[2] = tv.ne[3] = 1;
        tv.nb[0] = f.block_bytes;
        tv.nb[1] = static_cast<int64_t>(cpuref::row_bytes(type, d));
        tv.nb[2] = tv.nb[3] = tv.nb[1] * vocab;
        std::vector<float> out(d, -1.0f);
        auto params = dense::sdk::make_struct<dense_embed_row_params>();
        params.row = 0;  // ignored when src1 is given
        for (int32_t row : {0, 4, 8}) {
            int32_t r = row;
            const std::vector src{tv, i32(&r)};
            const std::vector dst{f32(out.data(), d)};
            for (const void* p : {static_cast<const void*>(nullptr), static_cast<const void*>(&params)}) {
                ASSERT_EQ(run(e, make_call(DENSE_OP_EMBED_ROW, src, dst, p)), DENSE_OK);
                EXPECT_TRUE(std::equal(out.begin(), out.end(), all.begin() + row * d)) << f.name << " row " << row;
            }
        }
        EXPECT_EQ(host_.logs.size(), logs_at_start) << host_.logs.back().second;
        const auto before = out;
        for (int32_t row : {-1, static_cast<int32_t>(vocab), 1 << 30}) {
            int32_t r = row;
            const std::vector src{tv, i32(&r)};
            const std::vector dst{f32(out.data(), d)};
            const auto call = make_call(DENSE_OP_EMBED_ROW, src, dst);
            EXPECT_EQ(e->supports(e->user, &call), 1u) << "the row value is only known when the call runs";
            const std::size_t logs = host_.logs.size();
            EXPECT_EQ(run(e, call), DENSE_E_INVALID_ARGUMENT) << row;
            ASSERT_EQ(host_.logs.size(), logs + 1);
            EXPECT_NE(host_.logs.back().second.find("row " + std::to_string(row)), std::string::npos) << host_.logs.back().second;
            EXPECT_EQ(out, before);
        }
    }
}

TEST_F(CpuRefOpsPack, GemvAccumulatesIntoDstWhenAsked) {
    std::mt19937_64 rng(209);
    const int64_t in = 512, out = 16;
    for (dense_type_id type : {DENSE_TYPE_F32, DENSE_TYPE_Q8_0}) {
        const auto& f = cpuref::format(type);
        const auto wf = uniform(static_cast<std::size_t>(in * out), rng, -0.1f, 0.1f);
        std::vector<uint8_t> w(static_cast<std::size_t>(cpuref::row_bytes(type, in * out)));
        cpuref::quantize_activation(type, wf.data(), w.data(), in * out);  // F32: copy; Q8_0: a valid weight
        const auto x = uniform(static_cast<std::size_t>(in), rng);
        std::vector<uint8_t> act(static_cast<std::size_t>(cpuref::row_bytes(f.act_type, in)));
        cpuref::quantize_activation(f.act_type, x.data(), act.data(), in);
        std::vector<float> product(out);
        cpuref::gemv(type, w.data(), in, out, act.data(), product.data());
        const dense_op_impl* g = host_.find(DENSE_OP_GEMV_Q, type, f.act_type);
        ASSERT_NE(g, nullptr);
        const auto residual = uniform(static_cast<std::size_t>(out), rng, -5.0f, 5.0f);
        auto y = residual;
        const std::vector src{rows_of(w.data(), type, in, out), rows_of(act.data(), f.act_type, in, 1)};
        const std::vector dst{rows_of(y.data(), DENSE_TYPE_F32, out, 1)};
        auto p = dense::sdk::make_struct<dense_gemv_params>();
        p.accumulate = 1;
        ASSERT_EQ(run(g, make_call(DENSE_OP_GEMV_Q, src, dst, &p)), DENSE_OK);
        for (std::size_t r = 0; r < y.size(); ++r) EXPECT_EQ(y[r], residual[r] + product[r]) << f.name << " row " << r;
        p.accumulate = 0;  // explicit params without accumulate: plain dst = W x
        ASSERT_EQ(run(g, make_call(DENSE_OP_GEMV_Q, src, dst, &p)), DENSE_OK);
        EXPECT_EQ(y, product);
        y = residual;
        ASSERT_EQ(run(g, make_call(DENSE_OP_GEMV_Q, src, dst)), DENSE_OK);  // no params: dst = W x
        EXPECT_EQ(y, product);
        EXPECT_TRUE(host_.logs.empty());
    }
}

}  // namespace
