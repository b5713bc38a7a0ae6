#include "text/bpe.hpp"

#include "text/byte_unicode.hpp"
#include "text/utf8.hpp"

#include <queue>

namespace dense::text {

BpeMerger::BpeMerger(const Vocab& vocab, std::span<const std::string_view> merges) : vocab_size_(vocab.size()) {
    for (unsigned b = 0; b < 256; ++b) {
        std::string ch;
        append_utf8(ch, byte_to_unicode(static_cast<uint8_t>(b)));
        byte_symbol_[b] = intern(vocab, ch);
    }
    pairs_.reserve(merges.size());
    std::string joined;
    for (size_t rank = 0; rank < merges.size(); ++rank) {
        const std::string_view m = merges[rank];
        const size_t space = m.size() > 1 ? m.find(' ', 1) : std::string_view::npos;
        if (space == std::string_view::npos) continue;
        const std::string_view left = m.substr(0, space);
        const std::string_view right = m.substr(space + 1);
        if (right.empty()) continue;  // an empty symbol never occurs in a word
        joined.assign(left).append(right);
        const int32_t l = intern(vocab, left);
        const int32_t r = intern(vocab, right);
        const int32_t result = intern(vocab, joined);
        pairs_.try_emplace(pair_key(l, r), Merge{static_cast<int32_t>(rank), result});
    }
    extra_index_ = {};
}

// A symbol that is not a token: llama.cpp looks each byte of its (byte-encoded) text up as a
// one-character string and silently drops what it does not find. Never happens with a complete
// byte-level vocabulary, so the fallback is computed once here.
int32_t BpeMerger::intern(const Vocab& vocab, std::string_view text) {
    if (const auto id = vocab.find(text)) return *id;
    const std::string key(text);
    if (const auto it = extra_index_.find(key); it != extra_index_.end()) return it->second;
    const int32_t id = vocab_size_ + static_cast<int32_t>(extra_fallback_.size());
    std::vector<int32_t> fallback;
    for (char c : key) {
        if (const auto byte_id = vocab.find(std::string_view(&c, 1))) fallback.push_back(*byte_id);
    }
    extra_fallback_.push_back(std::move(fallback));
    extra_index_.emplace(key, id);
    return id;
}

void BpeMerger::emit_symbol(int32_t symbol, std::vector<int32_t>& out) const {
    if (symbol < vocab_size_) {
        out.push_back(symbol);
        return;
    }
    const auto& fallback = extra_fallback_[static_cast<size_t>(symbol - vocab_size_)];
    out.insert(out.end(), fallback.begin(), fallback.end());
}

void BpeMerger::encode_word(std::string_view word_utf8, std::vector<int32_t>& out) const {
    const size_t n = word_utf8.size();
    if (n == 0) return;
    if (n == 1) {
        emit_symbol(byte_symbol_[static_cast<unsigned char>(word_utf8[0])], out);
        return;
    }

    struct Node {
        int32_t symbol;
        int32_t prev;  // -1: none
        int32_t next;  // -1: none
        bool alive;
    };
    std::vector<Node> nodes(n);
    for (size_t i = 0; i < n; ++i) {
        nodes[i] = Node{byte_symbol_[static_cast<unsigned char>(word_utf8[i])], static_cast<int32_t>(i) - 1,
                        i + 1 < n ? static_cast<int32_t>(i + 1) : -1, true};
    }

    struct Candidate {
        int32_t rank;
        int32_t left;          // node index; nodes keep the index of their first byte, so this orders by position
        int32_t right;
        int32_t left_symbol;   // symbols when queued, to detect stale entries
        int32_t right_symbol;
        int32_t result;
        bool operator>(const Candidate& o) const noexcept {
            return rank != o.rank ? rank > o.rank : left > o.left;
        }
    };
    std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap;
    auto consider = [&](int32_t left, int32_t right) {
        if (left < 0 || right < 0) return;
        const int32_t ls = nodes[static_cast<size_t>(left)].symbol;
        const int32_t rs = nodes[static_cast<size_t>(right)].symbol;
        const auto it = pairs_.find(pair_key(ls, rs));
        if (it != pairs_.end()) heap.push(Candidate{it->second.rank, left, right, ls, rs, it->second.result});
    };
    for (size_t i = 0; i + 1 < n; ++i) consider(static_cast<int32_t>(i), static_cast<int32_t>(i + 1));

    while (!heap.empty()) {
        const Candidate c = heap.top();
        heap.pop();
        Node& l = nodes[static_cast<size_t>(c.left)];
        Node& r = nodes[static_cast<size_t>(c.right)];
        // Stale if either side was merged away or has grown since the pair was queued.
        if (!l.alive || !r.alive || l.next != c.right || l.symbol != c.left_symbol || r.symbol != c.right_symbol) {
            continue;
        }
        l.symbol = c.result;
        l.next = r.next;
        if (r.next >= 0) nodes[static_cast<size_t>(r.next)].prev = c.left;
        r.alive = false;
        consider(l.prev, c.left);
        consider(c.left, l.next);
    }

    for (int32_t i = 0; i >= 0; i = nodes[static_cast<size_t>(i)].next) emit_symbol(nodes[static_cast<size_t>(i)].symbol, out);
}

}  // namespace dense::text
