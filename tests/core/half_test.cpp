// fp16/bf16 conversions: every one of the 65536 fp16 bit patterns widens exactly and narrows back
// to itself (NaNs stay NaN); narrowing rounds to nearest even, checked against a double reference.
#include "core/half.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace dense {
namespace {

TEST(Half, EveryFp16RoundTripsExactly) {
    for (uint32_t h = 0; h < 65536; ++h) {
        const float f = fp16_to_fp32(static_cast<uint16_t>(h));
        if (std::isnan(f)) {
            EXPECT_TRUE((h & 0x7C00u) == 0x7C00u && (h & 0x3FFu) != 0) << h;
            EXPECT_TRUE(std::isnan(fp16_to_fp32(fp32_to_fp16(f))));
            continue;
        }
        ASSERT_EQ(fp32_to_fp16(f), h) << "h=" << h << " f=" << f;
    }
}

TEST(Half, KnownValues) {
    EXPECT_EQ(fp16_to_fp32(0x3C00), 1.0f);
    EXPECT_EQ(fp16_to_fp32(0xC000), -2.0f);
    EXPECT_EQ(fp16_to_fp32(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
    EXPECT_EQ(fp16_to_fp32(0x7BFF), 65504.0f);
    EXPECT_TRUE(std::isinf(fp16_to_fp32(0x7C00)));
    EXPECT_EQ(fp32_to_fp16(65520.0f), 0x7C00);  // rounds up to inf
    EXPECT_EQ(fp32_to_fp16(65519.0f), 0x7BFF);
    EXPECT_EQ(fp32_to_fp16(std::ldexp(1.0f, -25)), 0x0000);       // exact half of the smallest subnormal: to even
    EXPECT_EQ(fp32_to_fp16(std::ldexp(1.5f, -25)), 0x0001);
    EXPECT_EQ(fp32_to_fp16(-0.0f), 0x8000);
}

// Nearest-even reference: pick the fp16 neighbour closest to x in double arithmetic.
uint16_t reference_round(float x) {
    uint16_t best = 0;
    double best_err = INFINITY;
    const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
    for (uint32_t m = 0; m < 0x7C00; ++m) {  // all finite magnitudes
        const double err = std::fabs(static_cast<double>(fp16_to_fp32(static_cast<uint16_t>(m))) - std::fabs(static_cast<double>(x)));
        if (err < best_err || (err == best_err && (m & 1u) == 0)) {
            best_err = err;
            best = static_cast<uint16_t>(m);
        }
    }
    return static_cast<uint16_t>(sign | best);
}

TEST(Half, NarrowingMatchesANearestEvenReference) {
    std::mt19937 rng(1234);
    std::uniform_real_distribution<float> mag(-26.0f, 15.9f);
    for (int i = 0; i < 300; ++i) {
        const float x = std::ldexp(1.0f + std::uniform_real_distribution<float>(0, 1)(rng), static_cast<int>(mag(rng))) *
                        (i % 2 ? -1.0f : 1.0f);
        ASSERT_EQ(fp32_to_fp16(x), reference_round(x)) << x;
    }
}

TEST(Half, Bf16) {
    EXPECT_EQ(bf16_to_fp32(0x3F80), 1.0f);
    EXPECT_EQ(fp32_to_bf16(1.0f), 0x3F80);
    EXPECT_EQ(fp32_to_bf16(std::bit_cast<float>(0x3F808000u)), 0x3F80);  // tie -> even
    EXPECT_EQ(fp32_to_bf16(std::bit_cast<float>(0x3F818000u)), 0x3F82);  // tie -> even (up)
    EXPECT_EQ(fp32_to_bf16(std::bit_cast<float>(0x3F808001u)), 0x3F81);
    EXPECT_TRUE(std::isnan(bf16_to_fp32(fp32_to_bf16(NAN))));
    for (uint32_t b = 0; b < 65536; ++b) {
        const float f = bf16_to_fp32(static_cast<uint16_t>(b));
        if (!std::isnan(f)) {
            ASSERT_EQ(fp32_to_bf16(f), b);
        }
    }
}

}  // namespace
}  // namespace dense
