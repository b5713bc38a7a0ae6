// The 50 reference cases of llama.cpp's tokenizer test for the qwen35 pre-tokenizer (tests/data/vocab).
#include "text_test_support.hpp"

#include <gtest/gtest.h>

namespace dense::text::test {
namespace {

TEST(VocabCases, FixtureHasFiftyCases) {
    const auto cases = vocab_cases();
    ASSERT_EQ(cases.size(), 50u);
    EXPECT_EQ(cases[2].text, "");
    EXPECT_TRUE(cases[2].expected.empty());
    EXPECT_EQ(cases[3].text, " ");
}

TEST(VocabCases, AllFiftyMatchLlamaCpp) {
    const Tokenizer& tok = fixture_tokenizer();
    const auto cases = vocab_cases();
    ASSERT_EQ(cases.size(), 50u);
    for (size_t i = 0; i < cases.size(); ++i) {
        EXPECT_EQ(tok.encode(cases[i].text, /*parse_special=*/false), cases[i].expected)
            << "case " << i << ": '" << cases[i].text << "'";
    }
}

TEST(VocabCases, DecodeRoundTripsEveryCase) {
    const Tokenizer& tok = fixture_tokenizer();
    for (const auto& c : vocab_cases()) {
        EXPECT_EQ(tok.decode(c.expected, /*render_special=*/false), c.text);
    }
}

}  // namespace
}  // namespace dense::text::test
