#include "core/env_number.hpp"

#include "core/error.hpp"

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <string>

namespace dense {

uint64_t env_whole_number(const char* name, uint64_t fallback, uint64_t lo, uint64_t hi) {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') return fallback;
    const char* end = v + std::strlen(v);
    uint64_t n = 0;
    const auto [at, ec] = std::from_chars(v, end, n);
    if (ec != std::errc() || at != end || n < lo || n > hi)
        throw Error(ErrorKind::Usage, std::string(name) + " must be a whole number from " + std::to_string(lo) + " to " +
                                          std::to_string(hi) + ", got '" + v + "'");
    return n;
}

}  // namespace dense
