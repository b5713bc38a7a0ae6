// The vocabulary a synthetic file carries: copied as is, padded with [PAD<id>] UNUSED entries, or
// truncated keeping the special tokens (renumbered) — and the tokenizer loads every variant.
#include "synth_test_support.hpp"

#include "core/error.hpp"
#include "synth/vocab_source.hpp"
#include "text/tokenizer.hpp"

#include <gtest/gtest.h>

#include <unordered_set>

namespace {

using namespace dense::synth;
using dense::synth::test::vocab_file;

constexpr uint64_t kFileTokens = 151936;

TEST(SynthVocab, CopiedUnchanged) {
    const SynthVocab v = load_vocab(vocab_file(), 0);
    const auto src = dense::gguf::GgufFile::open(vocab_file());
    const auto tokens = src.get_string_array("tokenizer.ggml.tokens");
    ASSERT_EQ(v.size(), kFileTokens);
    EXPECT_EQ(v.source_tokens, kFileTokens);
    for (size_t i = 0; i < tokens.size(); i += 997) EXPECT_EQ(v.tokens[i], tokens[i]);
    EXPECT_EQ(v.merges.size(), src.get_string_array("tokenizer.ggml.merges").size());
    EXPECT_EQ(v.dropped_merges, 0u);
    EXPECT_TRUE(v.dropped_keys.empty());
    std::vector<std::string> keys;
    for (const auto& [k, value] : v.keys) keys.push_back(k);
    for (const char* k : {"tokenizer.ggml.model", "tokenizer.ggml.pre", "tokenizer.ggml.tokens", "tokenizer.ggml.token_type",
                          "tokenizer.ggml.merges", "tokenizer.ggml.eos_token_id", "tokenizer.ggml.bos_token_id",
                          "tokenizer.ggml.padding_token_id", "tokenizer.chat_template"})
        EXPECT_NE(std::find(keys.begin(), keys.end(), k), keys.end()) << k;
    for (const auto& k : keys) EXPECT_EQ(k.rfind("tokenizer.", 0), 0u) << "no qwen2.* keys from the vocab file: " << k;
}

TEST(SynthVocab, PaddedToARequestedSize) {
    ShapeOverrides o;
    o.vocab_size = kFileTokens + 64;
    o.n_layer = 4;
    const auto m = dense::synth::test::synthesize(dense::synth::test::request("tiny", "q8_0", 1, o));
    const auto& f = *m.file;
    const auto tokens = f.get_string_array("tokenizer.ggml.tokens");
    const auto types = f.get_i32_array("tokenizer.ggml.token_type");
    ASSERT_EQ(tokens.size(), kFileTokens + 64);
    ASSERT_EQ(types.size(), tokens.size());
    EXPECT_EQ(tokens[kFileTokens], "[PAD151936]");
    EXPECT_EQ(tokens[kFileTokens + 63], "[PAD151999]");
    EXPECT_EQ(types[kFileTokens], 5) << "UNUSED";
    EXPECT_EQ(types[kFileTokens + 63], 5);
    EXPECT_EQ(tokens[151644], "<|im_start|>") << "existing ids unchanged";
    EXPECT_EQ(f.get_u32("tokenizer.ggml.eos_token_id"), 151643u);
    EXPECT_EQ(f.find_tensor("token_embd.weight")->ne[1], static_cast<int64_t>(kFileTokens + 64));
    const auto tok = dense::text::Tokenizer::from_gguf(f);
    EXPECT_EQ(tok.vocab_size(), static_cast<int32_t>(kFileTokens + 64));
    const auto ids = tok.encode("Hello world", false);
    EXPECT_EQ(tok.decode(ids, false), "Hello world");
    EXPECT_FALSE(tok.is_special(static_cast<int32_t>(kFileTokens))) << "padding is not special text";
}

TEST(SynthVocab, The27bPaddingMatchesTheHfConverter) {
    const SynthVocab v = load_vocab(vocab_file(), 248320);
    ASSERT_EQ(v.size(), 248320u);
    EXPECT_EQ(v.tokens.back(), "[PAD248319]");
    EXPECT_EQ(v.token_types.back(), 5);
    std::unordered_set<std::string> unique(v.tokens.begin(), v.tokens.end());
    EXPECT_EQ(unique.size(), v.size());
}

TEST(SynthVocab, TruncatedKeepsSpecialsAndTheTokenizerStillWorks) {
    const SynthVocab v = load_vocab(vocab_file(), 4096);
    ASSERT_EQ(v.size(), 4096u);
    EXPECT_EQ(v.tokens[4093], "<|endoftext|>");
    EXPECT_EQ(v.tokens[4094], "<|im_start|>");
    EXPECT_EQ(v.tokens[4095], "<|im_end|>");
    EXPECT_EQ(v.token_types[4095], 3);
    EXPECT_GT(v.dropped_merges, 100000u);
    EXPECT_GT(v.merges.size(), 3000u);
    std::unordered_set<std::string> kept(v.tokens.begin(), v.tokens.end());
    for (const auto& m : v.merges) {
        const auto sp = m.find(' ');
        ASSERT_NE(sp, std::string::npos);
        EXPECT_TRUE(kept.count(m.substr(0, sp)) && kept.count(m.substr(sp + 1)) &&
                    kept.count(m.substr(0, sp) + m.substr(sp + 1))) << m;
    }

    ShapeOverrides o;
    o.vocab_size = 4096;
    o.n_layer = 4;
    const auto m = dense::synth::test::synthesize(dense::synth::test::request("tiny", "q8_0", 1, o));
    const auto& f = *m.file;
    EXPECT_EQ(f.get_u32("tokenizer.ggml.eos_token_id"), 4093u) << "special ids follow their tokens";
    EXPECT_EQ(f.get_u32("tokenizer.ggml.bos_token_id"), 4093u);
    const auto tok = dense::text::Tokenizer::from_gguf(f);
    EXPECT_EQ(tok.vocab_size(), 4096);
    const std::string text = "<|im_start|>user\nHello, world! Synthetic models tokenize too.<|im_end|>";
    const auto ids = tok.encode(text, true);
    ASSERT_FALSE(ids.empty());
    EXPECT_EQ(ids.front(), 4094);
    EXPECT_EQ(ids.back(), 4095);
    for (int32_t id : ids) EXPECT_LT(id, 4096);
    EXPECT_EQ(tok.decode(ids, true), text);
    EXPECT_TRUE(tok.is_eog(4095));
}

TEST(SynthVocab, TooSmallIsAClearError) {
    try {
        load_vocab(vocab_file(), 200);
        FAIL() << "no error";
    } catch (const dense::Error& e) {
        EXPECT_EQ(e.kind(), dense::ErrorKind::Usage);
        EXPECT_NE(std::string(e.what()).find("--vocab-size 200 is too small"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("at least 259"), std::string::npos) << e.what();
    }
    EXPECT_EQ(load_vocab(vocab_file(), 259).size(), 259u);
}

TEST(SynthVocab, MissingFileIsAnIoError) {
    try {
        load_vocab("/nonexistent/vocab.gguf", 0);
        FAIL() << "no error";
    } catch (const dense::Error& e) {
        EXPECT_NE(std::string(e.what()).find("/nonexistent/vocab.gguf"), std::string::npos) << e.what();
    }
}

}  // namespace
