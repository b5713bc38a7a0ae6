// Tokenizer behaviour on the fixture vocabulary (no oracle needed) and load errors on tiny made-up
// vocabularies.
#include "text_corpus.hpp"
#include "text_test_support.hpp"

#include "core/error.hpp"
#include "gguf/gguf_writer.hpp"
#include "text/utf8.hpp"
#include "text/utf8_stream.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <random>

namespace dense::text::test {
namespace {

TEST(Tokenizer, SpecialIdsOfTheFixture) {
    const Tokenizer& tok = fixture_tokenizer();
    EXPECT_EQ(tok.vocab_size(), 151936);
    EXPECT_EQ(tok.find_token("<|im_start|>"), 151644);
    EXPECT_EQ(tok.find_token("<|im_end|>"), 151645);
    EXPECT_EQ(tok.eot(), 151645);
    EXPECT_EQ(tok.eos(), 151643);          // <|endoftext|> in this Qwen2-vocabulary fixture
    EXPECT_TRUE(tok.is_eog(151645));
    EXPECT_TRUE(tok.is_eog(151643));
    EXPECT_FALSE(tok.is_eog(151644));
    EXPECT_TRUE(tok.is_special(151644));
    EXPECT_FALSE(tok.is_special(9707));    // "Hello"
    EXPECT_FALSE(tok.is_special(-1));
    EXPECT_FALSE(tok.vocab().add_bos());
    EXPECT_FALSE(tok.find_token("no such token text").has_value());
}

TEST(Tokenizer, SpecialTokensParsedOnlyWhenAsked) {
    const Tokenizer& tok = fixture_tokenizer();
    const std::string text = "<|im_start|>user\nHi<|im_end|>";
    const auto on = tok.encode(text, /*parse_special=*/true);
    ASSERT_GE(on.size(), 3u);
    EXPECT_EQ(on.front(), 151644);
    EXPECT_EQ(on.back(), 151645);
    const auto off = tok.encode(text, /*parse_special=*/false);
    EXPECT_EQ(std::count(off.begin(), off.end(), 151644), 0);
    EXPECT_EQ(std::count(off.begin(), off.end(), 151645), 0);
    EXPECT_GT(off.size(), on.size());
    // Either way the text comes back when special tokens are rendered; without rendering they vanish.
    EXPECT_EQ(tok.decode(on, /*render_special=*/true), text);
    EXPECT_EQ(tok.decode(off, /*render_special=*/true), text);
    EXPECT_EQ(tok.decode(on, /*render_special=*/false), "user\nHi");
    // USER_DEFINED tokens (here the [PAD...] placeholders) are matched even with parsing off.
    const auto pad = tok.find_token("[PAD151700]");
    ASSERT_TRUE(pad.has_value());
    EXPECT_EQ(tok.encode("x[PAD151700]y", false), (std::vector<int32_t>{87, *pad, 88}));
    EXPECT_EQ(tok.decode(std::vector<int32_t>{*pad}, false), "[PAD151700]");
}

TEST(Tokenizer, AddSpecialAddsNothingForQwen) {
    const Tokenizer& tok = fixture_tokenizer();
    EXPECT_EQ(tok.encode("Hello", false, /*add_special=*/true), tok.encode("Hello", false));
}

TEST(Tokenizer, RoundTripsGeneratedValidText) {
    const Tokenizer& tok = fixture_tokenizer();
    for (const auto& text : make_corpus(0x5eed'0001, 1000)) {
        ASSERT_TRUE(is_valid_utf8(text));
        EXPECT_EQ(tok.decode(tok.encode(text, false), false), text);
    }
}

TEST(Tokenizer, RoundTripsRandomValidUtf8) {
    const Tokenizer& tok = fixture_tokenizer();
    std::mt19937_64 rng(0x5eed'0002);
    for (int i = 0; i < 1000; ++i) {
        std::string text;
        const size_t n = 1 + rng() % 50;
        for (size_t k = 0; k < n; ++k) {
            char32_t cp = static_cast<char32_t>(rng() % 0x110000);
            if (cp >= 0xD800 && cp <= 0xDFFF) cp = 'a';
            append_utf8(text, cp);
        }
        EXPECT_EQ(tok.decode(tok.encode(text, false), false), text);
    }
}

// Invalid bytes become U+FFFD before BPE (as in llama.cpp), so they come back as U+FFFD: the round trip
// gives exactly sanitize_utf8_lenient(x), and x itself whenever x is valid.
TEST(Tokenizer, RandomBytesComeBackSanitized) {
    const Tokenizer& tok = fixture_tokenizer();
    std::mt19937_64 rng(0x5eed'0003);
    size_t invalid = 0;
    for (int i = 0; i < 2000; ++i) {
        std::string bytes(1 + rng() % 40, '\0');
        for (char& c : bytes) c = static_cast<char>(rng());
        const std::string back = tok.decode(tok.encode(bytes, false), false);
        EXPECT_EQ(back, sanitize_utf8_lenient(bytes));
        if (sanitize_utf8_lenient(bytes) != bytes) ++invalid;
        else EXPECT_EQ(back, bytes);
    }
    EXPECT_GT(invalid, 1000u);  // the test really exercised invalid input
}

TEST(Tokenizer, OutOfRangeIdsAreErrorsNamingIdAndSize) {
    const Tokenizer& tok = fixture_tokenizer();
    for (int32_t bad : {-1, 151936, 1 << 30}) {
        try {
            (void)tok.decode(std::vector<int32_t>{9707, bad}, false);
            ADD_FAILURE() << "no error for id " << bad;
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::Usage);
            EXPECT_NE(std::string(e.what()).find(std::to_string(bad)), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find("151936"), std::string::npos) << e.what();
        }
        EXPECT_THROW((void)tok.token_piece(bad), Error);
    }
}

TEST(Tokenizer, StreamingPiecesSplitUtf8) {
    const Tokenizer& tok = fixture_tokenizer();
    // " 🦙" is split over three byte-level tokens in this vocabulary (case 17 of the fixture).
    const auto ids = tok.encode(" 🦙", false);
    ASSERT_GT(ids.size(), 1u);
    EXPECT_FALSE(is_valid_utf8(tok.token_piece(ids[0])));
    Utf8StreamDecoder dec;
    std::string shown;
    for (int32_t id : ids) shown += dec.push(tok.token_piece(id));
    EXPECT_EQ(shown, " 🦙");
}

TEST(Tokenizer, ThousandsOfLinesAreFast) {
    const Tokenizer& tok = fixture_tokenizer();
    const auto corpus = make_corpus(0x5eed'0004, 5000);
    size_t bytes = 0, tokens = 0;
    const auto t0 = std::chrono::steady_clock::now();
    for (const auto& text : corpus) {
        bytes += text.size();
        tokens += tok.encode(text, true).size();
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("encoded %zu lines, %zu bytes, %zu tokens in %.3f s\n", corpus.size(), bytes, tokens, s);
    EXPECT_GT(tokens, corpus.size());
    EXPECT_LT(s, 20.0);  // generous for sanitizer builds; a plain build takes a fraction of a second
}

// ---- load errors on tiny vocabularies ---------------------------------------------------------------

struct TinyVocab {
    std::string model = "gpt2";
    std::string pre = "qwen35";
    std::vector<std::string> tokens = {"a", "b", "ab", "<|im_end|>"};
    std::vector<int32_t> types = {1, 1, 1, 3};
    std::vector<std::string> merges = {"a b"};
    std::optional<uint32_t> eos;

    gguf::GgufFile build() const {
        gguf::GgufWriter w;
        w.add_string("tokenizer.ggml.model", model);
        w.add_string("tokenizer.ggml.pre", pre);
        w.add_string_array("tokenizer.ggml.tokens", tokens);
        w.add_array<int32_t>("tokenizer.ggml.token_type", types);
        w.add_string_array("tokenizer.ggml.merges", merges);
        if (eos) w.add_u32("tokenizer.ggml.eos_token_id", *eos);
        return gguf::GgufFile::parse_owned(w.write_to_bytes(), "tiny.gguf");
    }
};

void expect_load_error(const TinyVocab& v, const std::string& needle) {
    try {
        (void)Tokenizer::from_gguf(v.build());
        ADD_FAILURE() << "no error, expected one mentioning '" << needle << "'";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Model);
        EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("tiny.gguf"), std::string::npos) << e.what();
    }
}

TEST(TokenizerLoad, TinyVocabularyWorks) {
    const Tokenizer tok = Tokenizer::from_gguf(TinyVocab{}.build());
    EXPECT_EQ(tok.encode("ab", false), (std::vector<int32_t>{2}));
    EXPECT_EQ(tok.encode("ba", false), (std::vector<int32_t>{1, 0}));
    // Bytes missing from this vocabulary are dropped (llama.cpp's fallback finds no byte token either).
    EXPECT_EQ(tok.encode("a c", false), (std::vector<int32_t>{0}));
    EXPECT_EQ(tok.eot(), 3);
    EXPECT_TRUE(tok.is_eog(3));
}

TEST(TokenizerLoad, Errors) {
    TinyVocab v;
    v.model = "llama";
    expect_load_error(v, "tokenizer.ggml.model");
    v = {};
    v.pre = "qwen2";
    expect_load_error(v, "tokenizer.ggml.pre");
    v = {};
    v.tokens = {"a", "b", "a", "x"};
    expect_load_error(v, "same text");
    v = {};
    v.types = {1, 1};
    expect_load_error(v, "tokenizer.ggml.token_type");
    v = {};
    v.types = {1, 1, 9, 3};
    expect_load_error(v, "unknown type 9");
    v = {};
    v.eos = 4;
    expect_load_error(v, "tokenizer.ggml.eos_token_id");
}

}  // namespace
}  // namespace dense::text::test
