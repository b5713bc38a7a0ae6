// The spec's test vectors (tests/data/testvectors, produced by llama.cpp's reference routines):
// our decoding must reproduce every .dequant.f32 bit for bit, our activation quantizers must produce
// identical bytes, and our dot products must agree with llama.cpp's generic CPU vec_dot.
#include "cpu-ref/quant_test_support.hpp"

#include <cmath>
#include <map>

namespace {

using namespace dense;
using namespace dense::test::quant;

class SpecVectors : public ::testing::TestWithParam<const cpuref::FormatKernels*> {};

TEST_P(SpecVectors, DequantizesBitExact) {
    const auto& f = *GetParam();
    const auto blocks = read_bytes(vectors_dir() / (std::string(f.name) + ".blocks"));
    const auto want = read_floats(vectors_dir() / (std::string(f.name) + ".dequant.f32"));
    ASSERT_EQ(want.size(), 4096u);
    ASSERT_EQ(blocks.size(), cpuref::row_bytes(f.type, 4096));
    std::vector<float> got(want.size());
    cpuref::dequantize_row(f.type, blocks.data(), got.data(), 4096);
    EXPECT_TRUE(same_bits(got, want, f.block_elements)) << f.name;
}

// dots.txt holds llama.cpp's generic-CPU vec_dot of the 4096-element row against activation.f32
// quantized to the type's activation format. The integer part is identical; only float rounding
// differs: we multiply each super-block's whole integer sum by its float scale where the generic
// Q3_K..Q6_K code first splits it over 8 float lanes, and block results are added in another order.
// Each block result has a few float roundings (2^-24 relative each) and 16 or 128 of them are summed
// in float, so the two differ by a few 2^-24 of the sum of |block results| (measured: identical for
// 9 formats, <= 1.3e-7 relative for q4_k/q5_k/q6_k). Hence 1e-6 relative, taken against the larger of
// |result| and (sum of |block results|)/8 so that a cancelling sum does not demand more digits than
// float carries.
TEST_P(SpecVectors, VecDotMatchesLlamaGenericDots) {
    const auto& f = *GetParam();
    std::map<std::string, double> dots;
    {
        std::ifstream in(vectors_dir() / "dots.txt");
        std::string name;
        long n = 0;
        double value = 0;
        while (in >> name >> n >> value) dots[name] = value;
    }
    ASSERT_TRUE(dots.count(f.name)) << "dots.txt has no line for " << f.name;
    const auto weights = read_bytes(vectors_dir() / (std::string(f.name) + ".blocks"));
    const std::string act_file = f.act_type == DENSE_TYPE_Q8_K ? "activation.q8_k" : "activation.q8_0";
    const auto act = read_bytes(vectors_dir() / act_file);
    ASSERT_EQ(act.size(), act_bytes(f.act_type, 4096));

    const float got = cpuref::vec_dot(f.type, weights.data(), act.data(), 4096);
    const double want = dots[f.name];

    double abs_sum = 0;  // sum of |per-block results|
    const auto act_block_bytes = cpuref::format(f.act_type).block_bytes;
    const int64_t act_per_weight_block = f.block_elements / cpuref::format(f.act_type).block_elements;
    for (int64_t b = 0; b < 4096 / f.block_elements; ++b)
        abs_sum +=
            std::fabs(cpuref::vec_dot(f.type, weights.data() + b * f.block_bytes,
                                      act.data() + b * act_per_weight_block * act_block_bytes, f.block_elements));
    const double scale = std::max(std::fabs(want), abs_sum / 8);
    EXPECT_LE(std::fabs(got - want), 1e-6 * scale)
        << f.name << ": got " << got << ", llama.cpp " << want << ", sum|blocks| " << abs_sum;
}

INSTANTIATE_TEST_SUITE_P(AllQuantFormats, SpecVectors, ::testing::ValuesIn(quantized_weight_formats()),
                         format_param_name);

TEST(SpecVectorsActivation, Q8KBytesIdentical) {
    const auto x = read_floats(vectors_dir() / "activation.f32");
    ASSERT_EQ(x.size(), 4096u);
    std::vector<uint8_t> got(act_bytes(DENSE_TYPE_Q8_K, 4096));
    cpuref::quantize_activation(DENSE_TYPE_Q8_K, x.data(), got.data(), 4096);
    EXPECT_TRUE(same_bytes(got, read_bytes(vectors_dir() / "activation.q8_k")));
}

TEST(SpecVectorsActivation, Q8KDequantBitExact) {
    const auto q = read_bytes(vectors_dir() / "activation.q8_k");
    const auto want = read_floats(vectors_dir() / "activation.q8_k.dequant.f32");
    std::vector<float> got(want.size());
    cpuref::dequantize_row(DENSE_TYPE_Q8_K, q.data(), got.data(), static_cast<int64_t>(got.size()));
    EXPECT_TRUE(same_bits(got, want, 256));
}

TEST(SpecVectorsActivation, Q80BytesIdentical) {
    const auto x = read_floats(vectors_dir() / "activation.f32");
    std::vector<uint8_t> got(act_bytes(DENSE_TYPE_Q8_0, 4096));
    cpuref::quantize_activation(DENSE_TYPE_Q8_0, x.data(), got.data(), 4096);
    EXPECT_TRUE(same_bytes(got, read_bytes(vectors_dir() / "activation.q8_0")));
}

}  // namespace
