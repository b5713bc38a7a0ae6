#include "text/vocab.hpp"

#include "core/error.hpp"

#include <algorithm>
#include <array>

namespace dense::text {

namespace {

// Texts llama.cpp recognizes as end-of-turn / end-of-generation / fill-in-the-middle markers. It
// promotes them to CONTROL whatever their stored type (a converter bug it works around), so a text that
// contains them tokenizes differently with parse_special off; we must do the same to give the same ids.
constexpr std::array<std::string_view, 22> kEndMarkers = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
    "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]",
    "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
    "<\xEF\xBD\x9C" "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>", "[e~[",
};
// End-of-turn candidates in the order we prefer them when the file names no eot id.
constexpr std::array<std::string_view, 8> kEotCandidates = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>", "<EOT>",
    "<end_of_utterance>",
};
// Fill-in-the-middle markers; the pad / repo / file-separator ones also end generation.
constexpr std::array<std::string_view, 6> kFimMarkers = {
    "<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>", "<|fim_pad|>", "<|repo_name|>", "<|file_sep|>",
};
constexpr std::array<std::string_view, 4> kFimEndMarkers = {"<|fim_pad|>", "<|fim_repo|>", "<|repo_name|>", "<|file_sep|>"};

[[noreturn]] void fail(const gguf::GgufFile& file, std::string_view key, const std::string& what) {
    throw Error(ErrorKind::Model, file.path() + ": " + std::string(key) + ": " + what);
}

std::optional<int32_t> read_token_id(const gguf::GgufFile& file, std::string_view key, int32_t n_tokens) {
    const auto v = file.get_u32_opt(key);
    if (!v) return std::nullopt;
    if (*v >= static_cast<uint32_t>(n_tokens)) {
        fail(file, key, "token id " + std::to_string(*v) + " is out of range (vocabulary size " +
                            std::to_string(n_tokens) + ")");
    }
    return static_cast<int32_t>(*v);
}

template <size_t N>
bool is_one_of(std::string_view text, const std::array<std::string_view, N>& list) {
    return std::find(list.begin(), list.end(), text) != list.end();
}

}  // namespace

Vocab Vocab::from_gguf(const gguf::GgufFile& file) {
    Vocab v;
    const std::string_view model = file.get_string("tokenizer.ggml.model");
    if (model != "gpt2") {
        fail(file, "tokenizer.ggml.model", "tokenizer model '" + std::string(model) +
                                               "' is not supported (only byte-level BPE 'gpt2')");
    }
    v.pre_ = std::string(file.get_string_opt("tokenizer.ggml.pre").value_or("default"));

    const auto tokens = file.get_string_array("tokenizer.ggml.tokens");
    if (tokens.empty()) fail(file, "tokenizer.ggml.tokens", "the token list is empty");
    if (tokens.size() > static_cast<size_t>(INT32_MAX)) fail(file, "tokenizer.ggml.tokens", "too many tokens");
    const auto n = static_cast<int32_t>(tokens.size());

    const auto types = file.get_i32_array_opt("tokenizer.ggml.token_type");
    if (types && types->size() < tokens.size()) {
        fail(file, "tokenizer.ggml.token_type", "has " + std::to_string(types->size()) + " entries for " +
                                                    std::to_string(tokens.size()) + " tokens");
    }

    v.texts_.reserve(tokens.size());
    v.types_.reserve(tokens.size());
    for (int32_t id = 0; id < n; ++id) {
        const auto i = static_cast<size_t>(id);
        // llama.cpp's placeholder for an empty string, so that every token has a distinct text.
        v.texts_.push_back(tokens[i].empty() ? "[EMPTY_" + std::to_string(id) + "]" : std::string(tokens[i]));
        int32_t t = types ? (*types)[i] : static_cast<int32_t>(TokenType::Normal);
        if (t < 0 || t > static_cast<int32_t>(TokenType::Byte)) {
            fail(file, "tokenizer.ggml.token_type", "token " + std::to_string(id) + " has unknown type " +
                                                        std::to_string(t));
        }
        v.types_.push_back(static_cast<TokenType>(t));
    }
    v.index_.reserve(tokens.size());
    for (int32_t id = 0; id < n; ++id) {
        const auto [it, inserted] = v.index_.emplace(v.texts_[static_cast<size_t>(id)], id);
        if (!inserted) {
            fail(file, "tokenizer.ggml.tokens", "tokens " + std::to_string(it->second) + " and " +
                                                    std::to_string(id) + " have the same text '" +
                                                    v.texts_[static_cast<size_t>(id)] + "'");
        }
    }

    v.control_.resize(tokens.size());
    for (int32_t id = 0; id < n; ++id) {
        const std::string& text = v.texts_[static_cast<size_t>(id)];
        v.control_[static_cast<size_t>(id)] = v.type(id) == TokenType::Control || is_one_of(text, kEndMarkers) ||
                                              is_one_of(text, kFimMarkers) || is_one_of(text, kFimEndMarkers);
    }

    for (int32_t id = 0; id < n; ++id) {
        if (v.is_special(id)) v.specials_.push_back(id);
    }
    std::stable_sort(v.specials_.begin(), v.specials_.end(), [&v](int32_t a, int32_t b) {
        return v.text(a).size() > v.text(b).size();
    });

    v.bos_ = read_token_id(file, "tokenizer.ggml.bos_token_id", n);
    v.eos_ = read_token_id(file, "tokenizer.ggml.eos_token_id", n);
    v.eot_ = read_token_id(file, "tokenizer.ggml.eot_token_id", n);
    v.pad_ = read_token_id(file, "tokenizer.ggml.padding_token_id", n);
    if (!v.eot_) {
        for (std::string_view candidate : kEotCandidates) {
            if ((v.eot_ = v.find(candidate))) break;
        }
    }
    v.add_bos_ = file.get_bool_opt("tokenizer.ggml.add_bos_token").value_or(false);
    v.add_eos_ = file.get_bool_opt("tokenizer.ggml.add_eos_token").value_or(false);

    for (int32_t id = 0; id < n; ++id) {
        const std::string& text = v.texts_[static_cast<size_t>(id)];
        if (id == v.eos_ || id == v.eot_ || is_one_of(text, kEndMarkers) || is_one_of(text, kFimEndMarkers)) {
            v.eog_.push_back(id);
        }
    }
    return v;
}

std::optional<int32_t> Vocab::find(std::string_view text) const {
    const auto it = index_.find(text);
    if (it == index_.end()) return std::nullopt;
    return it->second;
}

bool Vocab::is_literal(int32_t id) const {
    const TokenType t = type(id);
    return is_control(id) || t == TokenType::Unknown || t == TokenType::UserDefined;
}

bool Vocab::is_special(int32_t id) const { return is_literal(id); }

bool Vocab::is_eog(int32_t id) const { return std::binary_search(eog_.begin(), eog_.end(), id); }

}  // namespace dense::text
