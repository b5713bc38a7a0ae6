// Per-code-point classes the qwen35 pre-tokenizer needs (spec/tokenizer.md section 3).
//
// Categories come from utf8proc (Debian 12: Unicode 15.0). llama.cpp's table is generated from Unicode
// 15.1; the only difference that matters here is CJK Unified Ideographs Extension I (U+2EBF0..U+2EE5D,
// new letters in 15.1), patched in below. The other 15.1 additions are symbols, which are "Other" exactly
// like unassigned code points. With a utf8proc newer than Unicode 15.1, code points assigned after 15.1
// would become letters/marks/numbers here while llama.cpp still treats them as Other.
#pragma once

#include <cstdint>

namespace dense::text {

enum class CharClass : uint8_t {
    Letter,      // L* (Lu Ll Lt Lm Lo)
    Mark,        // M* (Mn Mc Me)
    Number,      // N* (Nd Nl No)
    Whitespace,  // exactly the 25 code points of the spec (independent of the category)
    Other,       // everything else, including unassigned code points and U+FFFD
};

CharClass classify(char32_t cp) noexcept;

// Simple (1:1) Unicode lower-casing; only used for the contraction rule ('S, 'RE, ...).
char32_t simple_lower(char32_t cp) noexcept;

}  // namespace dense::text
