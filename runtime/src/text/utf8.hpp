// UTF-8 helpers shared by the tokenizer and the streaming decoder.
//
// Two decoders on purpose:
//  * decode_utf8_lenient() reproduces llama.cpp's tokenizer-side decoding (spec/tokenizer.md 2.4a):
//    structure-only checks (overlong forms and surrogates are accepted), every byte that does not start a
//    complete sequence becomes U+FFFD and decoding resumes at the next byte. The tokenizer must use it so
//    that token ids match llama.cpp on any input, valid or not.
//  * strict validation (utf8_valid_prefix_length / Utf8StreamDecoder) is for text shown to people.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dense::text {

inline constexpr char32_t kReplacementChar = 0xFFFD;
inline constexpr char32_t kMaxCodePoint = 0x10FFFF;

// Appends the UTF-8 form of cp (cp <= 0x10FFFF; surrogates are encoded like any other value, which is
// what the lenient decoder's output needs to round-trip its input bytes).
void append_utf8(std::string& out, char32_t cp);

// llama.cpp-compatible decoding (see above). One deliberate difference: a 4-byte structure whose value
// exceeds U+10FFFF (lead bytes F4..F7) makes llama.cpp throw std::invalid_argument out of llama_tokenize
// when it re-encodes the word; we treat its lead byte as invalid (U+FFFD) instead.
std::vector<char32_t> decode_utf8_lenient(std::string_view bytes);

// What the tokenizer really sees: decode_utf8_lenient() re-encoded. decode(encode(x)) == this for any x.
std::string sanitize_utf8_lenient(std::string_view bytes);

// Number of bytes of a strictly valid UTF-8 sequence starting at s[0] (no overlongs, no surrogates,
// <= U+10FFFF), or 0 if s does not start with one (including a truncated but otherwise valid prefix).
size_t strict_utf8_sequence_length(std::string_view s) noexcept;

// True if s is a strict UTF-8 prefix of a longer valid sequence (a lead byte plus fewer continuation
// bytes than it needs, each allowed at its position), i.e. more bytes could still complete it.
bool is_incomplete_utf8_prefix(std::string_view s) noexcept;

bool is_valid_utf8(std::string_view s) noexcept;

}  // namespace dense::text
