// MappedFile::release_pages / release_pages_at on a real file: pages leave the process and the page
// cache, only whole pages inside the range go, the bytes read the same afterwards, and memory that
// is not a file mapping is never touched.
#include "common/page_residency.hpp"
#include "common/test_paths.hpp"
#include "gguf/mapped_file.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <memory>
#include <numeric>
#include <vector>

namespace dense::gguf {
namespace {

using test::page_bytes;
using test::pages_cached;
using test::pages_mapped;

// A file of `pages` pages whose byte i is a function of i, flushed so its pages are clean.
std::filesystem::path patterned_file(const std::string& name, size_t pages) {
    const auto path = test::scratch_dir("mapped-release") / name;
    std::vector<unsigned char> bytes(pages * page_bytes());
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<unsigned char>((i * 131u + i / 4096u) & 0xFFu);
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                                static_cast<std::streamsize>(bytes.size()));
    test::flush_file(path);
    return path;
}

// Each test's files go when it ends (the mappings keep what they still use alive until then).
class MappedFileRelease : public ::testing::Test {
protected:
    void TearDown() override { std::filesystem::remove_all(test::scratch_dir("mapped-release")); }
};

uint64_t checksum(std::span<const std::byte> b) {
    uint64_t s = 0;
    for (size_t i = 0; i < b.size(); ++i) s = s * 1099511628211ull + static_cast<uint64_t>(b[i]);
    return s;
}

// Reads every page (a discarded checksum could be optimised away, and with it the reads).
void touch(std::span<const std::byte> b) {
    volatile std::byte sink{};
    for (size_t i = 0; i < b.size(); i += 512) sink = b[i];
    (void)sink;
}

TEST_F(MappedFileRelease, WholeFileLeavesProcessAndPageCacheAndReadsTheSameAfterwards) {
    const size_t pages = 256;  // 1 MiB with 4 KiB pages
    const auto path = patterned_file("whole.bin", pages);
    MappedFile m(path);
    const auto bytes = m.bytes();
    const uint64_t before = checksum(bytes);  // touches every page
    ASSERT_EQ(pages_mapped(bytes.data(), bytes.size()), pages);
    ASSERT_EQ(pages_cached(bytes.data(), bytes.size()), pages);

    EXPECT_EQ(m.release_pages(0, m.size()), m.size());
    EXPECT_EQ(pages_mapped(bytes.data(), bytes.size()), 0u) << "MADV_DONTNEED left pages in the process";
    if (test::page_cache_is_the_file(path)) {
        std::cout << "[ note ] " << path << " is on tmpfs: its page cache cannot be dropped; not checked\n";
    } else {
        EXPECT_EQ(pages_cached(bytes.data(), bytes.size()), 0u) << "POSIX_FADV_DONTNEED left pages in the page cache";
    }

    EXPECT_EQ(checksum(bytes), before) << "released pages must fault back in with the file's bytes";
    EXPECT_EQ(pages_mapped(bytes.data(), bytes.size()), pages);
}

TEST_F(MappedFileRelease, KeepingThePageCacheReleasesOnlyTheProcessPages) {
    const size_t pages = 64;
    const auto path = patterned_file("keep.bin", pages);
    if (test::page_cache_is_the_file(path)) GTEST_SKIP() << path << " is on tmpfs: kept and dropped page cache look the same";
    MappedFile m(path);
    const auto bytes = m.bytes();
    const uint64_t before = checksum(bytes);
    ASSERT_EQ(pages_cached(bytes.data(), bytes.size()), pages);

    EXPECT_EQ(m.release_pages(0, m.size(), /*drop_page_cache=*/false), m.size());
    EXPECT_EQ(pages_mapped(bytes.data(), bytes.size()), 0u) << "MADV_DONTNEED left pages in the process";
    EXPECT_EQ(pages_cached(bytes.data(), bytes.size()), pages) << "the page cache was dropped although kept";
    EXPECT_EQ(checksum(bytes), before);
}

TEST_F(MappedFileRelease, OnlyWholePagesInsideTheRangeGo) {
    const size_t page = page_bytes();
    const auto path = patterned_file("partial.bin", 8);
    MappedFile m(path);
    const auto bytes = m.bytes();
    touch(bytes);
    // [100, 100 + 3 pages) holds pages 1 and 2 whole; pages 0 and 3 are shared with bytes outside.
    EXPECT_EQ(m.release_pages(100, 3 * page), 2 * page);
    EXPECT_EQ(pages_mapped(bytes.data(), page), 1u);
    EXPECT_EQ(pages_mapped(bytes.data() + page, 2 * page), 0u);
    EXPECT_EQ(pages_mapped(bytes.data() + 3 * page, 5 * page), 5u);
    // Nothing whole inside: nothing released.
    EXPECT_EQ(m.release_pages(3 * page + 1, page - 2), 0u);
    EXPECT_EQ(pages_mapped(bytes.data() + 3 * page, page), 1u);
    // Past the end: clamped, no error.
    EXPECT_EQ(m.release_pages(7 * page, 100 * page), page);
    EXPECT_EQ(m.release_pages(100 * page, page), 0u);
}

TEST_F(MappedFileRelease, TheFilesLastPartialPageGoesWhole) {
    const size_t page = page_bytes();
    const auto path = test::scratch_dir("mapped-release") / "odd.bin";  // removed by TearDown
    std::vector<char> bytes(2 * page + 10, 'x');
    std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    test::flush_file(path);
    MappedFile m(path);
    touch(m.bytes());
    // From page 1 to the end of the file: pages 1 and 2 (the last one holds only this file's bytes).
    EXPECT_EQ(m.release_pages(page, m.size() - page), 2 * page);
    EXPECT_EQ(pages_mapped(m.bytes().data() + page, m.size() - page), 0u);
    EXPECT_EQ(static_cast<char>(m.bytes()[2 * page + 9]), 'x');
}

TEST_F(MappedFileRelease, ByAddressActsOnlyOnLiveMappings) {
    const size_t page = page_bytes();
    const auto path = patterned_file("by-address.bin", 16);
    MappedFile m(path);
    const auto bytes = m.bytes();
    const uint64_t before = checksum(bytes);
    EXPECT_EQ(MappedFile::release_pages_at(bytes.subspan(4 * page, 4 * page)), 4 * page);
    EXPECT_EQ(pages_mapped(bytes.data() + 4 * page, 4 * page), 0u);
    EXPECT_EQ(checksum(bytes), before);

    // Ordinary memory (a GGUF parsed from a byte vector): MADV_DONTNEED would zero it; it must be left alone.
    std::vector<std::byte> heap(64 * page, std::byte{0xAB});
    EXPECT_EQ(MappedFile::release_pages_at(heap), 0u);
    EXPECT_TRUE(std::all_of(heap.begin(), heap.end(), [](std::byte b) { return b == std::byte{0xAB}; }));
    // A span that starts inside the mapping but runs past it is not "inside a mapping" either.
    EXPECT_EQ(MappedFile::release_pages_at({bytes.data() + bytes.size() - page, 2 * page}), 0u);
}

TEST_F(MappedFileRelease, AMovedMappingStaysKnownAndAnUnmappedOneIsForgotten) {
    const size_t page = page_bytes();
    const auto path = patterned_file("moved.bin", 8);
    auto first = std::make_unique<MappedFile>(path);
    MappedFile moved(std::move(*first));
    first.reset();  // the moved-from object's destructor must not forget the live mapping
    touch(moved.bytes());
    EXPECT_EQ(MappedFile::release_pages_at(moved.bytes()), 8 * page);

    const std::byte* gone = nullptr;
    {
        MappedFile temp(path);
        gone = temp.bytes().data();
    }
    // The address no longer belongs to a mapping: asking about it must be a no-op (not a crash).
    EXPECT_EQ(MappedFile::release_pages_at({gone, page}), 0u);
}

TEST_F(MappedFileRelease, PrefetchBringsPagesIntoThePageCache) {
    const auto path = patterned_file("prefetch.bin", 64);
    MappedFile m(path);
    const auto bytes = m.bytes();
    touch(bytes);
    ASSERT_EQ(m.release_pages(0, m.size()), m.size());
    if (test::page_cache_is_the_file(path)) GTEST_SKIP() << path << " is on tmpfs: the page cache cannot be emptied";
    ASSERT_EQ(pages_cached(bytes.data(), bytes.size()), 0u);
    m.prefetch_pages(0, m.size());
    // MADV_WILLNEED starts the reads; give them a moment on a slow disk.
    for (int i = 0; i < 200 && pages_cached(bytes.data(), bytes.size()) < 64; ++i) ::usleep(10000);
    EXPECT_EQ(pages_cached(bytes.data(), bytes.size()), 64u);
    EXPECT_EQ(pages_mapped(bytes.data(), bytes.size()), 0u) << "prefetching reads into the cache, it does not map";
}

}  // namespace
}  // namespace dense::gguf
