// Run configs: the shipped ones parse; unknown keys and wrong types are errors naming the key and
// line; relative paths resolve against the config file.
#include "common/test_paths.hpp"
#include "core/error.hpp"
#include "model/run_config.hpp"

#include <gtest/gtest.h>

namespace dense::model {
namespace {

std::string config_error(const std::string& text) {
    try {
        RunConfig::parse(text, "/tmp/cfg/run.yaml");
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Config) << e.what();
        return e.what();
    }
    return "";
}

TEST(RunConfig, ShippedConfigsParse) {
    const RunConfig tiny = RunConfig::load(test::source_dir() / "configs" / "tiny.yaml");
    EXPECT_EQ(tiny.model.filename(), "tiny-qwen35-f32.gguf");
    EXPECT_TRUE(std::filesystem::exists(tiny.model)) << tiny.model;
    EXPECT_EQ(tiny.context, 256);
    EXPECT_EQ(tiny.sampling.temperature, 0.0);

    const RunConfig big = RunConfig::load(test::source_dir() / "configs" / "qwen38-27b.yaml");
    EXPECT_EQ(big.context, 8192);
    EXPECT_FALSE(big.vram_budget.has_value());
    EXPECT_EQ(big.placement, Placement::Auto);
    EXPECT_EQ(big.sampling.top_k, 20);
}

TEST(RunConfig, RelativeModelPathIsRelativeToTheConfig) {
    const RunConfig c = RunConfig::parse("model: ../m/x.gguf\n", "/tmp/cfg/run.yaml");
    EXPECT_EQ(c.model, std::filesystem::path("/tmp/m/x.gguf"));
    const RunConfig abs = RunConfig::parse("model: /data/x.gguf\n", "/tmp/cfg/run.yaml");
    EXPECT_EQ(abs.model, std::filesystem::path("/data/x.gguf"));
}

TEST(RunConfig, AllKeysAreRead) {
    const RunConfig c = RunConfig::parse(R"(model: m.gguf
context: 32768
vram_budget: 8GiB
kv_type: f32
placement: gpu-only
threads: 6
packs: {paths: [p1, /abs/p2], prefer: [cuda-sm120], deny: [cpu-fast], force: cuda-sm90}
sampling: {temperature: 0.5, top_k: 10, top_p: 0.9, min_p: 0.1, repeat_penalty: 1.1, repeat_last_n: 32,
           presence_penalty: 0.2, seed: 42, max_tokens: 99, stop: ["</s>", "\n\n"]}
chat: {system_prompt: "be brief", thinking: true}
)",
                                         "/tmp/cfg/run.yaml");
    EXPECT_EQ(c.context, 32768);
    EXPECT_EQ(c.vram_budget, 8ull << 30);
    EXPECT_EQ(c.kv_type, "f32");
    EXPECT_EQ(c.placement, Placement::GpuOnly);
    EXPECT_EQ(c.threads, 6);
    ASSERT_EQ(c.packs.paths.size(), 2u);
    EXPECT_EQ(c.packs.paths[0], std::filesystem::path("/tmp/cfg/p1"));
    EXPECT_EQ(c.packs.paths[1], std::filesystem::path("/abs/p2"));
    EXPECT_EQ(c.packs.force, "cuda-sm90");
    EXPECT_EQ(c.sampling.seed, 42u);
    EXPECT_EQ(c.sampling.stop.size(), 2u);
    EXPECT_EQ(c.sampling.repeat_last_n, 32);
    EXPECT_TRUE(c.chat.thinking);
    EXPECT_EQ(c.chat.system_prompt, "be brief");
}

TEST(RunConfig, UnknownKeysAreNamedWithTheirPath) {
    std::string msg = config_error("model: m.gguf\ncontxt: 10\n");
    EXPECT_NE(msg.find("unknown key 'contxt'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("run.yaml:2:"), std::string::npos) << msg;
    msg = config_error("model: m.gguf\nsampling:\n  temprature: 0.1\n");
    EXPECT_NE(msg.find("unknown key 'sampling.temprature'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("run.yaml:3:"), std::string::npos) << msg;
}

TEST(RunConfig, WrongTypesAndValuesAreNamed) {
    EXPECT_NE(config_error("model: m.gguf\ncontext: lots\n").find("'context' must be an integer, got 'lots'"),
              std::string::npos);
    EXPECT_NE(config_error("model: m.gguf\ncontext: 0\n").find("'context' must be >= 1"), std::string::npos);
    EXPECT_NE(config_error("model: m.gguf\nvram_budget: 8 gigs\n").find("'vram_budget' must be 'auto' or a size"),
              std::string::npos);
    EXPECT_NE(config_error("model: m.gguf\nplacement: gpu\n").find("'placement' must be auto, gpu-only or cpu"),
              std::string::npos);
    EXPECT_NE(config_error("model: m.gguf\nsampling: {top_p: 1.5}\n").find("'sampling.top_p' must be in (0, 1]"),
              std::string::npos);
    EXPECT_NE(config_error("model: m.gguf\nsampling: {top_k: [1]}\n").find("'sampling.top_k' must be an integer"),
              std::string::npos);
    EXPECT_NE(config_error("model: m.gguf\nchat: {thinking: maybe}\n").find("'chat.thinking' must be true or false"),
              std::string::npos);
    EXPECT_NE(config_error("model: m.gguf\nsampling: 3\n").find("'sampling' must be a mapping"), std::string::npos);
    EXPECT_NE(config_error("context: 5\n").find("missing required key 'model'"), std::string::npos);
    EXPECT_NE(config_error("model: [a, b]\n").find("'model' must be a string"), std::string::npos);
}

TEST(RunConfig, DefaultsForABareModel) {
    const RunConfig c = RunConfig::defaults_for("x.gguf");
    EXPECT_EQ(c.model, std::filesystem::path("x.gguf"));
    EXPECT_EQ(c.context, 4096);
    EXPECT_EQ(c.kv_type, "f16");
    EXPECT_TRUE(c.source.empty());
}

}  // namespace
}  // namespace dense::model
