// GEMV_Q_MULTI in cpu-ref (dense_abi.h, ABI 1.8) through the pack's C entry points: registered once
// per activation format with no weight type; every output bit for bit the GEMV_Q of its matrix alone,
// for matrices of different formats and row counts; malformed lists refused with one log line and
// nothing written.
#include "cpu-ref/ops_pack_support.hpp"
#include "cpu-ref/quant_test_support.hpp"

#include "kernels/formats.hpp"

#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

using namespace dense;
using namespace dense::test;

constexpr float kPoison = -1234.5f;

struct Matrix {
    dense_type_id type;
    int64_t rows;
    std::vector<uint8_t> bytes;
    std::vector<float> y;
};

class CpuRefGemvList : public PackHarness {
protected:
    static constexpr int64_t kIn = 512;

    void SetUp() override {
        PackHarness::SetUp();
        std::mt19937_64 rng(88);
        for (const auto& [type, rows] : std::vector<std::pair<dense_type_id, int64_t>>{
                 {DENSE_TYPE_Q4_K, 16}, {DENSE_TYPE_Q8_0, 3}, {DENSE_TYPE_IQ2_XS, 9}, {DENSE_TYPE_Q4_K, 1}}) {
            const auto& f = cpuref::format(type);
            Matrix m{type, rows, quant::random_blocks(f, rows * kIn / f.block_elements, rng, quant::ScaleRange::Moderate),
                     std::vector<float>(static_cast<std::size_t>(rows), kPoison)};
            mats_.push_back(std::move(m));
        }
        const auto x = quant::random_activation(kIn, rng);
        act_.resize(static_cast<std::size_t>(cpuref::row_bytes(DENSE_TYPE_Q8_32, kIn)));
        cpuref::quantize_activation(DENSE_TYPE_Q8_32, x.data(), act_.data(), kIn);
    }

    std::vector<dense_tensor_view> sources() {
        std::vector<dense_tensor_view> src;
        for (auto& m : mats_) src.push_back(rows_of(m.bytes.data(), m.type, kIn, m.rows));
        src.push_back(rows_of(act_.data(), DENSE_TYPE_Q8_32, kIn, 1));
        return src;
    }
    std::vector<dense_tensor_view> destinations() {
        std::vector<dense_tensor_view> dst;
        for (auto& m : mats_) dst.push_back(rows_of(m.y.data(), DENSE_TYPE_F32, m.rows, 1));
        return dst;
    }
    const dense_op_impl* list_impl() { return host_.find(DENSE_OP_GEMV_Q_MULTI, DENSE_TYPE_NONE, DENSE_TYPE_Q8_32); }

    std::vector<Matrix> mats_;
    std::vector<uint8_t> act_;
};

TEST_F(CpuRefGemvList, RegisteredOncePerActivationFormat) {
    int count = 0;
    for (const auto& impl : host_.ops)
        if (impl.op_kind == DENSE_OP_GEMV_Q_MULTI) {
            ++count;
            EXPECT_EQ(impl.weight_type, DENSE_TYPE_NONE);
            EXPECT_EQ(impl.priority, 0);
        }
    // Q8_K, Q8_0, Q8_32 and F32 / F16 / BF16: every activation format cpu-ref can produce.
    EXPECT_EQ(count, 6);
    EXPECT_NE(list_impl(), nullptr);
}

TEST_F(CpuRefGemvList, EveryOutputIsBitIdenticalToItsOwnGemv) {
    const dense_op_impl* impl = list_impl();
    ASSERT_NE(impl, nullptr);
    const auto src = sources();
    const auto dst = destinations();
    ASSERT_EQ(run(impl, make_call(DENSE_OP_GEMV_Q_MULTI, src, dst)), DENSE_OK);
    EXPECT_TRUE(host_.logs.empty());
    for (auto& m : mats_) {
        std::vector<float> want(static_cast<std::size_t>(m.rows), kPoison);
        const dense_op_impl* single = host_.find(DENSE_OP_GEMV_Q, m.type, DENSE_TYPE_Q8_32);
        ASSERT_NE(single, nullptr);
        const std::vector one_src{rows_of(m.bytes.data(), m.type, kIn, m.rows), src.back()};
        const std::vector one_dst{rows_of(want.data(), DENSE_TYPE_F32, m.rows, 1)};
        ASSERT_EQ(run(single, make_call(DENSE_OP_GEMV_Q, one_src, one_dst)), DENSE_OK);
        ASSERT_EQ(m.y.size(), want.size());
        EXPECT_EQ(std::memcmp(m.y.data(), want.data(), want.size() * sizeof(float)), 0)
            << cpuref::format(m.type).name << " {" << kIn << ", " << m.rows << "}";
        for (float v : m.y) EXPECT_NE(v, kPoison);
    }
}

TEST_F(CpuRefGemvList, MalformedListsAreRefusedWithOneLogLineAndNoWrite) {
    const dense_op_impl* impl = list_impl();
    ASSERT_NE(impl, nullptr);
    using Edit = std::function<void(std::vector<dense_tensor_view>&, std::vector<dense_tensor_view>&)>;
    std::vector<float> spare(64, kPoison);
    const std::vector<std::pair<std::string, Edit>> edits = {
        {"one matrix", [](auto& s, auto& d) {
             s.erase(s.begin() + 1, s.end() - 1);
             d.resize(1);
         }},
        {"a matrix of another input length", [](auto& s, auto&) { s[1].ne[0] = 256; }},
        {"an F32 weight against Q8_32", [](auto& s, auto&) { s[1].type = DENSE_TYPE_F32; }},
        {"dst of the wrong length", [](auto&, auto& d) { d[2].ne[0] += 1; }},
        {"two destinations overlap", [](auto&, auto& d) { d[1].data = static_cast<float*>(d[0].data) + 1; }},
        {"a destination over the activation", [](auto& s, auto& d) { d[0].data = s.back().data; }},
        {"activation not Q8_32", [](auto& s, auto&) { s.back().type = DENSE_TYPE_Q8_0; }},
        {"a source too many", [&spare](auto& s, auto&) { s.push_back(rows_of(spare.data(), DENSE_TYPE_F32, 4, 1)); }},
    };
    for (const auto& [what, edit] : edits) {
        for (auto& m : mats_) std::fill(m.y.begin(), m.y.end(), kPoison);
        auto src = sources();
        auto dst = destinations();
        edit(src, dst);
        const auto call = make_call(DENSE_OP_GEMV_Q_MULTI, src, dst);
        EXPECT_EQ(impl->supports(impl->user, &call), 0u) << what;
        const std::size_t logs = host_.logs.size();
        EXPECT_EQ(run(impl, call), DENSE_E_INVALID_ARGUMENT) << what;
        EXPECT_EQ(host_.logs.size(), logs + 1) << what;
        for (const auto& m : mats_)
            for (float v : m.y) ASSERT_EQ(v, kPoison) << what << ": written although refused";
    }
    auto p = dense::sdk::make_struct<dense_gemv_params>();  // lists never accumulate
    const auto src = sources();
    const auto dst = destinations();
    EXPECT_EQ(run(impl, make_call(DENSE_OP_GEMV_Q_MULTI, src, dst, &p)), DENSE_E_INVALID_ARGUMENT);
}

}  // namespace
