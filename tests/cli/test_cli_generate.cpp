// The main job end to end on the embedded default model: text streams to stdout with a timing line
// on stderr; greedy generation is deterministic; --chat keeps the conversation in the session so the
// second turn processes only its own tokens; bad input gets a clear error and exit 1.
#include "common/run_command.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>

namespace {

using dense::test::run_dense_rt;
using dense::test::shell_quote;

TEST(CliGenerate, PromptStreamsTextAndTimings) {
    const auto r = run_dense_rt("--config configs/tiny.yaml -p 'The quick brown fox' -n 12 --temp 0");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_FALSE(r.out.empty());
    EXPECT_EQ(r.out.find("info:"), std::string::npos) << "logs must not reach stdout: " << r.out;
    EXPECT_NE(r.err.find("timings: load"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("generated 12 tok"), std::string::npos) << r.err;
    const auto again = run_dense_rt("--config configs/tiny.yaml -p 'The quick brown fox' -n 12 --temp 0");
    EXPECT_EQ(again.out, r.out) << "greedy decoding must be deterministic";
}

TEST(CliGenerate, PrintIdsAndPromptIdsRoundTrip) {
    const auto a = run_dense_rt("--config configs/tiny.yaml --prompt-ids 9707,11,1879 -n 6 --temp 0 --print-ids");
    ASSERT_EQ(a.exit_code, 0) << a.err;
    EXPECT_TRUE(std::regex_search(a.out, std::regex("^[0-9]+(,[0-9]+){5}\\n$"))) << a.out;
    // Feeding prompt + the first generated id must continue with the second generated id.
    const std::string first = a.out.substr(0, a.out.find(','));
    const auto b = run_dense_rt("--config configs/tiny.yaml --prompt-ids 9707,11,1879," + first + " -n 1 --temp 0 --print-ids");
    ASSERT_EQ(b.exit_code, 0) << b.err;
    const std::string second = a.out.substr(a.out.find(',') + 1, a.out.find(',', a.out.find(',') + 1) - a.out.find(',') - 1);
    EXPECT_EQ(b.out, second + "\n");
}

TEST(CliGenerate, ChatKeepsStateAndProcessesOnlyNewTokens) {
    const auto r = run_dense_rt("--config configs/tiny.yaml --chat -n 6 --temp 0", "Hello there\nWhat next?\n");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::smatch m1, m2;
    const std::regex turn1("turn 1: processing ([0-9]+) new tokens \\(kept 0 tokens");
    const std::regex turn2("turn 2: processing ([0-9]+) new tokens \\(kept ([0-9]+) tokens");
    ASSERT_TRUE(std::regex_search(r.err, m1, turn1)) << r.err;
    ASSERT_TRUE(std::regex_search(r.err, m2, turn2)) << r.err;
    const int first = std::stoi(m1[1]), second = std::stoi(m2[1]), kept = std::stoi(m2[2]);
    // Turn 1 fed its prompt and 5 of its 6 generated tokens (the 6th is sampled, not fed).
    EXPECT_EQ(kept, first + 5);
    // Turn 2 feeds the last reply token, "<|im_end|>\n<|im_start|>user\n...<|im_start|>assistant\n" and its
    // text: a handful of tokens, never the earlier conversation again.
    EXPECT_LT(second, first + 6) << r.err;
    EXPECT_GT(second, 5);
}

// `dense-rt --config C` with no prompt and no subcommand runs the chat (what --chat does), not the help
// text: the same piped conversation gives the same replies either way.
TEST(CliGenerate, AConfigAloneStartsTheChat) {
    const auto alone = run_dense_rt("--config configs/tiny.yaml -n 4 --temp 0", "Hello there\n");
    const auto with_flag = run_dense_rt("--config configs/tiny.yaml -n 4 --temp 0 --chat", "Hello there\n");
    ASSERT_EQ(alone.exit_code, 0) << alone.err;
    ASSERT_EQ(with_flag.exit_code, 0) << with_flag.err;
    EXPECT_NE(alone.err.find("turn 1: processing"), std::string::npos) << alone.err;
    EXPECT_EQ(alone.out, with_flag.out);
    EXPECT_EQ(alone.out.find("Usage:"), std::string::npos) << alone.out;
}

TEST(CliGenerate, BadInputGetsAClearErrorAndExit1) {
    auto r = run_dense_rt("--config configs/tiny.yaml --prompt-ids 1,999999 -n 1");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("prompt token id 999999 is out of range [0, 151936)"), std::string::npos) << r.err;
    r = run_dense_rt("--config configs/tiny.yaml --prompt-ids 1,x,3 -n 1");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("bad token id 'x'"), std::string::npos) << r.err;
    r = run_dense_rt("--config configs/tiny.yaml --prompt-ids 1,2,3,4,5 --ctx 4 -n 1");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("does not fit the context of 4"), std::string::npos) << r.err;
}

// The sampling flags are held to the ranges the run config's keys are (model/run_config.hpp), NaN
// included, and named in the error; an empty prompt is an error, not a request for the help text.
TEST(CliGenerate, OutOfRangeSamplingFlagsAndEmptyPromptsAreRefused) {
    const struct {
        const char* flags;
        const char* message;
    } cases[] = {
        {"--top-p 7", "--top-p must be in (0, 1]"},
        {"--top-p 0", "--top-p must be in (0, 1]"},
        {"--temp -1", "--temp must be >= 0"},
        {"--temp nan", "--temp must be >= 0"},
        {"--min-p 1", "--min-p must be in [0, 1)"},
        {"--repeat-penalty 0", "--repeat-penalty must be > 0"},
        {"--presence-penalty inf", "--presence-penalty must be a finite number"},
        {"--top-k -2", "--top-k must be >= 0"},
        {"--stop ''", "--stop must not be an empty string"},
    };
    for (const auto& c : cases) {
        const auto r = run_dense_rt(std::string("--config configs/tiny.yaml -p 'The quick' -n 2 ") + c.flags);
        EXPECT_EQ(r.exit_code, 1) << c.flags;
        EXPECT_NE(r.err.find(c.message), std::string::npos) << c.flags << ": " << r.err;
        EXPECT_TRUE(r.out.empty()) << c.flags << ": nothing may be generated: " << r.out;
    }
    auto r = run_dense_rt("--config configs/tiny.yaml -p 'The quick' -n -1");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("-n must be >= 0"), std::string::npos) << r.err;
    r = run_dense_rt("--config configs/tiny.yaml -p '' -n 2");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("--prompt is empty"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << "not the help text: " << r.out;
    r = run_dense_rt("--config configs/tiny.yaml --prompt-ids '' -n 2");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("--prompt-ids is empty"), std::string::npos) << r.err;
    // In range they run.
    r = run_dense_rt("--config configs/tiny.yaml -p 'The quick' -n 2 --top-p 1 --min-p 0 --temp 0");
    EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(CliGenerate, TokenizeAndDetokenize) {
    auto r = run_dense_rt("tokenize -m tests/data/vocab/ggml-vocab-qwen35.gguf 'Hello world'");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "9707,1879\n");
    r = run_dense_rt("detokenize -m tests/data/vocab/ggml-vocab-qwen35.gguf 9707,1879");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "Hello world\n");
    r = run_dense_rt("tokenize -m tests/data/vocab/ggml-vocab-qwen35.gguf '<|im_start|>'");
    EXPECT_EQ(r.out, "151644\n");
    r = run_dense_rt("tokenize --no-special -m tests/data/vocab/ggml-vocab-qwen35.gguf '<|im_start|>'");
    EXPECT_NE(r.out, "151644\n");
}

}  // namespace

namespace {

TEST(CliGenerate, DumpLayersWritesOneRowPerPositionPerLayer) {
    const auto dir = dense::test::scratch_dir("dump-layers") / "layers";
    const auto r = run_dense_rt("--config configs/tiny.yaml --prompt-ids 1,2,3 -n 2 --temp 0 --dump-layers " +
                                shell_quote(dir.string()));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // 3 prompt positions + 1 fed generated token (the 2nd is sampled, not fed): 4 rows of n_embd floats.
    for (int il = 0; il < 8; ++il) {
        const auto f = dir / ("layer0" + std::to_string(il) + ".f32");
        ASSERT_TRUE(std::filesystem::exists(f)) << f;
        EXPECT_EQ(std::filesystem::file_size(f), 4u * 256u * 4u) << f;
    }
    EXPECT_FALSE(std::filesystem::exists(dir / "layer08.f32"));
    std::ifstream side(dir / "layers.json");
    std::string json((std::istreambuf_iterator<char>(side)), std::istreambuf_iterator<char>());
    EXPECT_NE(json.find("\"positions\":[0,1,2,3]"), std::string::npos) << json;
}

}  // namespace
