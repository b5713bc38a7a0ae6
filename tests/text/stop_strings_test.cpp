#include "text/stop_strings.hpp"
#include "text/utf8.hpp"

#include "text_test_support.hpp"

#include <gtest/gtest.h>

namespace dense::text {
namespace {

TEST(StopStrings, HoldsBackPartialMatchesAndNeverEmitsTheStop) {
    StopStringMatcher m({"<end>"});
    auto r = m.push("Hello <");
    EXPECT_EQ(r.text, "Hello ");
    EXPECT_FALSE(r.stopped);
    r = m.push("en");
    EXPECT_EQ(r.text, "");
    r = m.push("d> more");
    EXPECT_TRUE(r.stopped);
    EXPECT_EQ(r.text, "");
    EXPECT_EQ(r.matched, "<end>");
    EXPECT_TRUE(m.push("anything").stopped);
    EXPECT_EQ(m.flush(), "");
}

TEST(StopStrings, ReleasesAFalseStart) {
    StopStringMatcher m({"STOP"});
    EXPECT_EQ(m.push("ST").text, "");
    EXPECT_EQ(m.push("OP!").text, "");  // completed: stopped
    EXPECT_TRUE(m.stopped());
    StopStringMatcher n({"STOP"});
    EXPECT_EQ(n.push("ST").text, "");
    EXPECT_EQ(n.push("ART").text, "START");
    EXPECT_EQ(n.push("S").text, "");
    EXPECT_EQ(n.flush(), "S");
}

TEST(StopStrings, EarliestOfSeveralStops) {
    StopStringMatcher m({"xyz", "b", "", "abc"});
    const auto r = m.push("12abc");
    EXPECT_TRUE(r.stopped);
    EXPECT_EQ(r.text, "12");
    EXPECT_EQ(r.matched, "abc");  // "abc" starts at byte 2, "b" only at byte 3
    StopStringMatcher same_start({"ab", "abc"});
    EXPECT_EQ(same_start.push("xabc").matched, "abc");  // same start: the longer one
}

// Every split of the text into pieces gives the same visible output, which never contains the stop.
TEST(StopStrings, AnySplitGivesTheSameOutput) {
    const std::string text = "The answer is 42.\n\nUser: more?";
    const std::string stop = "\n\nUser:";
    for (size_t a = 0; a <= text.size(); ++a) {
        for (size_t b = a; b <= text.size(); ++b) {
            StopStringMatcher m({stop});
            std::string out;
            bool stopped = false;
            for (const auto& piece : {text.substr(0, a), text.substr(a, b - a), text.substr(b)}) {
                const auto r = m.push(piece);
                out += r.text;
                stopped = stopped || r.stopped;
            }
            out += m.flush();
            EXPECT_TRUE(stopped);
            EXPECT_EQ(out, "The answer is 42.") << a << "," << b;
        }
    }
}

TEST(TextStream, StopStringSpanningTokensIsCaughtAndNotEmitted) {
    const Tokenizer& tok = test::fixture_tokenizer();
    const std::string stop = "Observation:";
    const auto ids = tok.encode("Thought: done.\nObservation: secret", false);
    // The stop string really spans several tokens.
    ASSERT_GT(tok.encode(stop, false).size(), 1u);
    TextStream stream(tok, {stop});
    std::string out;
    StopReason reason = StopReason::None;
    for (int32_t id : ids) {
        const auto step = stream.push(id);
        out += step.text;
        if (step.stop != StopReason::None) {
            reason = step.stop;
            break;
        }
    }
    EXPECT_EQ(reason, StopReason::StopString);
    EXPECT_EQ(out, "Thought: done.\n");
    EXPECT_EQ(stream.finish(), "");
}

TEST(TextStream, StopsOnImEndAndReleasesHeldText) {
    const Tokenizer& tok = test::fixture_tokenizer();
    auto ids = tok.encode("Hi there <", false);
    ids.push_back(*tok.eot());
    TextStream stream(tok, {"<stop>"});
    std::string out;
    StopReason reason = StopReason::None;
    for (int32_t id : ids) {
        const auto step = stream.push(id);
        out += step.text;
        reason = step.stop;
    }
    EXPECT_EQ(reason, StopReason::EndOfGeneration);
    EXPECT_EQ(out, "Hi there <");  // "<" was held (could start "<stop>") until the end token came
}

TEST(TextStream, EmitsOnlyCompleteUtf8) {
    const Tokenizer& tok = test::fixture_tokenizer();
    const std::string text = "🦙 and 😶‍🌫️ ok";
    TextStream stream(tok, {});
    std::string out;
    for (int32_t id : tok.encode(text, false)) {
        const auto step = stream.push(id);
        EXPECT_TRUE(is_valid_utf8(step.text));
        out += step.text;
    }
    out += stream.finish();
    EXPECT_EQ(out, text);
}

}  // namespace
}  // namespace dense::text
