// Unit tests of the logit-file reader/writer and the comparison/policy library, on crafted inputs with
// known answers.
#include "conformance_support.hpp"
#include "logit_compare.hpp"
#include "logits_io.hpp"

#include "core/error.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <random>

namespace dense::conformance::test {
namespace {

using dense::test::scratch_dir;

LogitMatrix random_matrix(std::size_t rows, std::size_t vocab, uint64_t seed, const std::string& name) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> n(0.0f, 2.0f);
    LogitMatrix m;
    m.rows = rows;
    m.vocab = vocab;
    m.source = name;
    for (std::size_t r = 0; r < rows; ++r) m.positions.push_back(static_cast<int64_t>(r));
    for (std::size_t i = 0; i < rows * vocab; ++i) m.values.push_back(n(rng));
    return m;
}

TEST(LogitCompare, KlOfKnownDistributions) {
    // P = (1/2, 1/4, 1/4), Q uniform: KL = 1/2 ln(3/2) + 1/2 ln(3/4).
    const std::vector<float> p = {std::log(0.5f), std::log(0.25f), std::log(0.25f)};
    const std::vector<float> q = {0.7f, 0.7f, 0.7f};
    const double expected = 0.5 * std::log(1.5) + 0.5 * std::log(0.75);
    EXPECT_NEAR(kl_divergence(p, q), expected, 1e-7);
    EXPECT_NEAR(expected, 0.0588915, 1e-7);
    // Logits are defined up to a constant per row.
    const std::vector<float> p_shifted = {std::log(0.5f) + 40.0f, std::log(0.25f) + 40.0f, std::log(0.25f) + 40.0f};
    EXPECT_NEAR(kl_divergence(p_shifted, q), expected, 1e-6);
    EXPECT_DOUBLE_EQ(kl_divergence(p, p), 0.0);
    // Asymmetric: KL(Q || P) = ln(1/3 / 1/2)/3 + 2 ln(1/3 / 1/4)/3.
    EXPECT_NEAR(kl_divergence(q, p), std::log(2.0 / 3.0) / 3.0 + 2.0 * std::log(4.0 / 3.0) / 3.0, 1e-7);
}

TEST(LogitCompare, KlIsStableForLargeLogits) {
    // exp(1000) overflows a double; the log-sum-exp shift keeps it finite.
    const std::vector<float> p = {1000.0f, 999.0f, 990.0f};
    const std::vector<float> q = {1000.0f, 999.5f, 990.0f};
    const double kl = kl_divergence(p, q);
    EXPECT_TRUE(std::isfinite(kl));
    EXPECT_GT(kl, 0.0);
}

TEST(LogitCompare, NonFiniteIsNeverClose) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    EXPECT_EQ(kl_divergence(std::vector<float>{1.0f, nan}, std::vector<float>{1.0f, 2.0f}),
              std::numeric_limits<double>::infinity());
    LogitMatrix a = random_matrix(2, 5, 1, "a"), b = a;
    b.values[7] = nan;
    const Comparison c = compare_logits(a, b);
    EXPECT_EQ(c.positions[0].max_abs_diff, 0.0);
    EXPECT_EQ(c.positions[1].max_abs_diff, std::numeric_limits<double>::infinity());
    const Verdict v = judge(c, Bounds{1.0, 1.0, 1.0});
    EXPECT_FALSE(v.pass);
}

TEST(LogitCompare, TopTwoMargin) {
    const std::vector<float> logits = {0.5f, 3.0f, -1.0f, 2.25f, 2.9f};
    const TopTwo t = top_two(logits);
    EXPECT_EQ(t.top1, 1u);
    EXPECT_NEAR(t.margin, 0.1, 1e-6);
    const TopTwo tie = top_two(std::vector<float>{1.0f, 4.0f, 4.0f});
    EXPECT_EQ(tie.top1, 1u);  // the first of equals
    EXPECT_EQ(tie.margin, 0.0);
}

TEST(LogitCompare, Top1DisagreementOnlyFailsAboveTheMargin) {
    // Position 0: the oracle's top-1 wins by 0.05 and ours swaps the two: a near tie, allowed when M = 0.1.
    // Position 1: the oracle's top-1 wins by 1.0 and ours swaps: never allowed.
    LogitMatrix oracle, ours;
    oracle.rows = ours.rows = 2;
    oracle.vocab = ours.vocab = 3;
    oracle.positions = ours.positions = {0, 1};
    oracle.values = {1.00f, 0.95f, -2.0f, /**/ 2.0f, 1.0f, 0.0f};
    ours.values = {0.96f, 0.99f, -2.0f, /**/ 1.4f, 1.6f, 0.0f};
    const Comparison c = compare_logits(oracle, ours);
    ASSERT_EQ(c.positions.size(), 2u);
    EXPECT_FALSE(c.positions[0].top1_agree());
    EXPECT_NEAR(c.positions[0].oracle_margin, 0.05, 1e-6);
    EXPECT_NEAR(c.positions[1].oracle_margin, 1.0, 1e-6);
    EXPECT_EQ(c.top1_agree, 0u);

    const Bounds loose{1.0, 1.0, 0.1};
    const Verdict v = judge(c, loose);
    EXPECT_FALSE(v.pass);
    ASSERT_EQ(v.violations.size(), 1u);
    EXPECT_NE(v.violations[0].find("pos 1: top-1 1 but the oracle's is 0"), std::string::npos) << v.violations[0];

    ours.values[3] = 1.9f;
    ours.values[4] = 1.1f;  // position 1 agrees again
    EXPECT_TRUE(judge(compare_logits(oracle, ours), loose).pass);
}

TEST(LogitCompare, MaxAbsAndKlBoundsArePerPosition) {
    LogitMatrix oracle = random_matrix(4, 50, 7, "oracle"), ours = oracle;
    ours.values[2 * 50 + 13] += 0.01f;  // one logit of position 2
    const Comparison c = compare_logits(oracle, ours);
    EXPECT_EQ(c.positions[0].max_abs_diff, 0.0);
    EXPECT_NEAR(c.positions[2].max_abs_diff, 0.01, 1e-6);
    EXPECT_GT(c.positions[2].kl, 0.0);
    EXPECT_EQ(c.top1_agree, 4u);
    EXPECT_NEAR(c.max_abs.max, 0.01, 1e-6);
    EXPECT_NEAR(c.max_abs.mean, 0.0025, 1e-6);

    EXPECT_TRUE(judge(c, Bounds{0.02, 1.0, 0.0}).pass);
    const Verdict abs_fail = judge(c, Bounds{0.005, 1.0, 0.0});
    ASSERT_EQ(abs_fail.violations.size(), 1u);
    EXPECT_NE(abs_fail.violations[0].find("pos 2: max abs diff"), std::string::npos);
    const Verdict kl_fail = judge(c, Bounds{1.0, c.positions[2].kl / 2, 0.0});
    ASSERT_EQ(kl_fail.violations.size(), 1u);
    EXPECT_NE(kl_fail.violations[0].find("pos 2: KL"), std::string::npos);
}

TEST(LogitCompare, MeanBoundsCatchSystematicDifferences) {
    // Every position off by a little (a systematic difference) vs one position off by a lot (a rare
    // amplified rounding flip): the same worst case, different means.
    LogitMatrix oracle = random_matrix(10, 40, 21, "oracle"), systematic = oracle, rare = oracle;
    for (std::size_t r = 0; r < 10; ++r) systematic.values[r * 40 + 3] += 0.05f;
    rare.values[4 * 40 + 3] += 0.05f;
    Bounds b{0.1, 1.0, 10.0};
    b.mean_abs = 0.02;
    const Verdict vs = judge(compare_logits(oracle, systematic), b);
    EXPECT_FALSE(vs.pass);
    ASSERT_EQ(vs.violations.size(), 1u);
    EXPECT_NE(vs.violations[0].find("mean over positions of max abs diff 5.000e-02 > 0.02"), std::string::npos)
        << vs.violations[0];
    EXPECT_TRUE(judge(compare_logits(oracle, rare), b).pass);
    b.mean_abs = std::numeric_limits<double>::infinity();
    b.mean_kl = compare_logits(oracle, rare).kl.mean / 2;
    EXPECT_FALSE(judge(compare_logits(oracle, rare), b).pass);
}

TEST(LogitCompare, SummaryStatistics) {
    std::vector<double> v;
    for (int i = 100; i >= 1; --i) v.push_back(i);
    const Stat s = summarize(v);
    EXPECT_EQ(s.max, 100.0);
    EXPECT_DOUBLE_EQ(s.mean, 50.5);
    EXPECT_EQ(s.p99, 99.0);  // nearest rank: the 99th of 100
    const Stat one = summarize({3.5});
    EXPECT_EQ(one.p99, 3.5);
    EXPECT_EQ(summarize({}).max, 0.0);
}

TEST(LogitCompare, ShapeAndPositionMismatchesAreErrors) {
    const LogitMatrix a = random_matrix(3, 10, 1, "a");
    EXPECT_THROW(compare_logits(a, random_matrix(3, 11, 1, "b")), dense::Error);
    EXPECT_THROW(compare_logits(a, random_matrix(2, 10, 1, "b")), dense::Error);
    LogitMatrix shifted = a;
    shifted.positions = {1, 2, 3};
    try {
        compare_logits(a, shifted);
        FAIL() << "positions differ";
    } catch (const dense::Error& e) {
        EXPECT_EQ(e.kind(), dense::ErrorKind::Format);
        EXPECT_NE(std::string(e.what()).find("row 0 is position 0 vs 1"), std::string::npos) << e.what();
    }
    LogitMatrix other_ids = a, ids = a;
    ids.metadata["ids"] = "[1,2,3]";
    other_ids.metadata["ids"] = "[1,2,4]";
    EXPECT_THROW(compare_logits(ids, other_ids), dense::Error);
    EXPECT_NO_THROW(compare_logits(ids, a));  // only one side records ids
}

TEST(LogitCompare, BoundsParse) {
    const Bounds b = Bounds::parse("max_abs=0.25,kl=1e-3");
    EXPECT_EQ(b.max_abs, 0.25);
    EXPECT_EQ(b.kl, 1e-3);
    EXPECT_EQ(b.margin, Bounds{}.margin);
    EXPECT_EQ(Bounds::parse("margin=2").margin, 2.0);
    EXPECT_TRUE(std::isinf(b.mean_abs));  // the aggregate bounds are off unless asked for
    const Bounds m = Bounds::parse("mean_abs=0.03,mean_kl=1e-4", b);
    EXPECT_EQ(m.max_abs, 0.25);
    EXPECT_EQ(m.mean_abs, 0.03);
    EXPECT_EQ(m.mean_kl, 1e-4);
    EXPECT_NE(m.to_string().find("mean_abs<=0.03"), std::string::npos) << m.to_string();
    EXPECT_THROW(Bounds::parse("max_abs"), dense::Error);
    EXPECT_THROW(Bounds::parse("maxabs=1"), dense::Error);
    EXPECT_THROW(Bounds::parse("kl=-1"), dense::Error);
    EXPECT_THROW(Bounds::parse("kl=1x"), dense::Error);
}

TEST(LogitCompare, TableShowsWorstRowsAndVerdict) {
    LogitMatrix oracle = random_matrix(30, 20, 3, "oracle.f32"), ours = oracle;
    ours.values[17 * 20 + 4] += 0.5f;
    ours.source = "ours.f32";
    const Comparison c = compare_logits(oracle, ours);
    const Bounds b{0.1, 1.0, 10.0};
    const std::string t = format_table(c, &b, 3);
    EXPECT_NE(t.find("oracle: oracle.f32"), std::string::npos);
    EXPECT_NE(t.find("(the 3 positions with the largest max abs diff)"), std::string::npos);
    EXPECT_NE(t.find("    17 "), std::string::npos) << t;
    EXPECT_NE(t.find(" ABS"), std::string::npos) << t;
    EXPECT_NE(t.find("FAIL (1 violations)"), std::string::npos) << t;
    EXPECT_NE(format_table(c, nullptr).find("top-1 agreement: "), std::string::npos);
}

TEST(LogitsIo, Float32RoundTripKeepsMetadata) {
    LogitMatrix m = random_matrix(5, 33, 11, "m");
    m.positions = {10, 11, 12, 13, 14};
    m.metadata["kv"] = "\"f16\"";
    m.metadata["ids"] = "[1,2,3,4,5]";
    const auto path = scratch_dir("conformance-io") / "roundtrip.f32";
    write_logits(path, m);
    EXPECT_EQ(std::filesystem::file_size(path), 5u * 33u * 4u);
    const LogitMatrix back = read_logits(path);
    EXPECT_EQ(back.rows, 5u);
    EXPECT_EQ(back.vocab, 33u);
    EXPECT_EQ(back.positions, m.positions);
    EXPECT_EQ(back.values, m.values);
    EXPECT_EQ(back.metadata.at("kv"), "\"f16\"");
    EXPECT_EQ(back.metadata.at("ids"), "[1,2,3,4,5]");
    std::ifstream side(sidecar_path(path));
    std::string text((std::istreambuf_iterator<char>(side)), std::istreambuf_iterator<char>());
    EXPECT_EQ(text.rfind("{\"rows\":5,\"vocab\":33,\"positions\":[10,11,12,13,14]", 0), 0u) << text;
}

TEST(LogitsIo, BrokenFilesAreFormatErrors) {
    const auto dir = scratch_dir("conformance-io");
    const LogitMatrix m = random_matrix(2, 4, 5, "m");
    const auto path = dir / "short.f32";
    write_logits(path, m);
    std::filesystem::resize_file(path, 2 * 4 * 4 - 4);
    try {
        read_logits(path);
        FAIL() << "a truncated file must not be read";
    } catch (const dense::Error& e) {
        EXPECT_EQ(e.kind(), dense::ErrorKind::Format);
        EXPECT_NE(std::string(e.what()).find("28 bytes, but rows 2 x vocab 4 x 4 = 32"), std::string::npos) << e.what();
    }
    auto write_sidecar = [&](const std::string& json) { std::ofstream(sidecar_path(path)) << json; };
    write_sidecar("{\"rows\": 2, \"vocab\": 4}");
    EXPECT_THROW(read_logits(path), dense::Error);  // no positions
    write_sidecar("{\"rows\": 2, \"vocab\": 4, \"positions\": [0]}");
    EXPECT_THROW(read_logits(path), dense::Error);  // positions/rows mismatch
    write_sidecar("{\"rows\": -2, \"vocab\": 4, \"positions\": []}");
    EXPECT_THROW(read_logits(path), dense::Error);
    write_sidecar("{\"rows\": 2, \"vocab\": 4, \"positions\": [0, 1], \"dtype\": \"float16\"}");
    EXPECT_THROW(read_logits(path), dense::Error);
    write_sidecar("{\"rows\": 2, \"vocab\": 4, \"positions\": [0, 1], \"dtype\": \"float32\"}");
    std::filesystem::resize_file(path, 32);
    EXPECT_NO_THROW(read_logits(path));  // dense-rt's sidecar: rows, vocab, positions, dtype
    write_sidecar("not json");
    EXPECT_THROW(read_logits(path), dense::Error);
    std::filesystem::remove(sidecar_path(path));
    try {
        read_logits(path);
        FAIL() << "no sidecar";
    } catch (const dense::Error& e) {
        EXPECT_EQ(e.kind(), dense::ErrorKind::Io);
        EXPECT_NE(std::string(e.what()).find("short.f32.json"), std::string::npos) << e.what();
    }
}

TEST(LogitsIo, GoldenTextFormat) {
    const LogitMatrix g = read_logits(golden_dir() / "logits.llamacpp.f32kv.batch.txt");
    EXPECT_EQ(g.rows, 80u);
    EXPECT_EQ(g.vocab, 300u);
    EXPECT_EQ(g.positions.front(), 0);
    EXPECT_EQ(g.positions.back(), 79);
    EXPECT_FLOAT_EQ(g.row(0)[0], 0.535192f);  // the first number of the file

    const auto dir = scratch_dir("conformance-io");
    std::ofstream(dir / "ragged.txt") << "pos 0 1.0 2.0\npos 1 1.0\n";
    EXPECT_THROW(read_logits(dir / "ragged.txt"), dense::Error);
    std::ofstream(dir / "junk.txt") << "pos 0 1.0 abc\n";
    EXPECT_THROW(read_logits(dir / "junk.txt"), dense::Error);
    std::ofstream(dir / "empty.txt") << "\n";
    EXPECT_THROW(read_logits(dir / "empty.txt"), dense::Error);
}

// The compare-logits CLI: exit 0 within bounds, 1 outside, 2 unreadable/mismatched.
TEST(CompareLogitsCli, ExitCodesAndTable) {
    using dense::test::shell_quote;
    const auto dir = scratch_dir("conformance-cli");
    LogitMatrix a = random_matrix(3, 16, 9, "a"), b = a;
    b.values[5] += 0.003f;
    write_logits(dir / "a.f32", a);
    write_logits(dir / "b.f32", b);
    const std::string cli = shell_quote(compare_logits_path().string()) + " ";
    const std::string files = shell_quote((dir / "a.f32").string()) + " " + shell_quote((dir / "b.f32").string());
    const auto plain = dense::test::run_command(cli + files);
    EXPECT_EQ(plain.exit_code, 0) << plain.err;
    EXPECT_NE(plain.out.find("top-1 agreement: 3/3"), std::string::npos) << plain.out;
    const auto pass = dense::test::run_command(cli + files + " --bounds max_abs=0.01,kl=1");
    EXPECT_EQ(pass.exit_code, 0) << pass.out;
    EXPECT_NE(pass.out.find("PASS"), std::string::npos) << pass.out;
    const auto fail = dense::test::run_command(cli + files + " --bounds max_abs=0.001");
    EXPECT_EQ(fail.exit_code, 1) << fail.out;
    EXPECT_NE(fail.out.find("pos 0: max abs diff"), std::string::npos) << fail.out;
    const auto missing = dense::test::run_command(cli + files + "x");
    EXPECT_EQ(missing.exit_code, 2);
    EXPECT_NE(missing.err.find("b.f32x"), std::string::npos) << missing.err;
    const auto bad_bounds = dense::test::run_command(cli + files + " --bounds foo=1");
    EXPECT_EQ(bad_bounds.exit_code, 2);
}

}  // namespace
}  // namespace dense::conformance::test
