// A whole file mapped read-only into memory (RAII). The GGUF reader parses the mapping in place and
// tensor data is later used straight from it (zero copy), so the mapping lives as long as the
// GgufFile that owns it.
//
// Once weights are uploaded to a GPU, their pages are dead weight in the process and in the page
// cache: release_pages() hands them back (madvise MADV_DONTNEED, then posix_fadvise
// POSIX_FADV_DONTNEED) so the resident memory after load stays small. Releasing never changes what
// the mapping reads: the mapping is private and never written, so a released page that is read
// again is faulted back in from the file (slowly, from disk). prefetch_pages() asks the kernel to
// start reading a range ahead of its use (MADV_WILLNEED).
#pragma once

#include <cstddef>
#include <cstdint>
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

    // Drops the whole pages inside [offset, offset + len) (clamped to the file) from this process and,
    // unless `drop_page_cache` is false, from the page cache (a second run of the same model then reads
    // it from disk again; keeping the cache costs the machine's memory, not this process's). Partial
    // pages at either end are kept: their other bytes may still be in use. Returns the bytes of whole
    // pages it released (0 when nothing whole was inside, or the kernel refused; both are harmless:
    // the bytes stay readable either way).
    uint64_t release_pages(uint64_t offset, uint64_t len, bool drop_page_cache = true) const noexcept;
    // Starts reading the pages covering [offset, offset + len) in the background (advice only).
    void prefetch_pages(uint64_t offset, uint64_t len) const noexcept;

    // The same for bytes known only by address (a tensor's span): acts only when they lie inside a
    // live MappedFile of this process, and does nothing otherwise. That check matters: MADV_DONTNEED
    // on ordinary memory (a GGUF parsed from a byte vector) would zero it.
    static uint64_t release_pages_at(std::span<const std::byte> bytes, bool drop_page_cache = true) noexcept;
    static void prefetch_pages_at(std::span<const std::byte> bytes) noexcept;

private:
    void release() noexcept;

    std::filesystem::path path_;
    const std::byte* data_ = nullptr;
    size_t size_ = 0;
    int fd_ = -1;  // kept open for posix_fadvise, which works on a descriptor, not an address
};

}  // namespace dense::gguf
