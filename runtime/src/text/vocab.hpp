// The token list of a byte-level BPE tokenizer as stored in a GGUF (spec/tokenizer.md section 1):
// token strings, their types, the special ids, and which tokens count as "special" for splitting and
// rendering. Merges are handled by BpeMerger (bpe.hpp).
#pragma once

#include "gguf/gguf_file.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace dense::text {

// tokenizer.ggml.token_type values (the numbering is the GGUF one).
enum class TokenType : int32_t {
    Undefined = 0, Normal = 1, Unknown = 2, Control = 3, UserDefined = 4, Unused = 5, Byte = 6,
};

class Vocab {
public:
    // Reads tokenizer.ggml.{model,pre,tokens,token_type,bos/eos/eot/pad_token_id,add_bos_token,
    // add_eos_token}. Errors (dense::Error, ErrorKind::Model, naming the file and key): model other than
    // "gpt2", missing tokens, token_type shorter than tokens or with values outside 0..6, duplicate token
    // strings, special ids out of range.
    static Vocab from_gguf(const gguf::GgufFile& file);

    // Move-only: the text index holds views into the token strings (a move keeps them in place).
    Vocab(Vocab&&) noexcept = default;
    Vocab& operator=(Vocab&&) noexcept = default;
    Vocab(const Vocab&) = delete;
    Vocab& operator=(const Vocab&) = delete;

    int32_t size() const noexcept { return static_cast<int32_t>(texts_.size()); }
    bool contains(int32_t id) const noexcept { return id >= 0 && id < size(); }
    // Token string as stored (byte-encoded for NORMAL tokens, literal for special ones). id must be valid.
    const std::string& text(int32_t id) const { return texts_[static_cast<size_t>(id)]; }
    TokenType type(int32_t id) const { return types_[static_cast<size_t>(id)]; }
    std::optional<int32_t> find(std::string_view text) const;

    // Treated as CONTROL: typed CONTROL in the file, or one of the well-known end-of-turn / FIM marker
    // texts (<|im_end|>, <|endoftext|>, <|fim_pad|>, ...) that llama.cpp promotes to CONTROL whatever
    // their stored type. Such tokens are matched in text only with parse_special and rendered only on
    // request.
    bool is_control(int32_t id) const { return control_[static_cast<size_t>(id)]; }
    // Rendered as literal text when decoding (CONTROL/UNKNOWN only when asked to).
    bool is_literal(int32_t id) const;
    // CONTROL, USER_DEFINED or UNKNOWN: cut out of the text before pre-tokenization.
    bool is_special(int32_t id) const;

    // Special tokens in the order they are matched: longest text first, ties by lower id.
    const std::vector<int32_t>& special_tokens_by_length() const noexcept { return specials_; }

    std::string_view pre_tokenizer() const noexcept { return pre_; }
    std::optional<int32_t> bos() const noexcept { return bos_; }
    std::optional<int32_t> eos() const noexcept { return eos_; }
    std::optional<int32_t> eot() const noexcept { return eot_; }
    std::optional<int32_t> pad() const noexcept { return pad_; }
    bool add_bos() const noexcept { return add_bos_; }
    bool add_eos() const noexcept { return add_eos_; }
    // End-of-generation ids: eos, eot and every token whose text is a known end marker.
    const std::vector<int32_t>& eog_ids() const noexcept { return eog_; }
    bool is_eog(int32_t id) const;

private:
    Vocab() = default;

    std::vector<std::string> texts_;
    std::vector<TokenType> types_;
    std::vector<bool> control_;
    std::unordered_map<std::string_view, int32_t> index_;  // views into texts_ (stable after load)
    std::vector<int32_t> specials_;
    std::string pre_;
    std::optional<int32_t> bos_, eos_, eot_, pad_;
    bool add_bos_ = false;
    bool add_eos_ = false;
    std::vector<int32_t> eog_;
};

}  // namespace dense::text
