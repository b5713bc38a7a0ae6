// Pack selection per device: "the sm_90 pack wins on an H200, the sm_120 pack on an RTX 50-series,
// cpu-ref where there is no GPU", tested with fake CUDA packs that score like the real ones on
// simulated devices; plus prefer / deny / force.
#include "core/error.hpp"
#include "pack_test_util.hpp"
#include "packs/pack_manager.hpp"

#include <gtest/gtest.h>

namespace dense::packs {
namespace {

using test::only;
using test::test_pack;

constexpr const char* kH200 = "cuda:9.0:141GiB:H200";
constexpr const char* kRtx5060 = "cuda:12.0:16GiB:RTX 5060 Ti";

PackPolicy fake_pair_and_minimal() {
    return only({test_pack("cuda-fake90"), test_pack("cuda-fake120"), test_pack("test-minimal")});
}

std::string chosen_name(const PackManager& m, size_t device) {
    const PackRecord* p = m.chosen_pack(device);
    return p != nullptr ? p->name : "(none)";
}

TEST(PackSelection, Sm90PackWinsOnH200) {
    DENSE_REQUIRE_TEST_PACKS();
    PackManager m(fake_pair_and_minimal(), test::devices_with(kH200));
    m.load();
    ASSERT_EQ(m.devices().size(), 2u);
    EXPECT_TRUE(m.devices()[1].simulated);
    EXPECT_EQ(m.find_pack("cuda-fake90")->score_on(1), 100u);
    EXPECT_EQ(m.find_pack("cuda-fake120")->score_on(1), 0u);
    EXPECT_EQ(chosen_name(m, 1), "cuda-fake90");
    EXPECT_EQ(chosen_name(m, 0), "test-minimal");
    EXPECT_EQ(m.main_device_index(), 1u);
    EXPECT_EQ(m.main_device().name(), "H200");
    EXPECT_EQ(m.main_pack()->name, "cuda-fake90");
    EXPECT_TRUE(m.problems().empty());
}

TEST(PackSelection, Sm120PackWinsOnRtx50) {
    DENSE_REQUIRE_TEST_PACKS();
    PackManager m(fake_pair_and_minimal(), test::devices_with(kRtx5060));
    m.load();
    EXPECT_EQ(m.find_pack("cuda-fake120")->score_on(1), 100u);
    EXPECT_EQ(m.find_pack("cuda-fake90")->score_on(1), 20u);  // would run through PTX JIT
    EXPECT_EQ(chosen_name(m, 1), "cuda-fake120");
    EXPECT_EQ(m.main_device_index(), 1u);
}

TEST(PackSelection, SameMajorNewerMinorBeatsJit) {
    DENSE_REQUIRE_TEST_PACKS();
    PackManager m(fake_pair_and_minimal(), test::devices_with("cuda:12.1:12GiB:future card,cuda:10.0:180GiB:B200"));
    m.load();
    EXPECT_EQ(m.find_pack("cuda-fake120")->score_on(1), 60u);
    EXPECT_EQ(chosen_name(m, 1), "cuda-fake120");
    EXPECT_EQ(m.find_pack("cuda-fake90")->score_on(2), 20u);
    EXPECT_EQ(m.find_pack("cuda-fake120")->score_on(2), 0u);
    EXPECT_EQ(chosen_name(m, 2), "cuda-fake90");
    // Main: the device whose chosen pack scores highest (60 over 20).
    EXPECT_EQ(m.main_device_index(), 1u);
}

TEST(PackSelection, EachDeviceGetsItsOwnPackAndTiesGoToMemory) {
    DENSE_REQUIRE_TEST_PACKS();
    PackManager m(fake_pair_and_minimal(), test::devices_with(std::string(kRtx5060) + "," + kH200));
    m.load();
    EXPECT_EQ(chosen_name(m, 0), "test-minimal");
    EXPECT_EQ(chosen_name(m, 1), "cuda-fake120");
    EXPECT_EQ(chosen_name(m, 2), "cuda-fake90");
    EXPECT_EQ(m.main_device_index(), 2u);  // both score 100; the H200 has more memory
}

TEST(PackSelection, OlderGpuThanEveryPackFallsBackToTheCpu) {
    DENSE_REQUIRE_TEST_PACKS();
    PackManager m(fake_pair_and_minimal(), test::devices_with("cuda:8.6:24GiB:RTX 3090"));
    m.load();
    EXPECT_EQ(chosen_name(m, 1), "(none)");
    EXPECT_EQ(m.main_device_index(), 0u);
    EXPECT_EQ(m.main_pack()->name, "test-minimal");
    EXPECT_EQ(m.find_pack("cuda-fake90")->status, PackStatus::NotUsableHere);
}

TEST(PackSelection, NoGpuMeansTheCpu) {
    DENSE_REQUIRE_TEST_PACKS();
    PackManager m(fake_pair_and_minimal(), test::devices_with(""));
    m.load();
    EXPECT_EQ(m.main_device_index(), 0u);
    EXPECT_FALSE(m.main_device().is_cuda());
    EXPECT_EQ(m.main_pack()->name, "test-minimal");
    EXPECT_EQ(m.find_pack("cuda-fake90")->status, PackStatus::NotUsableHere);
    EXPECT_EQ(m.find_pack("cuda-fake120")->status, PackStatus::NotUsableHere);
}

TEST(PackSelection, CpuRefServesTheCpuWhenThereIsNoGpu) {
    const auto cpu_ref = test::build_pack_dir() / "libdense-cpu-ref.so";
    if (!std::filesystem::exists(cpu_ref)) GTEST_SKIP() << "cpu-ref pack not built (" << cpu_ref << ")";
    PackManager m(only({cpu_ref, test_pack("cuda-fake90"), test_pack("cuda-fake120")}), test::devices_with(""));
    m.load();
    const PackRecord* ref = m.find_pack("cpu-ref");
    ASSERT_NE(ref, nullptr) << "cpu-ref refused: " << m.packs()[0].reason;
    EXPECT_TRUE(ref->usable());
    EXPECT_EQ(m.main_device_index(), 0u);
    EXPECT_EQ(m.main_pack(), ref);
}

TEST(PackSelection, DesignRuleWithCpuRefAndBothFakeGpus) {
    const auto cpu_ref = test::build_pack_dir() / "libdense-cpu-ref.so";
    if (!std::filesystem::exists(cpu_ref)) GTEST_SKIP() << "cpu-ref pack not built (" << cpu_ref << ")";
    PackManager m(only({cpu_ref, test_pack("cuda-fake90"), test_pack("cuda-fake120")}),
                  test::devices_with(std::string(kH200) + "," + kRtx5060));
    m.load();
    EXPECT_EQ(chosen_name(m, 0), "cpu-ref");
    EXPECT_EQ(chosen_name(m, 1), "cuda-fake90");
    EXPECT_EQ(chosen_name(m, 2), "cuda-fake120");
}

TEST(PackSelection, PreferOutranksScore) {
    DENSE_REQUIRE_TEST_PACKS();
    PackPolicy policy = fake_pair_and_minimal();
    policy.prefer = {"cuda-fake90"};
    PackManager m(policy, test::devices_with(kRtx5060));
    m.load();
    EXPECT_EQ(chosen_name(m, 1), "cuda-fake90");  // 20 + preference over 100
}

TEST(PackSelection, PreferCannotMakeAPackRunWhereItScoresZero) {
    DENSE_REQUIRE_TEST_PACKS();
    PackPolicy policy = fake_pair_and_minimal();
    policy.prefer = {"cuda-fake120"};
    PackManager m(policy, test::devices_with(kH200));
    m.load();
    EXPECT_EQ(chosen_name(m, 1), "cuda-fake90");
}

TEST(PackSelection, DenyRemovesAPackFromSelection) {
    DENSE_REQUIRE_TEST_PACKS();
    PackPolicy policy = fake_pair_and_minimal();
    policy.deny = {"cuda-fake90"};
    PackManager m(policy, test::devices_with(kH200));
    m.load();
    EXPECT_EQ(chosen_name(m, 1), "(none)");
    EXPECT_EQ(m.main_device_index(), 0u);
}

TEST(PackSelection, ForceDecidesTheMainDevice) {
    DENSE_REQUIRE_TEST_PACKS();
    PackPolicy policy = fake_pair_and_minimal();
    policy.force = "cuda-fake120";
    PackManager m(policy, test::devices_with(std::string(kH200) + "," + kRtx5060));
    m.load();
    EXPECT_EQ(m.main_device_index(), 2u);
    EXPECT_EQ(m.main_pack()->name, "cuda-fake120");
    EXPECT_TRUE(m.problems().empty());

    policy.force = "test-minimal";
    PackManager cpu(policy, test::devices_with(kH200));
    cpu.load();
    EXPECT_EQ(cpu.main_device_index(), 0u);
    EXPECT_EQ(cpu.main_pack()->name, "test-minimal");
    EXPECT_NO_THROW(cpu.throw_if_unusable());
}

TEST(PackSelection, ForcingAPackThatCannotRunIsAProblem) {
    DENSE_REQUIRE_TEST_PACKS();
    PackPolicy policy = fake_pair_and_minimal();
    policy.force = "cuda-fake120";
    PackManager m(policy, test::devices_with(kH200));
    m.load();
    ASSERT_EQ(m.problems().size(), 1u);
    EXPECT_NE(m.problems()[0].find("cuda-fake120"), std::string::npos) << m.problems()[0];
    EXPECT_THROW(m.throw_if_unusable(), Error);

    policy.force = "no-such-pack";
    PackManager none(policy, test::devices_with(kH200));
    none.load();
    ASSERT_FALSE(none.problems().empty());
    EXPECT_NE(none.problems()[0].find("was not found"), std::string::npos) << none.problems()[0];
}

TEST(PackSelection, OpsComeFromThePackThatWinsOnTheDevice) {
    DENSE_REQUIRE_TEST_PACKS();
    PackManager m(fake_pair_and_minimal(), test::devices_with(std::string(kH200) + "," + kRtx5060));
    m.load();
    const OpKey key{DENSE_OP_GEMV_Q, DENSE_TYPE_Q4_K, DENSE_TYPE_Q8_1, DENSE_DEVICE_CUDA};
    ASSERT_EQ(m.registry().candidates(key).size(), 2u);
    dense_op_call call{};
    const OpCandidate* on_h200 = m.select_op(key, call, 1);
    const OpCandidate* on_rtx = m.select_op(key, call, 2);
    ASSERT_NE(on_h200, nullptr);
    ASSERT_NE(on_rtx, nullptr);
    EXPECT_EQ(on_h200->pack, "cuda-fake90");
    EXPECT_EQ(on_rtx->pack, "cuda-fake120");
    // A CUDA op is never selected for the CPU, and a type nobody registered has no candidate.
    EXPECT_EQ(m.select_op(key, call, 0), nullptr);
    EXPECT_EQ(m.select_op({DENSE_OP_GEMV_Q, DENSE_TYPE_IQ2_S, DENSE_TYPE_Q8_1, DENSE_DEVICE_CUDA}, call, 1), nullptr);
}

TEST(PackSelection, ForceLeavesOnlyTheForcedPacksOpsOnTheMainDevice) {
    DENSE_REQUIRE_TEST_PACKS();
    PackPolicy policy = fake_pair_and_minimal();
    policy.force = "cuda-fake90";
    PackManager m(policy, test::devices_with(kRtx5060));
    m.load();
    ASSERT_EQ(m.main_device_index(), 1u);
    const PackRanks ranks = m.ranks_for(1);
    EXPECT_EQ(ranks.by_pack.size(), 1u);
    EXPECT_NE(ranks.find("cuda-fake90"), nullptr);
    dense_op_call call{};
    const OpCandidate* c = m.select_op({DENSE_OP_GEMV_Q, DENSE_TYPE_Q4_K, DENSE_TYPE_Q8_1, DENSE_DEVICE_CUDA}, call, 1);
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->pack, "cuda-fake90");
}

}  // namespace
}  // namespace dense::packs
