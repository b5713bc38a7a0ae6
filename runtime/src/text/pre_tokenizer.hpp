// The qwen35 pre-tokenizer (spec/tokenizer.md section 3): splits one text fragment (already cut at
// special tokens and decoded to code points) into the words that BPE then works on independently.
// It is a hand-written scanner equivalent to the Hugging Face regex
//   (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|
//   \s*[\r\n]+|\s+(?!\S)|\s+
// with the classes of unicode_class.hpp; the fragment's end is the end of text for every look-ahead.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace dense::text {

// Appends the length (in code points) of each word of `cps`, in order; the lengths sum to cps.size().
void split_words_qwen35(std::span<const char32_t> cps, std::vector<size_t>& word_lengths);

}  // namespace dense::text
