// Teacher-forced conformance: for each case (model, token ids, KV type) llama-logits (llama.cpp, CPU,
// pinned haswell variant, no repacking, one thread) and dense-rt (--all-logits) produce the logits of
// every position, and the policy of logit_compare.hpp judges them. README.md explains the cases and
// the bounds.
//
// Skips, with the reason: the oracle is not fetched; dense-rt has no --all-logits yet; for the
// synthetic cases, `dense-rt synth` does not exist yet.
//
// DENSE_CONFORMANCE_REPORT=<file> (opt-in): every case that ran appends one line of measures to <file>
// (README.md, "Error report"), pass or fail, so the closeness of passing cases can be tabulated.
#include "conformance_support.hpp"
#include "logit_compare.hpp"
#include "logits_io.hpp"

#include "gguf/gguf_file.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <ostream>
#include <random>
#include <system_error>

namespace dense::conformance::test {
namespace {

using dense::test::CommandResult;
using dense::test::run_dense_rt;
using dense::test::scratch_dir;
using dense::test::shell_quote;

// ---- bounds (README.md, "Tolerances", has the measurements behind them) ---------------------------
// F32 weights, F32 KV: float32 vs float32 in another summation order. llama.cpp's own CPU variants
// differ by <= 6.1e-5 (KL <= 2.2e-10) on the golden model; a double-precision reference by <= 2.4e-5.
constexpr Bounds kF32Bounds{1e-4, 1e-7, 1e-3};
// F32 weights, F16 KV on both sides: llama.cpp's variants differ by <= 5.5e-4 (KL <= 1.5e-8) there.
constexpr Bounds kF16KvBounds{2e-3, 1e-6, 1e-2};
// Quantized weights, both sides quantizing activations to Q8_K / Q8_0. Often equal to ~1e-6, but a
// last-bit difference sometimes flips one int8 rounding and the random synthetic models amplify it
// (they are chaotic). Worst cases measured between llama.cpp's own CPU variants (x64, zen4 vs haswell)
// and batch splits on the synth shapes (seed-iq4, vocab 4096, ~12 prompts each): 1 token 0.24 /
// KL 1.2e-3 (deep); 7 tokens 0.80 / KL 1.8e-2 (tiny) with top-1 flips at margins <= 0.13; 300 tokens
// on tiny 0.75 / KL 1.8e-2, means over positions <= 0.15 / 7.4e-4, flips at margins <= 0.24.
// The bounds keep ~2x headroom: these cases catch gross mistakes (a structural error moves logits by
// 2-4), not last-bit ones.
constexpr Bounds kQuantOneTokenBounds{0.5, 3e-3, 0.5};
constexpr Bounds kQuantPromptBounds{1.5, 4e-2, 0.5};
constexpr Bounds kQuantLongBounds{1.5, 4e-2, 0.5, 0.35, 2e-3};  // 300 tokens: the means are stable there

const Bounds& quant_bounds(std::size_t n_tokens) {
    return n_tokens <= 1 ? kQuantOneTokenBounds : n_tokens <= 7 ? kQuantPromptBounds : kQuantLongBounds;
}

// ---- the cases -------------------------------------------------------------------------------------
struct Case {
    std::string name;
    std::string shape;  // empty: the golden tiny F32 model of tests/data/golden-tiny
    std::string mix;
    uint64_t seed = 0;
    std::size_t n_tokens = 0;  // 0: the 80 golden tokens
    std::string kv = "f32";
    Bounds bounds{};
    uint32_t vocab_size = 0;  // synth --vocab-size (0: synth's default, the real 151,936-token vocab)
};

void PrintTo(const Case& c, std::ostream* os) {
    *os << c.name;
}

// `dense-rt synth --shape` names: tiny (8 layers, 256 wide), small (12, 512), wide (8, 1024, MQA,
// head dim 128), deep (24, 256, head dim 256). The first also runs the 300-token prompts.
const std::vector<std::string> kShapes = {"tiny", "small", "wide", "deep"};
// The 12 weight formats of spec/quant-formats.md (each also a `dense-rt synth --mix` of its own).
const std::vector<std::string> kFormats = {"q8_0", "iq4_nl", "q2_k",  "q3_k",    "q4_k",  "q5_k",
                                           "q6_k", "iq2_xs", "iq2_s", "iq3_xxs", "iq3_s", "iq4_xs"};
// A small vocabulary keeps files and the LM head cheap (300 x 151,936 logits are 182 MB per side);
// one case keeps the real vocabulary for the full-size LM head.
constexpr uint32_t kSmallVocab = 4096;

std::vector<Case> all_cases() {
    std::vector<Case> cases;
    cases.push_back({"golden_f32kv", "", "", 0, 0, "f32", kF32Bounds, 0});
    cases.push_back({"golden_f16kv", "", "", 0, 0, "f16", kF16KvBounds, 0});
    // The seed-iq4 mix (all 12 formats in one model, placed as in the real Qwen3.5 IQ4 GGUFs) on every
    // shape; the 300-token prompt only on the tiny shape (CI has 2 cores).
    for (const std::string& shape : kShapes)
        for (std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{300}}) {
            if (n == 300 && shape != kShapes.front()) continue;
            cases.push_back({"seed_iq4_" + shape + "_p" + std::to_string(n), shape, "seed-iq4", 101, n, "f32",
                             quant_bounds(n), kSmallVocab});
        }
    cases.push_back({"seed_iq4_tiny_realvocab_p7", kShapes.front(), "seed-iq4", 101, 7, "f32", quant_bounds(7), 0});
    // One format per model: a failure names the format.
    for (const std::string& type : kFormats)
        for (std::size_t n : {std::size_t{7}, std::size_t{300}})
            cases.push_back({type + "_" + kShapes.front() + "_p" + std::to_string(n), kShapes.front(), type, 202, n,
                             "f32", quant_bounds(n), kSmallVocab});
    for (const std::string& type : kFormats)
        cases.push_back(
            {type + "_" + kShapes[1] + "_p7", kShapes[1], type, 303, 7, "f32", quant_bounds(7), kSmallVocab});
    return cases;
}

// ---- what dense-rt can do yet ------------------------------------------------------------------------
// `dense-rt <args>` output (stdout + stderr), run once per process.
const CommandResult& dense_rt_output(const std::string& args) {
    static std::map<std::string, CommandResult> cache;
    auto it = cache.find(args);
    if (it == cache.end()) it = cache.emplace(args, run_dense_rt(args)).first;
    return it->second;
}

std::string dense_rt_problem() {
    if (!std::filesystem::exists(dense::test::cli_path()))
        return "dense-rt is not built (" + dense::test::cli_path().string() + ")";
    const CommandResult& help = dense_rt_output("--help");
    if ((help.out + help.err).find("--all-logits") == std::string::npos)
        return "dense-rt --help does not list --all-logits yet (needs --prompt-ids, --all-logits, --logits-out, -n, "
               "--temp, --kv-type)";
    return {};
}

std::string synth_problem() {
    const CommandResult& help = dense_rt_output("synth --help");
    if (help.exit_code != 0 || (help.out + help.err).find("--mix") == std::string::npos)
        return "`dense-rt synth --help` does not work yet (needs synth --arch qwen35 --shape S --mix M --seed N --out "
               "F)";
    return {};
}

// ---- models and prompts ------------------------------------------------------------------------------
// The case's model file: the golden one, or `dense-rt synth` output written into `dir` (synth takes
// under a second for these shapes, so nothing is cached between test processes).
std::filesystem::path case_model(const Case& c, const std::filesystem::path& dir, std::string& error) {
    if (c.shape.empty()) return golden_dir() / "tiny-qwen35-f32.gguf";
    const std::string vocab = c.vocab_size != 0 ? " --vocab-size " + std::to_string(c.vocab_size) : "";
    const auto path = dir / ("qwen35-" + c.shape + "-" + c.mix + ".gguf");
    const CommandResult r = run_dense_rt("synth --arch qwen35 --shape " + c.shape + " --mix " + c.mix + " --seed " +
                                         std::to_string(c.seed) + vocab + " --out " + shell_quote(path.string()));
    if (r.exit_code != 0 || !std::filesystem::exists(path))
        error = "dense-rt synth --shape " + c.shape + " --mix " + c.mix + vocab + " failed (exit " +
                std::to_string(r.exit_code) + "): " + r.err;
    return path;
}

std::vector<int32_t> case_ids(const Case& c, const std::filesystem::path& model) {
    if (c.n_tokens == 0) return golden_tokens();
    const auto gguf = dense::gguf::GgufFile::open(model);
    const auto vocab = static_cast<uint64_t>(gguf.get_string_array("tokenizer.ggml.tokens").size());
    std::mt19937_64 rng(c.seed * 1000003u + c.n_tokens);
    std::vector<int32_t> ids;
    for (std::size_t i = 0; i < c.n_tokens; ++i) ids.push_back(static_cast<int32_t>(rng() % vocab));
    return ids;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// ---- the opt-in error report ------------------------------------------------------------------------
// Mean over every logit of |ours - oracle| (the Comparison only keeps per-position maxima).
double mean_abs_diff(const LogitMatrix& oracle, const LogitMatrix& ours) {
    double sum = 0.0;
    for (std::size_t i = 0; i < oracle.values.size(); ++i)
        sum += std::fabs(static_cast<double>(ours.values[i]) - static_cast<double>(oracle.values[i]));
    return oracle.values.empty() ? 0.0 : sum / static_cast<double>(oracle.values.size());
}

// One line of `key=value` fields: self-describing, so lines from cases run in parallel (ctest -j) need
// no shared header. Written with a single fwrite in append mode: O_APPEND keeps whole lines apart.
void append_report(const Case& c, const Comparison& cmp, double mean_abs, bool pass, double oracle_s,
                   double ours_s) {
    const char* path = std::getenv("DENSE_CONFORMANCE_REPORT");
    if (path == nullptr || *path == '\0') return;
    char line[1024];
    const int n = std::snprintf(
        line, sizeof line,
        "case=%s shape=%s mix=%s tokens=%zu kv=%s vocab=%zu max_abs=%.3e p99_abs=%.3e "
        "mean_pos_max_abs=%.3e mean_abs=%.3e kl_max=%.3e kl_p99=%.3e kl_mean=%.3e top1=%zu/%zu verdict=%s "
        "llama_s=%.2f dense_s=%.2f\n",
        c.name.c_str(), c.shape.empty() ? "golden" : c.shape.c_str(), c.mix.empty() ? "f32" : c.mix.c_str(),
        cmp.positions.size(), c.kv.c_str(), cmp.vocab, cmp.max_abs.max, cmp.max_abs.p99,
        cmp.max_abs.mean, mean_abs, cmp.kl.max, cmp.kl.p99, cmp.kl.mean, cmp.top1_agree, cmp.positions.size(),
        pass ? "PASS" : "FAIL", oracle_s, ours_s);
    std::FILE* f = std::fopen(path, "a");
    ASSERT_NE(f, nullptr) << "DENSE_CONFORMANCE_REPORT=" << path << " cannot be opened for appending";
    const auto len = static_cast<std::size_t>(std::min(n, static_cast<int>(sizeof line) - 1));
    const std::size_t written = std::fwrite(line, 1, len, f);
    const int closed = std::fclose(f);
    EXPECT_TRUE(written == len && closed == 0) << "DENSE_CONFORMANCE_REPORT=" << path << ": write failed";
}

// ---- the test ------------------------------------------------------------------------------------------
class Conformance : public ::testing::TestWithParam<Case> {};

TEST_P(Conformance, DenseRtMatchesLlamaCpp) {
    const Case& c = GetParam();
    if (const std::string why = oracle_problem(); !why.empty()) GTEST_SKIP() << why;
    if (const std::string why = dense_rt_problem(); !why.empty()) GTEST_SKIP() << why;
    if (!c.shape.empty())
        if (const std::string why = synth_problem(); !why.empty()) GTEST_SKIP() << why;

    // Everything the case writes (model, both logit files) goes here; removed when the case passes,
    // kept for a look when it fails.
    const auto dir = scratch_dir("conformance-" + c.name);
    struct RemoveOnPass {
        std::filesystem::path dir;
        ~RemoveOnPass() {
            std::error_code ec;
            if (!::testing::Test::HasFailure()) std::filesystem::remove_all(dir, ec);
        }
    } cleanup{dir};
    std::string synth_error;
    const auto model = case_model(c, dir, synth_error);
    ASSERT_TRUE(synth_error.empty()) << synth_error;
    const std::vector<int32_t> ids = case_ids(c, model);
    const auto oracle_out = dir / "llama.f32";
    const auto ours_out = dir / "dense.f32";

    auto t0 = std::chrono::steady_clock::now();
    const CommandResult oracle_run =
        run_llama_logits_tool(model, ids, oracle_out, "--kv " + c.kv + " --flash-attn off");
    if (oracle_run.exit_code == 3) GTEST_SKIP() << oracle_run.err;
    ASSERT_EQ(oracle_run.exit_code, 0) << oracle_run.err;
    const double oracle_s = seconds_since(t0);

    t0 = std::chrono::steady_clock::now();
    const CommandResult ours_run = run_dense_rt("--model " + shell_quote(model.string()) + " --prompt-ids " +
                                                join_ids(ids) + " --all-logits --logits-out " +
                                                shell_quote(ours_out.string()) + " -n 0 --temp 0 --kv-type " + c.kv);
    ASSERT_EQ(ours_run.exit_code, 0) << "dense-rt failed on " << model << ":\n" << ours_run.err;
    const double ours_s = seconds_since(t0);

    const LogitMatrix oracle = read_logits(oracle_out);
    const LogitMatrix ours = read_logits(ours_out);
    const Comparison cmp = compare_logits(oracle, ours);
    const Verdict verdict = judge(cmp, c.bounds);
    std::printf(
        "[conformance %s] %zu positions, vocab %zu, kv %s: max|diff| %.3e (p99 %.3e), KL max %.3e "
        "(p99 %.3e), top-1 %zu/%zu; llama.cpp %.1fs, dense-rt %.1fs; %s\n",
        c.name.c_str(), cmp.positions.size(), cmp.vocab, c.kv.c_str(), cmp.max_abs.max, cmp.max_abs.p99, cmp.kl.max,
        cmp.kl.p99, cmp.top1_agree, cmp.positions.size(), oracle_s, ours_s, verdict.pass ? "PASS" : "FAIL");
    append_report(c, cmp, mean_abs_diff(oracle, ours), verdict.pass, oracle_s, ours_s);
    std::string violations;
    for (std::size_t i = 0; i < verdict.violations.size() && i < 10; ++i) violations += verdict.violations[i] + "\n";
    EXPECT_TRUE(verdict.pass) << format_table(cmp, &c.bounds, 10) << violations << "files kept in " << dir
                              << " (compare-logits " << oracle_out.filename() << " " << ours_out.filename() << ")";
}

INSTANTIATE_TEST_SUITE_P(Cases, Conformance, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<Case>& param) { return param.param.name; });

TEST(ConformanceCases, CoverEveryFormatShapeAndPromptLength) {
    std::map<std::string, int> mixes;
    std::map<std::string, int> shapes;
    std::map<std::size_t, int> lengths;
    for (const Case& c : all_cases()) {
        ++mixes[c.mix];
        ++shapes[c.shape];
        ++lengths[c.n_tokens];
        if (c.n_tokens == 300) {
            EXPECT_EQ(c.shape, kShapes.front()) << c.name << ": 300 tokens only on the tiny shape";
        }
    }
    for (const std::string& f : kFormats) EXPECT_GE(mixes[f], 1) << f;
    EXPECT_GE(mixes["seed-iq4"], 3);
    EXPECT_GE(shapes.size(), 4u);  // at least three synthetic shapes and the golden file
    EXPECT_GE(lengths[1], 1);
    EXPECT_GE(lengths[7], 1);
    EXPECT_GE(lengths[300], 1);
}

}  // namespace
}  // namespace dense::conformance::test
