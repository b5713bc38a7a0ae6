#include "exec/resident_memory.hpp"

#include <charconv>
#include <fstream>
#include <iterator>
#include <string>

#include <unistd.h>

namespace dense::exec {

std::optional<uint64_t> parse_statm_resident(std::string_view statm, uint64_t page_bytes) {
    // Two decimal fields separated by a space; the second is the resident page count.
    uint64_t fields[2] = {};
    const char* p = statm.data();
    const char* end = statm.data() + statm.size();
    for (uint64_t& f : fields) {
        while (p < end && *p == ' ') ++p;
        const auto r = std::from_chars(p, end, f);
        if (r.ec != std::errc{} || r.ptr == p) return std::nullopt;
        p = r.ptr;
    }
    return fields[1] * page_bytes;
}

std::optional<uint64_t> resident_bytes() {
    std::ifstream in("/proc/self/statm");
    if (!in) return std::nullopt;
    const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    const long page = ::sysconf(_SC_PAGESIZE);
    return parse_statm_resident(text, page > 0 ? static_cast<uint64_t>(page) : 4096);
}

}  // namespace dense::exec
