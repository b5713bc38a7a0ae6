#include "text/pre_tokenizer.hpp"
#include "text/unicode_class.hpp"
#include "text/utf8.hpp"

#include <gtest/gtest.h>

namespace dense::text {
namespace {

std::vector<std::string> words(std::string_view text) {
    const auto cps = decode_utf8_lenient(text);
    std::vector<size_t> lengths;
    split_words_qwen35(cps, lengths);
    std::vector<std::string> out;
    size_t pos = 0;
    for (size_t len : lengths) {
        std::string w;
        for (size_t i = pos; i < pos + len; ++i) append_utf8(w, cps[i]);
        out.push_back(w);
        pos += len;
    }
    EXPECT_EQ(pos, cps.size());
    return out;
}

using W = std::vector<std::string>;

TEST(PreTokenizerQwen35, SpecExamples) {
    EXPECT_EQ(words("Hello world"), (W{"Hello", " world"}));
    EXPECT_EQ(words("   Hello"), (W{"  ", " Hello"}));
    EXPECT_EQ(words("\n\n\n"), (W{"\n\n\n"}));
    EXPECT_EQ(words("333"), (W{"3", "3", "3"}));
    EXPECT_EQ(words(" (normal)"), (W{" (", "normal", ")"}));
}

TEST(PreTokenizerQwen35, ContractionsAreCaseInsensitive) {
    EXPECT_EQ(words("I'M we'Re it'LL"), (W{"I", "'M", " we", "'Re", " it", "'LL"}));
    EXPECT_EQ(words("'x"), (W{"'x"}));  // not a contraction: apostrophe prefixes the letter run
}

TEST(PreTokenizerQwen35, MarksJoinLetterRunsButNotPunctuation) {
    EXPECT_EQ(words("re\xCC\x81sume\xCC\x81"), (W{"re\xCC\x81sume\xCC\x81"}));
    EXPECT_EQ(words("!\xCC\x81"), (W{"!\xCC\x81"}));  // one non-letter prefix + a mark run
}

TEST(PreTokenizerQwen35, WhitespaceRules) {
    EXPECT_EQ(words("a  \n\n b"), (W{"a", "  \n\n", " b"}));   // up to the last line break
    EXPECT_EQ(words("a   "), (W{"a", "   "}));                // trailing run stays whole
    EXPECT_EQ(words("a \t b"), (W{"a", " \t", " b"}));        // last blank prefixes the next word
    EXPECT_EQ(words("x!!\r\n\r\ny"), (W{"x", "!!\r\n\r\n", "y"}));
}

TEST(UnicodeClass, CategoriesAndTheUnicode151Patch) {
    EXPECT_EQ(classify('a'), CharClass::Letter);
    EXPECT_EQ(classify(0x0301), CharClass::Mark);
    EXPECT_EQ(classify(0x00BD), CharClass::Number);     // ½ (No)
    EXPECT_EQ(classify(0x3000), CharClass::Whitespace);
    EXPECT_EQ(classify(0x001C), CharClass::Other);      // not whitespace for this tokenizer
    EXPECT_EQ(classify(0x2EBF0), CharClass::Letter);    // CJK Extension I (Unicode 15.1)
    EXPECT_EQ(classify(0x10D4A), CharClass::Other);     // assigned only in Unicode 16
    EXPECT_EQ(classify(0xFFFD), CharClass::Other);
    EXPECT_EQ(simple_lower('R'), U'r');
}

}  // namespace
}  // namespace dense::text
