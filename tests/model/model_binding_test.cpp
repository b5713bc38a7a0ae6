// Binding GGUFs to models/qwen35.yaml: the golden tiny model binds; each single defect (missing,
// extra, misshapen or wrongly typed tensor; wrong key type; missing key; failed check) is refused
// with a message naming the tensor or key and expected vs actual.
#include "common/test_paths.hpp"
#include "core/error.hpp"
#include "model/gguf_rewrite.hpp"
#include "model/model_binding.hpp"

#include <gtest/gtest.h>

namespace dense::model {
namespace {

class BindingTest : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        spec_ = new ModelSpec(ModelSpec::load(test::source_dir() / "models" / "qwen35.yaml"));
        tiny_ = new gguf::GgufFile(gguf::GgufFile::open(test::data_dir() / "golden-tiny" / "tiny-qwen35-f32.gguf"));
    }
    static void TearDownTestSuite() {
        delete spec_;
        delete tiny_;
    }

    // Binds an edited copy of the tiny model; returns the error message ("" if it bound).
    static std::string bind_error(const test::GgufEdits& edits, BoundModel* out = nullptr) {
        auto file = gguf::GgufFile::parse_owned(test::rewrite(*tiny_, edits), "edited.gguf");
        try {
            BoundModel m = bind_model(file, *spec_);
            if (out) *out = std::move(m);
            return "";
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::Model) << e.what();
            return e.what();
        }
    }

    static ModelSpec* spec_;
    static gguf::GgufFile* tiny_;
};
ModelSpec* BindingTest::spec_ = nullptr;
gguf::GgufFile* BindingTest::tiny_ = nullptr;

TEST_F(BindingTest, GoldenTinyBindsWithTheExpectedSchedule) {
    const BoundModel m = bind_model(*tiny_, *spec_);
    ASSERT_EQ(m.layers.size(), 8u);
    EXPECT_EQ(m.count_layers("recurrent"), 6);
    EXPECT_EQ(m.count_layers("full_attention"), 2);
    EXPECT_EQ(m.layers[3].kind, "full_attention");
    EXPECT_EQ(m.layers[7].kind, "full_attention");
    EXPECT_EQ(m.layers[0].kind, "recurrent");
    EXPECT_EQ(m.layers[0].tensors.size(), 5u + 9u);
    EXPECT_EQ(m.layers[3].tensors.size(), 5u + 6u);
    EXPECT_FALSE(m.tied_output);
    EXPECT_TRUE(m.skipped_blocks.empty());
    EXPECT_EQ(m.hparams.get_int("conv_dim"), 2 * 2 * 16 + 96);
    EXPECT_EQ(m.hparams.get_int("n_vocab"), 300);
    EXPECT_EQ(m.hparams.get_int("n_head_kv"), 2);
    EXPECT_NEAR(m.hparams.get_float("rms_eps"), 1e-6, 1e-12);
    EXPECT_EQ(m.globals.at("token_embd")->name, "token_embd.weight");
}

TEST_F(BindingTest, UnchangedRewriteStillBinds) { EXPECT_EQ(bind_error({}), ""); }

TEST_F(BindingTest, MissingTrunkTensorIsNamedWithExpectedShape) {
    test::GgufEdits e;
    e.drop_tensors = {"blk.3.attn_k.weight"};
    const std::string msg = bind_error(e);
    EXPECT_NE(msg.find("missing tensor 'blk.3.attn_k.weight'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[64, 64]"), std::string::npos) << msg;
}

TEST_F(BindingTest, ExtraTrunkTensorIsRefusedNamingTheLayerKind) {
    test::GgufEdits e;
    e.add_tensors = {{"blk.2.attn_q.weight", {DENSE_TYPE_F32, {64, 384}}}};
    const std::string msg = bind_error(e);
    EXPECT_NE(msg.find("unexpected tensor 'blk.2.attn_q.weight'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("layer 2 (kind recurrent)"), std::string::npos) << msg;
}

TEST_F(BindingTest, WrongShapeGivesExpectedAndActual) {
    test::GgufEdits e;
    e.replace_tensors["blk.0.ffn_up.weight"] = {DENSE_TYPE_F32, {64, 97}};
    const std::string msg = bind_error(e);
    EXPECT_NE(msg.find("tensor 'blk.0.ffn_up.weight' has shape [64, 97], expected [64, 96]"), std::string::npos) << msg;
}

TEST_F(BindingTest, ExtraDimensionIsAShapeMismatch) {
    test::GgufEdits e;
    e.replace_tensors["output_norm.weight"] = {DENSE_TYPE_F32, {64, 2}};
    const std::string msg = bind_error(e);
    EXPECT_NE(msg.find("'output_norm.weight' has shape [64, 2], expected [64]"), std::string::npos) << msg;
}

TEST_F(BindingTest, UnsupportedTypeForARoleIsNamed) {
    test::GgufEdits e;
    e.replace_tensors["blk.0.attn_norm.weight"] = {DENSE_TYPE_F16, {64}};
    const std::string msg = bind_error(e);
    EXPECT_NE(msg.find("tensor 'blk.0.attn_norm.weight' has type f16, expected one of: f32"), std::string::npos) << msg;
}

TEST_F(BindingTest, QuantizedMatrixTypesAreAccepted) {
    test::GgufEdits e;
    // ffn_down {96, 64}: 96 is not a multiple of 256, so use Q8_0 / IQ4_NL (32-element blocks).
    e.replace_tensors["blk.0.ffn_down.weight"] = {DENSE_TYPE_Q8_0, {96, 64}};
    e.replace_tensors["blk.1.ffn_down.weight"] = {DENSE_TYPE_IQ4_NL, {96, 64}};
    e.replace_tensors["blk.2.ffn_gate.weight"] = {DENSE_TYPE_BF16, {64, 96}};
    EXPECT_EQ(bind_error(e), "");
}

TEST_F(BindingTest, KeyWithWrongStoredTypeIsNamed) {
    test::GgufEdits e;
    e.set_kvs["qwen35.block_count"] = [](gguf::GgufWriter& w) { w.add_u64("qwen35.block_count", 8); };
    const std::string msg = bind_error(e);
    EXPECT_NE(msg.find("qwen35.block_count"), std::string::npos) << msg;
    EXPECT_NE(msg.find("UINT32"), std::string::npos) << msg;
    EXPECT_NE(msg.find("UINT64"), std::string::npos) << msg;
}

TEST_F(BindingTest, MissingRequiredKeyIsNamed) {
    test::GgufEdits e;
    e.drop_kvs = {"qwen35.rope.dimension_sections"};
    const std::string msg = bind_error(e);
    EXPECT_NE(msg.find("required key 'qwen35.rope.dimension_sections'"), std::string::npos) << msg;
}

TEST_F(BindingTest, FailedCheckShowsTheValues) {
    test::GgufEdits e;
    e.set_kvs["qwen35.attention.head_count_kv"] = [](gguf::GgufWriter& w) {
        w.add_u32("qwen35.attention.head_count_kv", 4);
    };
    const std::string msg = bind_error(e);
    EXPECT_NE(msg.find("model check failed: 'n_head_kv >= 1 && n_head % n_head_kv == 0'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("n_head_kv=4"), std::string::npos) << msg;
    EXPECT_NE(msg.find("n_head=6"), std::string::npos) << msg;
}

TEST_F(BindingTest, RecurrentLayersArrayOverridesTheInterval) {
    test::GgufEdits e;
    // Layer 3 declared recurrent: its attention tensors become unexpected / its GDN tensors missing.
    std::vector<bool> pattern = {true, true, true, true, true, true, true, false};
    e.set_kvs["qwen35.attention.recurrent_layers"] = [pattern](gguf::GgufWriter& w) {
        w.add_bool_array("qwen35.attention.recurrent_layers", pattern);
    };
    const std::string msg = bind_error(e);
    EXPECT_NE(msg.find("missing tensor 'blk.3.attn_qkv.weight'"), std::string::npos) << msg;

    test::GgufEdits same;
    std::vector<bool> interval = {true, true, true, false, true, true, true, false};
    same.set_kvs["qwen35.attention.recurrent_layers"] = [interval](gguf::GgufWriter& w) {
        w.add_bool_array("qwen35.attention.recurrent_layers", interval);
    };
    EXPECT_EQ(bind_error(same), "");
}

TEST_F(BindingTest, AbsentOutputMeansTiedHead) {
    test::GgufEdits e;
    e.drop_tensors = {"output.weight"};
    BoundModel m;
    ASSERT_EQ(bind_error(e, &m), "");
    EXPECT_TRUE(m.tied_output);
    EXPECT_FALSE(m.globals.count("output"));
}

TEST_F(BindingTest, PerLayerFeedForwardArrayIsAccepted) {
    test::GgufEdits e;
    e.set_kvs["qwen35.feed_forward_length"] = [](gguf::GgufWriter& w) {
        const std::vector<uint32_t> ff(8, 96);
        w.add_array<uint32_t>("qwen35.feed_forward_length", ff);
    };
    BoundModel m;
    ASSERT_EQ(bind_error(e, &m), "");
    EXPECT_EQ(m.hparams.get_int("n_ff", 5), 96);
}

// An MTP block (blk.8 of a 9-block file with nextn_predict_layers = 1) is validated and skipped.
test::GgufEdits with_mtp_block(bool drop_eh_proj) {
    test::GgufEdits e;
    e.set_kvs["qwen35.block_count"] = [](gguf::GgufWriter& w) { w.add_u32("qwen35.block_count", 9); };
    e.set_kvs["qwen35.nextn_predict_layers"] = [](gguf::GgufWriter& w) { w.add_u32("qwen35.nextn_predict_layers", 1); };
    const std::vector<std::pair<std::string, std::vector<int64_t>>> t = {
        {"attn_norm.weight", {64}},          {"post_attention_norm.weight", {64}}, {"ffn_gate.weight", {64, 96}},
        {"ffn_up.weight", {64, 96}},         {"ffn_down.weight", {96, 64}},        {"attn_q.weight", {64, 384}},
        {"attn_k.weight", {64, 64}},         {"attn_v.weight", {64, 64}},          {"attn_output.weight", {192, 64}},
        {"attn_q_norm.weight", {32}},        {"attn_k_norm.weight", {32}},         {"nextn.eh_proj.weight", {128, 64}},
        {"nextn.enorm.weight", {64}},        {"nextn.hnorm.weight", {64}}};
    for (const auto& [name, ne] : t) {
        if (drop_eh_proj && name == "nextn.eh_proj.weight") continue;
        e.add_tensors.push_back({"blk.8." + name, {DENSE_TYPE_F32, ne}});
    }
    return e;
}

TEST_F(BindingTest, MtpBlockIsValidatedAndSkipped) {
    BoundModel m;
    ASSERT_EQ(bind_error(with_mtp_block(false), &m), "");
    EXPECT_EQ(m.layers.size(), 8u);
    ASSERT_EQ(m.skipped_blocks.size(), 1u);
    EXPECT_EQ(m.skipped_blocks[0].kind, "mtp");
    EXPECT_EQ(m.skipped_blocks[0].index, 8);
    EXPECT_EQ(m.skipped_blocks[0].tensors.size(), 14u);

    const std::string msg = bind_error(with_mtp_block(true));
    EXPECT_NE(msg.find("missing tensor 'blk.8.nextn.eh_proj.weight'"), std::string::npos) << msg;
}

TEST_F(BindingTest, ArchitectureMismatchIsRefused) {
    test::GgufEdits e;
    e.set_kvs["general.architecture"] = [](gguf::GgufWriter& w) { w.add_string("general.architecture", "llama"); };
    const std::string msg = bind_error(e);
    EXPECT_NE(msg.find("architecture 'llama' does not match"), std::string::npos) << msg;
}

TEST_F(BindingTest, VocabularyMustMatchTheEmbedding) {
    test::GgufEdits e;
    e.replace_tensors["token_embd.weight"] = {DENSE_TYPE_F32, {64, 299}};
    const std::string msg = bind_error(e);
    EXPECT_NE(msg.find("'token_embd.weight' has shape [64, 299], expected [64, 300]"), std::string::npos) << msg;
}

}  // namespace
}  // namespace dense::model
