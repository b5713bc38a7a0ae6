// Byte-level BPE tokenizer of a GGUF model (Qwen3.5: tokenizer.ggml.model = "gpt2", pre = "qwen35"),
// producing the same ids as llama.cpp (spec/tokenizer.md).
//
//   auto file = gguf::GgufFile::open("model.gguf");
//   auto tok  = text::Tokenizer::from_gguf(file);         // copies what it needs; `file` may go away
//   std::vector<int32_t> ids = tok.encode(prompt, /*parse_special=*/true);
//   std::string text = tok.decode(ids, /*render_special=*/false);
//
// encode(): special tokens are cut out first (see special_split.hpp), every remaining fragment is decoded
// leniently (invalid bytes become U+FFFD, like llama.cpp), split into words by the pre-tokenizer, and
// each word is BPE-merged. No Unicode normalization. A BOS token is prepended only if the file says
// add_bos_token = true (Qwen: false) and add_special is on; likewise EOS.
//
// decode(): NORMAL tokens map back through the GPT-2 byte table; USER_DEFINED tokens (<think>, ...) are
// always their literal text; CONTROL/UNKNOWN tokens (<|im_end|>, ...) only with render_special; UNUSED
// and UNDEFINED tokens produce nothing. The result is raw bytes (may be invalid UTF-8 in the middle of a
// character for a partial sequence of ids): use Utf8StreamDecoder when streaming.
//
// A Tokenizer is immutable after construction and can be used from several threads at once.
#pragma once

#include "gguf/gguf_file.hpp"
#include "text/bpe.hpp"
#include "text/vocab.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace dense::text {

class Tokenizer {
public:
    // Errors: dense::Error(ErrorKind::Model) naming the file and key (unsupported model or pre-tokenizer,
    // bad token list, see Vocab::from_gguf).
    static Tokenizer from_gguf(const gguf::GgufFile& file);

    std::vector<int32_t> encode(std::string_view text, bool parse_special, bool add_special = false) const;

    // Out-of-range ids throw dense::Error(ErrorKind::Usage) naming the id and the vocabulary size.
    std::string decode(std::span<const int32_t> ids, bool render_special) const;
    // Bytes of one token (same rules as decode).
    std::string token_piece(int32_t id, bool render_special = true) const;
    // The token's string as stored in the file (byte-encoded for NORMAL tokens).
    const std::string& token_text(int32_t id) const;

    int32_t vocab_size() const noexcept { return state_->vocab.size(); }
    std::optional<int32_t> bos() const noexcept { return state_->vocab.bos(); }
    std::optional<int32_t> eos() const noexcept { return state_->vocab.eos(); }
    // End of turn: tokenizer.ggml.eot_token_id, else the token <|im_end|> (or another known end-of-turn text).
    std::optional<int32_t> eot() const noexcept { return state_->vocab.eot(); }
    // All ids that end generation (eos, eot, <|endoftext|>, FIM pad/repo/file-separator markers, ...).
    const std::vector<int32_t>& eog_ids() const noexcept { return state_->vocab.eog_ids(); }
    bool is_eog(int32_t id) const { return state_->vocab.is_eog(id); }
    // CONTROL, USER_DEFINED or UNKNOWN (cut out of text before BPE). Invalid ids: false.
    bool is_special(int32_t id) const { return state_->vocab.contains(id) && state_->vocab.is_special(id); }
    // Exact match of a token's stored string, e.g. find_token("<|im_start|>").
    std::optional<int32_t> find_token(std::string_view text) const { return state_->vocab.find(text); }
    const Vocab& vocab() const noexcept { return state_->vocab; }

private:
    struct State {
        Vocab vocab;
        BpeMerger bpe;
        std::vector<std::string> pieces;  // decoded bytes of every token (special ones: their text)
    };

    explicit Tokenizer(std::shared_ptr<const State> state) : state_(std::move(state)) {}
    void check_id(int32_t id) const;
    void encode_text(std::string_view text, std::vector<int32_t>& out) const;

    std::shared_ptr<const State> state_;
};

}  // namespace dense::text
