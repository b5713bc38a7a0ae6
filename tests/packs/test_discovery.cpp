// Where packs are found, which file names count, and that one file is loaded once.
#include "core/error.hpp"
#include "pack_test_util.hpp"
#include "packs/pack_discovery.hpp"
#include "packs/pack_manager.hpp"
#include "common/scoped_env.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <fstream>

namespace dense::packs {
namespace {

namespace fs = std::filesystem;
using test::LogCapture;
using test::ScopedEnv;
using test::only;
using test::test_pack;

size_t count_named(const PackManager& m, const std::string& name) {
    return static_cast<size_t>(
        std::count_if(m.packs().begin(), m.packs().end(), [&](const PackRecord& p) { return p.name == name; }));
}

TEST(PackDiscovery, FileNamesFollowLibdenseFamilyVariant) {
    EXPECT_EQ(pack_name_from_file("libdense-cuda-sm120.so"), "cuda-sm120");
    EXPECT_EQ(pack_name_from_file("libdense-cpu-ref.so"), "cpu-ref");
    EXPECT_EQ(pack_name_from_file("libdense-example-q4_m64.so"), "example-q4_m64");
    EXPECT_EQ(pack_name_from_file("libdense-cuda-sm90-lite.so"), "cuda-sm90-lite");
    EXPECT_EQ(pack_name_from_file("libdense-cpuref.so"), std::nullopt);     // no variant
    EXPECT_EQ(pack_name_from_file("libdense--ref.so"), std::nullopt);       // no family
    EXPECT_EQ(pack_name_from_file("libdense-cpu-.so"), std::nullopt);       // empty variant
    EXPECT_EQ(pack_name_from_file("libdense-CPU-ref.so"), std::nullopt);    // upper case
    EXPECT_EQ(pack_name_from_file("libdense-cpu-ref.so.1"), std::nullopt);  // versioned
    EXPECT_EQ(pack_name_from_file("dense-cpu-ref.so"), std::nullopt);
    EXPECT_EQ(pack_name_from_file("libdense-cpu-r.ef.so"), std::nullopt);
}

TEST(PackDiscovery, DefaultDirIsBesideTheExecutable) {
    // Test binaries live in <build>/bin like dense-rt, so the default dir is the build's pack dir.
    const fs::path dir = default_pack_dir();
    ASSERT_FALSE(dir.empty());
    EXPECT_EQ(dir.filename(), "packs");
    EXPECT_EQ(dir.parent_path().filename(), "dense-rt");
    if (std::getenv("DENSE_BUILD_DIR") == nullptr) {
        EXPECT_EQ(fs::weakly_canonical(dir), fs::weakly_canonical(test::build_pack_dir()));
    }
}

TEST(PackDiscovery, TheSameFileFoundTwiceIsLoadedOnce) {
    DENSE_REQUIRE_TEST_PACKS();
    const fs::path dir = test::scratch_dir("twice");
    const fs::path link = dir / "libdense-test-minimal.so";
    fs::remove(link);
    fs::create_symlink(test_pack("test-minimal"), link);
    // The file itself, its directory, a symlink to it and the file again.
    PackManager m(only({test_pack("test-minimal"), test::test_pack_dir(), link, test_pack("test-minimal")}),
                  test::devices_with(""));
    m.load();
    EXPECT_EQ(count_named(m, "test-minimal"), 1u);
    // Its ops are registered once, too.
    EXPECT_EQ(m.registry().candidates({DENSE_OP_RMS_NORM, DENSE_TYPE_F32, DENSE_TYPE_F32, DENSE_DEVICE_CPU}).size(),
              2u);
    fs::remove_all(dir);
}

TEST(PackDiscovery, ACopyOfTheSamePackFoundLaterIsShadowed) {
    DENSE_REQUIRE_TEST_PACKS();
    const fs::path dir = test::scratch_dir("shadow");
    const fs::path copy = dir / "libdense-test-minimal.so";
    fs::copy_file(test_pack("test-minimal"), copy, fs::copy_options::overwrite_existing);
    PackManager m(only({test_pack("test-minimal"), copy}), test::devices_with(""));
    m.load();
    ASSERT_EQ(m.packs().size(), 2u);
    EXPECT_EQ(m.packs()[0].status, PackStatus::Usable);
    EXPECT_EQ(m.packs()[1].status, PackStatus::Skipped);
    EXPECT_NE(m.packs()[1].reason.find("shadowed by"), std::string::npos) << m.packs()[1].reason;
    EXPECT_EQ(m.registry().candidates({DENSE_OP_RMS_NORM, DENSE_TYPE_F32, DENSE_TYPE_F32, DENSE_DEVICE_CPU}).size(),
              2u);
    fs::remove_all(dir);
}

TEST(PackDiscovery, NotASharedLibraryIsRefusedWithTheLoaderMessage) {
    const fs::path dir = test::scratch_dir("garbage");
    const fs::path bad = dir / "libdense-garbage-text.so";
    std::ofstream(bad) << "this is not an ELF file, just text that happens to carry a pack's name\n";
    LogCapture log;
    PackManager m(only({bad}), test::devices_with(""));
    m.load();
    ASSERT_EQ(m.packs().size(), 1u);
    const PackRecord& r = m.packs()[0];
    EXPECT_EQ(r.status, PackStatus::Refused);
    EXPECT_NE(r.reason.find("cannot load: "), std::string::npos) << r.reason;
    // dlerror's own words name the file ("...: invalid ELF header" / "file too short").
    EXPECT_NE(r.reason.find(bad.string()), std::string::npos) << r.reason;
    EXPECT_EQ(log.matching(spdlog::level::warn, {bad.string(), "refused", "cannot load"}).size(), 1u) << log.dump();
    fs::remove_all(dir);
}

TEST(PackDiscovery, WrongFileNamesAndMissingPathsAreRefused) {
    DENSE_REQUIRE_TEST_PACKS();
    const fs::path dir = test::scratch_dir("names");
    const fs::path wrong = dir / "minimal.so";
    fs::copy_file(test_pack("test-minimal"), wrong, fs::copy_options::overwrite_existing);
    const fs::path missing = dir / "libdense-not-there.so";
    LogCapture log;
    PackManager m(only({wrong, missing}), test::devices_with(""));
    m.load();
    ASSERT_EQ(m.packs().size(), 2u);
    EXPECT_EQ(m.packs()[0].status, PackStatus::Refused);
    EXPECT_NE(m.packs()[0].reason.find("libdense-<family>-<variant>.so"), std::string::npos);
    EXPECT_EQ(m.packs()[1].status, PackStatus::Refused);
    EXPECT_NE(m.packs()[1].reason.find("no such file"), std::string::npos);
    EXPECT_EQ(log.matching(spdlog::level::warn, {wrong.string(), "refused"}).size(), 1u) << log.dump();
    EXPECT_EQ(log.matching(spdlog::level::warn, {missing.string(), "refused"}).size(), 1u) << log.dump();
    fs::remove_all(dir);
}

TEST(PackDiscovery, DirectoriesOnlyYieldLibdenseFiles) {
    DENSE_REQUIRE_TEST_PACKS();
    const fs::path dir = test::scratch_dir("globbing");
    fs::copy_file(test_pack("test-minimal"), dir / "libdense-test-minimal.so", fs::copy_options::overwrite_existing);
    fs::copy_file(test_pack("test-minimal"), dir / "libother.so", fs::copy_options::overwrite_existing);
    std::ofstream(dir / "README") << "not a pack\n";
    PackManager m(only({dir}), test::devices_with(""));
    m.load();
    ASSERT_EQ(m.packs().size(), 1u);
    EXPECT_EQ(m.packs()[0].name, "test-minimal");
    EXPECT_EQ(m.packs()[0].origin, "--pack/config");
    fs::remove_all(dir);
}

TEST(PackDiscovery, DensePackPathIsSearchedAfterExplicitPaths) {
    DENSE_REQUIRE_TEST_PACKS();
    const fs::path env_dir = test::scratch_dir("envpath");
    fs::copy_file(test_pack("test-newminor"), env_dir / "libdense-test-newminor.so",
                  fs::copy_options::overwrite_existing);
    ScopedEnv env("DENSE_PACK_PATH", "/nonexistent/dense/packs::" + env_dir.string());
    PackPolicy policy = only({test_pack("test-minimal")});
    policy.use_env = true;
    PackManager m(policy, test::devices_with(""));
    m.load();
    ASSERT_EQ(m.packs().size(), 2u);
    EXPECT_EQ(m.packs()[0].name, "test-minimal");
    EXPECT_EQ(m.packs()[1].name, "test-newminor");
    EXPECT_EQ(m.packs()[1].origin, "DENSE_PACK_PATH");
    EXPECT_TRUE(m.packs()[1].usable());

    policy.use_env = false;
    PackManager without(policy, test::devices_with(""));
    without.load();
    EXPECT_EQ(without.packs().size(), 1u);
    fs::remove_all(env_dir);
}

TEST(PackDiscovery, DeniedPacksAreSkippedAndRegisterNothing) {
    DENSE_REQUIRE_TEST_PACKS();
    PackPolicy policy = only({test_pack("test-minimal"), test_pack("test-newminor")});
    policy.deny = {"test-minimal"};
    PackManager m(policy, test::devices_with(""));
    m.load();
    ASSERT_EQ(m.packs().size(), 2u);
    EXPECT_EQ(m.packs()[0].status, PackStatus::Skipped);
    EXPECT_EQ(m.packs()[0].reason, "denied by policy");
    EXPECT_EQ(m.find_pack("test-minimal"), nullptr);
    EXPECT_TRUE(m.registry().candidates({DENSE_OP_RMS_NORM, DENSE_TYPE_F32, DENSE_TYPE_F32, DENSE_DEVICE_CPU}).empty());
    ASSERT_NE(m.chosen_pack(0), nullptr);
    EXPECT_EQ(m.chosen_pack(0)->name, "test-newminor");
}

TEST(PackDiscovery, NoPacksAtAllIsAProblemNotACrash) {
    PackManager m(only({}), test::devices_with(""));
    m.load();
    EXPECT_TRUE(m.packs().empty());
    EXPECT_EQ(m.main_device_index(), 0u);
    EXPECT_EQ(m.main_pack(), nullptr);
    ASSERT_FALSE(m.problems().empty());
    EXPECT_THROW(m.throw_if_unusable(), Error);
}

TEST(PackDiscovery, AccessorsNeedLoad) {
    PackManager m(only({}), test::devices_with(""));
    EXPECT_THROW((void)m.packs(), Error);
    m.load();
    EXPECT_NO_THROW((void)m.packs());
    EXPECT_THROW(m.load(), Error);
}

}  // namespace
}  // namespace dense::packs
