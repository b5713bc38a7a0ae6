#include "text/tokenizer.hpp"

#include "core/error.hpp"
#include "text/byte_unicode.hpp"
#include "text/pre_tokenizer.hpp"
#include "text/special_split.hpp"
#include "text/utf8.hpp"

#include <cstdio>

namespace dense::text {

namespace {

// What a NORMAL (or byte-level BYTE) token stands for: each code point of its string mapped back to the
// byte it encodes. A code point outside the byte table cannot occur in a byte-level vocabulary; llama.cpp
// then emits "[UNK_BYTE_0x<hex of its UTF-8>" followed by the whole token text and "]", and so do we.
std::string decode_normal_piece(const std::string& text) {
    std::string out;
    out.reserve(text.size());
    for (char32_t cp : decode_utf8_lenient(text)) {
        if (const auto b = unicode_to_byte(cp)) {
            out.push_back(static_cast<char>(*b));
            continue;
        }
        std::string utf8;
        append_utf8(utf8, cp);
        out += "[UNK_BYTE_0x";
        for (char c : utf8) {
            char hex[3];
            std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned>(static_cast<unsigned char>(c)));
            out += hex;
        }
        out += text;
        out += "]";
    }
    return out;
}

// A BYTE token of a byte-level vocabulary written the SentencePiece way ("<0x0A>").
std::optional<char> hex_byte_token(const std::string& text) {
    if (text.size() != 6 || text.compare(0, 3, "<0x") != 0 || text[5] != '>') return std::nullopt;
    unsigned value = 0;
    if (std::sscanf(text.c_str() + 3, "%2x", &value) != 1) return std::nullopt;
    return static_cast<char>(value);
}

std::string piece_of(const Vocab& vocab, int32_t id) {
    if (vocab.is_literal(id)) return vocab.text(id);
    switch (vocab.type(id)) {
        case TokenType::Normal:
            return decode_normal_piece(vocab.text(id));
        case TokenType::Byte:
            if (const auto b = hex_byte_token(vocab.text(id))) return std::string(1, *b);
            return decode_normal_piece(vocab.text(id));
        default:
            return {};  // UNUSED / UNDEFINED: nothing
    }
}

}  // namespace

Tokenizer Tokenizer::from_gguf(const gguf::GgufFile& file) {
    Vocab vocab = Vocab::from_gguf(file);
    if (vocab.pre_tokenizer() != "qwen35") {
        throw Error(ErrorKind::Model, file.path() + ": tokenizer.ggml.pre: pre-tokenizer '" +
                                          std::string(vocab.pre_tokenizer()) +
                                          "' is not supported (supported: qwen35)");
    }
    const auto merges = file.get_string_array("tokenizer.ggml.merges");
    BpeMerger bpe(vocab, merges);
    std::vector<std::string> pieces;
    pieces.reserve(static_cast<size_t>(vocab.size()));
    for (int32_t id = 0; id < vocab.size(); ++id) pieces.push_back(piece_of(vocab, id));
    return Tokenizer(std::make_shared<const State>(State{std::move(vocab), std::move(bpe), std::move(pieces)}));
}

void Tokenizer::encode_text(std::string_view text, std::vector<int32_t>& out) const {
    const std::vector<char32_t> cps = decode_utf8_lenient(text);
    std::vector<size_t> word_lengths;
    split_words_qwen35(cps, word_lengths);
    std::string word;
    size_t pos = 0;
    for (size_t len : word_lengths) {
        word.clear();
        for (size_t i = pos; i < pos + len; ++i) append_utf8(word, cps[i]);
        pos += len;
        state_->bpe.encode_word(word, out);
    }
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool parse_special, bool add_special) const {
    const Vocab& vocab = state_->vocab;
    std::vector<int32_t> out;
    out.reserve(text.size() / 3 + 4);
    if (add_special && vocab.add_bos() && vocab.bos()) out.push_back(*vocab.bos());
    for (const Fragment& f : split_special_tokens(vocab, text, parse_special)) {
        if (f.token >= 0) out.push_back(f.token);
        else encode_text(f.text, out);
    }
    if (add_special && vocab.add_eos() && vocab.eos()) out.push_back(*vocab.eos());
    return out;
}

void Tokenizer::check_id(int32_t id) const {
    if (!state_->vocab.contains(id)) {
        throw Error(ErrorKind::Usage, "token id " + std::to_string(id) + " is out of range (vocabulary size " +
                                          std::to_string(vocab_size()) + ")");
    }
}

std::string Tokenizer::token_piece(int32_t id, bool render_special) const {
    check_id(id);
    const Vocab& vocab = state_->vocab;
    if (!render_special && (vocab.is_control(id) || vocab.type(id) == TokenType::Unknown)) return {};
    return state_->pieces[static_cast<size_t>(id)];
}

std::string Tokenizer::decode(std::span<const int32_t> ids, bool render_special) const {
    std::string out;
    for (int32_t id : ids) {
        check_id(id);
        const Vocab& vocab = state_->vocab;
        if (!render_special && (vocab.is_control(id) || vocab.type(id) == TokenType::Unknown)) continue;
        out += state_->pieces[static_cast<size_t>(id)];
    }
    return out;
}

const std::string& Tokenizer::token_text(int32_t id) const {
    check_id(id);
    return state_->vocab.text(id);
}

}  // namespace dense::text
