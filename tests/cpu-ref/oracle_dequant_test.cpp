// Our dequantizers against llama.cpp's own (dequantize_row_<type> in libggml-base.so), bit for bit,
// on >= 10,240 random blocks per format: random bytes everywhere (every index/sign/scale pattern)
// except the fp16 scale fields, which get random FINITE values of both signs (random bytes there
// would make NaN/Inf) over the full fp16 range (zero, subnormals, up to 65504) and a moderate range.
#include "cpu-ref/llama_oracle.hpp"
#include "cpu-ref/quant_test_support.hpp"

namespace {

using namespace dense;
using namespace dense::test::quant;

constexpr int kSeeds = 4;
constexpr int64_t kBlocksPerSeed = 2560;  // x4 seeds = 10,240 blocks per format

class OracleDequant : public ::testing::TestWithParam<const cpuref::FormatKernels*> {};

TEST_P(OracleDequant, BitExactOnRandomBlocks) {
    DENSE_REQUIRE_ORACLE_BASE();
    const auto& f = *GetParam();
    const std::string symbol = "dequantize_row_" + ggml_symbol_name(f.name);
    const auto ggml = oracle_fn<GgmlDequantizeRow>(LlamaOracle::instance().base_symbol(symbol));
    ASSERT_NE(ggml, nullptr) << symbol << " not exported by libggml-base.so";

    for (int seed = 0; seed < kSeeds; ++seed) {
        std::mt19937_64 rng(0xD3A5E000u + static_cast<uint64_t>(seed) * 7919u + f.type);
        const ScaleRange range = seed % 2 == 0 ? ScaleRange::Full : ScaleRange::Moderate;
        const auto blocks = random_blocks(f, kBlocksPerSeed, rng, range);
        const int64_t n = kBlocksPerSeed * f.block_elements;
        std::vector<float> want(static_cast<std::size_t>(n)), got(static_cast<std::size_t>(n));
        ggml(blocks.data(), want.data(), n);
        cpuref::dequantize_row(f.type, blocks.data(), got.data(), n);
        EXPECT_TRUE(same_bits(got, want, f.block_elements)) << f.name << " seed " << seed;
    }
}

INSTANTIATE_TEST_SUITE_P(AllQuantFormats, OracleDequant, ::testing::ValuesIn(quantized_weight_formats()),
                         format_param_name);

}  // namespace
