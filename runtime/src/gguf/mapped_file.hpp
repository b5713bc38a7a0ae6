// A whole file mapped read-only into memory (RAII). The GGUF reader parses the mapping in place and
// tensor data is later used straight from it (zero copy), so the mapping lives as long as the
// GgufFile that owns it.
#pragma once

#include <cstddef>
#include <filesystem>
#include <span>
#include <string>

namespace dense::gguf {

class MappedFile {
public:
    // Maps `path` read-only. Throws dense::Error(ErrorKind::Io) naming the path and the errno text if
    // it cannot be opened, is not a regular file, or cannot be mapped. An empty file gives an empty span.
    explicit MappedFile(const std::filesystem::path& path);
    ~MappedFile();

    MappedFile(MappedFile&& other) noexcept;
    MappedFile& operator=(MappedFile&& other) noexcept;
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    std::span<const std::byte> bytes() const noexcept { return {data_, size_}; }
    size_t size() const noexcept { return size_; }
    const std::filesystem::path& path() const noexcept { return path_; }

private:
    void release() noexcept;

    std::filesystem::path path_;
    const std::byte* data_ = nullptr;
    size_t size_ = 0;
};

}  // namespace dense::gguf
