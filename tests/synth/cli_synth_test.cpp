// `dense-rt synth` end to end: a small file that `dense-rt info` accepts, and clear exit-1 errors for
// an unknown shape, an unknown mix, dims a format cannot store and a bad vocabulary size.
#include "common/run_command.hpp"
#include "gguf/gguf_file.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace {

using dense::test::run_dense_rt;
using dense::test::shell_quote;

class CliSynth : public ::testing::Test {
protected:
    void SetUp() override {
        if (!std::filesystem::exists(dense::test::cli_path())) GTEST_SKIP() << "dense-rt not built at " << dense::test::cli_path();
        dir_ = dense::test::scratch_dir("cli-synth");
    }
    std::filesystem::path dir_;
};

TEST_F(CliSynth, WritesAFileThatInfoAccepts) {
    const auto out = dir_ / "sub" / "tiny.gguf";
    const auto r = run_dense_rt("synth --shape tiny --mix seed-iq4 --seed 3 --vocab-size 1024 --threads 2 --out " +
                                shell_quote(out.string()));
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("wrote     " + out.string()), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("binding   OK"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("iq2_xs"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("tensors"), std::string::npos) << r.out;
    EXPECT_NE(r.err.find("100%"), std::string::npos) << "progress on stderr: " << r.err;
    ASSERT_TRUE(std::filesystem::exists(out));
    EXPECT_EQ(dense::gguf::GgufFile::open(out).get_u64("dense.synth.seed"), 3u);
    const auto info = run_dense_rt("info -m " + shell_quote(out.string()));
    EXPECT_EQ(info.exit_code, 0) << info.out << info.err;
    EXPECT_NE(info.out.find("status    OK"), std::string::npos) << info.out;
    std::filesystem::remove_all(dir_ / "sub");
}

TEST_F(CliSynth, BadFlagsAreClearErrors) {
    const std::string out = " --out " + shell_quote((dir_ / "bad.gguf").string());
    struct Case {
        std::string args, message;
    };
    const Case cases[] = {
        {"synth --shape huge --mix q8_0" + out, "unknown shape 'huge'"},
        {"synth --shape tiny --mix q9_k" + out, "unknown mix 'q9_k'"},
        {"synth --shape tiny --mix seed-iq4 --n-ff 1000" + out,
         "tensor blk.0.ffn_down.weight: ne[0] = n_ff = 1000 is not a multiple of 256, the block size of q4_k"},
        {"synth --shape tiny --mix iq4_xs --n-embd 320" + out, "ne[0] = n_embd = 320 is not a multiple of 256"},
        {"synth --shape tiny --mix q8_0 --vocab-size 100" + out, "--vocab-size 100 is too small"},
        {"synth --shape tiny --mix q8_0 --n-head 3" + out, "--n-head 3 is not a multiple of --n-head-kv 2"},
        {"synth --shape tiny --mix q8_0 --vocab /nonexistent.gguf" + out, "/nonexistent.gguf"},
    };
    for (const auto& c : cases) {
        const auto r = run_dense_rt(c.args);
        EXPECT_EQ(r.exit_code, 1) << c.args << "\n" << r.err;
        EXPECT_NE(r.err.find(c.message), std::string::npos) << c.args << "\n" << r.err;
        EXPECT_FALSE(std::filesystem::exists(dir_ / "bad.gguf")) << c.args;
    }
    const auto missing = run_dense_rt("synth --shape tiny" + out);
    EXPECT_NE(missing.exit_code, 0);
    EXPECT_NE(missing.err.find("--mix"), std::string::npos) << missing.err;
}

}  // namespace
