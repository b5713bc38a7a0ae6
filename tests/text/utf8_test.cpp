#include "text/utf8.hpp"
#include "text/utf8_stream.hpp"

#include <gtest/gtest.h>

#include <random>

namespace dense::text {
namespace {

const std::string kFFFD = "\xEF\xBF\xBD";

TEST(Utf8Lenient, ValidTextDecodesToItsCodePoints) {
    EXPECT_EQ(decode_utf8_lenient("a\xC3\xA9\xE2\x82\xAC\xF0\x9F\xA6\x99"),
              (std::vector<char32_t>{'a', 0xE9, 0x20AC, 0x1F999}));
}

// The llama.cpp rules: structure only (overlongs and surrogates pass), one U+FFFD per failing byte.
TEST(Utf8Lenient, InvalidBytesFollowLlamaCppRules) {
    EXPECT_EQ(decode_utf8_lenient("\x80"), std::vector<char32_t>{0xFFFD});
    EXPECT_EQ(decode_utf8_lenient("\xC3"), std::vector<char32_t>{0xFFFD});                  // truncated
    EXPECT_EQ(decode_utf8_lenient("\xE2\x82"), (std::vector<char32_t>{0xFFFD, 0xFFFD}));    // lead, then stray continuation
    EXPECT_EQ(decode_utf8_lenient("\xC0\x80"), std::vector<char32_t>{0});                  // overlong NUL accepted
    EXPECT_EQ(decode_utf8_lenient("\xED\xA0\x80"), std::vector<char32_t>{0xD800});         // surrogate accepted
    EXPECT_EQ(decode_utf8_lenient("\xF8\x88"), (std::vector<char32_t>{0xFFFD, 0xFFFD}));
    EXPECT_EQ(decode_utf8_lenient("\xF4\x90\x80\x80"), (std::vector<char32_t>{0xFFFD, 0xFFFD, 0xFFFD, 0xFFFD}));
    EXPECT_EQ(sanitize_utf8_lenient("a\xC3z"), "a" + kFFFD + "z");
}

TEST(Utf8Strict, SequenceLengthAndPrefixes) {
    EXPECT_EQ(strict_utf8_sequence_length("\xE2\x82\xAC"), 3u);
    EXPECT_EQ(strict_utf8_sequence_length("\xE0\x80\x80"), 0u);  // overlong
    EXPECT_EQ(strict_utf8_sequence_length("\xED\xA0\x80"), 0u);  // surrogate
    EXPECT_TRUE(is_incomplete_utf8_prefix("\xF0\x9F\xA6"));
    EXPECT_FALSE(is_incomplete_utf8_prefix("\xF0\x8F"));         // can never be completed
    EXPECT_FALSE(is_valid_utf8("abc\xFF"));
    EXPECT_TRUE(is_valid_utf8("abc\xF0\x9F\xA6\x99"));
}

TEST(Utf8StreamDecoder, ReassemblesCharactersSplitAcrossPieces) {
    std::mt19937_64 rng(0x0f8'57ea);
    for (int round = 0; round < 200; ++round) {
        std::string text;
        for (int i = 0; i < 30; ++i) {
            const char32_t cps[] = {'x', 0xE9, 0x4E2D, 0x1F680, 0x10FFFD, 0x7FF, 0x800, 0xFFFF, 0x10000};
            append_utf8(text, cps[rng() % std::size(cps)]);
        }
        Utf8StreamDecoder dec;
        std::string out;
        for (size_t pos = 0; pos < text.size();) {
            const size_t n = std::min<size_t>(1 + rng() % 4, text.size() - pos);
            const std::string chunk = dec.push(text.substr(pos, n));
            EXPECT_TRUE(is_valid_utf8(chunk));
            out += chunk;
            pos += n;
        }
        EXPECT_EQ(dec.pending(), 0u);
        out += dec.flush();
        EXPECT_EQ(out, text);
    }
}

TEST(Utf8StreamDecoder, HoldsIncompleteSequencesAndReplacesInvalidBytes) {
    Utf8StreamDecoder dec;
    EXPECT_EQ(dec.push("a\xF0\x9F"), "a");
    EXPECT_EQ(dec.pending(), 2u);
    EXPECT_EQ(dec.push("\xA6"), "");
    EXPECT_EQ(dec.push("\x99!"), "\xF0\x9F\xA6\x99!");
    EXPECT_EQ(dec.push("\xFF" "b"), kFFFD + "b");
    EXPECT_EQ(dec.push("\xE2\x82" "c"), kFFFD + kFFFD + "c");  // broken by 'c': both bytes fail
    EXPECT_EQ(dec.push("\xE2"), "");
    EXPECT_EQ(dec.flush(), kFFFD);                                // stream ended inside a character
    EXPECT_EQ(dec.pending(), 0u);
}

}  // namespace
}  // namespace dense::text
