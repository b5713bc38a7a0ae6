// The RSS reader: /proc/self/statm parsing, a plausible value for this process, and that it follows
// memory in and out of the process (an anonymous buffer, and a file mapping released after use).
#include "common/page_residency.hpp"
#include "common/test_paths.hpp"
#include "exec/resident_memory.hpp"
#include "gguf/mapped_file.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <vector>

#include <sys/mman.h>

namespace dense::exec {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

TEST(ResidentMemory, ParsesStatm) {
    EXPECT_EQ(parse_statm_resident("123456 7890 345 12 0 4567 0\n", 4096), 7890ull * 4096);
    EXPECT_EQ(parse_statm_resident("1 2", 65536), 2ull * 65536);
    EXPECT_FALSE(parse_statm_resident("", 4096));
    EXPECT_FALSE(parse_statm_resident("123", 4096));
    EXPECT_FALSE(parse_statm_resident("abc def", 4096));
}

TEST(ResidentMemory, IsPlausibleForThisProcess) {
    const auto rss = resident_bytes();
    ASSERT_TRUE(rss) << "/proc/self/statm unreadable";
    EXPECT_GT(*rss, 1 * kMiB);           // a test binary with gtest and libstdc++ loaded
    EXPECT_LT(*rss, uint64_t{1} << 40);  // and not a terabyte
}

TEST(ResidentMemory, FollowsAnonymousMemory) {
    const size_t n = 64 * kMiB;
    void* p = ::mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(p, MAP_FAILED);
    const uint64_t before = resident_bytes().value();
    std::memset(p, 1, n);
    const uint64_t touched = resident_bytes().value();
    ::munmap(p, n);
    const uint64_t after = resident_bytes().value();
    EXPECT_GE(touched, before + 56 * kMiB);
    EXPECT_LE(after + 56 * kMiB, touched);
}

TEST(ResidentMemory, DropsWhenAMappedFileIsReleased) {
    const size_t n = 32 * kMiB;
    const auto dir = test::scratch_dir("rss");
    const auto path = dir / "mapped.bin";
    {
        std::vector<char> bytes(n, 'w');
        std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(n));
    }
    gguf::MappedFile m(path);
    std::filesystem::remove_all(dir);  // the mapping keeps the file alive until the test ends
    const uint64_t before = resident_bytes().value();
    volatile char sink = 0;
    for (size_t i = 0; i < n; i += 4096) sink = static_cast<char>(m.bytes()[i]);
    (void)sink;
    const uint64_t touched = resident_bytes().value();
    EXPECT_GE(touched, before + 28 * kMiB) << "reading the mapping should make it resident";
    EXPECT_EQ(m.release_pages(0, n), n);
    const uint64_t released = resident_bytes().value();
    EXPECT_LE(released + 28 * kMiB, touched) << "release_pages should take the pages out of the RSS";
}

}  // namespace
}  // namespace dense::exec
