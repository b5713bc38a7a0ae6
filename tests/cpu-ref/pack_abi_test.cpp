// libdense-cpu-ref.so through its three C entry points (pack_harness.hpp); the registered format ops
// are run through their function pointers and compared with the kernels library.
#include "cpu-ref/pack_harness.hpp"
#include "cpu-ref/quant_test_support.hpp"

#include <dense/sdk/pack.hpp>

#include <algorithm>

namespace {

using namespace dense;
using namespace dense::test::quant;

class CpuRefPack : public dense::test::PackHarness {
protected:
    static dense_tensor_view view(void* data, dense_type_id type, std::array<int64_t, 4> ne) {
        const auto& f = cpuref::format(type);
        dense_tensor_view v{};
        v.data = data;
        v.type = type;
        v.device_kind = DENSE_DEVICE_CPU;
        for (int i = 0; i < 4; ++i) v.ne[i] = ne[static_cast<std::size_t>(i)];
        v.nb[0] = f.block_bytes;
        v.nb[1] = v.nb[0] * (ne[0] / f.block_elements);
        v.nb[2] = v.nb[1] * ne[1];
        v.nb[3] = v.nb[2] * ne[2];
        return v;
    }
};

TEST_F(CpuRefPack, ScoresOneOnCpuZeroElsewhere) {
    EXPECT_EQ(score_(nullptr), DENSE_ABI_ENCODE_VERSION(DENSE_ABI_MAJOR, DENSE_ABI_MINOR));
    auto hw = dense::sdk::make_struct<dense_hw_desc>();
    hw.device_kind = DENSE_DEVICE_CPU;
    EXPECT_EQ(score_(&hw), 1u);
    hw.cpu_features = DENSE_CPU_AVX2 | DENSE_CPU_FMA;  // no ISA extension used: still 1
    EXPECT_EQ(score_(&hw), 1u);
    hw.device_kind = DENSE_DEVICE_CUDA;
    hw.cuda_cc_major = 9;
    EXPECT_EQ(score_(&hw), 0u);
    auto other_major = dense::sdk::make_struct<dense_hw_desc>();
    other_major.hdr.abi_major = DENSE_ABI_MAJOR + 1;
    EXPECT_EQ(score_(&other_major), 0u);
}

TEST_F(CpuRefPack, DescribesItself) {
    EXPECT_STREQ(pack_->name, "cpu-ref");
    EXPECT_NE(pack_->version, nullptr);
    EXPECT_EQ(pack_->device_kind, DENSE_DEVICE_CPU);
    EXPECT_EQ(pack_->device, nullptr);
    EXPECT_EQ(pack_->hdr.abi_major, DENSE_ABI_MAJOR);
}

TEST_F(CpuRefPack, RegistersEveryFormat) {
    for (const auto* f : storable_formats()) {
        EXPECT_NE(host_.find(DENSE_OP_DEQUANTIZE, f->type, DENSE_TYPE_NONE), nullptr) << f->name;
        EXPECT_NE(host_.find(DENSE_OP_EMBED_ROW, f->type, DENSE_TYPE_NONE), nullptr) << f->name;
        EXPECT_NE(host_.find(DENSE_OP_GEMV_Q, f->type, f->act_type), nullptr) << f->name;
    }
    for (dense_type_id act : {DENSE_TYPE_Q8_K, DENSE_TYPE_Q8_0})
        EXPECT_NE(host_.find(DENSE_OP_QUANTIZE_ACT, DENSE_TYPE_NONE, act), nullptr) << act;
    EXPECT_EQ(host_.find(DENSE_OP_GEMV_Q, DENSE_TYPE_Q4_K, DENSE_TYPE_Q8_0), nullptr);  // only the paired act
    for (std::size_t i = 0; i < host_.ops.size(); ++i) {
        const auto& impl = host_.ops[i];
        EXPECT_EQ(impl.hdr.abi_major, DENSE_ABI_MAJOR);
        EXPECT_EQ(impl.hdr.struct_size, sizeof(dense_op_impl));
        EXPECT_EQ(impl.device_kind, DENSE_DEVICE_CPU);
        EXPECT_EQ(impl.priority, 0);
        EXPECT_NE(impl.run, nullptr);
        EXPECT_EQ(host_.names[i].rfind("cpu-ref.", 0), 0u) << host_.names[i];
    }
    EXPECT_TRUE(host_.logs.empty());
}

TEST_F(CpuRefPack, DequantizeMatchesKernels) {
    std::mt19937_64 rng(11);
    for (dense_type_id type : {DENSE_TYPE_Q4_K, DENSE_TYPE_IQ4_NL, DENSE_TYPE_BF16}) {
        const auto& f = cpuref::format(type);
        const auto blocks = random_blocks(f, 2 * 512 / f.block_elements, rng, ScaleRange::Full);
        std::vector<float> got(1024), want(1024);
        cpuref::dequantize_row(type, blocks.data(), want.data(), 1024);
        const std::vector src{view(const_cast<uint8_t*>(blocks.data()), type, {512, 2, 1, 1})};
        const std::vector dst{view(got.data(), DENSE_TYPE_F32, {512, 2, 1, 1})};
        const auto* impl = host_.find(DENSE_OP_DEQUANTIZE, type, DENSE_TYPE_NONE);
        ASSERT_NE(impl, nullptr);
        const auto call = make_call(DENSE_OP_DEQUANTIZE, src, dst);
        EXPECT_EQ(impl->supports(impl->user, &call), 1u);
        ASSERT_EQ(run(impl, call), DENSE_OK) << f.name;
        EXPECT_TRUE(same_bits(got, want, f.block_elements)) << f.name;
    }
}

TEST_F(CpuRefPack, EmbedRowMatchesKernels) {
    std::mt19937_64 rng(12);
    const auto& f = cpuref::format(DENSE_TYPE_Q6_K);
    const int64_t d = 512, vocab = 7;
    const auto table = random_blocks(f, vocab * d / 256, rng, ScaleRange::Moderate);
    std::vector<float> want(static_cast<std::size_t>(vocab * d)), got(static_cast<std::size_t>(d));
    cpuref::dequantize_row(f.type, table.data(), want.data(), vocab * d);
    const auto* impl = host_.find(DENSE_OP_EMBED_ROW, f.type, DENSE_TYPE_NONE);
    ASSERT_NE(impl, nullptr);
    const std::vector src{view(const_cast<uint8_t*>(table.data()), f.type, {d, vocab, 1, 1})};
    const std::vector dst{view(got.data(), DENSE_TYPE_F32, {d, 1, 1, 1})};
    auto params = dense::sdk::make_struct<dense_embed_row_params>();
    params.row = 5;
    ASSERT_EQ(run(impl, make_call(DENSE_OP_EMBED_ROW, src, dst, &params)), DENSE_OK);
    EXPECT_TRUE(same_bits(got, std::vector<float>(want.begin() + 5 * d, want.begin() + 6 * d), 256));

    params.row = vocab;  // out of range
    EXPECT_EQ(run(impl, make_call(DENSE_OP_EMBED_ROW, src, dst, &params)), DENSE_E_INVALID_ARGUMENT);
    EXPECT_EQ(run(impl, make_call(DENSE_OP_EMBED_ROW, src, dst, nullptr)), DENSE_E_INVALID_ARGUMENT);
    EXPECT_EQ(host_.logs.size(), 2u);
}

TEST_F(CpuRefPack, QuantizeActThenGemvMatchesKernels) {
    std::mt19937_64 rng(13);
    const int64_t in = 1024, out = 24;
    const auto x = random_activation(in, rng);
    for (dense_type_id type : {DENSE_TYPE_Q4_K, DENSE_TYPE_IQ4_NL, DENSE_TYPE_F16}) {
        const auto& f = cpuref::format(type);
        // QUANTIZE_ACT through the pack, compared byte for byte with the kernels library.
        std::vector<uint8_t> act(act_bytes(f.act_type, in)), want_act(act.size());
        cpuref::quantize_activation(f.act_type, x.data(), want_act.data(), in);
        const auto* quant = host_.find(DENSE_OP_QUANTIZE_ACT, DENSE_TYPE_NONE, f.act_type);
        ASSERT_NE(quant, nullptr) << f.name;
        const std::vector qsrc{view(const_cast<float*>(x.data()), DENSE_TYPE_F32, {in, 1, 1, 1})};
        const std::vector qdst{view(act.data(), f.act_type, {in, 1, 1, 1})};
        ASSERT_EQ(run(quant, make_call(DENSE_OP_QUANTIZE_ACT, qsrc, qdst)), DENSE_OK) << f.name;
        EXPECT_TRUE(same_bytes(act, want_act)) << f.name;

        // GEMV_Q through the pack, compared bit for bit with the kernels library.
        const auto w = random_blocks(f, out * in / f.block_elements, rng, ScaleRange::Moderate);
        std::vector<float> y(out), want_y(out);
        cpuref::gemv(type, w.data(), in, out, act.data(), want_y.data());
        const auto* gemv = host_.find(DENSE_OP_GEMV_Q, type, f.act_type);
        ASSERT_NE(gemv, nullptr) << f.name;
        const std::vector src{view(const_cast<uint8_t*>(w.data()), type, {in, out, 1, 1}),
                              view(act.data(), f.act_type, {in, 1, 1, 1})};
        const std::vector dst{view(y.data(), DENSE_TYPE_F32, {out, 1, 1, 1})};
        const auto call = make_call(DENSE_OP_GEMV_Q, src, dst);
        EXPECT_EQ(gemv->supports(gemv->user, &call), 1u);
        ASSERT_EQ(run(gemv, call), DENSE_OK) << f.name;
        EXPECT_TRUE(same_bits(y, want_y)) << f.name;
    }
    EXPECT_TRUE(host_.logs.empty());
}

TEST_F(CpuRefPack, BadCallsAreRefusedWithOneLogLine) {
    const int64_t in = 256, out = 4;
    std::vector<uint8_t> w(static_cast<std::size_t>(cpuref::row_bytes(DENSE_TYPE_Q4_K, in * out)), 1);
    std::vector<uint8_t> act(act_bytes(DENSE_TYPE_Q8_K, in), 1);
    std::vector<float> y(out, 0.0f);
    const auto* gemv = host_.find(DENSE_OP_GEMV_Q, DENSE_TYPE_Q4_K, DENSE_TYPE_Q8_K);
    ASSERT_NE(gemv, nullptr);
    const auto good_w = view(w.data(), DENSE_TYPE_Q4_K, {in, out, 1, 1});
    const auto good_a = view(act.data(), DENSE_TYPE_Q8_K, {in, 1, 1, 1});

    // dst of the wrong type (F16 instead of F32)
    const std::vector src{good_w, good_a};
    const std::vector bad_dst{view(y.data(), DENSE_TYPE_F16, {out, 1, 1, 1})};
    const auto call = make_call(DENSE_OP_GEMV_Q, src, bad_dst);
    EXPECT_EQ(gemv->supports(gemv->user, &call), 0u);
    EXPECT_TRUE(host_.logs.empty()) << "supports() must not log";
    EXPECT_EQ(run(gemv, call), DENSE_E_INVALID_ARGUMENT);
    ASSERT_EQ(host_.logs.size(), 1u);
    EXPECT_EQ(host_.logs[0].first, DENSE_LOG_ERROR);
    EXPECT_NE(host_.logs[0].second.find("dst"), std::string::npos) << host_.logs[0].second;
    EXPECT_EQ(y, std::vector<float>(out, 0.0f)) << "nothing written on a refused call";

    // More malformed calls, one log line each.
    const std::vector good_dst{view(y.data(), DENSE_TYPE_F32, {out, 1, 1, 1})};
    auto wrong_act_type = good_a;
    wrong_act_type.type = DENSE_TYPE_Q8_0;
    auto short_act = view(act.data(), DENSE_TYPE_Q8_K, {in, 1, 1, 1});
    short_act.ne[0] = 2 * in;
    auto strided_w = good_w;
    strided_w.nb[1] += 16;
    auto gpu_w = good_w;
    gpu_w.device_kind = DENSE_DEVICE_CUDA;
    const std::vector<std::vector<dense_tensor_view>> bad_srcs = {
        {good_w, wrong_act_type}, {good_w, short_act}, {strided_w, good_a}, {gpu_w, good_a}, {good_w}};
    std::size_t expected_logs = 1;
    for (const auto& s : bad_srcs) {
        EXPECT_EQ(run(gemv, make_call(DENSE_OP_GEMV_Q, s, good_dst)), DENSE_E_INVALID_ARGUMENT);
        EXPECT_EQ(host_.logs.size(), ++expected_logs) << host_.logs.back().second;
    }
    auto wrong_kind = make_call(DENSE_OP_GEMV_Q, src, good_dst);
    wrong_kind.op_kind = DENSE_OP_DEQUANTIZE;
    EXPECT_EQ(run(gemv, wrong_kind), DENSE_E_INVALID_ARGUMENT);
    EXPECT_EQ(gemv->run(gemv->user, nullptr), DENSE_E_INVALID_ARGUMENT);
    EXPECT_EQ(host_.logs.size(), expected_logs + 2);

    // And the well-formed call still works.
    EXPECT_EQ(run(gemv, make_call(DENSE_OP_GEMV_Q, src, good_dst)), DENSE_OK);
    EXPECT_EQ(host_.logs.size(), expected_logs + 2);
}

}  // namespace
