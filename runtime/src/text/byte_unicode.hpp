// The GPT-2 byte <-> unicode mapping (spec/tokenizer.md section 4): byte-level BPE vocabularies store
// every byte as one printable code point so that token strings never contain raw control bytes.
#pragma once

#include <array>
#include <cstdint>
#include <optional>

namespace dense::text {

// Code point that represents byte b in token strings.
char32_t byte_to_unicode(uint8_t b) noexcept;

// Inverse: the byte a token-string code point stands for, or nullopt if cp is not in the table.
std::optional<uint8_t> unicode_to_byte(char32_t cp) noexcept;

}  // namespace dense::text
