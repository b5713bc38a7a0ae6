// Where a range of this process's memory lives, for the tests of page release:
//   pages_mapped()  pages with a page-table entry in this process (/proc/self/pagemap "present" bit,
//                   readable without privileges): what MADV_DONTNEED removes and RSS counts
//   pages_cached()  pages of a file mapping that are in the page cache (mincore): what
//                   POSIX_FADV_DONTNEED drops
// Both count the whole pages of [p, p + n) rounded outward.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/vfs.h>
#include <unistd.h>

namespace dense::test {

inline size_t page_bytes() { return static_cast<size_t>(::sysconf(_SC_PAGESIZE)); }

inline std::pair<uintptr_t, size_t> page_span(const void* p, size_t n) {
    const uintptr_t page = page_bytes();
    const uintptr_t first = reinterpret_cast<uintptr_t>(p) / page * page;
    const uintptr_t last = (reinterpret_cast<uintptr_t>(p) + n + page - 1) / page * page;
    return {first, static_cast<size_t>((last - first) / page)};
}

inline size_t pages_mapped(const void* p, size_t n) {
    const auto [first, count] = page_span(p, n);
    const int fd = ::open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw std::runtime_error("cannot open /proc/self/pagemap");
    std::vector<uint64_t> entries(count);
    const auto want = static_cast<ssize_t>(count * sizeof(uint64_t));
    const ssize_t got =
        ::pread(fd, entries.data(), static_cast<size_t>(want), static_cast<off_t>(first / page_bytes() * sizeof(uint64_t)));
    ::close(fd);
    if (got != want) throw std::runtime_error("short read of /proc/self/pagemap");
    size_t present = 0;
    for (uint64_t e : entries) present += (e >> 63) & 1u;
    return present;
}

inline size_t pages_cached(const void* p, size_t n) {
    const auto [first, count] = page_span(p, n);
    std::vector<unsigned char> vec(count);
    if (::mincore(reinterpret_cast<void*>(first), count * page_bytes(), vec.data()) != 0)
        throw std::runtime_error("mincore failed");
    size_t cached = 0;
    for (unsigned char v : vec) cached += v & 1u;
    return cached;
}

// A file system whose page cache is the file itself (tmpfs): POSIX_FADV_DONTNEED cannot drop it.
inline bool page_cache_is_the_file(const std::filesystem::path& path) {
    struct statfs fs {};
    return ::statfs(path.c_str(), &fs) == 0 && static_cast<unsigned long>(fs.f_type) == TMPFS_MAGIC;
}

// Makes a freshly written file's pages clean, so the page cache may drop them.
inline void flush_file(const std::filesystem::path& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    const bool ok = fd >= 0 && ::fsync(fd) == 0;
    if (fd >= 0) ::close(fd);
    if (!ok) throw std::runtime_error("cannot fsync " + path.string());
}

}  // namespace dense::test
