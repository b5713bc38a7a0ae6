#include "gguf/mapped_file.hpp"

#include "core/error.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace dense::gguf {
namespace {

[[noreturn]] void fail(const std::filesystem::path& path, const char* what, int err) {
    throw Error(ErrorKind::Io, path.string() + ": cannot " + what + ": " + std::strerror(err));
}

// Closes the descriptor on every path out of the constructor unless the mapping takes it over.
struct FdGuard {
    int fd;
    ~FdGuard() {
        if (fd >= 0) ::close(fd);
    }
};

uint64_t page_size() noexcept {
    static const uint64_t page = [] {
        const long p = ::sysconf(_SC_PAGESIZE);
        return p > 0 ? static_cast<uint64_t>(p) : uint64_t{4096};
    }();
    return page;
}

struct Mapping {
    const std::byte* data;
    size_t size;
    int fd;
};

// Every live mapping of the process, so that release_pages_at() can tell a mapped tensor from one
// in ordinary memory. Leaked on purpose: a MappedFile held by a static may outlive any static here.
struct Registry {
    std::mutex mutex;
    std::vector<Mapping> live;
};
Registry& registry() {
    static auto* r = new Registry;
    return *r;
}

// [begin, end) of the mapping, clamped to it; `end` saturates instead of overflowing.
std::pair<uint64_t, uint64_t> clamp(const Mapping& m, uint64_t offset, uint64_t len) noexcept {
    const uint64_t begin = std::min<uint64_t>(offset, m.size);
    const uint64_t end = len > m.size - begin ? m.size : begin + len;
    return {begin, end};
}

uint64_t release_range(const Mapping& m, uint64_t offset, uint64_t len, bool drop_page_cache) noexcept {
    if (m.data == nullptr) return 0;
    const uint64_t page = page_size();
    const auto [begin, end] = clamp(m, offset, len);
    const uint64_t first = (begin + page - 1) / page * page;
    // The file's last page has no other bytes than the file's: it may go whole.
    const uint64_t last = end == m.size ? (end + page - 1) / page * page : end / page * page;
    if (last <= first) return 0;
    // The process's page-table entries first: the page cache keeps a page that is still mapped.
    if (::madvise(const_cast<std::byte*>(m.data) + first, last - first, MADV_DONTNEED) != 0) return 0;
    if (drop_page_cache && m.fd >= 0) (void)::posix_fadvise(m.fd, static_cast<off_t>(first), static_cast<off_t>(last - first),
                                         POSIX_FADV_DONTNEED);
    return last - first;
}

void prefetch_range(const Mapping& m, uint64_t offset, uint64_t len) noexcept {
    if (m.data == nullptr) return;
    const uint64_t page = page_size();
    const auto [begin, end] = clamp(m, offset, len);
    const uint64_t first = begin / page * page;
    const uint64_t last = (end + page - 1) / page * page;
    if (last > first) (void)::madvise(const_cast<std::byte*>(m.data) + first, last - first, MADV_WILLNEED);
}

// Runs f(mapping, offset) for the live mapping holding all of `bytes`, under the registry lock (so it
// cannot be unmapped meanwhile); returns f's result, or R{} when no mapping holds them.
template <class R, class F>
R with_mapping_of(std::span<const std::byte> bytes, F&& f) noexcept {
    if (bytes.empty()) return R{};
    auto& r = registry();
    const std::lock_guard<std::mutex> lock(r.mutex);
    const auto* p = bytes.data();
    for (const auto& m : r.live)
        if (p >= m.data && bytes.size() <= m.size && static_cast<size_t>(p - m.data) <= m.size - bytes.size())
            return f(m, static_cast<uint64_t>(p - m.data));
    return R{};
}

}  // namespace

MappedFile::MappedFile(const std::filesystem::path& path) : path_(path) {
    FdGuard guard{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
    if (guard.fd < 0) fail(path, "open", errno);
    struct stat st {};
    if (::fstat(guard.fd, &st) != 0) fail(path, "stat", errno);
    if (!S_ISREG(st.st_mode)) fail(path, "map (not a regular file)", EINVAL);
    if (st.st_size <= 0) return;  // mmap of length 0 is an error; an empty span is the honest answer
    const auto size = static_cast<size_t>(st.st_size);
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, guard.fd, 0);
    if (p == MAP_FAILED) fail(path, "mmap", errno);
    data_ = static_cast<const std::byte*>(p);
    size_ = size;
    fd_ = std::exchange(guard.fd, -1);
    auto& r = registry();
    const std::lock_guard<std::mutex> lock(r.mutex);
    r.live.push_back({data_, size_, fd_});
}

MappedFile::~MappedFile() { release(); }

MappedFile::MappedFile(MappedFile&& other) noexcept
    : path_(std::move(other.path_)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      fd_(std::exchange(other.fd_, -1)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
    if (this != &other) {
        release();
        path_ = std::move(other.path_);
        data_ = std::exchange(other.data_, nullptr);
        size_ = std::exchange(other.size_, 0);
        fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
}

uint64_t MappedFile::release_pages(uint64_t offset, uint64_t len, bool drop_page_cache) const noexcept {
    return release_range({data_, size_, fd_}, offset, len, drop_page_cache);
}

void MappedFile::prefetch_pages(uint64_t offset, uint64_t len) const noexcept {
    prefetch_range({data_, size_, fd_}, offset, len);
}

uint64_t MappedFile::release_pages_at(std::span<const std::byte> bytes, bool drop_page_cache) noexcept {
    return with_mapping_of<uint64_t>(
        bytes, [&](const Mapping& m, uint64_t offset) { return release_range(m, offset, bytes.size(), drop_page_cache); });
}

void MappedFile::prefetch_pages_at(std::span<const std::byte> bytes) noexcept {
    with_mapping_of<int>(bytes, [&](const Mapping& m, uint64_t offset) {
        prefetch_range(m, offset, bytes.size());
        return 0;
    });
}

void MappedFile::release() noexcept {
    if (data_ != nullptr) {
        auto& r = registry();
        const std::lock_guard<std::mutex> lock(r.mutex);
        std::erase_if(r.live, [&](const Mapping& m) { return m.data == data_; });
        ::munmap(const_cast<std::byte*>(data_), size_);
    }
    if (fd_ >= 0) ::close(fd_);
    data_ = nullptr;
    size_ = 0;
    fd_ = -1;
}

}  // namespace dense::gguf
