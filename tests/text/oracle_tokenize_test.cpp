// Our tokenizer against llama.cpp's (the oracle library, see llama_tokenizer_oracle.hpp) on the fixture
// vocabulary: the 50 reference cases, every token's piece, a few thousand generated lines, text with
// special tokens (parse_special on and off) and random bytes. Identical ids are required.
#include "llama_tokenizer_oracle.hpp"
#include "text_corpus.hpp"
#include "text_test_support.hpp"

#include "text/chat_template.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <random>

namespace dense::text::test {
namespace {

std::string escaped(std::string_view s) {
    std::string out;
    for (unsigned char c : s) {
        if (c >= 0x20 && c < 0x7F && c != '\\') {
            out.push_back(static_cast<char>(c));
        } else {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02X", c);
            out += buf;
        }
    }
    return out;
}

std::string ids_text(const std::vector<int32_t>& ids) {
    std::string out;
    for (int32_t id : ids) out += std::to_string(id) + " ";
    return out;
}

// Compares on every text; reports the first few differences in full and the count.
void expect_same_as_oracle(const LlamaTokenizerOracle& oracle, const std::vector<std::string>& texts,
                           bool parse_special) {
    const Tokenizer& tok = fixture_tokenizer();
    size_t mismatches = 0;
    for (const auto& text : texts) {
        const auto expected = oracle.tokenize(text, parse_special);
        const auto actual = tok.encode(text, parse_special);
        if (actual != expected && ++mismatches <= 5) {
            ADD_FAILURE() << "text: \"" << escaped(text) << "\"\n  llama.cpp: " << ids_text(expected)
                          << "\n  ours:      " << ids_text(actual);
        }
    }
    EXPECT_EQ(mismatches, 0u) << "of " << texts.size() << " texts (parse_special=" << parse_special << ")";
}

TEST(OracleTokenize, OracleReproducesTheFixture) {
    DENSE_REQUIRE_TOKENIZER_ORACLE(oracle);
    EXPECT_EQ(oracle.n_tokens(), fixture_tokenizer().vocab_size());
    for (const auto& c : vocab_cases()) EXPECT_EQ(oracle.tokenize(c.text, false), c.expected) << escaped(c.text);
}

TEST(OracleTokenize, EveryTokenPieceMatches) {
    DENSE_REQUIRE_TOKENIZER_ORACLE(oracle);
    const Tokenizer& tok = fixture_tokenizer();
    size_t mismatches = 0;
    for (int32_t id = 0; id < tok.vocab_size(); ++id) {
        for (bool special : {false, true}) {
            if (tok.token_piece(id, special) != oracle.piece(id, special) && ++mismatches <= 5) {
                ADD_FAILURE() << "token " << id << " special=" << special << ": llama.cpp \""
                              << escaped(oracle.piece(id, special)) << "\", ours \""
                              << escaped(tok.token_piece(id, special)) << "\"";
            }
        }
    }
    EXPECT_EQ(mismatches, 0u);
}

TEST(OracleTokenize, GeneratedCorpusParseSpecialOff) {
    DENSE_REQUIRE_TOKENIZER_ORACLE(oracle);
    const auto corpus = make_corpus(0x7e57'c0de'0001, 3000);
    ASSERT_GT(corpus.size(), 3000u);
    expect_same_as_oracle(oracle, corpus, /*parse_special=*/false);
}

TEST(OracleTokenize, GeneratedCorpusParseSpecialOn) {
    DENSE_REQUIRE_TOKENIZER_ORACLE(oracle);
    expect_same_as_oracle(oracle, make_corpus(0x7e57'c0de'0002, 1500), /*parse_special=*/true);
}

TEST(OracleTokenize, RandomCodePointStrings) {
    DENSE_REQUIRE_TOKENIZER_ORACLE(oracle);
    CorpusGenerator gen(0x7e57'c0de'0003);
    std::vector<std::string> texts;
    for (int i = 0; i < 2000; ++i) texts.push_back(gen.random_code_points(1 + gen.pick(64)));
    expect_same_as_oracle(oracle, texts, false);
}

// Special-token texts (CONTROL ones, USER_DEFINED placeholders, and "</s>", which llama.cpp promotes to
// CONTROL) embedded whole and broken in generated text: cut out only when they should be.
TEST(OracleTokenize, TextWithSpecialTokens) {
    DENSE_REQUIRE_TOKENIZER_ORACLE(oracle);
    const Tokenizer& tok = fixture_tokenizer();
    std::vector<std::string> specials;
    for (int32_t id : tok.vocab().special_tokens_by_length()) specials.push_back(tok.token_text(id));
    ASSERT_GE(specials.size(), 4u);
    CorpusGenerator gen(0x7e57'c0de'0004);
    std::vector<std::string> texts = {
        "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n", "</s></s>x</s", "<|im_start|<|im_end|>>",
        "[PAD151700][PAD151700]", "<|endoftext|>", "a<|endoftext|>b", " <|im_start|> ", "<|im_start|>\n\n<|im_end|>",
    };
    for (int i = 0; i < 600; ++i) {
        std::string t;
        const size_t parts = 1 + gen.pick(5);
        for (size_t k = 0; k < parts; ++k) {
            std::string s = specials[gen.pick(specials.size())];
            if (gen.pick(5) == 0) s.pop_back();          // a broken marker stays text
            if (gen.pick(3) == 0) t += gen.whitespace_run();
            t += s;
            if (gen.pick(2)) t += gen.line();
        }
        texts.push_back(t);
    }
    expect_same_as_oracle(oracle, texts, false);
    expect_same_as_oracle(oracle, texts, true);
}

// A rendered chat prompt is tokenized with parse_special on, as a generation loop does.
TEST(OracleTokenize, RenderedChatPrompt) {
    DENSE_REQUIRE_TOKENIZER_ORACLE(oracle);
    const std::vector<ChatMessage> chat = {
        {"system", "You are a helpful assistant.", std::nullopt},
        {"user", "Write a haiku about llamas 🦙 and tabs\t\tplease.", std::nullopt},
        {"assistant", "<think>\nShort poem.\n</think>\n\nSoft wool on the hills", std::nullopt},
        {"user", "Now in Japanese: 日本語で。", std::nullopt},
    };
    std::vector<std::string> prompts;
    for (bool thinking : {true, false}) prompts.push_back(render_qwen35_chat(chat, {true, thinking}));
    expect_same_as_oracle(oracle, prompts, true);
    const auto ids = fixture_tokenizer().encode(prompts[0], true);
    EXPECT_EQ(ids.front(), *fixture_tokenizer().find_token("<|im_start|>"));
}

// Random bytes, valid or not. llama.cpp throws out of llama_tokenize when a 4-byte structure encodes a
// value above U+10FFFF (we replace its lead byte instead, see utf8.hpp); such inputs are not compared.
TEST(OracleTokenize, RandomBytes) {
    DENSE_REQUIRE_TOKENIZER_ORACLE(oracle);
    const Tokenizer& tok = fixture_tokenizer();
    std::mt19937_64 rng(0x7e57'c0de'0005);
    size_t compared = 0, thrown = 0, mismatches = 0;
    for (int i = 0; i < 3000; ++i) {
        std::string bytes(1 + rng() % 40, '\0');
        const unsigned mode = static_cast<unsigned>(rng() % 3);
        for (char& c : bytes) {
            const uint64_t r = rng();
            if (mode == 0) c = static_cast<char>(r);                                           // anything
            else if (mode == 1) c = static_cast<char>(r % 4 == 0 ? 0x80 + (r >> 8) % 0x80 : 0x20 + (r >> 8) % 0x5F);
            else c = static_cast<char>(r % 3 == 0 ? 0xC0 + (r >> 8) % 0x40 : 0x80 + (r >> 8) % 0x40);  // leads + continuations
        }
        std::vector<int32_t> expected;
        try {
            expected = oracle.tokenize(bytes, false);
        } catch (const std::exception&) {
            ++thrown;
            continue;
        }
        ++compared;
        const auto actual = tok.encode(bytes, false);
        if (actual != expected && ++mismatches <= 5) {
            ADD_FAILURE() << "bytes: \"" << escaped(bytes) << "\"\n  llama.cpp: " << ids_text(expected)
                          << "\n  ours:      " << ids_text(actual);
        }
    }
    EXPECT_EQ(mismatches, 0u) << "of " << compared << " compared (" << thrown << " made llama.cpp throw)";
    EXPECT_GT(compared, 2000u);
}

}  // namespace
}  // namespace dense::text::test
