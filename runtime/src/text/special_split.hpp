// Cutting special tokens out of the input before pre-tokenization (spec/tokenizer.md 2.3).
#pragma once

#include "text/vocab.hpp"

#include <cstdint>
#include <string_view>
#include <vector>

namespace dense::text {

// Either a run of plain text (token < 0) or one special token found in the text.
struct Fragment {
    std::string_view text;  // the bytes covered (for a token: its text as it appeared)
    int32_t token = -1;
};

// Splits `text` at every occurrence of a special token, taking candidates longest first and, for each,
// every remaining plain-text fragment left to right. With parse_special off, CONTROL and UNKNOWN tokens
// are not looked for (stay plain text) but USER_DEFINED ones still are, as in llama.cpp.
std::vector<Fragment> split_special_tokens(const Vocab& vocab, std::string_view text, bool parse_special);

}  // namespace dense::text
