// Byte-level BPE merging of one pre-tokenized word (spec/tokenizer.md section 5).
//
// Symbols are small integers instead of strings: every string that can occur during merging (the 256
// byte characters, both halves and the result of every merge) gets a symbol id. Strings that are
// tokens use their token id; the rest (possible in principle, not in real vocabularies) get ids past the
// vocabulary and are resolved byte by byte at the end, the way llama.cpp does. A merge is then one hash
// lookup of a (left, right) symbol pair.
//
// The merge loop is a doubly linked list of symbols plus a min-heap of candidate pairs ordered by
// (rank, position of the left symbol); stale heap entries are recognised and skipped. That gives
// exactly "repeatedly merge the lowest-ranked adjacent pair, leftmost first" in O(n log n) per word.
#pragma once

#include "text/vocab.hpp"

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace dense::text {

class BpeMerger {
public:
    // merges: "LEFT RIGHT" strings in rank order (tokenizer.ggml.merges). An entry without a space at
    // byte index >= 1 can never apply and is skipped; a repeated pair keeps its first (lowest) rank.
    BpeMerger(const Vocab& vocab, std::span<const std::string_view> merges);

    // Appends the token ids of `word_utf8` (the UTF-8 bytes of one pre-tokenizer word; every byte is first
    // mapped through the GPT-2 byte table).
    void encode_word(std::string_view word_utf8, std::vector<int32_t>& out) const;

    size_t merge_count() const noexcept { return pairs_.size(); }

private:
    struct Merge {
        int32_t rank;
        int32_t result;  // symbol id of the concatenation
    };

    int32_t intern(const Vocab& vocab, std::string_view text);
    void emit_symbol(int32_t symbol, std::vector<int32_t>& out) const;
    static uint64_t pair_key(int32_t left, int32_t right) noexcept {
        return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
    }

    int32_t vocab_size_ = 0;
    // Symbols that are not tokens: id vocab_size_ + i; what each emits (its bytes looked up one by one).
    std::vector<std::vector<int32_t>> extra_fallback_;
    std::unordered_map<std::string, int32_t> extra_index_;  // construction only
    std::array<int32_t, 256> byte_symbol_{};
    std::unordered_map<uint64_t, Merge> pairs_;
};

}  // namespace dense::text
