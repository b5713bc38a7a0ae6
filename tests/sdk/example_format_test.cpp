// The example pack's format header (plugins/examples/q4-m64/src/q4_m64_format.hpp) is plain C++ the
// pack and its converter share: its fp16 conversions must agree with the runtime's (core/half.hpp)
// and its quantizer must keep every element within half a step of the input.
#include "../../plugins/examples/q4-m64/src/q4_m64_format.hpp"

#include "core/half.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>

namespace {

namespace ex = example_q4m64;

TEST(ExampleFormat, HalfToFloatMatchesTheRuntimeForEveryHalf) {
    for (uint32_t h = 0; h < 65536; ++h) {
        const float ours = ex::half_to_float(static_cast<uint16_t>(h));
        const float ref = dense::fp16_to_fp32(static_cast<uint16_t>(h));
        if (std::isnan(ref)) {
            EXPECT_TRUE(std::isnan(ours)) << h;
        } else {
            ASSERT_EQ(std::bit_cast<uint32_t>(ours), std::bit_cast<uint32_t>(ref)) << "half 0x" << std::hex << h;
        }
    }
}

TEST(ExampleFormat, FloatToHalfMatchesTheRuntime) {
    std::mt19937_64 rng(21);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    auto check = [](float f) {
        const uint16_t ref = dense::fp32_to_fp16(f);
        const uint16_t ours = ex::float_to_half(f);
        if (std::isnan(f))
            EXPECT_TRUE(std::isnan(ex::half_to_float(ours)));
        else
            ASSERT_EQ(ours, ref) << "float bits 0x" << std::hex << std::bit_cast<uint32_t>(f);
    };
    for (int i = 0; i < 1'000'000; ++i) check(std::bit_cast<float>(static_cast<uint32_t>(rng())));  // any bits
    for (int i = 0; i < 200'000; ++i) check(normal(rng) * std::ldexp(1.0f, static_cast<int>(rng() % 48) - 30));
    for (float f : {0.0f, -0.0f, 65504.0f, 65520.0f, 65519.99f, 6.1035156e-05f, 5.9604645e-08f, 2.9802322e-08f,
                    2.9802326e-08f, 1e-10f, INFINITY, -INFINITY, NAN})
        check(f);
}

TEST(ExampleFormat, QuantizeKeepsEveryElementWithinHalfAStep) {
    std::mt19937_64 rng(22);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (int trial = 0; trial < 2000; ++trial) {
        float x[64];
        const float scale = std::ldexp(1.0f, static_cast<int>(rng() % 20) - 12);
        const float shift = normal(rng) * scale * static_cast<float>(rng() % 4);
        for (float& v : x) v = normal(rng) * scale + shift;
        const ex::Block b = ex::quantize_block(x);
        float y[64];
        ex::dequantize_blocks(&b, y, 1);
        const float d = ex::half_to_float(b.d);
        ASSERT_GE(d, 0.0f);
        for (int e = 0; e < 64; ++e) {
            // Half a step, plus the rounding of d*q + m in float and of m in fp16 (relative 2^-11).
            const float tol = 0.5f * d + std::fabs(x[e]) * 1e-3f + 1e-7f;
            ASSERT_LE(std::fabs(y[e] - x[e]), tol) << "trial " << trial << " element " << e;
        }
    }
}

TEST(ExampleFormat, LayoutAndEdgeCases) {
    float x[64];
    for (int e = 0; e < 64; ++e) x[e] = static_cast<float>(e % 16);  // min 0, max 15: d = 1, m = 0
    ex::Block b = ex::quantize_block(x);
    EXPECT_EQ(ex::half_to_float(b.d), 1.0f);
    EXPECT_EQ(ex::half_to_float(b.m), 0.0f);
    EXPECT_EQ(b.qs[3], 0x33);           // element 3 (low nibble) and element 35 (high nibble) are 3
    EXPECT_EQ(ex::code_of(b, 47), 15);  // element 47 = 47 % 16
    for (float& v : x) v = -2.5f;       // constant block: d = 0, every element exactly m
    b = ex::quantize_block(x);
    float y[64];
    ex::dequantize_blocks(&b, y, 1);
    for (float v : y) EXPECT_EQ(v, -2.5f);
    x[9] = NAN;
    EXPECT_THROW((void)ex::quantize_block(x), std::invalid_argument);
    x[9] = 1e6f;  // range beyond fp16
    EXPECT_THROW((void)ex::quantize_block(x), std::invalid_argument);
}

}  // namespace
