// Device probing: the CPU description, DENSE_FAKE_DEVICES parsing, and a CUDA probe that works
// (returns nothing) without a driver.
#include "core/error.hpp"
#include "pack_test_util.hpp"
#include "packs/device_probe.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

namespace dense::packs {
namespace {

TEST(DeviceProbe, FakeDevicesParseAsDocumented) {
    const auto devs = parse_fake_devices("cuda:12.0:16GiB:RTX 5060 Ti,cuda:9.0:141GiB:H200", 3);
    ASSERT_EQ(devs.size(), 2u);
    EXPECT_TRUE(devs[0].simulated);
    EXPECT_TRUE(devs[0].is_cuda());
    EXPECT_EQ(devs[0].name(), "RTX 5060 Ti");
    EXPECT_EQ(devs[0].id(), "cuda:3");
    EXPECT_EQ(devs[0].hw.cuda_cc_major, 12u);
    EXPECT_EQ(devs[0].hw.cuda_cc_minor, 0u);
    EXPECT_EQ(devs[0].hw.total_memory_bytes, 16ull << 30);
    EXPECT_EQ(devs[0].hw.free_memory_bytes, 16ull << 30);
    EXPECT_GT(devs[0].hw.cuda_driver_version, 0u);
    EXPECT_EQ(devs[0].hw.hdr.abi_major, DENSE_ABI_MAJOR);
    EXPECT_EQ(devs[0].hw.hdr.struct_size, sizeof(dense_hw_desc));
    EXPECT_EQ(devs[1].name(), "H200");
    EXPECT_EQ(devs[1].id(), "cuda:4");
    EXPECT_EQ(devs[1].hw.cuda_cc_major, 9u);
    EXPECT_EQ(devs[1].hw.total_memory_bytes, 141ull << 30);
}

TEST(DeviceProbe, FakeDeviceNamesKeepColonsAndSpacesAreTrimmed) {
    const auto devs = parse_fake_devices(" cuda:9.0:80 GiB:H100: SXM5 , ", 0);
    ASSERT_EQ(devs.size(), 1u);
    EXPECT_EQ(devs[0].name(), "H100: SXM5");
    EXPECT_EQ(devs[0].hw.total_memory_bytes, 80ull << 30);
    EXPECT_TRUE(parse_fake_devices("", 0).empty());
}

TEST(DeviceProbe, MalformedFakeDevicesAreConfigErrorsNamingTheEntry) {
    for (const char* bad : {"cpu:1.0:1GiB:x", "cuda:9:1GiB:x", "cuda:9.x:1GiB:x", "cuda:9.0:lots:x",
                            "cuda:9.0:1GiB:", "cuda:9.0", "cuda:0.0:1GiB:x"}) {
        try {
            parse_fake_devices(bad, 0);
            ADD_FAILURE() << "accepted: " << bad;
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::Config);
            EXPECT_NE(std::string(e.what()).find("DENSE_FAKE_DEVICES"), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
        }
    }
}

TEST(DeviceProbe, CpuDescriptionIsSane) {
    const DeviceInfo cpu = probe_cpu();
    EXPECT_EQ(cpu.kind(), static_cast<dense_device_kind>(DENSE_DEVICE_CPU));
    EXPECT_EQ(cpu.id(), "cpu");
    EXPECT_FALSE(cpu.simulated);
    EXPECT_FALSE(cpu.name().empty());
    EXPECT_GE(cpu.hw.cpu_logical_cores, 1u);
    EXPECT_GT(cpu.hw.total_memory_bytes, 0u);
    EXPECT_LE(cpu.hw.free_memory_bytes, cpu.hw.total_memory_bytes);
    EXPECT_EQ(cpu.hw.hdr.abi_major, DENSE_ABI_MAJOR);
    EXPECT_EQ(cpu.hw.hdr.struct_size, sizeof(dense_hw_desc));
    const uint64_t f = cpu.hw.cpu_features;
    // Features only appear with what they build on (the OS-support check is shared).
    if (f & DENSE_CPU_AVX2) {
        EXPECT_TRUE(f & DENSE_CPU_AVX);
    }
    if (f & DENSE_CPU_AVX512BW) {
        EXPECT_TRUE(f & DENSE_CPU_AVX512F);
    }
#if defined(__x86_64__)
    EXPECT_TRUE(f & DENSE_CPU_SSE42) << "every x86-64 machine we run on has SSE4.2";
#endif
#if defined(__AVX2__)
    EXPECT_TRUE(f & DENSE_CPU_AVX2) << "compiled for AVX2 and running, so the CPU has it";
#endif
}

TEST(DeviceProbe, FeatureNames) {
    EXPECT_EQ(cpu_feature_names(0), "");
    EXPECT_EQ(cpu_feature_names(DENSE_CPU_AVX | DENSE_CPU_AVX2 | DENSE_CPU_FMA), "avx avx2 fma");
}

TEST(DeviceProbe, CudaProbeNeverFailsAndReportsPlausibleDevices) {
    const auto devs = probe_cuda_devices();  // empty without a driver; that is the point
    for (size_t i = 0; i < devs.size(); ++i) {
        EXPECT_TRUE(devs[i].is_cuda());
        EXPECT_FALSE(devs[i].simulated);
        EXPECT_EQ(devs[i].hw.device_index, i);
        EXPECT_GE(devs[i].hw.cuda_cc_major, 3u);
        EXPECT_GT(devs[i].hw.total_memory_bytes, 0u);
        EXPECT_GT(devs[i].hw.cuda_sm_count, 0u);
        EXPECT_GT(devs[i].hw.cuda_driver_version, 0u);
        EXPECT_LE(devs[i].hw.free_memory_bytes, devs[i].hw.total_memory_bytes);
    }
    SUCCEED() << devs.size() << " CUDA device(s)";
}

TEST(DeviceProbe, ProbeDevicesAppendsSimulatedOnes) {
    const char* old = std::getenv("DENSE_FAKE_DEVICES");
    const std::string saved = old != nullptr ? old : "";
    ::setenv("DENSE_FAKE_DEVICES", "cuda:9.0:141GiB:H200", 1);
    const auto devs = probe_devices();
    if (old != nullptr)
        ::setenv("DENSE_FAKE_DEVICES", saved.c_str(), 1);
    else
        ::unsetenv("DENSE_FAKE_DEVICES");
    ASSERT_GE(devs.size(), 2u);
    EXPECT_EQ(devs.front().kind(), static_cast<dense_device_kind>(DENSE_DEVICE_CPU));
    EXPECT_TRUE(devs.back().simulated);
    EXPECT_EQ(devs.back().name(), "H200");
    // Simulated ordinals continue after the real GPUs.
    EXPECT_EQ(devs.back().hw.device_index, static_cast<uint32_t>(devs.size() - 2));

    ProbeOptions no_fake;
    no_fake.fake_from_env = false;
    for (const auto& d : probe_devices(no_fake)) EXPECT_FALSE(d.simulated);
}

}  // namespace
}  // namespace dense::packs
