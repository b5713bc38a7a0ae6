#include "gguf/mapped_file.hpp"

#include "core/error.hpp"

#include <cerrno>
#include <cstring>
#include <utility>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace dense::gguf {
namespace {

[[noreturn]] void fail(const std::filesystem::path& path, const char* what, int err) {
    throw Error(ErrorKind::Io, path.string() + ": cannot " + what + ": " + std::strerror(err));
}

// Closes the descriptor on every path out of the constructor; the mapping keeps the file alive.
struct FdGuard {
    int fd;
    ~FdGuard() {
        if (fd >= 0) ::close(fd);
    }
};

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
}

MappedFile::~MappedFile() { release(); }

MappedFile::MappedFile(MappedFile&& other) noexcept
    : path_(std::move(other.path_)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
    if (this != &other) {
        release();
        path_ = std::move(other.path_);
        data_ = std::exchange(other.data_, nullptr);
        size_ = std::exchange(other.size_, 0);
    }
    return *this;
}

void MappedFile::release() noexcept {
    if (data_ != nullptr) ::munmap(const_cast<std::byte*>(data_), size_);
    data_ = nullptr;
    size_ = 0;
}

}  // namespace dense::gguf
