// dense_pack_score of the CUDA packs, called through the C ABI with hand-made device descriptions.
// Runs on any machine where the packs were built: scoring never touches the GPU or the driver.
#include "cuda/cuda_pack_support.hpp"

#include <dense/sdk/pack.hpp>

#include <gtest/gtest.h>

#include <map>

namespace dense::test::cuda {
namespace {

// Score of pack `name`, or skip the test when that pack was not built.
class CudaPackScore : public ::testing::Test {
protected:
    void SetUp() override {
        if (built_cuda_packs().empty()) GTEST_SKIP() << no_cuda_packs_reason();
        for (const CudaPackLib& lib : built_cuda_packs()) {
            ASSERT_TRUE(lib.usable()) << lib.load_error;
            libs_[lib.name] = &lib;
        }
        // The tree builds both or neither.
        ASSERT_EQ(libs_.size(), cuda_pack_names().size()) << "only some CUDA packs were built";
    }
    uint32_t score(const std::string& pack, const dense_hw_desc& hw) { return libs_.at(pack)->score(&hw); }

    std::map<std::string, const CudaPackLib*> libs_;
};

TEST_F(CudaPackScore, NullDescriptionReturnsTheEncodedAbiVersion) {
    for (const auto& [name, lib] : libs_) {
        const uint32_t v = lib->score(nullptr);
        EXPECT_EQ(v, DENSE_ABI_ENCODE_VERSION(DENSE_ABI_MAJOR, DENSE_ABI_MINOR)) << name;
        EXPECT_EQ(DENSE_ABI_VERSION_MAJOR(v), DENSE_ABI_MAJOR) << name;
    }
}

TEST_F(CudaPackScore, Hopper90PrefersTheExactCubin) {
    const auto hw = cuda_hw_desc(9, 0);
    EXPECT_EQ(score("cuda-sm90", hw), 100u);
    EXPECT_EQ(score("cuda-sm120", hw), 0u);  // older than sm_120: neither cubin nor PTX runs
}

TEST_F(CudaPackScore, Blackwell120PrefersTheExactCubinOverPtx) {
    const auto hw = cuda_hw_desc(12, 0);
    EXPECT_EQ(score("cuda-sm120", hw), 100u);
    EXPECT_EQ(score("cuda-sm90", hw), 20u);  // compute_90 PTX JIT-compiles on 12.0
    EXPECT_GT(score("cuda-sm120", hw), score("cuda-sm90", hw));
}

TEST_F(CudaPackScore, SameMajorNewerMinorRunsTheFamilyCubin) {
    EXPECT_EQ(score("cuda-sm120", cuda_hw_desc(12, 1)), 60u);
    EXPECT_EQ(score("cuda-sm90", cuda_hw_desc(12, 1)), 20u);
    EXPECT_EQ(score("cuda-sm90", cuda_hw_desc(9, 2)), 60u);
}

TEST_F(CudaPackScore, OlderArchitecturesScoreZero) {
    for (const auto& [major, minor] : {std::pair{8u, 9u}, {8u, 0u}, {7u, 5u}}) {
        EXPECT_EQ(score("cuda-sm90", cuda_hw_desc(major, minor)), 0u) << major << "." << minor;
        EXPECT_EQ(score("cuda-sm120", cuda_hw_desc(major, minor)), 0u) << major << "." << minor;
    }
}

TEST_F(CudaPackScore, NewerUnknownArchitectureGetsPtxScore) {
    EXPECT_EQ(score("cuda-sm90", cuda_hw_desc(13, 0)), 20u);
    EXPECT_EQ(score("cuda-sm120", cuda_hw_desc(13, 0)), 20u);
    EXPECT_EQ(score("cuda-sm90", cuda_hw_desc(10, 0)), 20u);
    EXPECT_EQ(score("cuda-sm120", cuda_hw_desc(10, 0)), 0u);
}

TEST_F(CudaPackScore, CpuDescriptionScoresZero) {
    auto hw = dense::sdk::make_struct<dense_hw_desc>();
    hw.device_kind = DENSE_DEVICE_CPU;
    hw.cpu_features = DENSE_CPU_AVX2 | DENSE_CPU_FMA;
    hw.cpu_logical_cores = 8;
    // Even with CUDA-looking fields set, a CPU is not a CUDA device.
    hw.cuda_cc_major = 9;
    hw.cuda_driver_version = 13000;
    for (const auto& [name, lib] : libs_) EXPECT_EQ(lib->score(&hw), 0u) << name;
}

TEST_F(CudaPackScore, DriverOlderThanTheLinkedRuntimeScoresZero) {
    // The packs link the CUDA 13 runtime: a CUDA 12.x driver (or none) cannot run them.
    for (uint32_t driver : {0u, 12080u, 12090u}) {
        EXPECT_EQ(score("cuda-sm90", cuda_hw_desc(9, 0, driver)), 0u) << driver;
        EXPECT_EQ(score("cuda-sm120", cuda_hw_desc(12, 0, driver)), 0u) << driver;
    }
    EXPECT_EQ(score("cuda-sm90", cuda_hw_desc(9, 0, 13020)), 100u);  // a newer 13.x driver is fine
    EXPECT_EQ(score("cuda-sm90", cuda_hw_desc(9, 0, 14000)), 100u);
}

TEST_F(CudaPackScore, OtherAbiMajorScoresZero) {
    auto hw = cuda_hw_desc(9, 0);
    hw.hdr.abi_major = static_cast<uint16_t>(DENSE_ABI_MAJOR + 1);
    EXPECT_EQ(score("cuda-sm90", hw), 0u);
}

TEST_F(CudaPackScore, ShorterOlderMinorDescriptionIsReadOnlyUpToItsSize) {
    // A host of an older minor may write a shorter struct: fields past struct_size read as zero,
    // and a description cut before the driver version means "no driver known" -> 0.
    auto hw = cuda_hw_desc(9, 0);
    hw.hdr.struct_size = static_cast<uint32_t>(offsetof(dense_hw_desc, cuda_driver_version));
    EXPECT_EQ(score("cuda-sm90", hw), 0u);
    hw.hdr.struct_size = static_cast<uint32_t>(offsetof(dense_hw_desc, cuda_sm_count));
    EXPECT_EQ(score("cuda-sm90", hw), 100u);
}

}  // namespace
}  // namespace dense::test::cuda
