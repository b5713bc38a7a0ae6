// The weight-upload progress line with a fake clock and a string stream: the terminal bar (redrawn
// with '\r', erased at the end) and the plain lines for logs (every 10 % or 2 s), quiet below the
// threshold, and the rate / time-left arithmetic.
#include "exec/upload_progress.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

namespace dense::exec {
namespace {

constexpr uint64_t kGB = 1000000000ull;

struct FakeClock {
    double now = 100.0;  // any origin: only differences matter
    UploadProgress::Clock fn() {
        return [this] { return now; };
    }
};

UploadProgress::Options opts(bool terminal) {
    UploadProgress::Options o;
    o.terminal = terminal;
    o.bar_width = 20;
    return o;
}

std::vector<std::string> lines_of(const std::string& s) {
    std::vector<std::string> out;
    std::istringstream in(s);
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
}

TEST(UploadProgress, RenderShowsBytesRateAndTimeLeft) {
    FakeClock clock;
    std::ostringstream out;
    UploadProgress plain(10 * kGB, out, opts(false), clock.fn());
    // 4 of 10 GB in 2 s: 2 GB/s, 6 GB left = 3 s.
    EXPECT_EQ(plain.render(4 * kGB, 2.0), "loading weights: 40% (4.00 of 10.00 GB) at 2.00 GB/s, 3 s left");
    UploadProgress bar(10 * kGB, out, opts(true), clock.fn());
    EXPECT_EQ(bar.render(4 * kGB, 2.0),
              "loading weights [########------------]  40%  4.00/10.00 GB  2.00 GB/s  3 s left");
    // Nothing measured yet: no rate, no made-up time.
    EXPECT_NE(plain.render(0, 0.0).find("time left unknown"), std::string::npos);
    // Slow: 1 GB of 15 in 10 s -> 140 s left.
    UploadProgress slow(15 * kGB, out, opts(false), clock.fn());
    EXPECT_NE(slow.render(1 * kGB, 10.0).find("0.10 GB/s, 2 min 20 s left"), std::string::npos)
        << slow.render(1 * kGB, 10.0);
    EXPECT_NE(bar.render(10 * kGB, 4.0).find("100%"), std::string::npos);
    EXPECT_NE(bar.render(10 * kGB, 4.0).find("[####################]"), std::string::npos);
    EXPECT_TRUE(out.str().empty()) << "render() must not write";
}

TEST(UploadProgress, DurationsForPeople) {
    EXPECT_EQ(format_duration(0.4), "0 s");
    EXPECT_EQ(format_duration(59.4), "59 s");
    EXPECT_EQ(format_duration(245), "4 min 05 s");
    EXPECT_EQ(format_duration(3720), "1 h 02 min");
    EXPECT_EQ(format_duration(-3), "0 s");
}

TEST(UploadProgress, PlainLinesEveryTenPercent) {
    FakeClock clock;
    std::ostringstream out;
    const uint64_t total = 20 * kGB;
    UploadProgress p(total, out, opts(false), clock.fn());
    // 5 % every 0.1 s: never 2 s between lines, so only the 10 % marks print (and the first update).
    for (int i = 0; i <= 20; ++i) {
        p.update(total / 20 * static_cast<uint64_t>(i));
        clock.now += 0.1;
    }
    p.finish();
    const auto lines = lines_of(out.str());
    ASSERT_EQ(lines.size(), 10u) << out.str();  // 0 %, 10 %, ..., 90 %; 100 % is left to the caller's summary
    for (size_t i = 0; i < lines.size(); ++i) {
        EXPECT_EQ(lines[i].rfind("loading weights: " + std::to_string(i * 10) + "% (", 0), 0u) << lines[i];
        EXPECT_NE(lines[i].find(" GB/s, "), std::string::npos) << lines[i];
    }
    EXPECT_EQ(out.str().find('\r'), std::string::npos) << "no carriage returns in logs";
}

TEST(UploadProgress, PlainLinesEveryTwoSecondsWhenSlow) {
    FakeClock clock;
    std::ostringstream out;
    const uint64_t total = 100 * kGB;
    UploadProgress p(total, out, opts(false), clock.fn());
    p.update(0);
    // 1 % per 0.5 s: 10 % takes 5 s, so the 2 s rule prints in between.
    for (int i = 1; i <= 10; ++i) {
        clock.now += 0.5;
        p.update(total / 100 * static_cast<uint64_t>(i));
    }
    const auto lines = lines_of(out.str());
    // t=0 (first), t=2.0 (4 %), t=4.0 (8 %), t=5.0 (10 % mark).
    ASSERT_EQ(lines.size(), 4u) << out.str();
    EXPECT_NE(lines[1].find(": 4% "), std::string::npos) << lines[1];
    EXPECT_NE(lines[2].find(": 8% "), std::string::npos) << lines[2];
    EXPECT_NE(lines[3].find(": 10% "), std::string::npos) << lines[3];
}

TEST(UploadProgress, TerminalBarIsRedrawnInPlaceAndErased) {
    FakeClock clock;
    std::ostringstream out;
    const uint64_t total = 4 * kGB;
    UploadProgress p(total, out, opts(true), clock.fn());
    p.update(0);
    p.update(total / 4);  // same instant: rate-limited, not drawn
    clock.now += 0.5;
    p.update(total / 2);
    clock.now += 0.5;
    p.update(total);  // the end always shows
    const std::string drawn = out.str();
    EXPECT_EQ(std::count(drawn.begin(), drawn.end(), '\r'), 3) << drawn;
    EXPECT_EQ(drawn.find('\n'), std::string::npos) << "a bar stays on one line";
    EXPECT_NE(drawn.find(" 50%  2.00/4.00 GB  4.00 GB/s  1 s left"), std::string::npos) << drawn;
    EXPECT_NE(drawn.find("100%  4.00/4.00 GB  4.00 GB/s  0 s left"), std::string::npos) << drawn;
    EXPECT_EQ(drawn.find(" 25%"), std::string::npos) << "the rate-limited update must not draw";

    p.finish();
    const std::string after = out.str().substr(drawn.size());
    // Erased: back to column 0, blanks over the bar, back again; the next log line starts clean.
    ASSERT_GE(after.size(), 2u);
    EXPECT_EQ(after.front(), '\r');
    EXPECT_EQ(after.back(), '\r');
    EXPECT_EQ(after.find_first_not_of(" \r"), std::string::npos);
    p.finish();
    EXPECT_EQ(out.str().size(), drawn.size() + after.size()) << "finish() twice writes nothing more";
}

TEST(UploadProgress, ABarLeftOnScreenGetsItsNewline) {
    FakeClock clock;
    std::ostringstream out;
    {
        UploadProgress p(4 * kGB, out, opts(true), clock.fn());
        p.update(kGB);  // then, say, an exception: no finish()
    }
    EXPECT_EQ(out.str().back(), '\n') << "the error message must not be printed over the bar";
}

TEST(UploadProgress, QuietBelowTheThreshold) {
    FakeClock clock;
    for (bool terminal : {false, true}) {
        std::ostringstream out;
        {
            UploadProgress p(100ull << 20, out, opts(terminal), clock.fn());  // 100 MiB < 256 MiB
            EXPECT_FALSE(p.shown());
            p.update(0);
            clock.now += 5;
            p.update(50ull << 20);
            p.update(100ull << 20);
            p.finish();
        }
        EXPECT_TRUE(out.str().empty()) << "terminal=" << terminal << ": " << out.str();
    }
    std::ostringstream out;
    UploadProgress p(256ull << 20, out, opts(false), clock.fn());
    EXPECT_TRUE(p.shown());
    p.update(0);
    EXPECT_FALSE(out.str().empty());
}

}  // namespace
}  // namespace dense::exec
