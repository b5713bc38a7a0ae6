// Deliberately broken packs are refused with one clear log line each, the run goes on, and what a
// failed init registered is gone again. A pack of a newer ABI minor is accepted.
#include "core/type_table.hpp"
#include "pack_test_util.hpp"
#include "packs/pack_manager.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace dense::packs {
namespace {

using test::LogCapture;
using test::only;
using test::test_pack;

const PackRecord* record_for(const PackManager& m, const std::filesystem::path& file) {
    for (const auto& p : m.packs())
        if (p.file.lexically_normal() == file.lexically_normal()) return &p;
    return nullptr;
}

struct BrokenCase {
    const char* pack;
    const char* reason;  // must appear in the record's reason and in the one log line
};

class BrokenPack : public ::testing::TestWithParam<BrokenCase> {};

TEST_P(BrokenPack, IsRefusedWithOneLogLineAndTheRunGoesOn) {
    DENSE_REQUIRE_TEST_PACKS();
    const BrokenCase c = GetParam();
    const auto file = test_pack(c.pack);
    ASSERT_TRUE(std::filesystem::exists(file)) << file;
    LogCapture log;
    PackManager m(only({file, test_pack("test-minimal")}), test::devices_with(""));
    m.load();

    const PackRecord* r = record_for(m, file);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->status, PackStatus::Refused);
    EXPECT_NE(r->reason.find(c.reason), std::string::npos) << r->reason;
    EXPECT_FALSE(r->initialised());
    EXPECT_TRUE(r->scores.empty());

    const auto lines = log.matching(spdlog::level::warn, {file.string()});
    ASSERT_EQ(lines.size(), 1u) << "log:\n" << log.dump();
    EXPECT_NE(lines[0].find("refused"), std::string::npos) << lines[0];
    EXPECT_NE(lines[0].find(c.reason), std::string::npos) << lines[0];

    // Loading went on: the good pack after it is there and usable, and nothing of the broken one
    // is in the registry.
    const PackRecord* good = m.find_pack("test-minimal");
    ASSERT_NE(good, nullptr);
    EXPECT_TRUE(good->usable());
    for (const auto& [key, candidates] : m.registry().all())
        for (const auto& cand : candidates) EXPECT_EQ(cand.pack, "test-minimal") << to_string(key);
    EXPECT_EQ(m.chosen_pack(0), good);
}

INSTANTIATE_TEST_SUITE_P(All, BrokenPack,
                         ::testing::Values(BrokenCase{"broken-abi2", "built for ABI 2.0, this runtime speaks 1."},
                                           BrokenCase{"broken-noexport", "missing export dense_pack_release"},
                                           BrokenCase{"broken-initfail", "dense_pack_init failed with DENSE_E_DEVICE"},
                                           BrokenCase{"broken-initthrow",
                                                      "dense_pack_init failed with DENSE_E_INTERNAL"},
                                           BrokenCase{"broken-packmajor", "has ABI major 2"},
                                           BrokenCase{"broken-packsize", "declares struct_size 16"}),
                         [](const auto& param_info) {
                             std::string n = param_info.param.pack;
                             std::replace(n.begin(), n.end(), '-', '_');
                             return n;
                         });

TEST(BrokenPacks, WrongMajorIsRefusedBeforeItsAbiIsTrusted) {
    DENSE_REQUIRE_TEST_PACKS();
    PackManager m(only({test_pack("broken-abi2")}), test::devices_with("cuda:9.0:141GiB:H200"));
    m.load();
    ASSERT_EQ(m.packs().size(), 1u);
    const PackRecord& r = m.packs()[0];
    EXPECT_TRUE(r.abi_known);
    EXPECT_EQ(r.abi_major, 2u);
    EXPECT_EQ(r.abi_minor, 0u);
    // It would score 100 everywhere; a refused pack is never scored or chosen.
    EXPECT_TRUE(r.scores.empty());
    EXPECT_EQ(m.chosen_pack(0), nullptr);
    EXPECT_EQ(m.chosen_pack(1), nullptr);
}

TEST(BrokenPacks, FailedInitLeavesNoTypeAndNoOpBehind) {
    DENSE_REQUIRE_TEST_PACKS();
    PackManager m(only({test_pack("broken-initfail"), test_pack("broken-initthrow"), test_pack("broken-packmajor")}),
                  test::devices_with(""));
    m.load();
    ASSERT_EQ(m.packs().size(), 3u);
    for (const auto& p : m.packs()) EXPECT_EQ(p.status, PackStatus::Refused) << p.file;
    // broken-initfail registered this format before failing: it must be gone again.
    EXPECT_EQ(global_type_table().find("brokentest.initfail_q"), nullptr);
    EXPECT_EQ(m.registry().size(), 0u);
    EXPECT_TRUE(m.registry().candidates({DENSE_OP_RMS_NORM, DENSE_TYPE_F32, DENSE_TYPE_F32, DENSE_DEVICE_CPU}).empty());
}

TEST(BrokenPacks, ScoreZeroEverywhereIsListedButNotUsable) {
    DENSE_REQUIRE_TEST_PACKS();
    LogCapture log;
    PackManager m(only({test_pack("broken-zero")}), test::devices_with("cuda:9.0:141GiB:H200"));
    m.load();
    ASSERT_EQ(m.packs().size(), 1u);
    const PackRecord& r = m.packs()[0];
    EXPECT_EQ(r.status, PackStatus::NotUsableHere);
    EXPECT_TRUE(r.initialised());
    EXPECT_EQ(r.name, "broken-zero");
    EXPECT_EQ(r.scores, (std::vector<uint32_t>{0, 0}));
    // Its op is listed (for `dense-rt packs`) but never selected.
    const OpKey key{DENSE_OP_SWIGLU, DENSE_TYPE_NONE, DENSE_TYPE_F32, DENSE_DEVICE_CPU};
    ASSERT_EQ(m.registry().candidates(key).size(), 1u);
    dense_op_call call{};
    EXPECT_EQ(m.select_op(key, call, 0), nullptr);
    EXPECT_EQ(m.chosen_pack(0), nullptr);
    // Not usable is not a refusal: no warning about the file.
    EXPECT_TRUE(log.matching(spdlog::level::warn, {r.file.string()}).empty()) << log.dump();
}

TEST(BrokenPacks, NewerMinorWithBiggerStructsIsAccepted) {
    DENSE_REQUIRE_TEST_PACKS();
    PackManager m(only({test_pack("test-newminor")}), test::devices_with(""));
    m.load();
    ASSERT_EQ(m.packs().size(), 1u);
    const PackRecord& r = m.packs()[0];
    ASSERT_EQ(r.status, PackStatus::Usable) << r.reason;
    EXPECT_EQ(r.abi_major, DENSE_ABI_MAJOR);
    EXPECT_EQ(r.abi_minor, DENSE_ABI_MINOR + 1);
    EXPECT_EQ(r.name, "test-newminor");
    EXPECT_EQ(r.version, "9.9.9");
    EXPECT_EQ(r.device_kind, static_cast<dense_device_kind>(DENSE_DEVICE_CPU));
    // The host's copy holds only what it knows: its size is capped at the host's struct.
    EXPECT_EQ(r.info.hdr.struct_size, sizeof(dense_pack));
    EXPECT_EQ(r.info.hdr.abi_minor, DENSE_ABI_MINOR + 1);

    const TypeInfo* t = global_type_table().find("newminortest.q4_x");
    ASSERT_NE(t, nullptr);
    EXPECT_GE(t->id, static_cast<dense_type_id>(DENSE_TYPE_FIRST_RUNTIME));
    EXPECT_EQ(t->block_elements, 32u);
    EXPECT_EQ(t->block_bytes, 18u);
    ASSERT_EQ(r.types.size(), 1u);
    EXPECT_EQ(r.types[0].id, t->id);

    const auto& cands = m.registry().candidates({DENSE_OP_GEMV_Q, t->id, DENSE_TYPE_Q8_0, DENSE_DEVICE_CPU});
    ASSERT_EQ(cands.size(), 1u);
    EXPECT_EQ(cands[0].impl_name, "gemv_q4_x_next");
    EXPECT_EQ(cands[0].priority, 3);
    EXPECT_EQ(cands[0].impl.hdr.struct_size, sizeof(dense_op_impl));
    EXPECT_NE(cands[0].impl.run, nullptr);
}

TEST(BrokenPacks, WholeDirectoryLoadsTheGoodOnesAndRefusesTheRest) {
    DENSE_REQUIRE_TEST_PACKS();
    LogCapture log;
    PackManager m(only({test::test_pack_dir()}), test::devices_with("cuda:9.0:141GiB:H200"));
    m.load();
    size_t refused = 0;
    for (const auto& p : m.packs()) {
        if (p.status == PackStatus::Refused) {
            ++refused;
            EXPECT_EQ(log.matching(spdlog::level::warn, {p.file.string(), "refused"}).size(), 1u) << p.file;
        }
    }
    EXPECT_EQ(refused, 6u) << log.dump();
    for (const char* name : {"test-minimal", "test-newminor", "cuda-fake90"}) {
        const PackRecord* p = m.find_pack(name);
        ASSERT_NE(p, nullptr) << name;
        EXPECT_TRUE(p->usable()) << name;
    }
    ASSERT_NE(m.find_pack("cuda-fake120"), nullptr);
    EXPECT_EQ(m.find_pack("cuda-fake120")->status, PackStatus::NotUsableHere);  // 12.0 pack on a 9.0 GPU
    ASSERT_NE(m.main_pack(), nullptr);
    EXPECT_EQ(m.main_pack()->name, "cuda-fake90");
}

TEST(BrokenPacks, PackLogLinesCarryThePackName) {
    DENSE_REQUIRE_TEST_PACKS();
    // test-newminor logs nothing and test-minimal logs once per process (at its first init); so the
    // check is on a fresh file name: a copy is a different library, initialised anew.
    const auto dir = test::scratch_dir("packlog");
    std::filesystem::copy_file(test_pack("test-minimal"), dir / "libdense-test-minimal.so",
                               std::filesystem::copy_options::overwrite_existing);
    LogCapture log;
    PackManager m(only({dir}), test::devices_with(""));
    m.load();
    EXPECT_EQ(log.matching(spdlog::level::info, {"[test-minimal]", "minimal pack ready"}).size(), 1u) << log.dump();
    std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace dense::packs
