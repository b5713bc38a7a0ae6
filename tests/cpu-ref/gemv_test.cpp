// Quantized-activation GEMV (what llama.cpp's CPU backend computes) against the float64 oracle
// (weights dequantized exactly, accumulated in double against the float activation), per format.
#include "cpu-ref/quant_test_support.hpp"

#include <cmath>

namespace {

using namespace dense;
using namespace dense::test::quant;

constexpr int64_t kRows = 64;

// Squared error norms of one random GEMV, for pooling over runs.
struct Sums {
    double err_q = 0, norm_q = 0;  // y vs W*deq(act): float rounding only
    double err_x = 0, norm_x = 0;  // y vs W*x: dominated by the activation quantization
};

Sums run_gemv(const cpuref::FormatKernels& f, int64_t in, uint64_t seed) {
    std::mt19937_64 rng(seed);
    const auto w = random_blocks(f, kRows * in / f.block_elements, rng, ScaleRange::Moderate);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<float> x(static_cast<std::size_t>(in));
    for (auto& v : x) v = u(rng);

    std::vector<uint8_t> act(act_bytes(f.act_type, in));
    cpuref::quantize_activation(f.act_type, x.data(), act.data(), in);
    std::vector<float> x_deq(x.size());
    cpuref::dequantize_row(f.act_type, act.data(), x_deq.data(), in);

    std::vector<float> y(kRows);
    cpuref::gemv(f.type, w.data(), in, kRows, act.data(), y.data());
    std::vector<double> ref(kRows), ref_q(kRows);
    cpuref::gemv_f64_reference(f.type, w.data(), in, kRows, x.data(), ref.data());
    cpuref::gemv_f64_reference(f.type, w.data(), in, kRows, x_deq.data(), ref_q.data());

    Sums s;
    for (std::size_t r = 0; r < static_cast<std::size_t>(kRows); ++r) {
        s.err_q += std::pow(y[r] - ref_q[r], 2);
        s.norm_q += ref_q[r] * ref_q[r];
        s.err_x += std::pow(y[r] - ref[r], 2);
        s.norm_x += ref[r] * ref[r];
    }
    return s;
}

// Expected ||y - W*x|| / ||W*x|| for x uniform in [-1, 1). The quantized activation is x + e with
// the error e independent of W, so for random rows the relative error is rms(e) / rms(x), with
// rms(x) = 1/sqrt(3):
//   Q8_K (256 per block): max|x| ~ 1, step d = 1/127, e uniform in +-d/2: rms(e) = d/sqrt(12)
//        -> 1/(2*127) = 3.9e-3.
//   Q8_0 (32 per block): max|x| ~ 32/33 gives 3.8e-3; the codes are computed with the unrounded d
//        but the dot uses fp16(d) (relative error <= 2^-11 per block), ~3e-4 in quadrature: 3.8e-3.
//   F16: x rounded to fp16: rms(e)/rms(x) = 2^-10 * sqrt(3/84) = 1.85e-4 (ulp 2^-11 on [0.5,1),
//        halving per octave below); BF16: the same with 2^-7: 1.5e-3.
//   F32: no activation rounding; float products and the final rounding: ~4e-8 (bound 1e-6).
// Measured means over 360 random GEMVs agree within 7% (Q8_K 3.8e-3..4.1e-3, Q8_0 3.8e-3, F16
// 1.86e-4, BF16 1.45e-3). One 64-row GEMV scatters up to 2x around it (a few rows with large
// scales dominate, more so for the formats with mins), so each format pools 6 GEMVs (384 rows): the
// pooled ratio was within [0.83, 1.25] x expected in 30 trials per format. We require [0.5, 1.5] x
// expected: a wrong scale, nibble order, sign or min gives errors of order 1 (200x above), and an
// activation that silently is not quantized gives ~0 (below the lower bound). Each single GEMV must
// also stay under 3x expected.
double expected_float_act_error(dense_type_id act) {
    switch (act) {
        case DENSE_TYPE_Q8_K:
            return 3.9e-3;
        case DENSE_TYPE_Q8_0:
            return 3.8e-3;
        case DENSE_TYPE_F16:
            return 1.85e-4;
        case DENSE_TYPE_BF16:
            return 1.5e-3;
        default:
            return 0;  // F32
    }
}
constexpr double kF32Bound = 1e-6;

// ||y - W*deq(act)|| / ||W*deq(act)||: both sides use the same quantized activation, so only float
// rounding separates them: per block a few roundings of 2^-24 on the scale products, one per block
// on the running float sum (16 or 128 blocks), and in the reference each dequantized weight and
// activation is rounded once. Relative to the norm that is at most ~ (blocks + 4) * 2^-24 *
// (sum|block| / |y|); with random rows sum|block|/|y| ~ sqrt(blocks), i.e. ~1e-5 worst for 128
// blocks of 32; measured <= 2.5e-7. We allow 2e-5: any slip in the integer path (a wrong bsum,
// scale index or nibble) is of order 1e-2..1.
constexpr double kQuantizedActBound = 2e-5;

class Gemv : public ::testing::TestWithParam<const cpuref::FormatKernels*> {};

TEST_P(Gemv, QuantizedActivationGemvMatchesFloat64Oracle) {
    const auto& f = *GetParam();
    const double expected = expected_float_act_error(f.act_type);
    Sums pooled;
    for (int64_t in : {int64_t{1024}, int64_t{4096}}) {
        for (uint64_t seed = 0; seed < 3; ++seed) {
            const Sums s = run_gemv(f, in, 0x6E3Fu * (seed + 1) + f.type * 131u + static_cast<uint64_t>(in));
            const double rel_q = std::sqrt(s.err_q / s.norm_q);
            const double rel_x = std::sqrt(s.err_x / s.norm_x);
            EXPECT_LE(rel_q, kQuantizedActBound) << f.name << " in=" << in << " seed " << seed;
            EXPECT_LE(rel_x, f.act_type == DENSE_TYPE_F32 ? kF32Bound : 3 * expected)
                << f.name << " in=" << in << " seed " << seed;
            pooled.err_x += s.err_x;
            pooled.norm_x += s.norm_x;
        }
    }
    const double rel = std::sqrt(pooled.err_x / pooled.norm_x);
    if (f.act_type == DENSE_TYPE_F32) {
        EXPECT_LE(rel, kF32Bound) << f.name;
    } else {
        EXPECT_GE(rel, 0.5 * expected) << f.name << ": activation not quantized as " << cpuref::format(f.act_type).name
                                       << "?";
        EXPECT_LE(rel, 1.5 * expected) << f.name << ": expected ~" << expected;
    }
    std::ostringstream v;
    v << std::scientific << rel;
    RecordProperty("pooled_relative_error", v.str());
}

INSTANTIATE_TEST_SUITE_P(AllWeightFormats, Gemv, ::testing::ValuesIn(storable_formats()), format_param_name);

// End to end on a known answer: a row quantized to Q8_0 (as a weight) times the same row quantized
// as the activation is ~ |x|^2 > 0; a flipped sign or a scale applied twice cannot pass.
TEST(GemvSanity, Q80WeightTimesItsOwnActivationIsPositive) {
    std::mt19937_64 rng(5);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<float> x(1024);
    for (auto& v : x) v = u(rng);
    std::vector<uint8_t> w(act_bytes(DENSE_TYPE_Q8_0, 1024));
    cpuref::quantize_activation(DENSE_TYPE_Q8_0, x.data(), w.data(), 1024);
    float y = 0;
    cpuref::gemv(DENSE_TYPE_Q8_0, w.data(), 1024, 1, w.data(), &y);
    double xx = 0;
    for (float v : x) xx += double(v) * v;
    EXPECT_NEAR(y, xx, 1e-2 * xx);
}

}  // namespace
