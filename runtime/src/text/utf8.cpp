#include "text/utf8.hpp"

namespace dense::text {

namespace {

bool is_continuation(unsigned char b) noexcept { return (b & 0xC0u) == 0x80u; }

// Bounds for the second byte of a strict sequence, per lead byte (RFC 3629 table); excludes overlongs,
// surrogates and values above U+10FFFF. Returns false for bytes that cannot lead.
bool strict_lead_info(unsigned char lead, size_t& length, unsigned char& lo, unsigned char& hi) noexcept {
    lo = 0x80;
    hi = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF) { length = 2; return true; }
    if (lead == 0xE0) { length = 3; lo = 0xA0; return true; }
    if ((lead >= 0xE1 && lead <= 0xEC) || lead == 0xEE || lead == 0xEF) { length = 3; return true; }
    if (lead == 0xED) { length = 3; hi = 0x9F; return true; }
    if (lead == 0xF0) { length = 4; lo = 0x90; return true; }
    if (lead >= 0xF1 && lead <= 0xF3) { length = 4; return true; }
    if (lead == 0xF4) { length = 4; hi = 0x8F; return true; }
    return false;
}

}  // namespace

void append_utf8(std::string& out, char32_t cp) {
    if (cp <= 0x7F) {
        out.push_back(static_cast<char>(cp));
    } else if (cp <= 0x7FF) {
        out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp <= 0xFFFF) {
        out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
        out.push_back(static_cast<char>(0xF0 | ((cp >> 18) & 0x07)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
}

std::vector<char32_t> decode_utf8_lenient(std::string_view bytes) {
    std::vector<char32_t> out;
    out.reserve(bytes.size());
    const auto* s = reinterpret_cast<const unsigned char*>(bytes.data());
    const size_t n = bytes.size();
    size_t i = 0;
    while (i < n) {
        const unsigned char b0 = s[i];
        size_t len = 0;
        char32_t cp = 0;
        if (b0 < 0x80) {
            len = 1;
            cp = b0;
        } else if ((b0 & 0xE0u) == 0xC0u) {
            len = 2;
            cp = b0 & 0x1Fu;
        } else if ((b0 & 0xF0u) == 0xE0u) {
            len = 3;
            cp = b0 & 0x0Fu;
        } else if ((b0 & 0xF8u) == 0xF0u) {
            len = 4;
            cp = b0 & 0x07u;
        }
        // len == 0: a stray continuation byte or F8..FF.
        bool ok = len != 0 && i + len <= n;
        for (size_t k = 1; ok && k < len; ++k) {
            if (!is_continuation(s[i + k])) ok = false;
            else cp = (cp << 6) | (s[i + k] & 0x3Fu);
        }
        if (ok && cp > kMaxCodePoint) ok = false;
        if (ok) {
            out.push_back(cp);
            i += len;
        } else {
            out.push_back(kReplacementChar);
            ++i;
        }
    }
    return out;
}

std::string sanitize_utf8_lenient(std::string_view bytes) {
    std::string out;
    out.reserve(bytes.size());
    for (char32_t cp : decode_utf8_lenient(bytes)) append_utf8(out, cp);
    return out;
}

size_t strict_utf8_sequence_length(std::string_view s) noexcept {
    if (s.empty()) return 0;
    const auto b0 = static_cast<unsigned char>(s[0]);
    if (b0 < 0x80) return 1;
    size_t len = 0;
    unsigned char lo = 0, hi = 0;
    if (!strict_lead_info(b0, len, lo, hi) || s.size() < len) return 0;
    const auto b1 = static_cast<unsigned char>(s[1]);
    if (b1 < lo || b1 > hi) return 0;
    for (size_t k = 2; k < len; ++k) {
        if (!is_continuation(static_cast<unsigned char>(s[k]))) return 0;
    }
    return len;
}

bool is_incomplete_utf8_prefix(std::string_view s) noexcept {
    if (s.empty()) return false;
    size_t len = 0;
    unsigned char lo = 0, hi = 0;
    if (!strict_lead_info(static_cast<unsigned char>(s[0]), len, lo, hi) || s.size() >= len) return false;
    if (s.size() >= 2) {
        const auto b1 = static_cast<unsigned char>(s[1]);
        if (b1 < lo || b1 > hi) return false;
    }
    for (size_t k = 2; k < s.size(); ++k) {
        if (!is_continuation(static_cast<unsigned char>(s[k]))) return false;
    }
    return true;
}

bool is_valid_utf8(std::string_view s) noexcept {
    while (!s.empty()) {
        const size_t len = strict_utf8_sequence_length(s);
        if (len == 0) return false;
        s.remove_prefix(len);
    }
    return true;
}

}  // namespace dense::text
