// Named shapes, overrides and their validation; quant mixes; the seed-iq4 placement rule and the
// tensor table (counts, divisibility errors) — everything decided before a byte is written.
#include "core/error.hpp"
#include "core/type_table.hpp"
#include "synth/mix.hpp"
#include "synth/shape.hpp"
#include "synth/tensor_plan.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>

namespace {

using namespace dense::synth;

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const dense::Error& e) {
        EXPECT_EQ(e.kind(), dense::ErrorKind::Usage) << e.what();
        return e.what();
    }
    ADD_FAILURE() << "no error";
    return {};
}

const PlannedTensor& find(const std::vector<PlannedTensor>& plan, const std::string& name) {
    for (const auto& t : plan)
        if (t.name == name) return t;
    throw std::runtime_error("no tensor " + name);
}

std::string type_name(dense_type_id t) { return dense::global_type_table().find(t)->name; }

TEST(SynthShape, NamedShapesAreValidAndDistinct) {
    std::set<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>> seen;
    for (const auto& name : named_shapes()) {
        const Shape s = make_shape(name, {});
        EXPECT_EQ(s.name, name);
        EXPECT_NO_THROW(validate(s));
        EXPECT_GE(s.full_attention_layers().size(), 1u) << name;
        EXPECT_EQ(s.ssm_inner() / s.ssm_heads, s.ssm_state) << name;
        for (uint32_t in : {s.n_embd, s.n_ff, s.n_head * s.head_dim, s.ssm_inner()}) EXPECT_EQ(in % 256, 0u) << name;
        seen.insert({s.n_embd, s.n_head, s.n_head / s.n_head_kv, s.ssm_heads / s.ssm_groups});
    }
    EXPECT_EQ(seen.size(), named_shapes().size()) << "every shape differs in width / heads / GQA / value-head ratio";
}

TEST(SynthShape, The27bShapeIsTheRealOne) {
    const Shape s = named_shape("27b");
    EXPECT_EQ(s.n_embd, 5120u);
    EXPECT_EQ(s.n_layer, 64u);
    EXPECT_EQ(s.n_ff, 17408u);
    EXPECT_EQ(s.n_head, 24u);
    EXPECT_EQ(s.n_head_kv, 4u);
    EXPECT_EQ(s.head_dim, 256u);
    EXPECT_EQ(s.n_rot, 64u);
    EXPECT_EQ(s.ssm_state, 128u);
    EXPECT_EQ(s.ssm_groups, 16u);
    EXPECT_EQ(s.ssm_heads, 48u);
    EXPECT_EQ(s.ssm_inner(), 6144u);
    EXPECT_EQ(s.conv_dim(), 10240u);
    EXPECT_EQ(s.ssm_conv, 4u);
    EXPECT_EQ(s.vocab_size, 248320u);
    EXPECT_FLOAT_EQ(s.rope_base, 1e7f);
    EXPECT_EQ(s.full_attention_layers().size(), 16u);
    EXPECT_EQ(s.full_attention_layers().front(), 3u);
    EXPECT_EQ(s.full_attention_layers().back(), 63u);
}

TEST(SynthShape, TinyHasBothLayerKindsTwiceAndSmallDims) {
    const Shape s = named_shape("tiny");
    EXPECT_GE(s.n_layer, 8u);
    EXPECT_GE(s.full_attention_layers().size(), 2u);
    EXPECT_GE(s.n_layer - s.full_attention_layers().size(), 2u);
    EXPECT_LE(s.n_embd, 256u);
    EXPECT_EQ(s.vocab_size, 0u) << "tiny keeps the real vocabulary";
}

TEST(SynthShape, RopeSectionsScaleAndSumToHalfTheRotaryDims) {
    EXPECT_EQ(rope_sections(64), (std::array<int32_t, 4>{11, 11, 10, 0}));
    EXPECT_EQ(rope_sections(128), (std::array<int32_t, 4>{22, 22, 20, 0}));
    for (uint32_t n_rot = 2; n_rot <= 512; n_rot += 2) {
        const auto s = rope_sections(n_rot);
        EXPECT_EQ(s[0] + s[1] + s[2] + s[3], static_cast<int32_t>(n_rot / 2)) << n_rot;
        EXPECT_EQ(s[3], 0);
        EXPECT_GE(s[0], s[1]);
        EXPECT_GE(s[1], s[2]);
    }
}

TEST(SynthShape, OverridesApplyAndHeadDimCarriesNRot) {
    ShapeOverrides o;
    o.n_embd = 768;
    o.n_layer = 5;
    o.head_dim = 128;
    o.tied = true;
    o.mtp = true;
    const Shape s = make_shape("tiny", o);
    EXPECT_EQ(s.n_embd, 768u);
    EXPECT_EQ(s.n_layer, 5u);
    EXPECT_EQ(s.head_dim, 128u);
    EXPECT_EQ(s.n_rot, 32u) << "head_dim / 4 when only head_dim is overridden";
    EXPECT_TRUE(s.tied);
    EXPECT_TRUE(s.mtp);
    EXPECT_EQ(s.block_count(), 6u);
    o.n_rot = 128;
    EXPECT_EQ(make_shape("tiny", o).n_rot, 128u);
}

TEST(SynthShape, BadShapesAreClearUsageErrors) {
    EXPECT_NE(error_of([] { named_shape("huge"); }).find("unknown shape 'huge' (known: 27b, tiny, small, wide, deep)"),
              std::string::npos);
    ShapeOverrides o;
    o.n_head = 6;
    o.n_head_kv = 4;
    EXPECT_NE(error_of([&] { make_shape("tiny", o); }).find("--n-head 6 is not a multiple of --n-head-kv 4"), std::string::npos);
    o = {};
    o.n_rot = 66;
    EXPECT_NE(error_of([&] { make_shape("tiny", o); }).find("--n-rot 66"), std::string::npos);
    o = {};
    o.ssm_heads = 5;
    EXPECT_NE(error_of([&] { make_shape("tiny", o); }).find("--ssm-heads 5 is not a multiple of --ssm-groups 2"),
              std::string::npos);
    o = {};
    o.n_layer = 0;
    EXPECT_NE(error_of([&] { make_shape("tiny", o); }).find("--n-layer must be at least 1"), std::string::npos);
}

TEST(SynthMix, TypeNamesAndSeedIq4) {
    EXPECT_TRUE(parse_mix("seed-iq4").seed_iq4);
    EXPECT_TRUE(parse_mix("SEED-IQ4").seed_iq4);
    const std::map<std::string, dense_type_id> names{
        {"q8_0", DENSE_TYPE_Q8_0}, {"q2_k", DENSE_TYPE_Q2_K}, {"q3_k", DENSE_TYPE_Q3_K}, {"q4_k", DENSE_TYPE_Q4_K},
        {"q5_k", DENSE_TYPE_Q5_K}, {"q6_k", DENSE_TYPE_Q6_K}, {"iq2_xs", DENSE_TYPE_IQ2_XS}, {"iq2_s", DENSE_TYPE_IQ2_S},
        {"iq3_xxs", DENSE_TYPE_IQ3_XXS}, {"iq3_s", DENSE_TYPE_IQ3_S}, {"iq4_nl", DENSE_TYPE_IQ4_NL},
        {"iq4_xs", DENSE_TYPE_IQ4_XS}, {"f32", DENSE_TYPE_F32}, {"f16", DENSE_TYPE_F16}, {"bf16", DENSE_TYPE_BF16}};
    for (const auto& [name, id] : names) {
        const Mix m = parse_mix(name);
        EXPECT_FALSE(m.seed_iq4);
        EXPECT_EQ(m.uniform, id) << name;
    }
    EXPECT_EQ(parse_mix("Q4_K").uniform, DENSE_TYPE_Q4_K);
}

TEST(SynthMix, UnknownMixesAreRefusedWithTheAcceptedList) {
    for (const char* bad : {"iq4", "q4_0", "q8_k", "", "seed-iq3"}) {
        const std::string msg = error_of([&] { parse_mix(bad); });
        EXPECT_NE(msg.find("unknown mix '" + std::string(bad) + "'"), std::string::npos) << msg;
        EXPECT_NE(msg.find("seed-iq4, f32, f16"), std::string::npos) << msg;
        EXPECT_NE(msg.find("iq4_xs"), std::string::npos) << msg;
    }
}

TEST(SynthMix, SeedIq4HasAll12FormatsForEveryNamedShape) {
    const std::set<dense_type_id> all12{DENSE_TYPE_Q8_0, DENSE_TYPE_Q2_K, DENSE_TYPE_Q3_K, DENSE_TYPE_Q4_K,
                                        DENSE_TYPE_Q5_K, DENSE_TYPE_Q6_K, DENSE_TYPE_IQ2_XS, DENSE_TYPE_IQ2_S,
                                        DENSE_TYPE_IQ3_XXS, DENSE_TYPE_IQ3_S, DENSE_TYPE_IQ4_NL, DENSE_TYPE_IQ4_XS};
    for (const auto& name : named_shapes()) {
        for (bool tied : {false, true}) {
            ShapeOverrides o;
            o.tied = tied;
            const auto plan = plan_tensors(make_shape(name, o), 1000, parse_mix("seed-iq4"));
            std::set<dense_type_id> used;
            for (const auto& t : plan)
                if (t.init == Init::Matrix) used.insert(t.type);
            EXPECT_EQ(used, all12) << name << (tied ? " tied" : "");
        }
    }
}

TEST(SynthMix, SeedIq4On27bIsTheRealPattern) {
    const auto plan = plan_tensors(named_shape("27b"), 248320, parse_mix("seed-iq4"));
    const auto type_of = [&](const std::string& n) { return type_name(find(plan, n).type); };
    EXPECT_EQ(type_of("token_embd.weight"), "q3_k");
    EXPECT_EQ(type_of("output.weight"), "q6_k");
    for (const char* r : {"ffn_gate", "ffn_up", "ffn_down"}) EXPECT_EQ(type_of(std::string("blk.13.") + r + ".weight"), "q3_k");
    EXPECT_EQ(type_of("blk.0.ffn_gate.weight"), "iq2_xs");
    EXPECT_EQ(type_of("blk.12.ffn_gate.weight"), "iq2_xs");
    EXPECT_EQ(type_of("blk.0.ffn_up.weight"), "iq4_xs");
    for (int il = 14; il <= 17; ++il) {
        const std::string b = "blk." + std::to_string(il) + ".";
        EXPECT_EQ(type_of(b + "ffn_gate.weight"), "iq2_s");
        EXPECT_EQ(type_of(b + "ffn_up.weight"), "iq2_s");
        EXPECT_EQ(type_of(b + "ffn_down.weight"), "iq3_xxs");
    }
    EXPECT_EQ(type_of("blk.18.ffn_gate.weight"), "iq4_xs");
    EXPECT_EQ(type_of("blk.18.ffn_down.weight"), "q4_k");
    EXPECT_EQ(type_of("blk.3.attn_q.weight"), "iq4_nl");
    EXPECT_EQ(type_of("blk.15.attn_q.weight"), "q2_k");
    EXPECT_EQ(type_of("blk.7.attn_q.weight"), "q5_k");
    EXPECT_EQ(type_of("blk.23.attn_v.weight"), "q6_k");
    EXPECT_EQ(type_of("blk.63.attn_v.weight"), "q6_k");
    EXPECT_EQ(type_of("blk.27.attn_v.weight"), "q8_0");
    EXPECT_EQ(type_of("blk.3.attn_k.weight"), "q8_0");
    EXPECT_EQ(type_of("blk.3.attn_output.weight"), "iq3_s");
    EXPECT_EQ(type_of("blk.0.attn_qkv.weight"), "q5_k");
    EXPECT_EQ(type_of("blk.0.attn_gate.weight"), "q5_k");
    EXPECT_EQ(type_of("blk.0.ssm_alpha.weight"), "q8_0");
    EXPECT_EQ(type_of("blk.0.ssm_beta.weight"), "q8_0");
    EXPECT_EQ(type_of("blk.0.ssm_out.weight"), "q6_k");
    EXPECT_EQ(type_of("blk.0.ssm_a"), "f32");
    EXPECT_EQ(type_of("blk.0.ssm_conv1d.weight"), "f32");
}

TEST(SynthPlan, TensorCountsOfThe27bTable) {
    const Mix mix = parse_mix("seed-iq4");
    EXPECT_EQ(plan_tensors(named_shape("27b"), 248320, mix).size(), 851u) << "3 + 64*5 + 16*6 + 48*9";
    ShapeOverrides tied;
    tied.tied = true;
    EXPECT_EQ(plan_tensors(make_shape("27b", tied), 248320, mix).size(), 850u);
    ShapeOverrides mtp;
    mtp.mtp = true;
    const auto with_mtp = plan_tensors(make_shape("27b", mtp), 248320, mix);
    EXPECT_EQ(with_mtp.size(), 851u + 5u + 6u + 3u);
    EXPECT_EQ(find(with_mtp, "blk.64.nextn.eh_proj.weight").ne, (std::vector<int64_t>{10240, 5120}));
    const auto plan = plan_tensors(named_shape("27b"), 248320, mix);
    EXPECT_EQ(find(plan, "blk.3.attn_q.weight").ne, (std::vector<int64_t>{5120, 12288}));
    EXPECT_EQ(find(plan, "blk.0.attn_qkv.weight").ne, (std::vector<int64_t>{5120, 10240}));
    EXPECT_EQ(find(plan, "blk.0.ssm_conv1d.weight").ne, (std::vector<int64_t>{4, 10240}));
    EXPECT_EQ(find(plan, "blk.0.ssm_out.weight").ne, (std::vector<int64_t>{6144, 5120}));
    EXPECT_EQ(find(plan, "blk.3.attn_output.weight").ne, (std::vector<int64_t>{6144, 5120}));
    EXPECT_EQ(find(plan, "token_embd.weight").ne, (std::vector<int64_t>{5120, 248320}));
}

TEST(SynthPlan, DimsAFormatCannotStoreNameTensorDimAndFormat) {
    ShapeOverrides o;
    o.n_ff = 1000;
    std::string msg = error_of([&] { plan_tensors(make_shape("tiny", o), 1000, parse_mix("seed-iq4")); });
    EXPECT_NE(msg.find("tensor blk.0.ffn_down.weight: ne[0] = n_ff = 1000 is not a multiple of 256, the block size of q4_k"),
              std::string::npos) << msg;
    o = {};
    o.n_embd = 320;  // a multiple of 32, not of 256
    msg = error_of([&] { plan_tensors(make_shape("tiny", o), 1000, parse_mix("iq4_xs")); });
    EXPECT_NE(msg.find("tensor token_embd.weight: ne[0] = n_embd = 320 is not a multiple of 256, the block size of iq4_xs"),
              std::string::npos) << msg;
    EXPECT_NO_THROW(plan_tensors(make_shape("tiny", o), 1000, parse_mix("iq4_nl")));
    EXPECT_NO_THROW(plan_tensors(make_shape("tiny", o), 1000, parse_mix("q8_0")));
    o.n_embd = 48;
    msg = error_of([&] { plan_tensors(make_shape("tiny", o), 1000, parse_mix("q8_0")); });
    EXPECT_NE(msg.find("is not a multiple of 32, the block size of q8_0"), std::string::npos) << msg;
    EXPECT_NO_THROW(plan_tensors(make_shape("tiny", o), 1000, parse_mix("f16")));
}

TEST(SynthPlan, VectorsAreAlwaysF32) {
    for (const char* mix : {"q4_k", "bf16", "seed-iq4"}) {
        for (const auto& t : plan_tensors(named_shape("small"), 1000, parse_mix(mix))) {
            if (t.init != Init::Matrix) {
                EXPECT_EQ(t.type, DENSE_TYPE_F32) << t.name;
            }
        }
    }
}

}  // namespace
