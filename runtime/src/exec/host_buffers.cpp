#include "exec/host_buffers.hpp"

#include "core/error.hpp"
#include "core/units.hpp"

#include <cstring>
#include <new>

namespace dense::exec {

HostBuffers::HostBuffers(const std::vector<uint64_t>& bytes) : sizes_(bytes) {
    blocks_.reserve(bytes.size());
    for (uint64_t n : bytes) {
        const uint64_t size = n == 0 ? 64 : (n + 63) / 64 * 64;
        std::byte* p = nullptr;
        try {
            p = static_cast<std::byte*>(::operator new[](size, std::align_val_t{64}));
        } catch (const std::bad_alloc&) {
            throw Error(ErrorKind::Device, "cannot allocate " + format_bytes(size) + " of host memory for the session");
        }
        std::memset(p, 0, size);  // recurrent state and caches start at zero
        blocks_.emplace_back(p);
    }
}

uint64_t HostBuffers::total_bytes() const noexcept {
    uint64_t t = 0;
    for (uint64_t n : sizes_) t += n;
    return t;
}

}  // namespace dense::exec
