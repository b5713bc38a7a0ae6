// The model description parser: the shipped qwen35.yaml is consistent, and mistakes in a
// description (unknown key, bad type, unknown op, recipe using an undeclared weight or an
// activation nobody produced) are errors naming the key and line.
#include "common/test_paths.hpp"
#include "core/error.hpp"
#include "model/model_spec.hpp"
#include "model/yaml_strict.hpp"

#include <gtest/gtest.h>

namespace dense::model {
namespace {

std::string qwen35_text() { return read_text_file(test::source_dir() / "models" / "qwen35.yaml"); }

std::string parse_error(const std::string& text) {
    try {
        ModelSpec::parse(text, "edited.yaml");
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Config) << e.what();
        return e.what();
    }
    return "";
}

std::string replace(std::string s, const std::string& from, const std::string& to) {
    const size_t pos = s.find(from);
    EXPECT_NE(pos, std::string::npos) << "test setup: '" << from << "' not in qwen35.yaml";
    if (pos != std::string::npos) s.replace(pos, from.size(), to);
    return s;
}

TEST(ModelSpec, Qwen35DescriptionParses) {
    const ModelSpec s = ModelSpec::load(test::source_dir() / "models" / "qwen35.yaml");
    EXPECT_EQ(s.arch, "qwen35");
    EXPECT_EQ(s.schedule.kinds, (std::vector<std::string>{"recurrent", "full_attention"}));
    EXPECT_EQ(s.global_tensors.size(), 3u);
    EXPECT_EQ(s.every_layer_tensors.size(), 5u);
    EXPECT_EQ(s.kind_tensors.at("full_attention").size(), 6u);
    EXPECT_EQ(s.kind_tensors.at("recurrent").size(), 9u);
    // 3 global + 64*5 + 16*6 + 48*9 = 851 for the 27B (spec section 3)
    EXPECT_EQ(3 + 64 * s.every_layer_tensors.size() + 16 * s.kind_tensors.at("full_attention").size() +
                  48 * s.kind_tensors.at("recurrent").size(),
              851u);
    EXPECT_TRUE(s.recipes.count("recurrent") && s.recipes.count("full_attention") && s.recipes.count("ffn") &&
                s.recipes.count("head"));
    ASSERT_EQ(s.optional_blocks.size(), 1u);
    EXPECT_EQ(s.optional_blocks[0].name, "mtp");
}

TEST(ModelSpec, UnknownTopLevelKeyIsNamedWithLine) {
    const std::string msg = parse_error(qwen35_text() + "\nrecipies: {}\n");
    EXPECT_NE(msg.find("unknown key 'recipies'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("edited.yaml:"), std::string::npos) << msg;
}

TEST(ModelSpec, UnknownKeyInsideATensorRole) {
    const std::string msg = parse_error(replace(qwen35_text(), "types: vector, optional", "typez: vector, optional"));
    EXPECT_FALSE(msg.empty());
}

TEST(ModelSpec, UnknownHParamTypeIsRefused) {
    const std::string msg =
        parse_error(replace(qwen35_text(), "\"{arch}.context_length\", type: u32", "\"{arch}.context_length\", type: u31"));
    EXPECT_NE(msg.find("unknown hparam type 'u31'"), std::string::npos) << msg;
}

TEST(ModelSpec, RecipeWithUnknownOpIsRefused) {
    const std::string msg = parse_error(replace(qwen35_text(), "{op: swiglu,", "{op: geglu,"));
    EXPECT_NE(msg.find("unknown op 'geglu'"), std::string::npos) << msg;
}

TEST(ModelSpec, RecipeWithUndeclaredWeightIsRefused) {
    const std::string msg = parse_error(replace(qwen35_text(), "weight: ssm_out,", "weight: ssm_outt,"));
    EXPECT_NE(msg.find("weight 'ssm_outt' is not a tensor role of 'recurrent'"), std::string::npos) << msg;
}

TEST(ModelSpec, RecipeUsingAnActivationNobodyProducedIsRefused) {
    const std::string msg = parse_error(replace(qwen35_text(), "{op: swiglu, in: [g, u]", "{op: swiglu, in: [g, w]"));
    EXPECT_NE(msg.find("input 'w' is not produced by an earlier step"), std::string::npos) << msg;
}

TEST(ModelSpec, BadShapeExpressionIsRefusedAtParseTime) {
    const std::string msg = parse_error(replace(qwen35_text(), "shape: [n_embd, n_ff]", "shape: [n_embd, n_ff +]"));
    EXPECT_NE(msg.find("unexpected end"), std::string::npos) << msg;
}

TEST(ModelSpec, ScheduleRuleMustUseAKnownKind) {
    const std::string msg = parse_error(replace(qwen35_text(), "{kind: full_attention, if:", "{kind: attention, if:"));
    EXPECT_NE(msg.find("'attention' is not one of schedule.kinds"), std::string::npos) << msg;
}

TEST(ModelSpec, YamlSyntaxErrorHasAPosition) {
    const std::string msg = parse_error("arch: [qwen35\n");
    EXPECT_NE(msg.find("YAML syntax error"), std::string::npos) << msg;
}

}  // namespace
}  // namespace dense::model
