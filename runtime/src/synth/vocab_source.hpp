// The vocabulary a synthetic model carries: the tokenizer.* keys of a vocab GGUF (e.g.
// tests/data/vocab/ggml-vocab-qwen35.gguf, 151,936 tokens), resized to the requested vocabulary.
//
// Resizing rules:
//   * larger:  appended entries are unused tokens "[PAD<id>]" of type UNUSED (5), as the HF converter
//              pads Qwen vocabularies to the embedding size (the 27B: 248,320 entries).
//   * smaller: the special tokens (CONTROL, and USER_DEFINED ones that are not "[PAD<n>]" fillers)
//              are kept and move to the end; the first (size - specials) other tokens are kept in id
//              order (for Qwen vocabularies these start with the 256 byte symbols, so any text still
//              tokenizes). Merges survive only if both halves and their concatenation survive.
//              Special-id keys (tokenizer.ggml.*_token_id) are renumbered; one whose token was dropped
//              is left out. Other arrays with one entry per token (e.g. scores) follow the tokens.
//              The size must leave room for 256 ordinary tokens plus the specials.
#pragma once

#include "gguf/gguf_file.hpp"
#include "gguf/gguf_writer.hpp"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace dense::synth {

struct SynthVocab {
    std::filesystem::path source;
    uint64_t source_tokens = 0;
    std::vector<std::string> tokens;
    std::vector<int32_t> token_types;
    std::vector<std::string> merges;
    bool has_merges = false;
    uint64_t dropped_merges = 0;
    std::vector<std::string> dropped_keys;  // special-id keys left out (their token was dropped)
    // Every tokenizer.* key of the source in file order; tokens, token_type, merges and per-token
    // arrays are written from the fields above / resized copies, special ids are renumbered.
    std::vector<std::pair<std::string, gguf::Value>> keys;

    size_t size() const noexcept { return tokens.size(); }
    void add_to(gguf::GgufWriter& writer) const;  // all tokenizer.* keys, in the source's order

    // The source file: the values in `keys` point into its bytes.
    std::shared_ptr<const gguf::GgufFile> file;
    std::vector<std::vector<std::byte>> owned_raw;  // bytes of resized per-token arrays
};

// Loads the tokenizer.* keys of `path` and resizes them to `size` tokens (0 = keep the file's size).
// Throws dense::Error (Io/Format from the reader; Usage for a size too small or a file without
// tokenizer.ggml.tokens).
SynthVocab load_vocab(const std::filesystem::path& path, uint64_t size);

// tests/data/vocab/ggml-vocab-qwen35.gguf under the working directory, else the copy an installed
// dense-rt has in <prefix>/share/dense-rt/vocab, else the source tree dense-rt was built from;
// nullopt if none exists.
std::optional<std::filesystem::path> default_vocab_path();

}  // namespace dense::synth
