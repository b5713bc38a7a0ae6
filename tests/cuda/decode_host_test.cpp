// The CUDA packs' per-format decoders (plugins/cuda-common/src/kernels/decode_*.cuh) compiled as
// plain C++ and run on the CPU against cpu-ref, bit for bit. This checks the decoding logic itself
// (byte offsets, bit fields, operation order) on every machine, GPU or not; the GPU tests then
// check that nvcc's build of the same code agrees.
#include "cpu-ref/quant_test_support.hpp"

// The decoder headers are written to compile with nvcc and with a host compiler (see
// decode_common.cuh); they live with the pack sources.
#include "../../plugins/cuda-common/src/kernels/decode_float.cuh"
#include "../../plugins/cuda-common/src/kernels/decode_iq2.cuh"
#include "../../plugins/cuda-common/src/kernels/decode_iq3.cuh"
#include "../../plugins/cuda-common/src/kernels/decode_iq4.cuh"
#include "../../plugins/cuda-common/src/kernels/decode_q2_k.cuh"
#include "../../plugins/cuda-common/src/kernels/decode_q3_k.cuh"
#include "../../plugins/cuda-common/src/kernels/decode_q4_k.cuh"
#include "../../plugins/cuda-common/src/kernels/decode_q5_k.cuh"
#include "../../plugins/cuda-common/src/kernels/decode_q6_k.cuh"
#include "../../plugins/cuda-common/src/kernels/decode_q8_0.cuh"

#include <gtest/gtest.h>

#include <random>

namespace dense::test::cuda {
namespace {

using cpuref::FormatKernels;
namespace dec = dense::cuda::decode;

// What the dequantize kernel does per thread, sequentially: every item of every block.
template <class Fmt>
std::vector<float> decode_all(const FormatKernels& f, const std::vector<uint8_t>& blocks) {
    EXPECT_EQ(static_cast<uint32_t>(Fmt::kBlockElems), f.block_elements) << f.name;
    EXPECT_EQ(static_cast<uint32_t>(Fmt::kBlockBytes), f.block_bytes) << f.name;
    const std::size_t n_blocks = blocks.size() / f.block_bytes;
    std::vector<float> out(n_blocks * f.block_elements);
    constexpr int kItems = Fmt::kBlockElems / Fmt::kItemElems;
    for (std::size_t b = 0; b < n_blocks; ++b)
        for (int item = 0; item < kItems; ++item)
            Fmt::decode(blocks.data() + b * f.block_bytes, item,
                        out.data() + b * f.block_elements + static_cast<std::size_t>(item * Fmt::kItemElems));
    return out;
}

std::vector<float> decode_with_cuda_decoder(const FormatKernels& f, const std::vector<uint8_t>& blocks) {
    switch (f.type) {
        case DENSE_TYPE_F32:
            return decode_all<dec::F32>(f, blocks);
        case DENSE_TYPE_F16:
            return decode_all<dec::F16>(f, blocks);
        case DENSE_TYPE_BF16:
            return decode_all<dec::BF16>(f, blocks);
        case DENSE_TYPE_Q8_0:
            return decode_all<dec::Q8_0>(f, blocks);
        case DENSE_TYPE_Q2_K:
            return decode_all<dec::Q2_K>(f, blocks);
        case DENSE_TYPE_Q3_K:
            return decode_all<dec::Q3_K>(f, blocks);
        case DENSE_TYPE_Q4_K:
            return decode_all<dec::Q4_K>(f, blocks);
        case DENSE_TYPE_Q5_K:
            return decode_all<dec::Q5_K>(f, blocks);
        case DENSE_TYPE_Q6_K:
            return decode_all<dec::Q6_K>(f, blocks);
        case DENSE_TYPE_IQ2_XS:
            return decode_all<dec::IQ2_XS>(f, blocks);
        case DENSE_TYPE_IQ2_S:
            return decode_all<dec::IQ2_S>(f, blocks);
        case DENSE_TYPE_IQ3_XXS:
            return decode_all<dec::IQ3_XXS>(f, blocks);
        case DENSE_TYPE_IQ3_S:
            return decode_all<dec::IQ3_S>(f, blocks);
        case DENSE_TYPE_IQ4_NL:
            return decode_all<dec::IQ4_NL>(f, blocks);
        case DENSE_TYPE_IQ4_XS:
            return decode_all<dec::IQ4_XS>(f, blocks);
        default:
            ADD_FAILURE() << "no CUDA decoder for " << f.name;
            return {};
    }
}

std::vector<float> cpuref_decode(const FormatKernels& f, const std::vector<uint8_t>& blocks) {
    const int64_t n = static_cast<int64_t>(blocks.size() / f.block_bytes) * f.block_elements;
    std::vector<float> out(static_cast<std::size_t>(n));
    cpuref::dequantize_row(f.type, blocks.data(), out.data(), n);
    return out;
}

class CudaDecoderOnHost : public ::testing::TestWithParam<const FormatKernels*> {};

TEST_P(CudaDecoderOnHost, RandomBlocksMatchCpuRefBitForBit) {
    const FormatKernels& f = *GetParam();
    for (const auto range : {quant::ScaleRange::Full, quant::ScaleRange::Moderate})
        for (uint64_t seed = 1; seed <= 3; ++seed) {
            std::mt19937_64 rng(seed * 1000003u + f.type);
            const auto blocks = quant::random_blocks(f, 17408 / f.block_elements * 2, rng, range);
            EXPECT_TRUE(
                quant::same_bits(decode_with_cuda_decoder(f, blocks), cpuref_decode(f, blocks), f.block_elements))
                << f.name << " seed " << seed;
        }
}

TEST_P(CudaDecoderOnHost, SpecTestVectorsMatchLlamaCppBitForBit) {
    const FormatKernels& f = *GetParam();
    if (f.block_elements == 1) GTEST_SKIP() << "the spec has test vectors for the quantized formats only";
    const auto blocks = quant::read_bytes(quant::vectors_dir() / (std::string(f.name) + ".blocks"));
    const auto want = quant::read_floats(quant::vectors_dir() / (std::string(f.name) + ".dequant.f32"));
    ASSERT_EQ(want.size(), 4096u);
    EXPECT_TRUE(quant::same_bits(decode_with_cuda_decoder(f, blocks), want, f.block_elements));
}

INSTANTIATE_TEST_SUITE_P(Formats, CudaDecoderOnHost, ::testing::ValuesIn(quant::storable_formats()),
                         quant::format_param_name);

TEST(CudaDecoderOnHostFloats, EveryHalfPatternWidensExactly) {
    for (const dense_type_id type : {DENSE_TYPE_F16, DENSE_TYPE_BF16}) {
        const FormatKernels& f = cpuref::format(type);
        std::vector<uint8_t> raw;
        for (uint32_t h = 0; h < 65536; ++h) {
            raw.push_back(static_cast<uint8_t>(h & 0xFFu));
            raw.push_back(static_cast<uint8_t>(h >> 8));
        }
        EXPECT_TRUE(quant::same_bits(decode_with_cuda_decoder(f, raw), cpuref_decode(f, raw))) << f.name;
    }
}

}  // namespace
}  // namespace dense::test::cuda
