// Every named small shape (and tied / MTP / custom variants) written to disk binds to
// models/qwen35.yaml, with the hparams and layer schedule the shape asks for.
#include "synth_test_support.hpp"

#include "model/model_binding.hpp"

#include <gtest/gtest.h>

namespace {

using namespace dense::synth;
using dense::synth::test::qwen35_spec;
using dense::synth::test::request;

void expect_binds(const SynthRequest& req, const std::string& tag) {
    const auto path = dense::test::scratch_dir("synth-bind") / (tag + ".gguf");
    SynthModel model(req);
    model.write(path);
    ASSERT_EQ(std::filesystem::file_size(path), model.file_size());
    const auto file = dense::gguf::GgufFile::open(path);
    dense::model::BoundModel bound;
    ASSERT_NO_THROW(bound = dense::model::bind_model(file, qwen35_spec())) << tag;
    const Shape& s = req.shape;
    EXPECT_EQ(bound.layers.size(), s.n_layer) << tag;
    EXPECT_EQ(bound.count_layers("full_attention"), static_cast<int64_t>(s.full_attention_layers().size())) << tag;
    EXPECT_EQ(bound.count_layers("recurrent"), static_cast<int64_t>(s.n_layer - s.full_attention_layers().size())) << tag;
    EXPECT_EQ(bound.tied_output, s.tied) << tag;
    EXPECT_EQ(bound.skipped_blocks.size(), s.mtp ? 1u : 0u) << tag;
    EXPECT_EQ(bound.hparams.get_int("n_embd"), s.n_embd) << tag;
    EXPECT_EQ(bound.hparams.get_int("n_head_kv"), s.n_head_kv) << tag;
    EXPECT_EQ(bound.hparams.get_int("conv_dim"), s.conv_dim()) << tag;
    EXPECT_EQ(bound.hparams.get_int("n_vocab"), static_cast<int64_t>(model.vocab().size())) << tag;
    EXPECT_TRUE(bound.warnings.empty()) << tag << ": " << (bound.warnings.empty() ? "" : bound.warnings[0]);
    std::filesystem::remove(path);
}

TEST(SynthBind, TinyWithTheRealVocabulary) {
    expect_binds(request("tiny", "seed-iq4"), "tiny");
}

TEST(SynthBind, OtherNamedShapes) {
    for (const char* shape : {"small", "wide", "deep"})
        expect_binds(request(shape, "seed-iq4", 3, dense::synth::test::small_vocab(2048)), shape);
}

TEST(SynthBind, TiedMtpAndUniformMixes) {
    ShapeOverrides o = dense::synth::test::small_vocab();
    o.tied = true;
    expect_binds(request("tiny", "q4_k", 1, o), "tiny-tied");
    o.tied = false;
    o.mtp = true;
    expect_binds(request("deep", "iq2_s", 1, o), "deep-mtp");
    expect_binds(request("tiny", "bf16", 1, dense::synth::test::small_vocab()), "tiny-bf16");
}

TEST(SynthBind, CustomDims) {
    ShapeOverrides o = dense::synth::test::small_vocab();
    o.n_embd = 512, o.n_layer = 6, o.n_ff = 1024, o.n_head = 6, o.n_head_kv = 3, o.head_dim = 128;
    o.ssm_state = 32, o.ssm_groups = 3, o.ssm_heads = 12, o.full_attn_interval = 2;
    expect_binds(request("tiny", "q8_0", 1, o), "custom");
}

}  // namespace
