// What synth writes, decoded by the cpu-ref kernels (the project's bit-exact dequantizer): every format
// gives mean ~0 and std ~1/sqrt(IN); fp16 scales are finite; the 1-D tensors follow their stated
// distributions; and the IQ grid constants synth relies on match the tables.
#include "synth_test_support.hpp"

#include "core/half.hpp"
#include "kernels/formats.hpp"
#include "synth/block_fill.hpp"

#include <dense_quant_tables.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

namespace {

using namespace dense::synth;
using dense::synth::test::request;

struct Stats {
    double mean = 0, std = 0, min = 0, max = 0;
    uint64_t n = 0;
    bool finite = true;
};

Stats stats_of(const std::vector<float>& v) {
    Stats s;
    s.n = v.size();
    s.min = s.max = v.empty() ? 0 : v[0];
    double sum = 0, sq = 0;
    for (float x : v) {
        if (!std::isfinite(x)) s.finite = false;
        sum += x;
        sq += double{x} * x;
        s.min = std::min<double>(s.min, x);
        s.max = std::max<double>(s.max, x);
    }
    s.mean = sum / static_cast<double>(s.n);
    s.std = std::sqrt(std::max(0.0, sq / static_cast<double>(s.n) - s.mean * s.mean));
    return s;
}

std::vector<float> dequantize(const dense::gguf::TensorInfo& t) {
    std::vector<float> out(static_cast<size_t>(t.n_elements()));
    dense::cpuref::dequantize_row(t.type, t.data.data(), out.data(), t.n_elements());
    return out;
}

// Bounds: |mean| <= 0.02 sigma and std within 5% of sigma, for tensors of >= 100k elements. The
// construction makes E[y] = 0 and E[y^2] = sigma^2 exactly up to fp16 rounding of d; the sampling
// error over 100k elements (with per-block scale correlation) is ~1%.
constexpr double kMeanBound = 0.02, kStdBound = 0.05;

TEST(SynthValues, EveryFormatHasZeroMeanAndTargetStd) {
    const char* mixes[] = {"q8_0", "q2_k", "q3_k", "q4_k", "q5_k", "q6_k", "iq2_xs", "iq2_s",
                           "iq3_xxs", "iq3_s", "iq4_nl", "iq4_xs", "f32", "f16", "bf16"};
    ShapeOverrides o = dense::synth::test::small_vocab();
    o.n_layer = 4;
    for (const char* mix : mixes) {
        const auto m = dense::synth::test::synthesize(request("small", mix, 11, o));
        // Inner dims 512 (n_embd) and 1536 (n_ff): two different sigmas.
        for (const char* name : {"blk.0.ffn_gate.weight", "blk.1.ffn_down.weight", "blk.0.attn_qkv.weight", "blk.3.attn_q.weight"}) {
            const auto* t = m.file->find_tensor(name);
            ASSERT_NE(t, nullptr) << name;
            ASSERT_GE(t->n_elements(), 100000);
            const Stats s = stats_of(dequantize(*t));
            const double sigma = 1.0 / std::sqrt(static_cast<double>(t->ne[0]));
            EXPECT_TRUE(s.finite) << mix << " " << name;
            EXPECT_LE(std::abs(s.mean), kMeanBound * sigma) << mix << " " << name << " mean " << s.mean;
            EXPECT_NEAR(s.std / sigma, 1.0, kStdBound) << mix << " " << name << " std " << s.std << " target " << sigma;
            EXPECT_LT(std::max(-s.min, s.max), 12 * sigma) << mix << " " << name << ": no wild outliers";
            if (std::string(name) == "blk.1.ffn_down.weight")
                std::printf("%-8s %s: mean/sigma %+.4f, std/sigma %.4f, max|w|/sigma %.2f\n", mix, name, s.mean / sigma,
                            s.std / sigma, std::max(-s.min, s.max) / sigma);
        }
    }
}

TEST(SynthValues, SeedIq4TinyEveryMatrixNearTarget) {
    const auto m = dense::synth::test::synthesize(request("tiny", "seed-iq4", 1, dense::synth::test::small_vocab(4096)));
    int checked = 0;
    for (const auto& t : m.file->tensors()) {
        if (t.n_dims != 2 || t.type == DENSE_TYPE_F32) continue;
        const Stats s = stats_of(dequantize(t));
        const double sigma = 1.0 / std::sqrt(static_cast<double>(t.ne[0]));
        // Small tensors (ssm_alpha: 256 x 4 = 1024 elements) get wider sampling bounds.
        const double k = 1.0 / std::sqrt(static_cast<double>(s.n) / 100000.0);
        EXPECT_TRUE(s.finite) << t.name;
        EXPECT_LE(std::abs(s.mean), std::max(kMeanBound, 3 * kMeanBound * k) * sigma) << t.name;
        EXPECT_NEAR(s.std / sigma, 1.0, std::max(kStdBound, 3 * kStdBound * k)) << t.name;
        ++checked;
    }
    EXPECT_GT(checked, 40);
}

TEST(SynthValues, Fp16ScalesAreFiniteAndPositiveWhereTheyMustBe) {
    // Random blocks for a wide range of sigmas (1/sqrt(IN) for IN up to 65536): no inf/nan d or dmin.
    for (const auto& f : dense::cpuref::all_formats()) {
        if (!f.storable || !can_generate(f.type)) continue;
        for (double sigma : {1.0 / 4, 1.0 / 64, 1.0 / 256}) {
            const BlockRecipe r = make_recipe(f.type, sigma);
            std::vector<std::byte> blocks(64 * r.block_bytes);
            Rng rng(stream_seed(5, f.type, static_cast<uint64_t>(1 / sigma)));
            fill_blocks(r, rng, blocks.data(), 64);
            for (size_t b = 0; b < 64; ++b) {
                for (int16_t off : f.fp16_field_offsets) {
                    if (off < 0) continue;
                    uint16_t h;
                    std::memcpy(&h, blocks.data() + b * r.block_bytes + off, 2);
                    EXPECT_TRUE(std::isfinite(dense::fp16_to_fp32(h))) << f.name;
                    EXPECT_NE(h & 0x7FFF, 0) << f.name << ": zero scale";
                }
            }
        }
    }
}

TEST(SynthValues, VectorsFollowTheirDistributions) {
    ShapeOverrides o = dense::synth::test::small_vocab();
    o.n_layer = 24;
    const auto m = dense::synth::test::synthesize(request("small", "q8_0", 3, o));
    std::vector<float> norms, ssm_norm, ssm_a, dt_bias, conv;
    const auto append = [](std::vector<float>& v, const dense::gguf::TensorInfo& t) {
        ASSERT_EQ(t.type, DENSE_TYPE_F32) << t.name;
        const auto* p = reinterpret_cast<const float*>(t.data.data());
        v.insert(v.end(), p, p + t.n_elements());
    };
    for (const auto& t : m.file->tensors()) {
        const std::string name(t.name);
        const auto ends = [&](const char* s) { return name.size() > std::strlen(s) && name.ends_with(s); };
        if (ends("attn_norm.weight") || ends("output_norm.weight") || ends("q_norm.weight") || ends("k_norm.weight"))
            append(norms, t);
        else if (ends("ssm_norm.weight")) append(ssm_norm, t);
        else if (ends("ssm_a")) append(ssm_a, t);
        else if (ends("ssm_dt.bias")) append(dt_bias, t);
        else if (ends("ssm_conv1d.weight")) append(conv, t);
    }
    const Stats n = stats_of(norms), sn = stats_of(ssm_norm), dt = stats_of(dt_bias), cv = stats_of(conv);
    EXPECT_NEAR(n.mean, 1.0, 0.01);
    EXPECT_NEAR(n.std, 0.1, 0.01);
    EXPECT_NEAR(sn.mean, 1.0, 0.02);
    EXPECT_NEAR(sn.std, 0.1, 0.02);
    EXPECT_NEAR(dt.mean, 0.0, 0.15);
    EXPECT_NEAR(dt.std, 0.5, 0.1);
    EXPECT_NEAR(cv.mean, 0.0, 0.02);
    EXPECT_NEAR(cv.std, 0.5, 0.02);
    ASSERT_FALSE(ssm_a.empty());
    std::vector<float> log_neg_a;
    for (float a : ssm_a) {
        EXPECT_LT(a, 0.0f);
        log_neg_a.push_back(std::log(-a));
    }
    const Stats la = stats_of(log_neg_a);
    EXPECT_NEAR(la.mean, 0.0, 0.15);
    EXPECT_NEAR(la.std, 0.5, 0.1);
}

double grid_bytes_mean_square(const uint64_t* grid, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; ++i)
        for (int j = 0; j < 8; ++j) {
            const double b = static_cast<double>((grid[i] >> (8 * j)) & 0xFF);
            s += b * b;
        }
    return s / static_cast<double>(8 * n);
}
double grid_bytes_mean_square(const uint32_t* grid, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; ++i)
        for (int j = 0; j < 4; ++j) {
            const double b = static_cast<double>((grid[i] >> (8 * j)) & 0xFF);
            s += b * b;
        }
    return s / static_cast<double>(4 * n);
}

TEST(SynthValues, GridConstantsMatchTheTables) {
    EXPECT_DOUBLE_EQ(grid_mean_square(DENSE_TYPE_IQ2_XS), grid_bytes_mean_square(dense_iq2xs_grid, 512));
    EXPECT_DOUBLE_EQ(grid_mean_square(DENSE_TYPE_IQ2_S), grid_bytes_mean_square(dense_iq2s_grid, 1024));
    EXPECT_DOUBLE_EQ(grid_mean_square(DENSE_TYPE_IQ3_XXS), grid_bytes_mean_square(dense_iq3xxs_grid, 256));
    EXPECT_DOUBLE_EQ(grid_mean_square(DENSE_TYPE_IQ3_S), grid_bytes_mean_square(dense_iq3s_grid, 512));
    double k = 0;
    for (int8_t v : dense_kvalues_iq4nl) k += static_cast<double>(v) * v;
    EXPECT_DOUBLE_EQ(grid_mean_square(DENSE_TYPE_IQ4_NL), k / 16);
}

}  // namespace
