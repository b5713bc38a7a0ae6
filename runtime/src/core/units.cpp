#include "core/units.hpp"

#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <string>

namespace dense {

std::optional<uint64_t> parse_byte_size(std::string_view text) noexcept {
    size_t i = 0;
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    const size_t num_start = i;
    bool seen_digit = false, seen_dot = false;
    while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || (text[i] == '.' && !seen_dot))) {
        if (text[i] == '.')
            seen_dot = true;
        else
            seen_digit = true;
        ++i;
    }
    if (!seen_digit) return std::nullopt;
    const std::string number(text.substr(num_start, i - num_start));
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    std::string unit;
    for (; i < text.size(); ++i) {
        if (std::isspace(static_cast<unsigned char>(text[i]))) break;
        unit.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(text[i]))));
    }
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i != text.size()) return std::nullopt;
    struct Unit {
        const char* name;
        double factor;
    };
    static constexpr std::array<Unit, 10> units = {{{"", 1.0},
                                                    {"b", 1.0},
                                                    {"kib", 1024.0},
                                                    {"mib", 1048576.0},
                                                    {"gib", 1073741824.0},
                                                    {"tib", 1099511627776.0},
                                                    {"kb", 1e3},
                                                    {"mb", 1e6},
                                                    {"gb", 1e9},
                                                    {"tb", 1e12}}};
    try {
        for (const auto& u : units) {
            if (unit == u.name) {
                if (!seen_dot && u.factor == 1.0) return std::stoull(number);  // exact for plain byte counts
                const double value = std::stod(number) * u.factor;
                if (!std::isfinite(value) || value < 0 || value >= 1.8e19) return std::nullopt;
                return static_cast<uint64_t>(std::llround(value));
            }
        }
    } catch (const std::exception&) {  // stod/stoull out of range: not a size we can represent
    }
    return std::nullopt;
}

std::string format_bytes(uint64_t bytes) {
    char buf[64];
    const double b = static_cast<double>(bytes);
    if (bytes >= (1ull << 30))
        std::snprintf(buf, sizeof buf, "%.2f GiB", b / 1073741824.0);
    else if (bytes >= (1ull << 20))
        std::snprintf(buf, sizeof buf, "%.1f MiB", b / 1048576.0);
    else if (bytes >= (1ull << 10))
        std::snprintf(buf, sizeof buf, "%.1f KiB", b / 1024.0);
    else
        std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
    return buf;
}

}  // namespace dense
