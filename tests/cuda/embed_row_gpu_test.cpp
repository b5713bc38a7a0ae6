// DENSE_OP_EMBED_ROW on the GPU: one row of a {D, V} table decoded to F32 {D}, bit-exact against
// cpu-ref for every storable format, random rows including the first and the last.
#include "cuda/gpu_compare.hpp"

#include <dense/sdk/pack.hpp>

#include <gtest/gtest.h>

#include <random>

namespace dense::test::cuda {
namespace {

using cpuref::FormatKernels;

class CudaEmbedRow : public ::testing::TestWithParam<const FormatKernels*> {};

TEST_P(CudaEmbedRow, RandomRowsIncludingTheLastAreBitExact) {
    DENSE_REQUIRE_GPU(gpu);
    const FormatKernels& f = *GetParam();
    for (const int64_t D : {5120, 17408}) {
        const int64_t V = 37;
        std::mt19937_64 rng(0xE3BEDu + static_cast<uint64_t>(D) * 7 + f.type);
        const auto table = quant::random_blocks(f, D * V / f.block_elements, rng, quant::ScaleRange::Full);
        const uint64_t row_bytes = cpuref::row_bytes(f.type, D);
        ASSERT_EQ(table.size(), row_bytes * V);
        DeviceBuffer src = gpu.alloc(table.size());
        DeviceBuffer dst = gpu.alloc(static_cast<uint64_t>(D + kGuardFloats) * 4);
        ASSERT_EQ(gpu.upload(src.get(), table.data(), table.size()), DENSE_OK);
        const auto sv = cuda_view(src.get(), f.type, f.block_elements, f.block_bytes, {D, V});
        const auto dv = cuda_view(dst.get(), DENSE_TYPE_F32, 1, 4, {D});

        std::vector<int64_t> rows = {0, V - 1};
        std::uniform_int_distribution<int64_t> pick(1, V - 2);
        for (int k = 0; k < 4; ++k) rows.push_back(pick(rng));
        for (const int64_t row : rows) {
            const std::string label = std::string(f.name) + " D=" + std::to_string(D) + " row " + std::to_string(row);
            const auto poisoned = poison(D + kGuardFloats);
            ASSERT_EQ(gpu.upload(dst.get(), poisoned.data(), poisoned.size() * 4), DENSE_OK);
            auto params = dense::sdk::make_struct<dense_embed_row_params>();
            params.row = row;
            gpu.host().clear_logs();
            ASSERT_EQ(gpu.run(f.type, make_call(DENSE_OP_EMBED_ROW, &sv, &dv, &params, gpu.stream())), DENSE_OK)
                << label << "\n"
                << gpu.host().log_text();
            std::vector<float> got(static_cast<std::size_t>(D + kGuardFloats));
            ASSERT_EQ(gpu.download(got.data(), dst.get(), got.size() * 4), DENSE_OK);
            EXPECT_EQ(count_poison(got, static_cast<std::size_t>(D), got.size()), kGuardFloats)
                << label << ": wrote past the end of dst";
            got.resize(static_cast<std::size_t>(D));
            std::vector<float> want(static_cast<std::size_t>(D));
            cpuref::dequantize_row(f.type, table.data() + static_cast<std::size_t>(row) * row_bytes, want.data(), D);
            EXPECT_TRUE(quant::same_bits(got, want, f.block_elements)) << label;
        }
    }
}

TEST_P(CudaEmbedRow, OutOfRangeRowIsRefusedAndLeavesDstUntouched) {
    DENSE_REQUIRE_GPU(gpu);
    const FormatKernels& f = *GetParam();
    const int64_t D = 512, V = 4;
    std::mt19937_64 rng(99u + f.type);
    const auto table = quant::random_blocks(f, D * V / f.block_elements, rng, quant::ScaleRange::Full);
    DeviceBuffer src = gpu.alloc(table.size());
    DeviceBuffer dst = gpu.alloc(static_cast<uint64_t>(D) * 4);
    ASSERT_EQ(gpu.upload(src.get(), table.data(), table.size()), DENSE_OK);
    const auto poisoned = poison(D);
    ASSERT_EQ(gpu.upload(dst.get(), poisoned.data(), poisoned.size() * 4), DENSE_OK);
    const auto sv = cuda_view(src.get(), f.type, f.block_elements, f.block_bytes, {D, V});
    const auto dv = cuda_view(dst.get(), DENSE_TYPE_F32, 1, 4, {D});
    for (const int64_t row : {V, int64_t{-1}, int64_t{1} << 40}) {
        auto params = dense::sdk::make_struct<dense_embed_row_params>();
        params.row = row;
        gpu.host().clear_logs();
        EXPECT_EQ(gpu.run(f.type, make_call(DENSE_OP_EMBED_ROW, &sv, &dv, &params, gpu.stream())),
                  DENSE_E_INVALID_ARGUMENT)
            << "row " << row;
        EXPECT_EQ(gpu.host().logs().size(), 1u) << gpu.host().log_text();
    }
    std::vector<float> got(static_cast<std::size_t>(D));
    ASSERT_EQ(gpu.download(got.data(), dst.get(), got.size() * 4), DENSE_OK);
    EXPECT_EQ(count_poison(got, 0, got.size()), D) << "a refused call must not write";
}

INSTANTIATE_TEST_SUITE_P(Formats, CudaEmbedRow, ::testing::ValuesIn(quant::storable_formats()),
                         quant::format_param_name);

}  // namespace
}  // namespace dense::test::cuda
