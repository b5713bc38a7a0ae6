// `dense-rt info` end to end: the embedded default, -m alone, and clear non-zero exits for a
// corrupt GGUF, a config with a typo, and a missing model.
#include "common/run_command.hpp"
#include "gguf/gguf_writer.hpp"

#include <gtest/gtest.h>

#include <fstream>

namespace {

using dense::test::run_dense_rt;
using dense::test::shell_quote;

TEST(CliInfo, EmbeddedDefaultConfig) {
    const auto r = run_dense_rt("--config configs/tiny.yaml info");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("arch      qwen35"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("tensors   109"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("6 recurrent 2 full_attention"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("n_embd = 256"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("n_vocab = 151936"), std::string::npos) << r.out;
    // The seed-iq4 mix: every one of the 12 quant formats has a line in the bytes-per-type table.
    for (const char* t : {"q8_0 ", "q2_k ", "q3_k ", "q4_k ", "q5_k ", "q6_k ", "iq2_xs ", "iq2_s ", "iq3_xxs ", "iq3_s ",
                          "iq4_nl ", "iq4_xs "})
        EXPECT_NE(r.out.find(std::string("\n  ") + t), std::string::npos) << t << "\n" << r.out;
    EXPECT_NE(r.out.find("status    OK"), std::string::npos) << r.out;
}

TEST(CliInfo, ModelFlagAloneUsesArchitectureDefaults) {
    const auto r = run_dense_rt("info -m tests/data/golden-tiny/tiny-qwen35-f32.gguf");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("status    OK"), std::string::npos);
    EXPECT_EQ(r.out.find("config "), std::string::npos) << "no config was given";
}

TEST(CliInfo, CorruptGgufGivesTheValidationErrorAndExit1) {
    const auto dir = dense::test::scratch_dir("cli-info");
    // A valid file cut inside its only tensor: the reader must refuse it, naming the byte offset.
    dense::gguf::GgufWriter w;
    w.add_string("general.architecture", "qwen35");
    std::vector<std::byte> four(16, std::byte{1});
    w.add_tensor("a", DENSE_TYPE_F32, {4}, four);
    auto bytes = w.write_to_bytes();
    const auto path = dir / "truncated.gguf";
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size() - 24));
    const auto r = run_dense_rt("info -m " + shell_quote(path.string()));
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    EXPECT_NE(r.err.find("truncated.gguf"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("byte"), std::string::npos) << r.err;
}

TEST(CliInfo, ConfigTypoIsNamedAndExit1) {
    const auto dir = dense::test::scratch_dir("cli-info");
    const auto cfg = dir / "typo.yaml";
    std::ofstream(cfg) << "model: x.gguf\ncontex: 128\n";
    const auto r = run_dense_rt("--config " + shell_quote(cfg.string()) + " info");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("unknown key 'contex'"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("typo.yaml:2:"), std::string::npos) << r.err;
}

TEST(CliInfo, MissingModelFileAndMissingFlags) {
    auto r = run_dense_rt("info -m /nonexistent/model.gguf");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("/nonexistent/model.gguf"), std::string::npos) << r.err;
    r = run_dense_rt("info");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("give --config FILE.yaml or -m FILE.gguf"), std::string::npos) << r.err;
}

TEST(CliInfo, VocabOnlyFileOfAnotherArchitecture) {
    const auto r = run_dense_rt("info -m tests/data/vocab/ggml-vocab-qwen35.gguf");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("arch      qwen2"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("no models/qwen2.yaml"), std::string::npos) << r.out;
}

}  // namespace
