// Our reference dot products against llama.cpp's x86 CPU ones (libggml-cpu-haswell.so: the AVX2
// ggml_vec_dot_<w>_<a> and, where exported, the scalar ..._generic), on random weight rows and
// random activations quantized by our (bit-exact, see oracle_quantize_test) quantizers.
//
// Tolerance. The integer sums are identical; the float parts differ in order and in FMA use. Each
// super-block result has a few float roundings (2^-24 relative each, at most ~8 with the SIMD code's
// lanes) and the row sum adds one rounding per block, so against S = sum over blocks of |our block
// result| the difference is bounded by about (16 blocks + 8) * 2^-24 * S = 1.4e-6 * S for a
// 4096-element row. We allow 2e-6 * S; measured worst is 2.7e-7 (SIMD) and 1.8e-7 (generic). A wrong
// scale, code or sign gives differences of order S. The float types (F32/F16/BF16) sum 4096 products
// in float SIMD lanes (ours: double), where S = sum |w_i a_i| and the measured worst is 2e-8.
#include "cpu-ref/llama_oracle.hpp"
#include "cpu-ref/quant_test_support.hpp"

#include <cmath>

namespace {

using namespace dense;
using namespace dense::test::quant;

constexpr int64_t kRow = 4096;
constexpr int kRows = 64;
constexpr double kRelTolerance = 2e-6;

std::string vec_dot_symbol(const cpuref::FormatKernels& f) {
    switch (f.type) {
        case DENSE_TYPE_F32:
            return "ggml_vec_dot_f32";
        case DENSE_TYPE_F16:
            return "ggml_vec_dot_f16";
        case DENSE_TYPE_BF16:
            return "ggml_vec_dot_bf16";
        default:
            break;
    }
    const char* act = f.act_type == DENSE_TYPE_Q8_K ? "q8_K" : "q8_0";
    return "ggml_vec_dot_" + ggml_symbol_name(f.name) + "_" + act;
}

// Sum over blocks of |vec_dot of that block| (floats: sum |w_i a_i|).
double block_abs_sum(const cpuref::FormatKernels& f, const uint8_t* w, const uint8_t* a) {
    const auto& af = cpuref::format(f.act_type);
    const int64_t step = f.block_elements > 1 ? f.block_elements : 1;
    double s = 0;
    for (int64_t e = 0; e < kRow; e += step)
        s += std::fabs(cpuref::vec_dot(f.type, w + e / f.block_elements * f.block_bytes,
                                       a + e / af.block_elements * af.block_bytes, step));
    return s;
}

class OracleVecDot : public ::testing::TestWithParam<const cpuref::FormatKernels*> {};

TEST_P(OracleVecDot, MatchesLlamaCpuWithinTolerance) {
    DENSE_REQUIRE_ORACLE_CPU();
    const auto& f = *GetParam();
    const std::string symbol = vec_dot_symbol(f);
    std::vector<std::pair<std::string, GgmlVecDot>> impls;
    for (const std::string& s : {symbol, symbol + "_generic"})
        if (void* p = LlamaOracle::instance().cpu_symbol(s)) impls.emplace_back(s, oracle_fn<GgmlVecDot>(p));
    ASSERT_FALSE(impls.empty()) << symbol << " not exported by libggml-cpu-haswell.so";

    std::mt19937_64 rng(0xD07u + f.type);
    const auto weights = random_blocks(f, kRows * kRow / f.block_elements, rng, ScaleRange::Moderate);
    const auto x = random_activation(kRow, rng);
    std::vector<uint8_t> act(act_bytes(f.act_type, kRow));
    cpuref::quantize_activation(f.act_type, x.data(), act.data(), kRow);
    const auto row_bytes = cpuref::row_bytes(f.type, kRow);

    std::vector<double> worst(impls.size(), 0.0);
    for (int r = 0; r < kRows; ++r) {
        const uint8_t* w = weights.data() + r * row_bytes;
        const float ours = cpuref::vec_dot(f.type, w, act.data(), kRow);
        const double scale = block_abs_sum(f, w, act.data());
        for (std::size_t k = 0; k < impls.size(); ++k) {
            const auto& [name, fn] = impls[k];
            float theirs = 0;
            fn(static_cast<int>(kRow), &theirs, 0, w, 0, act.data(), 0, 1);
            const double rel = std::fabs(static_cast<double>(ours) - theirs) / scale;
            worst[k] = std::max(worst[k], rel);
            EXPECT_LE(rel, kRelTolerance)
                << name << " row " << r << ": ours " << ours << ", llama.cpp " << theirs << ", sum|blocks| " << scale;
        }
    }
    for (std::size_t k = 0; k < impls.size(); ++k) {
        std::ostringstream v;
        v << std::scientific << worst[k];
        RecordProperty("worst_rel_" + impls[k].first, v.str());
    }
}

INSTANTIATE_TEST_SUITE_P(AllWeightFormats, OracleVecDot, ::testing::ValuesIn(storable_formats()), format_param_name);

}  // namespace
