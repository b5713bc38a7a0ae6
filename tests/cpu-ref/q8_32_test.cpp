// Q8_32, the CUDA packs' activation format, in cpu-ref: the quantizer's rules (q8_32.cpp) and the
// dot product of every quantized weight format against it, which is the oracle the GPU GEMV kernels
// are held to.
#include "cpu-ref/quant_test_support.hpp"

#include <bit>
#include <cmath>

namespace {

using namespace dense;
using namespace dense::test::quant;

constexpr int64_t kRows = 64;

float block_scale(const std::vector<uint8_t>& act, int64_t n, int64_t b) {
    float d = 0;
    std::memcpy(&d, act.data() + n + 4 * b, 4);
    return d;
}

float block_sum(const std::vector<uint8_t>& act, int64_t n, int64_t b) {
    float s = 0;
    std::memcpy(&s, act.data() + n + n / 8 + 4 * b, 4);
    return s;
}

TEST(Q8_32Quantizer, CodesScaleAndSumFollowTheRules) {
    std::mt19937_64 rng(31);
    const int64_t n = 4096;
    const auto x = random_activation(n, rng);
    std::vector<uint8_t> act(act_bytes(DENSE_TYPE_Q8_32, n));
    ASSERT_EQ(act.size(), static_cast<std::size_t>(n + n / 8 + n / 8));
    cpuref::quantize_activation(DENSE_TYPE_Q8_32, x.data(), act.data(), n);
    for (int64_t b = 0; b < n / 32; ++b) {
        float amax = 0;
        for (int e = 0; e < 32; ++e) amax = std::max(amax, std::fabs(x[static_cast<std::size_t>(32 * b + e)]));
        const float d = block_scale(act, n, b);
        ASSERT_EQ(std::bit_cast<uint32_t>(d), std::bit_cast<uint32_t>(amax / 127.0f)) << "block " << b;
        int32_t sum = 0;
        bool saw_extreme = false;
        for (int e = 0; e < 32; ++e) {
            const auto q = static_cast<int8_t>(act[static_cast<std::size_t>(32 * b + e)]);
            const float xe = x[static_cast<std::size_t>(32 * b + e)];
            EXPECT_LE(std::fabs(xe - d * q), 0.5f * d * (1 + 1e-6f)) << "block " << b << " element " << e;
            saw_extreme = saw_extreme || q == 127 || q == -127;
            sum += q;
        }
        EXPECT_TRUE(saw_extreme) << "the largest element of block " << b << " must map to +-127";
        EXPECT_EQ(block_sum(act, n, b), d * static_cast<float>(sum)) << "block " << b;
    }
}

TEST(Q8_32Quantizer, ZeroAndNonFiniteBlocks) {
    const int64_t n = 96;
    std::vector<float> x(static_cast<std::size_t>(n), 0.25f);
    for (int e = 0; e < 32; ++e) x[static_cast<std::size_t>(e)] = 0.0f;  // block 0: all zero
    x[40] = std::nanf("");                                                // block 1: a NaN
    x[70] = -INFINITY;                                                    // block 2: an Inf
    std::vector<uint8_t> act(act_bytes(DENSE_TYPE_Q8_32, n), 0xAB);
    cpuref::quantize_activation(DENSE_TYPE_Q8_32, x.data(), act.data(), n);
    EXPECT_EQ(std::bit_cast<uint32_t>(block_scale(act, n, 0)), 0u);
    EXPECT_EQ(std::bit_cast<uint32_t>(block_sum(act, n, 0)), 0u);
    for (int64_t b : {1, 2}) {
        EXPECT_EQ(std::bit_cast<uint32_t>(block_scale(act, n, b)), 0x7FC00000u) << "block " << b;
        EXPECT_EQ(std::bit_cast<uint32_t>(block_sum(act, n, b)), 0x7FC00000u) << "block " << b;
    }
    for (int64_t e = 0; e < n; ++e) EXPECT_EQ(act[static_cast<std::size_t>(e)], 0) << "code " << e;

    // A NaN activation block poisons the dot product of any weight format instead of vanishing.
    const auto& q4k = cpuref::format(DENSE_TYPE_Q4_K);
    std::mt19937_64 rng(3);
    std::vector<float> y(256, 1.0f);
    y[100] = std::nanf("");
    std::vector<uint8_t> a256(act_bytes(DENSE_TYPE_Q8_32, 256));
    cpuref::quantize_activation(DENSE_TYPE_Q8_32, y.data(), a256.data(), 256);
    const auto w = random_blocks(q4k, 1, rng, ScaleRange::Moderate);
    EXPECT_TRUE(std::isnan(cpuref::vec_dot_act(DENSE_TYPE_Q4_K, DENSE_TYPE_Q8_32, w.data(), a256.data(), 256)));
}

class Q8_32Dot : public ::testing::TestWithParam<const cpuref::FormatKernels*> {};

// Two bounds per format, as in gemv_test.cpp:
//  - against W * dequant(act) in float64: only float rounding separates them (integer sums are exact;
//    per 32-block a few scale products and one addition to the running float sum). The same 2e-5 as
//    the Q8_K/Q8_0 paths: a wrong scale index, nibble, sign or sum is of order 1e-2..1.
//  - against W * x: the activation quantization, per 32 block step amax/127 like Q8_0 but with a
//    float (not fp16) scale: expected 3.8e-3 for uniform x; we require [0.5, 1.5] x that pooled.
TEST_P(Q8_32Dot, GemvMatchesFloat64Oracle) {
    const auto& f = *GetParam();
    ASSERT_TRUE(cpuref::has_vec_dot(f.type, DENSE_TYPE_Q8_32)) << f.name;
    double err_x = 0, norm_x = 0;
    for (int64_t in : {int64_t{1024}, int64_t{4096}}) {
        for (uint64_t seed = 0; seed < 3; ++seed) {
            std::mt19937_64 rng(0x832u * (seed + 1) + f.type * 977u + static_cast<uint64_t>(in));
            const auto w = random_blocks(f, kRows * in / f.block_elements, rng, ScaleRange::Moderate);
            std::uniform_real_distribution<float> u(-1.0f, 1.0f);
            std::vector<float> x(static_cast<std::size_t>(in));
            for (auto& v : x) v = u(rng);
            std::vector<uint8_t> act(act_bytes(DENSE_TYPE_Q8_32, in));
            cpuref::quantize_activation(DENSE_TYPE_Q8_32, x.data(), act.data(), in);
            std::vector<float> x_deq(x.size());
            cpuref::dequantize_row(DENSE_TYPE_Q8_32, act.data(), x_deq.data(), in);

            std::vector<float> y(kRows);
            cpuref::gemv_act(f.type, DENSE_TYPE_Q8_32, w.data(), in, kRows, act.data(), y.data());
            std::vector<double> ref(kRows), ref_q(kRows);
            cpuref::gemv_f64_reference(f.type, w.data(), in, kRows, x.data(), ref.data());
            cpuref::gemv_f64_reference(f.type, w.data(), in, kRows, x_deq.data(), ref_q.data());
            double eq = 0, nq = 0;
            for (std::size_t r = 0; r < static_cast<std::size_t>(kRows); ++r) {
                eq += std::pow(y[r] - ref_q[r], 2);
                nq += ref_q[r] * ref_q[r];
                err_x += std::pow(y[r] - ref[r], 2);
                norm_x += ref[r] * ref[r];
            }
            EXPECT_LE(std::sqrt(eq / nq), 2e-5) << f.name << " in=" << in << " seed " << seed;
        }
    }
    const double rel = std::sqrt(err_x / norm_x);
    EXPECT_GE(rel, 0.5 * 3.8e-3) << f.name << ": activation not quantized?";
    EXPECT_LE(rel, 1.5 * 3.8e-3) << f.name;
}

INSTANTIATE_TEST_SUITE_P(QuantizedWeightFormats, Q8_32Dot, ::testing::ValuesIn(quantized_weight_formats()),
                         format_param_name);

TEST(Q8_32Dot, OtherPairingsAreRefused) {
    EXPECT_FALSE(cpuref::has_vec_dot(DENSE_TYPE_F32, DENSE_TYPE_Q8_32));
    EXPECT_FALSE(cpuref::has_vec_dot(DENSE_TYPE_Q4_K, DENSE_TYPE_Q8_0));
    std::vector<uint8_t> w(144), a(256 + 64);
    EXPECT_THROW(cpuref::vec_dot_act(DENSE_TYPE_Q4_K, DENSE_TYPE_Q8_0, w.data(), a.data(), 256), std::invalid_argument);
}

}  // namespace
