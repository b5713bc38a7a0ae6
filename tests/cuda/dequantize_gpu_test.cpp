// DENSE_OP_DEQUANTIZE on the GPU, bit-exact against the cpu-ref oracle for every storable format:
// fresh random valid blocks (random bytes, random finite fp16 scales), several seeds, the row
// lengths of the 27B model, several rows, aligned and misaligned buffers, outputs poisoned first.
// Also the spec's llama.cpp test vectors. Skips (with the reason) without a GPU or without packs.
#include "cuda/gpu_compare.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

namespace dense::test::cuda {
namespace {

using cpuref::FormatKernels;

class CudaDequantize : public ::testing::TestWithParam<const FormatKernels*> {
protected:
    // Dequantizes `blocks` ({row_len, rows} elements of the format) on the GPU and compares with
    // cpu-ref. src_offset / dst_offset shift the device buffers by that many bytes (alignment).
    void check(GpuSession& gpu, const std::vector<uint8_t>& blocks, int64_t row_len, int64_t rows, uint64_t src_offset,
               uint64_t dst_offset, const std::string& label) {
        const FormatKernels& f = *GetParam();
        const int64_t n = row_len * rows;
        ASSERT_EQ(blocks.size(), static_cast<std::size_t>(n / f.block_elements) * f.block_bytes);
        std::vector<float> want(static_cast<std::size_t>(n));
        cpuref::dequantize_row(f.type, blocks.data(), want.data(), n);

        DeviceBuffer src = gpu.alloc(src_offset + blocks.size());
        const uint64_t out_bytes = dst_offset + static_cast<uint64_t>(n + kGuardFloats) * 4;
        DeviceBuffer dst = gpu.alloc(out_bytes);
        ASSERT_NE(src.get(), nullptr);
        ASSERT_NE(dst.get(), nullptr);
        ASSERT_EQ(gpu.upload(src.at(src_offset), blocks.data(), blocks.size()), DENSE_OK);
        const std::vector<float> poisoned = poison(n + kGuardFloats);
        ASSERT_EQ(gpu.upload(dst.at(dst_offset), poisoned.data(), poisoned.size() * 4), DENSE_OK);

        const auto sv = cuda_view(src.at(src_offset), f.type, f.block_elements, f.block_bytes, {row_len, rows});
        const auto dv = cuda_view(dst.at(dst_offset), DENSE_TYPE_F32, 1, 4, {row_len, rows});
        const auto call = make_call(DENSE_OP_DEQUANTIZE, &sv, &dv, nullptr, gpu.stream());
        gpu.host().clear_logs();
        ASSERT_EQ(gpu.run(f.type, call), DENSE_OK) << label << "\n" << gpu.host().log_text();
        EXPECT_TRUE(gpu.host().logs().empty()) << gpu.host().log_text();

        std::vector<float> got(static_cast<std::size_t>(n + kGuardFloats));
        ASSERT_EQ(gpu.download(got.data(), dst.at(dst_offset), got.size() * 4), DENSE_OK);
        EXPECT_EQ(count_poison(got, static_cast<std::size_t>(n), got.size()), kGuardFloats)
            << label << ": the kernel wrote past the end of dst";
        got.resize(static_cast<std::size_t>(n));
        EXPECT_TRUE(quant::same_bits(got, want, f.block_elements)) << label;
    }
};

TEST_P(CudaDequantize, RandomBlocksAtModelRowLengthsAreBitExact) {
    DENSE_REQUIRE_GPU(gpu);
    const FormatKernels& f = *GetParam();
    for (const uint64_t seed : {1u, 2u, 3u}) {
        std::mt19937_64 rng(0xC0DA0000u + seed * 131 + f.type);
        for (const int64_t row_len : {5120, 6144, 17408}) {
            const int64_t rows = 3;
            const auto blocks =
                quant::random_blocks(f, row_len * rows / f.block_elements, rng, quant::ScaleRange::Full);
            check(gpu, blocks, row_len, rows, 0, 0,
                  std::string(f.name) + " seed " + std::to_string(seed) + " {" + std::to_string(row_len) + ", 3}");
            if (HasFatalFailure()) return;
        }
    }
}

TEST_P(CudaDequantize, RealisticScalesAndMisalignedBuffersAreBitExact) {
    DENSE_REQUIRE_GPU(gpu);
    const FormatKernels& f = *GetParam();
    std::mt19937_64 rng(0xA11C0000u + f.type);
    const int64_t row_len = 6144, rows = 2;
    const auto blocks = quant::random_blocks(f, row_len * rows / f.block_elements, rng, quant::ScaleRange::Moderate);
    // Blocks at an odd address (F32 at its element alignment: every pack reads F32 as float and
    // refuses a pointer that is not 4-byte aligned, which a GGUF never produces since its tensor
    // offsets are multiples of general.alignment, a multiple of 8); the output not 16-byte aligned
    // (the kernel falls back to scalar stores).
    const uint64_t src_offset = f.type == DENSE_TYPE_F32 ? 4 : 1;
    check(gpu, blocks, row_len, rows, src_offset, 4,
          std::string(f.name) + " misaligned by " + std::to_string(src_offset) + " / 4 bytes");
    check(gpu, blocks, row_len, rows, 0, 0, std::string(f.name) + " aligned");
}

TEST(CudaDequantizeF32, OddSourceAddressIsRefusedByName) {
    DENSE_REQUIRE_GPU(gpu);
    const int64_t n = 256;
    DeviceBuffer src = gpu.alloc(1 + n * 4);
    DeviceBuffer dst = gpu.alloc(n * 4);
    ASSERT_NE(src.get(), nullptr);
    ASSERT_NE(dst.get(), nullptr);
    const auto sv = cuda_view(src.at(1), DENSE_TYPE_F32, 1, 4, {n});
    const auto dv = cuda_view(dst.get(), DENSE_TYPE_F32, 1, 4, {n});
    const auto call = make_call(DENSE_OP_DEQUANTIZE, &sv, &dv, nullptr, gpu.stream());
    gpu.host().clear_logs();
    EXPECT_NE(gpu.run(DENSE_TYPE_F32, call), DENSE_OK);
    EXPECT_NE(gpu.host().log_text().find("f32 data pointer is not aligned to 4 bytes"), std::string::npos)
        << gpu.host().log_text();
    gpu.host().clear_logs();  // the session is shared: later tests expect no log lines of their own
}

TEST_P(CudaDequantize, TensorLargerThanOneGridIsCoveredCompletely) {
    DENSE_REQUIRE_GPU(gpu);
    const FormatKernels& f = *GetParam();
    // 17408 x 200 = 3.5M elements: more items than the launch's grid cap, so the grid-stride loop
    // has to go around (float formats: one item per element; quantized: one per 8).
    std::mt19937_64 rng(0xB16u + f.type);
    const int64_t row_len = 17408, rows = 200;
    const auto blocks = quant::random_blocks(f, row_len * rows / f.block_elements, rng, quant::ScaleRange::Full);
    check(gpu, blocks, row_len, rows, 0, 0, std::string(f.name) + " {17408, 200}");
}

TEST_P(CudaDequantize, SpecTestVectorsMatchLlamaCppBitForBit) {
    const FormatKernels& f = *GetParam();
    if (f.block_elements == 1) GTEST_SKIP() << "the spec has test vectors for the quantized formats only";
    DENSE_REQUIRE_GPU(gpu);
    const auto blocks = quant::read_bytes(quant::vectors_dir() / (std::string(f.name) + ".blocks"));
    const auto want = quant::read_floats(quant::vectors_dir() / (std::string(f.name) + ".dequant.f32"));
    const int64_t n = static_cast<int64_t>(want.size());
    ASSERT_EQ(n, 4096);
    DeviceBuffer src = gpu.alloc(blocks.size());
    DeviceBuffer dst = gpu.alloc(static_cast<uint64_t>(n) * 4);
    ASSERT_EQ(gpu.upload(src.get(), blocks.data(), blocks.size()), DENSE_OK);
    const auto poisoned = poison(n);
    ASSERT_EQ(gpu.upload(dst.get(), poisoned.data(), poisoned.size() * 4), DENSE_OK);
    const auto sv = cuda_view(src.get(), f.type, f.block_elements, f.block_bytes, {n});
    const auto dv = cuda_view(dst.get(), DENSE_TYPE_F32, 1, 4, {n});
    ASSERT_EQ(gpu.run(f.type, make_call(DENSE_OP_DEQUANTIZE, &sv, &dv, nullptr, gpu.stream())), DENSE_OK)
        << gpu.host().log_text();
    std::vector<float> got(static_cast<std::size_t>(n));
    ASSERT_EQ(gpu.download(got.data(), dst.get(), got.size() * 4), DENSE_OK);
    EXPECT_TRUE(quant::same_bits(got, want, f.block_elements));
}

INSTANTIATE_TEST_SUITE_P(Formats, CudaDequantize, ::testing::ValuesIn(quant::storable_formats()),
                         quant::format_param_name);

// Float formats carry arbitrary bit patterns: zeros of both signs, subnormals, infinities and NaNs
// with payloads must come out exactly as the spec's exact widening says.
TEST(CudaDequantizeFloats, EveryBitPatternWidensExactly) {
    DENSE_REQUIRE_GPU(gpu);
    for (const dense_type_id type : {DENSE_TYPE_F16, DENSE_TYPE_BF16, DENSE_TYPE_F32}) {
        const FormatKernels& f = cpuref::format(type);
        std::vector<uint8_t> raw;
        if (f.block_bytes == 2) {  // all 65536 patterns, then random ones
            for (uint32_t h = 0; h < 65536; ++h) {
                raw.push_back(static_cast<uint8_t>(h & 0xFF));
                raw.push_back(static_cast<uint8_t>(h >> 8));
            }
        } else {
            std::mt19937_64 rng(7);
            raw.resize(4 * 65536);
            for (auto& b : raw) b = static_cast<uint8_t>(rng());
            const uint32_t specials[] = {0x00000000u, 0x80000000u, 0x00000001u, 0x807FFFFFu, 0x7F800000u,
                                         0xFF800000u, 0x7FC00000u, 0x7F800001u, 0xFFFFFFFFu, 0x7FA5DEAEu};
            std::memcpy(raw.data(), specials, sizeof specials);
        }
        const int64_t n = static_cast<int64_t>(raw.size() / f.block_bytes);
        std::vector<float> want(static_cast<std::size_t>(n));
        cpuref::dequantize_row(type, raw.data(), want.data(), n);
        DeviceBuffer src = gpu.alloc(raw.size());
        DeviceBuffer dst = gpu.alloc(static_cast<uint64_t>(n) * 4);
        ASSERT_EQ(gpu.upload(src.get(), raw.data(), raw.size()), DENSE_OK);
        const auto sv = cuda_view(src.get(), type, 1, f.block_bytes, {n});
        const auto dv = cuda_view(dst.get(), DENSE_TYPE_F32, 1, 4, {n});
        ASSERT_EQ(gpu.run(type, make_call(DENSE_OP_DEQUANTIZE, &sv, &dv, nullptr, gpu.stream())), DENSE_OK)
            << gpu.host().log_text();
        std::vector<float> got(static_cast<std::size_t>(n));
        ASSERT_EQ(gpu.download(got.data(), dst.get(), got.size() * 4), DENSE_OK);
        EXPECT_TRUE(quant::same_bits(got, want)) << f.name;
    }
}

}  // namespace
}  // namespace dense::test::cuda
