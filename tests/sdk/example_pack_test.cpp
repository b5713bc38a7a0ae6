// The example third-party pack (plugins/examples/q4-m64), loaded through the host like any pack:
// what it registers, and each of its ops against a reference written here from the format's
// definition. The pack is built OUT of tree by tests/sdk/out_of_tree_test.sh, which runs these
// tests with DENSE_EXAMPLE_PACK=<path of libdense-example-q4m64.so>; without it they skip.
#include "common/test_paths.hpp"
#include "core/half.hpp"
#include "core/type_table.hpp"
#include "packs/pack_manager.hpp"

#include <dense/sdk/pack.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

namespace {

using dense::packs::OpCandidate;
using dense::packs::OpKey;
using dense::packs::PackManager;

constexpr int64_t kBlockElements = 64;
constexpr int64_t kBlockBytes = 36;

// Loads the pack once per test (the type id it gets is the same every time: same definition).
struct Loaded {
    std::unique_ptr<PackManager> manager;
    dense_type_id type = DENSE_TYPE_NONE;
};

Loaded load_example() {
    Loaded l;
    const char* path = std::getenv("DENSE_EXAMPLE_PACK");
    if (path == nullptr || *path == '\0') return l;
    dense::packs::PackPolicy policy;
    policy.paths = {path};
    policy.use_env = false;
    policy.use_default_dir = false;
    dense::packs::DeviceInfo cpu;
    cpu.hw = dense::packs::make_hw_desc(DENSE_DEVICE_CPU, 0);
    l.manager = std::make_unique<PackManager>(policy, std::vector<dense::packs::DeviceInfo>{cpu});
    l.manager->load();
    if (const dense::TypeInfo* t = dense::global_type_table().find(std::string_view("example.q4_m64"))) l.type = t->id;
    return l;
}

#define LOAD_EXAMPLE_OR_SKIP(var)                                                                          \
    const Loaded var = load_example();                                                                     \
    if (!var.manager)                                                                                      \
        GTEST_SKIP() << "DENSE_EXAMPLE_PACK not set: the example pack is built out of tree by "            \
                        "tests/sdk/out_of_tree_test.sh (ctest -L sdk), which runs these tests with it";  \
    ASSERT_NE(var.type, DENSE_TYPE_NONE) << "the pack did not register example.q4_m64"

// The format, from its definition (not from the pack's header): x = fp16(d) * q + fp16(m).
float reference_element(const uint8_t* block, int e) {
    uint16_t d = 0, m = 0;
    std::memcpy(&d, block, 2);
    std::memcpy(&m, block + 2, 2);
    const int q = e < 32 ? (block[4 + e] & 0x0F) : (block[4 + e - 32] >> 4);
    const float scaled = dense::fp16_to_fp32(d) * static_cast<float>(q);
    return scaled + dense::fp16_to_fp32(m);
}

// Random blocks with scales and minimums of a realistic size (codes: any nibble).
std::vector<uint8_t> random_blocks(std::mt19937_64& rng, int64_t n_blocks) {
    std::vector<uint8_t> b(static_cast<size_t>(n_blocks * kBlockBytes));
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (int64_t i = 0; i < n_blocks; ++i) {
        uint8_t* blk = b.data() + i * kBlockBytes;
        const uint16_t d = dense::fp32_to_fp16(0.01f + std::fabs(normal(rng)) * 0.02f);
        const uint16_t m = dense::fp32_to_fp16(-7.5f * dense::fp16_to_fp32(d) + normal(rng) * 0.01f);
        std::memcpy(blk, &d, 2);
        std::memcpy(blk + 2, &m, 2);
        for (int j = 0; j < 32; ++j) blk[4 + j] = static_cast<uint8_t>(rng() & 0xFF);
    }
    return b;
}

dense_tensor_view view(void* data, uint32_t type, int64_t ne0, int64_t ne1, int64_t block_elements, int64_t block_bytes) {
    dense_tensor_view v{};
    v.data = data;
    v.type = type;
    v.device_kind = DENSE_DEVICE_CPU;
    v.ne[0] = ne0;
    v.ne[1] = ne1;
    v.ne[2] = v.ne[3] = 1;
    v.nb[0] = block_bytes;
    v.nb[1] = ne0 / block_elements * block_bytes;
    v.nb[2] = v.nb[3] = v.nb[1] * ne1;
    return v;
}

dense_op_call make_call(dense_op_kind op, const std::vector<dense_tensor_view>& src, const std::vector<dense_tensor_view>& dst,
                        const void* params = nullptr) {
    auto c = dense::sdk::make_struct<dense_op_call>();
    c.op_kind = op;
    c.n_src = static_cast<uint32_t>(src.size());
    c.src = src.data();
    c.n_dst = static_cast<uint32_t>(dst.size());
    c.dst = dst.data();
    c.params = params;
    return c;
}

const OpCandidate& candidate(const Loaded& l, dense_op_kind op, dense_type_id act) {
    const auto& c = l.manager->registry().candidates(OpKey{op, l.type, act, DENSE_DEVICE_CPU});
    if (c.empty()) throw std::runtime_error("no candidate");
    return c.front();
}

dense_status run(const OpCandidate& c, const dense_op_call& call) { return c.impl.run(c.impl.user, &call); }
bool supports(const OpCandidate& c, const dense_op_call& call) {
    return c.impl.supports == nullptr || c.impl.supports(c.impl.user, &call) != 0;
}

TEST(ExamplePack, RegistersItsFormatAndOps) {
    LOAD_EXAMPLE_OR_SKIP(l);
    const auto* p = l.manager->find_pack("example-q4m64");
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(p->usable()) << p->reason;
    EXPECT_EQ(p->abi_major, DENSE_ABI_MAJOR);
    ASSERT_EQ(p->types.size(), 1u);
    EXPECT_EQ(p->types[0].name, "example.q4_m64");
    EXPECT_GE(p->types[0].id, static_cast<dense_type_id>(DENSE_TYPE_FIRST_RUNTIME));
    EXPECT_EQ(p->types[0].block_elements, 64u);
    EXPECT_EQ(p->types[0].block_bytes, 36u);
    EXPECT_EQ(p->types[0].act_type, static_cast<dense_type_id>(DENSE_TYPE_F32));
    EXPECT_NE(p->types[0].to_float, nullptr);
    const auto ops = l.manager->registry().of_pack("example-q4m64");
    ASSERT_EQ(ops.size(), 3u);
    EXPECT_EQ(l.manager->registry().candidates(OpKey{DENSE_OP_GEMV_Q, l.type, DENSE_TYPE_F32, DENSE_DEVICE_CPU}).size(), 1u);
    EXPECT_EQ(l.manager->registry().candidates(OpKey{DENSE_OP_EMBED_ROW, l.type, DENSE_TYPE_NONE, DENSE_DEVICE_CPU}).size(), 1u);
    EXPECT_EQ(l.manager->registry().candidates(OpKey{DENSE_OP_DEQUANTIZE, l.type, DENSE_TYPE_NONE, DENSE_DEVICE_CPU}).size(), 1u);
}

TEST(ExamplePack, DequantizeAndToFloatDecodeEveryElementExactly) {
    LOAD_EXAMPLE_OR_SKIP(l);
    std::mt19937_64 rng(31);
    const int64_t n_blocks = 37;
    auto blocks = random_blocks(rng, n_blocks);
    std::vector<float> out(static_cast<size_t>(n_blocks * 64), NAN), via_traits(out.size(), NAN);
    const std::vector<dense_tensor_view> src = {view(blocks.data(), l.type, 64, n_blocks, 64, kBlockBytes)};
    const std::vector<dense_tensor_view> dst = {view(out.data(), DENSE_TYPE_F32, 64 * n_blocks, 1, 1, 4)};
    const auto call = make_call(DENSE_OP_DEQUANTIZE, src, dst);
    const auto& op = candidate(l, DENSE_OP_DEQUANTIZE, DENSE_TYPE_NONE);
    ASSERT_TRUE(supports(op, call));
    ASSERT_EQ(run(op, call), DENSE_OK);
    l.manager->find_pack("example-q4m64")->types[0].to_float(blocks.data(), via_traits.data(), n_blocks * 64);
    for (int64_t i = 0; i < n_blocks * 64; ++i) {
        const float ref = reference_element(blocks.data() + (i / 64) * kBlockBytes, static_cast<int>(i % 64));
        ASSERT_EQ(out[static_cast<size_t>(i)], ref) << i;
        ASSERT_EQ(via_traits[static_cast<size_t>(i)], ref) << i;
    }
}

TEST(ExamplePack, GemvMatchesADoubleReferenceWithAndWithoutWorkspaceAndAccumulates) {
    LOAD_EXAMPLE_OR_SKIP(l);
    std::mt19937_64 rng(32);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    const int64_t in = 320, out = 41;
    auto w = random_blocks(rng, in / 64 * out);
    std::vector<float> x(static_cast<size_t>(in));
    for (float& v : x) v = normal(rng);
    std::vector<double> ref(static_cast<size_t>(out), 0.0);
    double scale = 0.0;  // sum |w x| per row bounds the float rounding of the row's sum
    for (int64_t r = 0; r < out; ++r)
        for (int64_t j = 0; j < in; ++j) {
            const double t = static_cast<double>(reference_element(w.data() + (r * in + j) / 64 * kBlockBytes, static_cast<int>(j % 64))) * x[static_cast<size_t>(j)];
            ref[static_cast<size_t>(r)] += t;
            scale = std::max(scale, std::fabs(t));
        }
    const auto& op = candidate(l, DENSE_OP_GEMV_Q, DENSE_TYPE_F32);
    std::vector<float> y(static_cast<size_t>(out), NAN);
    const std::vector<dense_tensor_view> src = {view(w.data(), l.type, in, out, 64, kBlockBytes),
                                                view(x.data(), DENSE_TYPE_F32, in, 1, 1, 4)};
    const std::vector<dense_tensor_view> dst = {view(y.data(), DENSE_TYPE_F32, out, 1, 1, 4)};
    auto call = make_call(DENSE_OP_GEMV_Q, src, dst);
    ASSERT_TRUE(supports(op, call));
    ASSERT_NE(op.impl.workspace_bytes, nullptr);
    const uint64_t ws_bytes = op.impl.workspace_bytes(op.impl.user, &call);
    EXPECT_EQ(ws_bytes, static_cast<uint64_t>(in / 64 * 4));
    const double tol = 1e-5 * scale * static_cast<double>(in);
    std::vector<float> ws(static_cast<size_t>(ws_bytes / 4));  // outlives every call below
    for (int with_ws = 0; with_ws < 2; ++with_ws) {
        call.workspace = with_ws ? ws.data() : nullptr;
        call.workspace_bytes = with_ws ? ws_bytes : 0;
        ASSERT_EQ(run(op, call), DENSE_OK);
        for (int64_t r = 0; r < out; ++r) EXPECT_NEAR(y[static_cast<size_t>(r)], ref[static_cast<size_t>(r)], tol) << r;
    }
    // accumulate: dst += W x
    auto params = dense::sdk::make_struct<dense_gemv_params>();
    params.accumulate = 1;
    call.params = &params;
    std::vector<float> before = y;
    ASSERT_EQ(run(op, call), DENSE_OK);
    for (int64_t r = 0; r < out; ++r)
        EXPECT_NEAR(y[static_cast<size_t>(r)], before[static_cast<size_t>(r)] + ref[static_cast<size_t>(r)], 2 * tol) << r;
}

TEST(ExamplePack, EmbedRowFromInputOrParamsAndRefusesRowsOutOfRange) {
    LOAD_EXAMPLE_OR_SKIP(l);
    std::mt19937_64 rng(33);
    const int64_t d = 128, v = 9;
    auto table = random_blocks(rng, d / 64 * v);
    const auto& op = candidate(l, DENSE_OP_EMBED_ROW, DENSE_TYPE_NONE);
    std::vector<float> out(static_cast<size_t>(d), NAN);
    int32_t row = 6;
    std::vector<dense_tensor_view> src = {view(table.data(), l.type, d, v, 64, kBlockBytes),
                                          view(&row, DENSE_TYPE_I32, 1, 1, 1, 4)};
    const std::vector<dense_tensor_view> dst = {view(out.data(), DENSE_TYPE_F32, d, 1, 1, 4)};
    auto check_row = [&](int64_t r) {
        for (int64_t e = 0; e < d; ++e)
            ASSERT_EQ(out[static_cast<size_t>(e)], reference_element(table.data() + (r * d + e) / 64 * kBlockBytes, static_cast<int>(e % 64)));
    };
    auto call = make_call(DENSE_OP_EMBED_ROW, src, dst);
    ASSERT_TRUE(supports(op, call));
    ASSERT_EQ(run(op, call), DENSE_OK);
    check_row(6);
    row = 9;  // out of range: data, so only run() can see it
    EXPECT_TRUE(supports(op, call));
    EXPECT_EQ(run(op, call), DENSE_E_INVALID_ARGUMENT);

    auto params = dense::sdk::make_struct<dense_embed_row_params>();
    params.row = 2;
    src.pop_back();
    call = make_call(DENSE_OP_EMBED_ROW, src, dst, &params);
    ASSERT_EQ(run(op, call), DENSE_OK);
    check_row(2);
    params.row = -1;
    EXPECT_FALSE(supports(op, call));
    EXPECT_EQ(run(op, call), DENSE_E_INVALID_ARGUMENT);
}

TEST(ExamplePack, RefusesCallsItCannotRun) {
    LOAD_EXAMPLE_OR_SKIP(l);
    std::mt19937_64 rng(34);
    auto w = random_blocks(rng, 4);
    std::vector<float> x(128), y(2);
    const auto& op = candidate(l, DENSE_OP_GEMV_Q, DENSE_TYPE_F32);
    auto good_src = [&] {
        return std::vector<dense_tensor_view>{view(w.data(), l.type, 128, 2, 64, kBlockBytes),
                                              view(x.data(), DENSE_TYPE_F32, 128, 1, 1, 4)};
    };
    const std::vector<dense_tensor_view> dst = {view(y.data(), DENSE_TYPE_F32, 2, 1, 1, 4)};
    auto bad = [&](std::vector<dense_tensor_view> src, std::vector<dense_tensor_view> d, const char* what) {
        const auto call = make_call(DENSE_OP_GEMV_Q, src, d);
        EXPECT_FALSE(supports(op, call)) << what;
        EXPECT_EQ(run(op, call), DENSE_E_INVALID_ARGUMENT) << what;
    };
    { auto s = good_src(); s[1].type = DENSE_TYPE_F16; bad(s, dst, "activation type"); }
    { auto s = good_src(); s[1].ne[0] = 64; s[1].nb[1] = 256; bad(s, dst, "activation length"); }
    { auto s = good_src(); s[0].nb[1] = 100; bad(s, dst, "weight stride"); }
    { auto s = good_src(); s[0].device_kind = DENSE_DEVICE_CUDA; bad(s, dst, "device memory"); }
    { auto s = good_src(); s[0].ne[0] = 96; bad(s, dst, "not a block multiple"); }
    { auto s = good_src(); s.pop_back(); bad(s, dst, "missing source"); }
    { auto d2 = dst; d2[0].ne[0] = 3; bad(good_src(), d2, "output length"); }
    { auto d2 = dst; d2[0].data = w.data(); bad(good_src(), d2, "dst overlaps the weight"); }
    {  // params from another ABI major
        auto params = dense::sdk::make_struct<dense_gemv_params>();
        params.hdr.abi_major = DENSE_ABI_MAJOR + 1;
        const auto src = good_src();
        const auto call = make_call(DENSE_OP_GEMV_Q, src, dst, &params);
        EXPECT_FALSE(supports(op, call));
        EXPECT_EQ(run(op, call), DENSE_E_INVALID_ARGUMENT);
    }
    const auto src = good_src();
    EXPECT_EQ(run(op, make_call(DENSE_OP_GEMV_Q, src, dst)), DENSE_OK);  // and the good call runs
}

}  // namespace
