#include "text/unicode_class.hpp"

#include <utf8proc.h>

namespace dense::text {

namespace {

bool is_tokenizer_whitespace(char32_t cp) noexcept {
    switch (cp) {
        case 0x09: case 0x0A: case 0x0B: case 0x0C: case 0x0D: case 0x20: case 0x85: case 0xA0:
        case 0x1680: case 0x2028: case 0x2029: case 0x202F: case 0x205F: case 0x3000:
            return true;
        default:
            return cp >= 0x2000 && cp <= 0x200A;
    }
}

// Letters added in Unicode 15.1 (see header): CJK Unified Ideographs Extension I.
bool is_unicode_15_1_letter(char32_t cp) noexcept { return cp >= 0x2EBF0 && cp <= 0x2EE5D; }

}  // namespace

CharClass classify(char32_t cp) noexcept {
    if (is_tokenizer_whitespace(cp)) return CharClass::Whitespace;
    if (cp > 0x10FFFF) return CharClass::Other;
    if (is_unicode_15_1_letter(cp)) return CharClass::Letter;
    switch (utf8proc_category(static_cast<utf8proc_int32_t>(cp))) {
        case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LL: case UTF8PROC_CATEGORY_LT:
        case UTF8PROC_CATEGORY_LM: case UTF8PROC_CATEGORY_LO:
            return CharClass::Letter;
        case UTF8PROC_CATEGORY_MN: case UTF8PROC_CATEGORY_MC: case UTF8PROC_CATEGORY_ME:
            return CharClass::Mark;
        case UTF8PROC_CATEGORY_ND: case UTF8PROC_CATEGORY_NL: case UTF8PROC_CATEGORY_NO:
            return CharClass::Number;
        default:
            return CharClass::Other;
    }
}

char32_t simple_lower(char32_t cp) noexcept {
    if (cp < 0x80) return (cp >= 'A' && cp <= 'Z') ? cp + 32 : cp;
    if (cp > 0x10FFFF) return cp;
    return static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(cp)));
}

}  // namespace dense::text
