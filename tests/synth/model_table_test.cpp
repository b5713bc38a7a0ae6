// The 27b file's tensor table and size, computed without writing a byte of tensor data; and the
// metadata every synthetic file carries (spec section 2 keys with their exact types).
#include "synth_test_support.hpp"

#include "model/model_binding.hpp"

#include <gtest/gtest.h>

namespace {

using namespace dense::synth;
using dense::synth::test::request;

TEST(SynthTable, The27bSeedIq4FileWithoutWritingIt) {
    const SynthModel model(request("27b", "seed-iq4"));
    EXPECT_EQ(model.tensors().size(), 851u);
    EXPECT_EQ(model.vocab().size(), 248320u);
    const double gb = static_cast<double>(model.file_size()) / 1e9;
    EXPECT_GT(gb, 14.5);
    EXPECT_LT(gb, 16.5) << "a real 27B IQ4 mix is ~15.5 GB";
    EXPECT_GT(model.file_size(), model.tensor_data_bytes());
    EXPECT_LT(model.file_size() - model.tensor_data_bytes(), uint64_t{16} << 20) << "metadata is a few MB";
    const auto per_type = model.bytes_per_type();
    EXPECT_EQ(per_type.size(), 13u) << "12 quant formats + f32";
    uint64_t sum = 0, count = 0;
    for (const auto& [name, t] : per_type) sum += t.bytes, count += t.tensors;
    EXPECT_EQ(sum, model.tensor_data_bytes());
    EXPECT_EQ(count, 851u);
    // The bulk is the FFN: IQ4_XS gate/up and Q4_K down.
    EXPECT_GT(per_type.at("iq4_xs").bytes + per_type.at("q4_k").bytes, model.tensor_data_bytes() / 2);
    std::printf("27b seed-iq4: %llu bytes (%.3f GB) in 851 tensors\n", static_cast<unsigned long long>(model.file_size()), gb);
}

TEST(SynthTable, The27bInOtherMixes) {
    const SynthModel q8(request("27b", "q8_0"));
    const double params = static_cast<double>(q8.tensor_data_bytes()) / 34.0 * 32.0;  // elements
    EXPECT_GT(params, 26.5e9);
    EXPECT_LT(params, 28.5e9) << "Qwen3.5-27B has ~27B weights (untied head included)";
    ShapeOverrides tied;
    tied.tied = true;
    const SynthModel t(request("27b", "q8_0", 1, tied));
    EXPECT_EQ(t.tensors().size(), 850u);
    EXPECT_EQ(q8.tensor_data_bytes() - t.tensor_data_bytes(), uint64_t{5120} / 32 * 34 * 248320);
}

TEST(SynthTable, MetadataHasEverySpecKeyWithItsType) {
    ShapeOverrides o = dense::synth::test::small_vocab();
    o.mtp = true;
    const auto m = dense::synth::test::synthesize(request("small", "q8_0", 7, o));
    const auto& f = *m.file;
    EXPECT_EQ(f.get_string("general.architecture"), "qwen35");
    EXPECT_FALSE(f.get_string("general.name").empty());
    EXPECT_EQ(f.get_u32("general.file_type"), 7u);
    EXPECT_EQ(f.get_u32("qwen35.block_count"), 13u);
    EXPECT_EQ(f.get_u32("qwen35.nextn_predict_layers"), 1u);
    EXPECT_EQ(f.get_u32("qwen35.context_length"), 32768u);
    EXPECT_EQ(f.get_u32("qwen35.embedding_length"), 512u);
    EXPECT_EQ(f.get_u32("qwen35.feed_forward_length"), 1536u);
    EXPECT_EQ(f.get_u32("qwen35.attention.head_count"), 8u);
    EXPECT_EQ(f.get_u32("qwen35.attention.head_count_kv"), 2u);
    EXPECT_EQ(f.get_u32("qwen35.attention.key_length"), 64u);
    EXPECT_EQ(f.get_u32("qwen35.attention.value_length"), 64u);
    EXPECT_FLOAT_EQ(f.get_f32("qwen35.attention.layer_norm_rms_epsilon"), 1e-6f);
    EXPECT_EQ(f.get_u32("qwen35.full_attention_interval"), 4u);
    EXPECT_EQ(f.get_u32("qwen35.rope.dimension_count"), 16u);
    EXPECT_EQ(f.find_kv("qwen35.rope.dimension_sections")->type(), dense::gguf::ValueType::Array);
    EXPECT_EQ(f.get_array("qwen35.rope.dimension_sections").elem_type, dense::gguf::ValueType::Int32);
    EXPECT_EQ(f.get_i32_array("qwen35.rope.dimension_sections"), (std::vector<int32_t>{3, 3, 2, 0}));
    EXPECT_FLOAT_EQ(f.get_f32("qwen35.rope.freq_base"), 1e7f);
    EXPECT_EQ(f.get_u32("qwen35.ssm.conv_kernel"), 4u);
    EXPECT_EQ(f.get_u32("qwen35.ssm.state_size"), 64u);
    EXPECT_EQ(f.get_u32("qwen35.ssm.group_count"), 4u);
    EXPECT_EQ(f.get_u32("qwen35.ssm.time_step_rank"), 8u);
    EXPECT_EQ(f.get_u32("qwen35.ssm.inner_size"), 512u);
    EXPECT_EQ(f.get_string("tokenizer.ggml.model"), "gpt2");
    EXPECT_EQ(f.get_string("tokenizer.ggml.pre"), "qwen35");
    EXPECT_EQ(f.get_string_array("tokenizer.ggml.tokens").size(), 512u);
    EXPECT_EQ(f.get_u64("dense.synth.seed"), 7u);
    EXPECT_EQ(f.get_string("dense.synth.mix"), "q8_0");
    // The MTP block binds as a skipped block.
    const auto bound = dense::model::bind_model(f, dense::synth::test::qwen35_spec());
    ASSERT_EQ(bound.skipped_blocks.size(), 1u);
    EXPECT_EQ(bound.skipped_blocks[0].index, 12);
    EXPECT_EQ(bound.layers.size(), 12u);
}

}  // namespace
