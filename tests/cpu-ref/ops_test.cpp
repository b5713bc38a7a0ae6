// The cpu-ref activation-op kernels (plugins/cpu-ref/src/kernels/ops.hpp) against the independent
// double-precision references of op_reference.hpp, at small shapes and at the real Qwen3.5-27B
// shapes, with seeded random inputs. Tolerances: see opref::all_near (1e-6 relative: float32 outputs
// of double math) and the fp16 notes at the KV-cache tests.
#include "cpu-ref/op_reference.hpp"

#include "kernels/ops.hpp"

#include <bit>

namespace {

using namespace dense;
using namespace dense::test::opref;

// Qwen3.5-27B (spec section 2).
constexpr int64_t kEmbd = 5120, kHeadDim = 256, kHq = 24, kHkv = 4, kNRot = 64;
constexpr float kBase = 1e7f;
constexpr int64_t kDk = 128, kDv = 128, kHk = 16, kHv = 48, kConvC = 10240, kConvK = 4;
constexpr float kEps = 1e-6f;
constexpr float kPad = -777.25f;  // fills the gaps between strided rows; must survive every op

// `rows` rows of n floats, row r at r * stride; the gaps hold kPad.
std::vector<float> pack_rows(const FRows& r, int64_t stride) {
    std::vector<float> out(r.size() * static_cast<std::size_t>(stride), kPad);
    for (std::size_t i = 0; i < r.size(); ++i)
        std::copy(r[i].begin(), r[i].end(), out.begin() + static_cast<std::ptrdiff_t>(i * static_cast<std::size_t>(stride)));
    return out;
}

std::vector<float> row_of(const std::vector<float>& buf, int64_t r, int64_t n, int64_t stride) {
    const auto first = buf.begin() + static_cast<std::ptrdiff_t>(r * stride);
    return {first, first + static_cast<std::ptrdiff_t>(n)};
}

// Every element of buf outside the rows [r * stride, r * stride + n) still holds kPad.
bool gaps_untouched(const std::vector<float>& buf, int64_t n, int64_t stride) {
    for (std::size_t i = 0; i < buf.size(); ++i)
        if (static_cast<int64_t>(i) % stride >= n && std::bit_cast<uint32_t>(buf[i]) != std::bit_cast<uint32_t>(kPad))
            return false;
    return true;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// ---- norms -------------------------------------------------------------------------------------------

struct NormCase {
    int64_t n, rows, x_stride, y_stride;
};
// Small odd sizes with strides, the real hidden vector, the query heads inside the interleaved
// query+gate projection (stride 512), the GDN heads.
const NormCase kNormCases[] = {{7, 3, 11, 9}, {1, 4, 2, 1}, {kEmbd, 1, kEmbd, kEmbd}, {kHeadDim, kHq, 2 * kHeadDim, kHeadDim},
                               {kDv, kHv, kDv, kDv}};

TEST(CpuRefOps, RmsNormMatchesReferenceStridedAndInPlace) {
    std::mt19937_64 rng(101);
    for (const NormCase& c : kNormCases) {
        const auto x = uniform_rows(static_cast<std::size_t>(c.rows), static_cast<std::size_t>(c.n), rng, -3.0f, 3.0f);
        const auto w = uniform(static_cast<std::size_t>(c.n), rng, 0.5f, 1.5f);
        const auto xb = pack_rows(x, c.x_stride);
        std::vector<float> yb(static_cast<std::size_t>(c.rows * c.y_stride), kPad);
        cpuref::rms_norm(xb.data(), c.x_stride, w.data(), yb.data(), c.y_stride, c.n, c.rows, kEps);
        for (int64_t r = 0; r < c.rows; ++r)
            EXPECT_TRUE(all_near(row_of(yb, r, c.n, c.y_stride), ref_rms_norm(x[static_cast<std::size_t>(r)], w, kEps)))
                << "n " << c.n << " row " << r;
        EXPECT_TRUE(gaps_untouched(yb, c.n, c.y_stride));
        auto inplace = xb;  // dst aliasing src0 gives the same bits
        cpuref::rms_norm(inplace.data(), c.x_stride, w.data(), inplace.data(), c.x_stride, c.n, c.rows, kEps);
        for (int64_t r = 0; r < c.rows; ++r)
            EXPECT_TRUE(same_bits(row_of(inplace, r, c.n, c.x_stride), row_of(yb, r, c.n, c.y_stride)));
        EXPECT_TRUE(gaps_untouched(inplace, c.n, c.x_stride));
    }
}

TEST(CpuRefOps, L2NormMatchesReferenceStridedAndInPlace) {
    std::mt19937_64 rng(102);
    for (const NormCase& c : kNormCases) {
        const auto x = uniform_rows(static_cast<std::size_t>(c.rows), static_cast<std::size_t>(c.n), rng, -2.0f, 2.0f);
        const auto xb = pack_rows(x, c.x_stride);
        std::vector<float> yb(static_cast<std::size_t>(c.rows * c.y_stride), kPad);
        cpuref::l2_norm(xb.data(), c.x_stride, yb.data(), c.y_stride, c.n, c.rows, kEps);
        for (int64_t r = 0; r < c.rows; ++r)
            EXPECT_TRUE(all_near(row_of(yb, r, c.n, c.y_stride), ref_l2_norm(x[static_cast<std::size_t>(r)], kEps)));
        EXPECT_TRUE(gaps_untouched(yb, c.n, c.y_stride));
        auto inplace = xb;
        cpuref::l2_norm(inplace.data(), c.x_stride, inplace.data(), c.x_stride, c.n, c.rows, kEps);
        for (int64_t r = 0; r < c.rows; ++r)
            EXPECT_TRUE(same_bits(row_of(inplace, r, c.n, c.x_stride), row_of(yb, r, c.n, c.y_stride)));
    }
    // eps sits inside the square root of the SUM: a tiny vector is not blown up to unit length.
    std::vector<float> tiny(16, 1e-4f), y(16);
    cpuref::l2_norm(tiny.data(), 16, y.data(), 16, 16, 1, 1e-6f);
    const double want = 1e-4f / std::sqrt(16.0 * double(1e-4f) * double(1e-4f) + double(1e-6f));
    EXPECT_NEAR(y[0], want, 1e-6 * want);
    EXPECT_LT(y[0], 0.1f) << "eps counted once against the sum, not per element";
}

TEST(CpuRefOps, GatedRmsNormMatchesReference) {
    std::mt19937_64 rng(103);
    for (const NormCase& c : kNormCases) {
        const auto rows = static_cast<std::size_t>(c.rows), n = static_cast<std::size_t>(c.n);
        const auto x = uniform_rows(rows, n, rng, -2.0f, 2.0f);
        const auto z = uniform_rows(rows, n, rng, -6.0f, 6.0f);
        const auto w = uniform(n, rng, 0.5f, 1.5f);
        const auto xb = pack_rows(x, c.x_stride), zb = pack_rows(z, c.x_stride);
        std::vector<float> yb(rows * static_cast<std::size_t>(c.y_stride), kPad);
        cpuref::gated_rms_norm(xb.data(), c.x_stride, zb.data(), c.x_stride, w.data(), yb.data(), c.y_stride, c.n,
                               c.rows, kEps);
        for (std::size_t r = 0; r < rows; ++r)
            EXPECT_TRUE(all_near(row_of(yb, static_cast<int64_t>(r), c.n, c.y_stride),
                                 ref_gated_rms_norm(x[r], z[r], w, kEps)));
        EXPECT_TRUE(gaps_untouched(yb, c.n, c.y_stride));
    }
}

// ---- elementwise -------------------------------------------------------------------------------------

TEST(CpuRefOps, SwigluMatchesReference) {
    std::mt19937_64 rng(104);
    for (std::size_t n : {std::size_t{9}, std::size_t{17408}}) {
        auto gate = uniform(n, rng, -8.0f, 8.0f);
        const auto up = uniform(n, rng, -2.0f, 2.0f);
        gate[0] = -100.0f;  // exp overflow region: silu -> -0
        gate[1] = 100.0f;   // silu -> x
        std::vector<float> y(n);
        cpuref::swiglu(gate.data(), up.data(), y.data(), static_cast<int64_t>(n));
        std::vector<double> want(n);
        for (std::size_t i = 0; i < n; ++i) want[i] = ref_silu(gate[i]) * up[i];
        EXPECT_TRUE(all_near(y, want)) << n;
    }
}

TEST(CpuRefOps, GdnGatesMatchReferenceIncludingSoftplusSwitch) {
    std::mt19937_64 rng(105);
    for (std::size_t h : {std::size_t{6}, static_cast<std::size_t>(kHv)}) {
        auto b = uniform(h, rng, -6.0f, 6.0f), a = uniform(h, rng, -6.0f, 6.0f);
        const auto dt = uniform(h, rng, -1.0f, 1.0f);
        auto A = uniform(h, rng, -2.0f, -0.01f);
        a[0] = 25.0f;  // a + dt > 20: softplus is the identity
        A[0] = -0.001f;
        a[1] = -30.0f;  // softplus ~ e^x: decay ~ 1
        std::vector<float> beta(h), decay(h);
        cpuref::gdn_gates(b.data(), a.data(), dt.data(), A.data(), beta.data(), decay.data(), static_cast<int64_t>(h));
        std::vector<double> want_beta(h), want_decay(h);
        for (std::size_t i = 0; i < h; ++i) {
            want_beta[i] = ref_sigmoid(b[i]);
            want_decay[i] = std::exp(ref_softplus(static_cast<double>(a[i]) + dt[i]) * A[i]);
        }
        EXPECT_TRUE(all_near(beta, want_beta));
        EXPECT_TRUE(all_near(decay, want_decay));
        for (float d : decay) EXPECT_TRUE(d > 0.0f && d <= 1.0f);
    }
}

TEST(CpuRefOps, HasNonFiniteFindsNanAndInfOnly) {
    std::mt19937_64 rng(106);
    auto x = uniform(1000, rng);
    x[3] = 3.0e38f;  // large but finite
    x[4] = std::numeric_limits<float>::denorm_min();
    EXPECT_FALSE(cpuref::has_non_finite(x.data(), 1000));
    for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                      -std::numeric_limits<float>::infinity()}) {
        for (std::size_t at : {std::size_t{0}, std::size_t{999}}) {
            auto y = x;
            y[at] = bad;
            EXPECT_TRUE(cpuref::has_non_finite(y.data(), 1000)) << bad << " at " << at;
            EXPECT_FALSE(cpuref::has_non_finite(y.data() + (at == 0 ? 1 : 0), 999)) << "only the first n are read";
        }
    }
}

// ---- RoPE --------------------------------------------------------------------------------------------

struct RopeCase {
    int64_t head_dim, heads, n_rot, x_stride;
    float base;
};

TEST(CpuRefOps, RopeNeoxPartialMatchesReference) {
    std::mt19937_64 rng(107);
    const RopeCase cases[] = {{8, 3, 4, 8, 10000.0f}, {32, 6, 8, 64, 10000.0f}, {kHeadDim, kHq, kNRot, 2 * kHeadDim, kBase},
                              {kHeadDim, kHkv, kNRot, kHeadDim, kBase}, {6, 2, 6, 7, 10000.0f}};
    for (const RopeCase& c : cases) {
        for (int64_t pos : {int64_t{0}, int64_t{1}, int64_t{77}, int64_t{123456}}) {
            const auto x = uniform_rows(static_cast<std::size_t>(c.heads), static_cast<std::size_t>(c.head_dim), rng,
                                        -2.0f, 2.0f);
            const auto xb = pack_rows(x, c.x_stride);
            std::vector<float> yb(xb.size(), kPad);
            cpuref::rope_neox(xb.data(), c.x_stride, yb.data(), c.x_stride, c.head_dim, c.heads, c.n_rot, pos, c.base,
                              1.0f);
            for (int64_t h = 0; h < c.heads; ++h) {
                const auto got = row_of(yb, h, c.head_dim, c.x_stride);
                const auto& in = x[static_cast<std::size_t>(h)];
                EXPECT_TRUE(all_near(got, ref_rope(in, c.n_rot, pos, c.base))) << "pos " << pos << " head " << h;
                for (int64_t i = c.n_rot; i < c.head_dim; ++i)  // pass-through dims: bit-identical
                    EXPECT_EQ(std::bit_cast<uint32_t>(got[static_cast<std::size_t>(i)]),
                              std::bit_cast<uint32_t>(in[static_cast<std::size_t>(i)]));
                if (pos == 0) {
                    EXPECT_TRUE(same_bits(got, in)) << "position 0 is the identity";
                }
            }
            EXPECT_TRUE(gaps_untouched(yb, c.head_dim, c.x_stride));
            auto inplace = xb;
            cpuref::rope_neox(inplace.data(), c.x_stride, inplace.data(), c.x_stride, c.head_dim, c.heads, c.n_rot, pos,
                              c.base, 1.0f);
            EXPECT_TRUE(same_bits(inplace, yb)) << "in place gives the same bits";
        }
    }
}

TEST(CpuRefOps, RopePairsNeoxStyleAndScalesFrequencies) {
    // Only dims 0 and n_rot/2 non-zero: NeoX pairs them (GPT-J style would pair 0 with 1).
    std::vector<float> x(8, 0.0f), y(8);
    x[0] = 1.0f;
    cpuref::rope_neox(x.data(), 8, y.data(), 8, 8, 1, 4, 1, 10000.0f, 1.0f);
    EXPECT_NEAR(y[0], std::cos(1.0), 1e-7);
    EXPECT_NEAR(y[2], std::sin(1.0), 1e-7);
    EXPECT_EQ(y[1], 0.0f);
    EXPECT_EQ(y[3], 0.0f);
    // freq_scale multiplies the angle: scale 0.5 at position 2 equals scale 1 at position 1.
    std::mt19937_64 rng(108);
    const auto z = uniform(kHeadDim, rng);
    std::vector<float> a(kHeadDim), b(kHeadDim);
    cpuref::rope_neox(z.data(), kHeadDim, a.data(), kHeadDim, kHeadDim, 1, kNRot, 2, kBase, 0.5f);
    cpuref::rope_neox(z.data(), kHeadDim, b.data(), kHeadDim, kHeadDim, 1, kNRot, 1, kBase, 1.0f);
    EXPECT_TRUE(all_near(a, std::vector<double>(b.begin(), b.end())));
    EXPECT_TRUE(all_near(a, ref_rope(z, kNRot, 2, kBase, 0.5)));
}

// ---- KV cache + attention ------------------------------------------------------------------------------

// fp16 tests: the stored bits must be exactly the IEEE round-to-nearest-even of the float (checked
// against the compiler's _Float16 conversion, independent of core/half.hpp), including ties,
// subnormals and overflow to infinity.
TEST(CpuRefOps, KvStoreWritesOneSlotRoundedToNearestEven) {
    if (!kHaveFloat16) GTEST_SKIP() << "this compiler has no _Float16 to serve as the fp16 oracle";
    std::mt19937_64 rng(109);
    const int64_t d = kHeadDim, hkv = kHkv, n_ctx = 6, pos = 4;
    auto k = uniform(static_cast<std::size_t>(d * hkv), rng, -4.0f, 4.0f);
    auto v = uniform(static_cast<std::size_t>(d * hkv), rng, -4.0f, 4.0f);
    const float specials[] = {1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f, -(2.0f + 0x1p-10f), 0x1p-25f, 0x1.8p-24f,
                              3.0e-6f, 65519.0f, 65520.0f, 1.0e6f, -0.0f};
    for (std::size_t i = 0; i < std::size(specials); ++i) k[i * 7] = v[i * 11] = specials[i];
    for (dense_type_id type : {DENSE_TYPE_F16, DENSE_TYPE_F32}) {
        const std::size_t elem = type == DENSE_TYPE_F16 ? 2 : 4;
        const std::size_t slot = static_cast<std::size_t>(d * hkv) * elem;
        std::vector<uint8_t> kc(slot * n_ctx, 0xAB), vc(slot * n_ctx, 0xCD);
        cpuref::kv_store(type, k.data(), d, v.data(), d, d, hkv, pos, kc.data(), vc.data());
        for (std::size_t b = 0; b < kc.size(); ++b) {
            if (b >= slot * pos && b < slot * (pos + 1)) continue;
            ASSERT_EQ(kc[b], 0xAB) << "K byte " << b << " outside slot " << pos << " was written";
            ASSERT_EQ(vc[b], 0xCD) << "V byte " << b << " outside slot " << pos;
        }
        for (std::size_t i = 0; i < k.size(); ++i) {
            const uint8_t* kp = kc.data() + slot * pos + i * elem;
            const uint8_t* vp = vc.data() + slot * pos + i * elem;
            if (type == DENSE_TYPE_F16) {
                uint16_t kb, vb;
                std::memcpy(&kb, kp, 2);
                std::memcpy(&vb, vp, 2);
                ASSERT_EQ(kb, ref_fp16_bits(k[i])) << "k[" << i << "] = " << k[i];
                ASSERT_EQ(vb, ref_fp16_bits(v[i])) << "v[" << i << "] = " << v[i];
            } else {
                ASSERT_EQ(std::memcmp(kp, &k[i], 4), 0);
                ASSERT_EQ(std::memcmp(vp, &v[i], 4), 0);
            }
        }
    }
    EXPECT_EQ(ref_fp16_bits(1.0f + 0x1p-11f), 0x3C00u) << "the oracle ties to even";
}

// A cache as the tests see it: positions x heads x values, plus its flat bytes in the kernel layout.
struct Cache {
    std::vector<FRows> k, v;  // [pos][head][e], the values as stored (fp16-rounded for F16)
    std::vector<uint8_t> k_bytes, v_bytes;
};

// Fills positions 0..n_kv-1 through kv_store (the round trip under test) and records the values the
// cache must hold.
Cache fill_cache(dense_type_id type, int64_t d, int64_t hkv, int64_t n_ctx, int64_t n_kv, std::mt19937_64& rng,
                 float v_offset_per_head = 0.0f) {
    Cache c;
    const std::size_t elem = type == DENSE_TYPE_F16 ? 2 : 4;
    // NaN (0xFFFF / 0xFFFFFFFF) in every slot not stored: reading past n_kv would poison the output.
    c.k_bytes.assign(static_cast<std::size_t>(d * hkv * n_ctx) * elem, 0xFF);
    c.v_bytes.assign(c.k_bytes.size(), 0xFF);
    for (int64_t p = 0; p < n_kv; ++p) {
        auto k = uniform_rows(static_cast<std::size_t>(hkv), static_cast<std::size_t>(d), rng, -1.5f, 1.5f);
        auto v = uniform_rows(static_cast<std::size_t>(hkv), static_cast<std::size_t>(d), rng, -1.0f, 1.0f);
        for (std::size_t g = 0; g < v.size(); ++g)
            for (float& x : v[g]) x += v_offset_per_head * static_cast<float>(g);
        std::vector<float> kf, vf;
        for (std::size_t g = 0; g < k.size(); ++g) {
            kf.insert(kf.end(), k[g].begin(), k[g].end());
            vf.insert(vf.end(), v[g].begin(), v[g].end());
        }
        cpuref::kv_store(type, kf.data(), d, vf.data(), d, d, hkv, p, c.k_bytes.data(), c.v_bytes.data());
        if (type == DENSE_TYPE_F16)
            for (auto* rows : {&k, &v})
                for (auto& r : *rows)
                    for (float& x : r) x = ref_fp16_value(ref_fp16_bits(x));
        c.k.push_back(std::move(k));
        c.v.push_back(std::move(v));
    }
    return c;
}

struct AttnCase {
    int64_t d, hq, hkv, n_ctx, n_kv;
};

TEST(CpuRefOps, AttentionDecodeMatchesReferenceWithGqaGateAndStridedQuery) {
    if (!kHaveFloat16) GTEST_SKIP() << "this compiler has no _Float16 to serve as the fp16 oracle";
    std::mt19937_64 rng(110);
    const AttnCase cases[] = {{8, 6, 2, 5, 1}, {8, 6, 2, 5, 5}, {32, 6, 2, 16, 9}, {kHeadDim, kHq, kHkv, 16, 11}};
    for (const AttnCase& c : cases)
        for (dense_type_id type : {DENSE_TYPE_F16, DENSE_TYPE_F32})
            for (bool gated : {false, true}) {
                const Cache cache = fill_cache(type, c.d, c.hkv, c.n_ctx, c.n_kv, rng, 0.5f);
                // q and gate interleaved per head as in the attn_q projection: [q_h | gate_h], stride 2d.
                const auto q = uniform_rows(static_cast<std::size_t>(c.hq), static_cast<std::size_t>(c.d), rng, -2.0f, 2.0f);
                const auto gate = uniform_rows(static_cast<std::size_t>(c.hq), static_cast<std::size_t>(c.d), rng, -4.0f, 4.0f);
                std::vector<float> qg(static_cast<std::size_t>(2 * c.d * c.hq));
                for (std::size_t h = 0; h < q.size(); ++h) {
                    std::copy(q[h].begin(), q[h].end(), qg.begin() + static_cast<std::ptrdiff_t>(2 * h * c.d));
                    std::copy(gate[h].begin(), gate[h].end(), qg.begin() + static_cast<std::ptrdiff_t>((2 * h + 1) * c.d));
                }
                cpuref::AttnDecodeArgs a;
                a.q = qg.data();
                a.q_stride = 2 * c.d;
                a.gate = gated ? qg.data() + c.d : nullptr;
                a.gate_stride = 2 * c.d;
                a.cache_type = type;
                a.k_cache = cache.k_bytes.data();
                a.v_cache = cache.v_bytes.data();
                a.d = c.d;
                a.hq = c.hq;
                a.hkv = c.hkv;
                a.n_kv = c.n_kv;
                a.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(c.d)));
                std::vector<float> out(static_cast<std::size_t>(c.d * c.hq));
                a.out = out.data();
                cpuref::attn_decode(a);
                const std::size_t group = static_cast<std::size_t>(c.hq / c.hkv);
                const auto want = ref_attention(q, cache.k, cache.v, gated ? &gate : nullptr, a.scale,
                                                [&](std::size_t h) { return h / group; });
                EXPECT_TRUE(all_near(out, flatten(want))) << "d " << c.d << " n_kv " << c.n_kv << " type " << type;
                // The data tells the grouped mapping from the modular one (V heads are offset by 0.5).
                const auto wrong = ref_attention(q, cache.k, cache.v, gated ? &gate : nullptr, a.scale,
                                                 [&](std::size_t h) { return h % static_cast<std::size_t>(c.hkv); });
                EXPECT_GT(max_abs_diff(out, flatten(wrong)), 0.05) << "h % Hkv would not be caught";
            }
}

TEST(CpuRefOps, AttentionSoftmaxIsStableForLargeScores) {
    std::mt19937_64 rng(111);
    const int64_t d = 16, n_kv = 7;
    const Cache cache = fill_cache(DENSE_TYPE_F32, d, 1, n_kv, n_kv, rng);
    auto q = uniform_rows(2, d, rng);
    for (float& x : q[1]) x *= 2000.0f;  // scores in the thousands: exp would overflow without the max
    std::vector<float> qf(q[0]);
    qf.insert(qf.end(), q[1].begin(), q[1].end());
    std::vector<float> out(2 * d);
    cpuref::AttnDecodeArgs a;
    a.q = qf.data();
    a.q_stride = d;
    a.cache_type = DENSE_TYPE_F32;
    a.k_cache = cache.k_bytes.data();
    a.v_cache = cache.v_bytes.data();
    a.d = d;
    a.hq = 2;
    a.hkv = 1;
    a.n_kv = n_kv;
    a.scale = 1.0f;
    a.out = out.data();
    cpuref::attn_decode(a);
    EXPECT_TRUE(all_near(out, flatten(ref_attention(q, cache.k, cache.v, nullptr, 1.0, [](std::size_t) { return 0u; }))));
}

// ---- conv ----------------------------------------------------------------------------------------------

TEST(CpuRefOps, ConvShiftsStateOverSeveralStepsAndMatchesReference) {
    std::mt19937_64 rng(112);
    for (auto [channels, kernel] : {std::pair<int64_t, int64_t>{5, 4}, {3, 2}, {4, 5}, {kConvC, kConvK}}) {
        const auto C = static_cast<std::size_t>(channels), K = static_cast<std::size_t>(kernel);
        const auto taps = uniform_rows(C, K, rng, -1.0f, 1.0f);
        std::vector<float> taps_flat;
        for (const auto& t : taps) taps_flat.insert(taps_flat.end(), t.begin(), t.end());
        FRows ref_state = uniform_rows(C, K - 1, rng);  // a non-zero initial state
        std::vector<float> state;
        for (const auto& s : ref_state) state.insert(state.end(), s.begin(), s.end());
        const auto initial = state;
        std::vector<std::vector<float>> inputs;
        for (int step = 0; step < 6; ++step) {
            const bool silu = step % 2 == 0;
            inputs.push_back(uniform(C, rng, -3.0f, 3.0f));
            const auto& x = inputs.back();
            std::vector<float> y(C), next(state.size(), kPad);
            cpuref::conv1d_causal(x.data(), taps_flat.data(), state.data(), y.data(), next.data(), channels, kernel, silu);
            EXPECT_TRUE(all_near(y, ref_conv_step(x, taps, ref_state, silu))) << "C " << C << " step " << step;
            // In place (state_out = state_in) gives the same bits.
            auto inplace = state;
            std::vector<float> y2(C);
            cpuref::conv1d_causal(x.data(), taps_flat.data(), inplace.data(), y2.data(), inplace.data(), channels, kernel,
                                  silu);
            EXPECT_TRUE(same_bits(y2, y));
            EXPECT_TRUE(same_bits(inplace, next));
            // The state is exactly the last K-1 inputs of [initial state | x_0 .. x_step] (oldest first).
            for (std::size_t c = 0; c < C; ++c)
                for (std::size_t i = 0; i < K - 1; ++i) {
                    const int64_t t = static_cast<int64_t>(step) - static_cast<int64_t>(K - 2 - i);  // input index
                    const float want = t >= 0 ? inputs[static_cast<std::size_t>(t)][c]
                                              : initial[c * (K - 1) + static_cast<std::size_t>(static_cast<int64_t>(K - 1) + t)];
                    ASSERT_EQ(std::bit_cast<uint32_t>(next[c * (K - 1) + i]), std::bit_cast<uint32_t>(want))
                        << "channel " << c << " slot " << i << " step " << step;
                }
            state = next;
        }
    }
}

// ---- gated delta rule ----------------------------------------------------------------------------------

struct GdnCase {
    int64_t dk, dv, hk, hv;
    int64_t qk_stride, v_stride;  // row strides of the q/k and v views
};

// Flat state (kernel layout: head h's S[i][j] at h*dk*dv + j*dk + i) <-> the reference's S[h][i][j].
State unflatten_state(const std::vector<float>& flat, int64_t dk, int64_t dv, int64_t hv) {
    State S(static_cast<std::size_t>(hv), std::vector<std::vector<double>>(static_cast<std::size_t>(dk),
                                                                              std::vector<double>(static_cast<std::size_t>(dv))));
    for (int64_t h = 0; h < hv; ++h)
        for (int64_t i = 0; i < dk; ++i)
            for (int64_t j = 0; j < dv; ++j)
                S[static_cast<std::size_t>(h)][static_cast<std::size_t>(i)][static_cast<std::size_t>(j)] =
                    flat[static_cast<std::size_t>(h * dk * dv + j * dk + i)];
    return S;
}
std::vector<double> flatten_state(const State& S) {
    const std::size_t hv = S.size(), dk = S[0].size(), dv = S[0][0].size();
    std::vector<double> out(hv * dk * dv);
    for (std::size_t h = 0; h < hv; ++h)
        for (std::size_t i = 0; i < dk; ++i)
            for (std::size_t j = 0; j < dv; ++j) out[h * dk * dv + j * dk + i] = S[h][i][j];
    return out;
}

FRows l2_rows(FRows r) {
    for (auto& row : r) {
        const auto n = ref_l2_norm(row, 1e-6);
        for (std::size_t i = 0; i < row.size(); ++i) row[i] = static_cast<float>(n[i]);
    }
    return r;
}

TEST(CpuRefOps, GdnDecodeMatchesReferenceOverSeveralSteps) {
    std::mt19937_64 rng(113);
    // dk != dv in the small cases so a transposed state layout cannot pass; Hv/Hk = 3 as in the model.
    const GdnCase cases[] = {{4, 3, 2, 6, 4, 3}, {5, 7, 2, 6, 9, 8}, {16, 16, 2, 6, 16, 16}, {kDk, kDv, kHk, kHv, kDk, kDv}};
    for (const GdnCase& c : cases) {
        const auto hk = static_cast<std::size_t>(c.hk), hv = static_cast<std::size_t>(c.hv);
        const auto dk = static_cast<std::size_t>(c.dk), dv = static_cast<std::size_t>(c.dv);
        std::vector<float> state = uniform(hv * dk * dv, rng, -0.5f, 0.5f);
        const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(c.dk)));
        for (int step = 0; step < 3; ++step) {
            const FRows q = l2_rows(uniform_rows(hk, dk, rng)), k = l2_rows(uniform_rows(hk, dk, rng));
            const FRows v = uniform_rows(hv, dv, rng, -1.0f, 1.0f);
            const auto beta = uniform(hv, rng, 0.05f, 0.95f), decay = uniform(hv, rng, 0.5f, 1.0f);
            const auto qb = pack_rows(q, c.qk_stride), kb = pack_rows(k, c.qk_stride), vb = pack_rows(v, c.v_stride);
            std::vector<float> o(hv * dv), next(state.size());
            cpuref::GdnDecodeArgs a;
            a.q = qb.data();
            a.q_stride = c.qk_stride;
            a.k = kb.data();
            a.k_stride = c.qk_stride;
            a.v = vb.data();
            a.v_stride = c.v_stride;
            a.beta = beta.data();
            a.decay = decay.data();
            a.state_in = state.data();
            a.state_out = next.data();
            a.o = o.data();
            a.dk = c.dk;
            a.dv = c.dv;
            a.hk = c.hk;
            a.hv = c.hv;
            a.scale = scale;
            cpuref::gdn_decode(a);
            const State S = unflatten_state(state, c.dk, c.dv, c.hv);
            const auto want = ref_gdn_step(q, k, v, beta, decay, S, scale, [&](std::size_t h) { return h % hk; });
            EXPECT_TRUE(all_near(o, flatten(want.o))) << "dk " << dk << " step " << step;
            EXPECT_TRUE(all_near(next, flatten_state(want.S))) << "state, dk " << dk << " step " << step;
            // The data tells the tiled head mapping from the grouped one, and the updated state from the old.
            const auto grouped = ref_gdn_step(q, k, v, beta, decay, S, scale, [&](std::size_t h) { return h / (hv / hk); });
            EXPECT_GT(max_abs_diff(o, flatten(grouped.o)), 1e-3) << "h / 3 would not be caught";
            const auto stale = ref_gdn_step(q, k, v, beta, decay, S, scale, [&](std::size_t h) { return h % hk; }, true);
            EXPECT_GT(max_abs_diff(o, flatten(stale.o)), 1e-3) << "an output from the old state would not be caught";
            // In place: state_out = state_in gives the same bits.
            auto inplace = state;
            std::vector<float> o2(o.size());
            a.state_in = inplace.data();
            a.state_out = inplace.data();
            a.o = o2.data();
            cpuref::gdn_decode(a);
            EXPECT_TRUE(same_bits(o2, o));
            EXPECT_TRUE(same_bits(inplace, next));
            state = next;  // carried to the next step as the executor does
        }
    }
}

}  // namespace
