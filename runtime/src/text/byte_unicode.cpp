#include "text/byte_unicode.hpp"

namespace dense::text {

namespace {

// Printable Latin-1 bytes keep their value; the other 68 take U+0100.. in increasing byte order.
bool maps_to_itself(unsigned b) noexcept {
    return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
}

struct Tables {
    std::array<char32_t, 256> to_unicode{};
    std::array<int16_t, 0x144> to_byte{};  // index = code point < 0x144; -1 = not a byte
    Tables() {
        to_byte.fill(-1);
        char32_t next = 0x100;
        for (unsigned b = 0; b < 256; ++b) {
            const char32_t cp = maps_to_itself(b) ? b : next++;
            to_unicode[b] = cp;
            to_byte[cp] = static_cast<int16_t>(b);
        }
    }
};

const Tables& tables() {
    static const Tables t;
    return t;
}

}  // namespace

char32_t byte_to_unicode(uint8_t b) noexcept { return tables().to_unicode[b]; }

std::optional<uint8_t> unicode_to_byte(char32_t cp) noexcept {
    if (cp >= tables().to_byte.size()) return std::nullopt;
    const int16_t b = tables().to_byte[cp];
    if (b < 0) return std::nullopt;
    return static_cast<uint8_t>(b);
}

}  // namespace dense::text
