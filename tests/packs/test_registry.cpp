// The op registry: keys, validation of what packs register, size-limited copies, and select()
// honouring eligibility, preference, priority, score and supports().
#include "core/error.hpp"
#include "core/type_table.hpp"
#include "pack_test_util.hpp"
#include "packs/op_registry.hpp"
#include "packs/pack_manager.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace dense::packs {
namespace {

dense_status run_ok(void*, const dense_op_call*) {
    return DENSE_OK;
}
// Accepts calls whose first source row is at most *static_cast<int64_t*>(user) long.
uint32_t supports_up_to(void* user, const dense_op_call* call) {
    return call->n_src > 0 && call->src[0].ne[0] <= *static_cast<const int64_t*>(user) ? 1u : 0u;
}

dense_op_impl impl(const char* name, int32_t priority, void* limit = nullptr) {
    dense_op_impl i{};
    i.hdr = {static_cast<uint16_t>(DENSE_ABI_MAJOR), static_cast<uint16_t>(DENSE_ABI_MINOR),
             static_cast<uint32_t>(sizeof(dense_op_impl))};
    i.op_kind = DENSE_OP_GEMV_Q;
    i.weight_type = DENSE_TYPE_Q4_K;
    i.act_type = DENSE_TYPE_Q8_K;
    i.device_kind = DENSE_DEVICE_CPU;
    i.priority = priority;
    i.name = name;
    i.user = limit;
    i.supports = limit != nullptr ? supports_up_to : nullptr;
    i.run = run_ok;
    return i;
}

const OpKey kKey{DENSE_OP_GEMV_Q, DENSE_TYPE_Q4_K, DENSE_TYPE_Q8_K, DENSE_DEVICE_CPU};

struct Call {
    dense_tensor_view src[1]{};
    dense_op_call call{};
    explicit Call(int64_t n) {
        src[0].ne[0] = n;
        src[0].ne[1] = src[0].ne[2] = src[0].ne[3] = 1;
        call.op_kind = DENSE_OP_GEMV_Q;
        call.n_src = 1;
        call.src = src;
    }
};

PackRanks ranks(std::initializer_list<std::pair<const char*, PackRank>> list) {
    PackRanks r;
    for (const auto& [name, rank] : list) r.by_pack.emplace(name, rank);
    return r;
}

TEST(OpRegistry, OpKindNamesCoverTheClosedList) {
    for (uint32_t k = 1; k < DENSE_OP_KIND_COUNT; ++k) {
        const std::string name = op_kind_name(k);
        EXPECT_FALSE(name.empty());
        EXPECT_EQ(name.rfind("op#", 0), std::string::npos) << k;
        EXPECT_EQ(op_kind_from_name(name), k) << name;
    }
    EXPECT_EQ(op_kind_name(DENSE_OP_GEMV_Q), "gemv_q");
    EXPECT_EQ(op_kind_name(DENSE_OP_GATED_RMS_NORM), "gated_rms_norm");
    EXPECT_EQ(op_kind_name(DENSE_OP_TOP_K), "top_k");
    EXPECT_EQ(op_kind_name(99), "op#99");
    EXPECT_EQ(op_kind_from_name("nope"), std::nullopt);
    EXPECT_EQ(to_string(kKey), "gemv_q(q4_k, q8_k, cpu)");
    EXPECT_EQ(type_name(DENSE_TYPE_NONE), "-");
}

TEST(OpRegistry, HigherPriorityWinsWhenItSupportsTheCall) {
    OpRegistry reg;
    static int64_t limit = 64;
    reg.add("p", impl("general", 0));
    reg.add("p", impl("small_rows_only", 10, &limit));
    const auto r = ranks({{"p", {1, 0}}});
    const OpCandidate* small = reg.select(kKey, Call(32).call, r);
    ASSERT_NE(small, nullptr);
    EXPECT_EQ(small->impl_name, "small_rows_only");
    // supports() refuses a long row: the lower priority one takes it.
    const OpCandidate* big = reg.select(kKey, Call(4096).call, r);
    ASSERT_NE(big, nullptr);
    EXPECT_EQ(big->impl_name, "general");
}

TEST(OpRegistry, NothingSupportsTheCallMeansNullptr) {
    OpRegistry reg;
    static int64_t limit = 8;
    reg.add("p", impl("tiny", 5, &limit));
    EXPECT_EQ(reg.select(kKey, Call(9).call, ranks({{"p", {1, 0}}})), nullptr);
    EXPECT_NE(reg.select(kKey, Call(8).call, ranks({{"p", {1, 0}}})), nullptr);
    EXPECT_EQ(reg.select({DENSE_OP_ROPE, DENSE_TYPE_NONE, DENSE_TYPE_F32, DENSE_DEVICE_CPU}, Call(8).call,
                         ranks({{"p", {1, 0}}})),
              nullptr);
}

TEST(OpRegistry, OnlyPacksThatCanRunOnTheDeviceAreEligible) {
    OpRegistry reg;
    reg.add("gone", impl("from_a_pack_scoring_zero", 100));
    reg.add("absent", impl("from_a_pack_not_ranked", 100));
    reg.add("here", impl("the_one", 0));
    const OpCandidate* c = reg.select(kKey, Call(16).call, ranks({{"gone", {0, 0}}, {"here", {3, 0}}}));
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->pack, "here");
}

TEST(OpRegistry, OrderIsPreferenceThenPriorityThenScoreThenRegistration) {
    OpRegistry reg;
    reg.add("a", impl("a_first", 0));
    reg.add("b", impl("b_second", 0));
    // Equal everything: the earlier registration.
    EXPECT_EQ(reg.select(kKey, Call(1).call, ranks({{"a", {5, 0}}, {"b", {5, 0}}}))->pack, "a");
    // Equal priority: the higher pack score.
    EXPECT_EQ(reg.select(kKey, Call(1).call, ranks({{"a", {5, 0}}, {"b", {9, 0}}}))->pack, "b");
    // Priority beats score.
    reg.add("a", impl("a_priority", 7));
    EXPECT_EQ(reg.select(kKey, Call(1).call, ranks({{"a", {5, 0}}, {"b", {9, 0}}}))->impl_name, "a_priority");
    // Preference beats priority.
    EXPECT_EQ(reg.select(kKey, Call(1).call, ranks({{"a", {5, 0}}, {"b", {9, 1}}}))->impl_name, "b_second");
}

TEST(OpRegistry, ValidateRejectsWhatTheHostCannotUse) {
    dense_op_impl ok = impl("ok", 0);
    EXPECT_EQ(OpRegistry::validate(&ok), "");
    EXPECT_NE(OpRegistry::validate(nullptr), "");

    dense_op_impl other_major = ok;
    other_major.hdr.abi_major = 2;
    EXPECT_NE(OpRegistry::validate(&other_major).find("ABI major 2"), std::string::npos);

    dense_op_impl too_short = ok;
    too_short.hdr.struct_size = 40;
    EXPECT_NE(OpRegistry::validate(&too_short).find("struct_size 40"), std::string::npos);

    dense_op_impl bad_kind = ok;
    bad_kind.op_kind = DENSE_OP_KIND_COUNT;
    EXPECT_NE(OpRegistry::validate(&bad_kind).find("op kind"), std::string::npos);
    bad_kind.op_kind = 0;
    EXPECT_NE(OpRegistry::validate(&bad_kind).find("op kind"), std::string::npos);

    dense_op_impl no_run = ok;
    no_run.run = nullptr;
    EXPECT_NE(OpRegistry::validate(&no_run).find("run is NULL"), std::string::npos);

    dense_op_impl bad_type = ok;
    bad_type.weight_type = 777;  // not a ggml type we know, not a registered runtime type
    EXPECT_NE(OpRegistry::validate(&bad_type).find("weight type"), std::string::npos);

    dense_op_impl bad_device = ok;
    bad_device.device_kind = 9;
    EXPECT_NE(OpRegistry::validate(&bad_device).find("device kind"), std::string::npos);

    OpRegistry reg;
    EXPECT_THROW(reg.add("p", no_run), Error);
    EXPECT_EQ(reg.size(), 0u);
}

TEST(OpRegistry, CopiesOnlyTheBytesTheWriterDeclared) {
    // A writer of a newer minor: a longer struct whose tail the host must neither read nor keep.
    struct Longer {
        dense_op_impl base;
        unsigned char tail[64];
    } longer{};
    longer.base = impl("longer", 4);
    longer.base.hdr.abi_minor = static_cast<uint16_t>(DENSE_ABI_MINOR + 3);
    longer.base.hdr.struct_size = static_cast<uint32_t>(sizeof(Longer));
    std::fill(std::begin(longer.tail), std::end(longer.tail), static_cast<unsigned char>(0xAB));
    OpRegistry reg;
    reg.add("new", longer.base);
    const auto& c = reg.candidates(kKey);
    ASSERT_EQ(c.size(), 1u);
    EXPECT_EQ(c[0].impl.hdr.struct_size, sizeof(dense_op_impl));
    EXPECT_EQ(c[0].impl.hdr.abi_minor, DENSE_ABI_MINOR + 3);
    EXPECT_EQ(c[0].priority, 4);
    EXPECT_EQ(c[0].impl_name, "longer");
}

TEST(OpRegistry, RemovePackTakesAllItsCandidates) {
    OpRegistry reg;
    reg.add("x", impl("x1", 0));
    reg.add("y", impl("y1", 0));
    dense_op_impl rope = impl("x2", 0);
    rope.op_kind = DENSE_OP_ROPE;
    reg.add("x", rope);
    EXPECT_EQ(reg.size(), 3u);
    EXPECT_EQ(reg.of_pack("x").size(), 2u);
    EXPECT_EQ(reg.remove_pack("x"), 2u);
    EXPECT_EQ(reg.size(), 1u);
    EXPECT_TRUE(reg.of_pack("x").empty());
    EXPECT_EQ(reg.all().size(), 1u);  // the emptied key is gone
}

// Through a real pack: test-minimal registers a general RMS norm and a priority-10 one that only
// supports rows whose length is a multiple of 4. Both compute the same thing; check it.
TEST(OpRegistry, RealPackSelectionAndRun) {
    DENSE_REQUIRE_TEST_PACKS();
    PackManager m(test::only({test::test_pack("test-minimal")}), test::devices_with(""));
    m.load();
    const OpKey key{DENSE_OP_RMS_NORM, DENSE_TYPE_F32, DENSE_TYPE_F32, DENSE_DEVICE_CPU};

    std::mt19937 rng(1234);
    std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
    for (const int64_t n : {64, 30}) {
        std::vector<float> x(static_cast<size_t>(n)), w(static_cast<size_t>(n)), y(static_cast<size_t>(n), 0.0f);
        for (auto& v : x) v = dist(rng);
        for (auto& v : w) v = dist(rng);
        dense_tensor_view src[2]{}, dst[1]{};
        for (auto* v : {&src[0], &src[1], &dst[0]}) {
            v->type = DENSE_TYPE_F32;
            v->ne[0] = n;
            v->ne[1] = v->ne[2] = v->ne[3] = 1;
            v->nb[0] = 4;
        }
        src[0].data = x.data();
        src[1].data = w.data();
        dst[0].data = y.data();
        dense_op_call call{};
        call.op_kind = DENSE_OP_RMS_NORM;
        call.n_src = 2;
        call.src = src;
        call.n_dst = 1;
        call.dst = dst;

        const OpCandidate* c = m.select_op(key, call, 0);
        ASSERT_NE(c, nullptr);
        EXPECT_EQ(c->impl_name, n % 4 == 0 ? "rms_norm_vec4" : "rms_norm_general");
        ASSERT_EQ(c->impl.run(c->impl.user, &call), DENSE_OK);
        double ss = 0.0;
        for (float v : x) ss += static_cast<double>(v) * v;
        const double scale = 1.0 / std::sqrt(ss / static_cast<double>(n) + 1e-6);
        for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(y[i], x[i] * scale * w[i], 1e-5) << i;
    }
}

}  // namespace
}  // namespace dense::packs
