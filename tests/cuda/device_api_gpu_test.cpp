// The CUDA pack's device api on the real GPU: memory info, allocation, copies in both directions
// (synchronous and on a stream), streams, and the error path of an impossible allocation.
#include "cuda/cuda_gpu_session.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

namespace dense::test::cuda {
namespace {

TEST(CudaDeviceApi, MemInfoReportsPlausibleNumbers) {
    DENSE_REQUIRE_GPU(gpu);
    uint64_t free_bytes = 0, total_bytes = 0;
    ASSERT_EQ(gpu.device().mem_info(gpu.device_user(), 0, &free_bytes, &total_bytes), DENSE_OK)
        << gpu.host().log_text();
    EXPECT_GT(total_bytes, uint64_t{1} << 30);
    EXPECT_LE(free_bytes, total_bytes);
    EXPECT_GT(free_bytes, 0u);
}

TEST(CudaDeviceApi, BytesRoundTripOnAStreamAndSynchronously) {
    DENSE_REQUIRE_GPU(gpu);
    const dense_device_api& dev = gpu.device();
    std::mt19937_64 rng(42);
    std::vector<uint8_t> data(3 * 1024 * 1024 + 17);
    for (auto& b : data) b = static_cast<uint8_t>(rng());
    DeviceBuffer buf = gpu.alloc(data.size());
    ASSERT_NE(buf.get(), nullptr);

    void* stream = nullptr;
    ASSERT_EQ(dev.stream_create(gpu.device_user(), 0, &stream), DENSE_OK) << gpu.host().log_text();
    ASSERT_NE(stream, nullptr);
    ASSERT_EQ(dev.copy_to_device(gpu.device_user(), 0, buf.get(), data.data(), data.size(), stream), DENSE_OK);
    std::vector<uint8_t> back(data.size(), 0);
    ASSERT_EQ(dev.copy_to_host(gpu.device_user(), 0, back.data(), buf.get(), back.size(), stream), DENSE_OK);
    ASSERT_EQ(dev.stream_sync(gpu.device_user(), 0, stream), DENSE_OK);
    EXPECT_TRUE(back == data) << "stream round trip";
    dev.stream_destroy(gpu.device_user(), 0, stream);

    // stream == NULL: synchronous copies.
    for (auto& b : data) b = static_cast<uint8_t>(rng());
    ASSERT_EQ(dev.copy_to_device(gpu.device_user(), 0, buf.get(), data.data(), data.size(), nullptr), DENSE_OK);
    std::fill(back.begin(), back.end(), 0);
    ASSERT_EQ(dev.copy_to_host(gpu.device_user(), 0, back.data(), buf.get(), back.size(), nullptr), DENSE_OK);
    EXPECT_TRUE(back == data) << "synchronous round trip";
    EXPECT_TRUE(gpu.host().logs().empty()) << gpu.host().log_text();
}

TEST(CudaDeviceApi, ImpossibleAllocationIsOutOfMemoryWithOneLogLine) {
    DENSE_REQUIRE_GPU(gpu);
    gpu.host().clear_logs();
    void* p = reinterpret_cast<void*>(1);
    EXPECT_EQ(gpu.device().alloc(gpu.device_user(), 0, uint64_t{1} << 50, &p), DENSE_E_OUT_OF_MEMORY);
    EXPECT_EQ(p, nullptr);
    ASSERT_EQ(gpu.host().logs().size(), 1u) << gpu.host().log_text();
    EXPECT_NE(gpu.host().logs()[0].message.find("cudaMalloc"), std::string::npos) << gpu.host().log_text();
    // The failure must not leave an error behind: a normal allocation still succeeds.
    DeviceBuffer ok = gpu.alloc(4096);
    EXPECT_NE(ok.get(), nullptr);
}

TEST(CudaDeviceApi, BadDeviceIndexIsADeviceErrorNotACrash) {
    DENSE_REQUIRE_GPU(gpu);
    gpu.host().clear_logs();
    uint64_t f = 0, t = 0;
    EXPECT_EQ(gpu.device().mem_info(gpu.device_user(), 4096, &f, &t), DENSE_E_DEVICE);
    EXPECT_EQ(gpu.host().logs().size(), 1u) << gpu.host().log_text();
    // Device 0 is current again for the next call.
    EXPECT_EQ(gpu.device().mem_info(gpu.device_user(), 0, &f, &t), DENSE_OK) << gpu.host().log_text();
}

// ABI 1.3: page-locked host memory round trips, and timing marks measure a real copy (a 64 MiB
// device copy takes longer than nothing and less than a second on any GPU we run on).
TEST(CudaDeviceApi, PinnedHostMemoryAndTimingMarks) {
    DENSE_REQUIRE_GPU(gpu);
    const dense_device_api& dev = gpu.device();
    ASSERT_NE(dev.host_alloc, nullptr);
    ASSERT_NE(dev.marks_create, nullptr);
    const size_t n = size_t{64} << 20;
    void* host = nullptr;
    ASSERT_EQ(dev.host_alloc(gpu.device_user(), 0, n, &host), DENSE_OK) << gpu.host().log_text();
    ASSERT_NE(host, nullptr);
    std::mt19937_64 rng(7);
    auto* bytes = static_cast<uint8_t*>(host);
    for (size_t i = 0; i < n; ++i) bytes[i] = static_cast<uint8_t>(rng());
    const std::vector<uint8_t> want(bytes, bytes + n);
    DeviceBuffer a = gpu.alloc(n), b = gpu.alloc(n);
    void* stream = nullptr;
    ASSERT_EQ(dev.stream_create(gpu.device_user(), 0, &stream), DENSE_OK);
    void* marks = nullptr;
    ASSERT_EQ(dev.marks_create(gpu.device_user(), 0, 3, &marks), DENSE_OK) << gpu.host().log_text();
    ASSERT_EQ(dev.copy_to_device(gpu.device_user(), 0, a.get(), host, n, stream), DENSE_OK);
    ASSERT_EQ(dev.mark_record(gpu.device_user(), 0, marks, 0, stream), DENSE_OK);
    ASSERT_EQ(dev.copy_on_device(gpu.device_user(), 0, b.get(), a.get(), n, stream), DENSE_OK);
    ASSERT_EQ(dev.mark_record(gpu.device_user(), 0, marks, 1, stream), DENSE_OK);
    std::memset(host, 0, n);
    ASSERT_EQ(dev.copy_to_host(gpu.device_user(), 0, host, b.get(), n, stream), DENSE_OK);
    ASSERT_EQ(dev.mark_record(gpu.device_user(), 0, marks, 2, stream), DENSE_OK);
    float copy_ms = -1, total_ms = -1;
    ASSERT_EQ(dev.marks_elapsed_ms(gpu.device_user(), 0, marks, 0, 1, &copy_ms), DENSE_OK) << gpu.host().log_text();
    ASSERT_EQ(dev.marks_elapsed_ms(gpu.device_user(), 0, marks, 0, 2, &total_ms), DENSE_OK);
    ASSERT_EQ(dev.stream_sync(gpu.device_user(), 0, stream), DENSE_OK);
    EXPECT_TRUE(std::equal(want.begin(), want.end(), bytes)) << "pinned round trip";
    EXPECT_GT(copy_ms, 0.0f);
    EXPECT_LT(copy_ms, 1000.0f);
    EXPECT_GT(total_ms, copy_ms);  // the copy back to the host came after mark 1
    // A mark that does not exist is refused with a log line, not a crash.
    gpu.host().clear_logs();
    EXPECT_EQ(dev.mark_record(gpu.device_user(), 0, marks, 3, stream), DENSE_E_INVALID_ARGUMENT);
    EXPECT_EQ(gpu.host().logs().size(), 1u) << gpu.host().log_text();
    dev.marks_destroy(gpu.device_user(), 0, marks);
    dev.stream_destroy(gpu.device_user(), 0, stream);
    dev.host_free(gpu.device_user(), 0, host);
}

}  // namespace
}  // namespace dense::test::cuda
