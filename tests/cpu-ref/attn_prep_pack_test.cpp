// cpu-ref's ATTN_PREP (ABI 1.11) through the pack's C ABI is, bit for bit, cpu-ref's RMS_NORM of the q heads
// and of the k heads, ROPE of each in place and KV_STORE, each called through the ABI one after the other
// on the same inputs: what dense_abi.h promises. This checks the call's split into the five
// (pack-common's check_attn_prep) at the 27B shape (d 256, 24 / 4 heads, partial rotary 64, q read out
// of the query+gate slices) and at an odd one with full rotary and F32 caches.
#include "cpu-ref/ops_pack_support.hpp"

#include <cstring>
#include <random>

namespace {

using namespace dense;
using namespace dense::test;

struct Shape {
    int64_t d, hq, hkv, n_rot, n_ctx;
    int32_t position;
    dense_type_id cache_type;
};

std::vector<float> uniform(std::size_t n, std::mt19937_64& rng) {
    std::uniform_real_distribution<float> u(-2.0f, 2.0f);
    std::vector<float> v(n);
    for (auto& x : v) x = u(rng);
    return v;
}

class CpuRefAttnPrep : public PackHarness {
protected:
    dense_status call(dense_op_kind kind, std::vector<dense_tensor_view> src, std::vector<dense_tensor_view> dst,
                      const void* params) {
        const dense_op_impl* impl = host_.find(kind, DENSE_TYPE_NONE, DENSE_TYPE_NONE);
        EXPECT_NE(impl, nullptr) << kind;
        if (impl == nullptr) return DENSE_E_UNSUPPORTED;
        auto c = dense::sdk::make_struct<dense_op_call>();
        c.op_kind = kind;
        c.n_src = static_cast<uint32_t>(src.size());
        c.src = src.data();
        c.n_dst = static_cast<uint32_t>(dst.size());
        c.dst = dst.data();
        c.params = params;
        return run(impl, c);
    }

    void check(const Shape& s, uint64_t seed) {
        std::mt19937_64 rng(seed);
        const auto qg = uniform(static_cast<std::size_t>(2 * s.d * s.hq), rng);  // query+gate slices
        const auto k = uniform(static_cast<std::size_t>(s.d * s.hkv), rng), v = uniform(k.size(), rng);
        const auto wq = uniform(static_cast<std::size_t>(s.d), rng), wk = uniform(wq.size(), rng);
        int32_t pos = s.position;
        const std::size_t elt = s.cache_type == DENSE_TYPE_F16 ? 2 : 4;
        const std::size_t cache_bytes = static_cast<std::size_t>(s.d * s.hkv * s.n_ctx) * elt;
        struct Out {
            std::vector<float> q, k;
            std::vector<unsigned char> kc, vc;
        };
        auto fresh = [&] {
            return Out{std::vector<float>(static_cast<std::size_t>(s.d * s.hq), -7.0f),
                       std::vector<float>(static_cast<std::size_t>(s.d * s.hkv), -7.0f),
                       std::vector<unsigned char>(cache_bytes, 0xA5), std::vector<unsigned char>(cache_bytes, 0x5A)};
        };
        Out fused = fresh(), five = fresh();
        auto* qg_in = const_cast<float*>(qg.data());
        auto* k_in = const_cast<float*>(k.data());
        auto* v_in = const_cast<float*>(v.data());
        auto* wq_in = const_cast<float*>(wq.data());
        auto* wk_in = const_cast<float*>(wk.data());

        auto p = dense::sdk::make_struct<dense_attn_prep_params>();
        p.eps = 1e-6f;
        p.n_rot = static_cast<int32_t>(s.n_rot);
        p.mode = DENSE_ROPE_NEOX;
        p.freq_base = 1e7f;
        p.freq_scale = 1.0f;
        ASSERT_EQ(call(DENSE_OP_ATTN_PREP,
                       {f32(qg_in, s.d, s.hq, 2 * s.d), f32(k_in, s.d, s.hkv), f32(v_in, s.d, s.hkv), f32(wq_in, s.d),
                        f32(wk_in, s.d), i32(&pos)},
                       {f32(fused.q.data(), s.d, s.hq), f32(fused.k.data(), s.d, s.hkv),
                        cache(fused.kc.data(), s.cache_type, s.d, s.hkv, s.n_ctx),
                        cache(fused.vc.data(), s.cache_type, s.d, s.hkv, s.n_ctx)},
                       &p),
                  DENSE_OK)
            << (host_.logs.empty() ? "" : host_.logs.back().second);

        const auto norm = norm_params(p.eps);
        const auto rope = rope_params(p.n_rot, p.freq_base, p.freq_scale);
        ASSERT_EQ(call(DENSE_OP_RMS_NORM, {f32(qg_in, s.d, s.hq, 2 * s.d), f32(wq_in, s.d)},
                       {f32(five.q.data(), s.d, s.hq)}, &norm),
                  DENSE_OK);
        ASSERT_EQ(call(DENSE_OP_RMS_NORM, {f32(k_in, s.d, s.hkv), f32(wk_in, s.d)}, {f32(five.k.data(), s.d, s.hkv)}, &norm),
                  DENSE_OK);
        ASSERT_EQ(call(DENSE_OP_ROPE, {f32(five.q.data(), s.d, s.hq), i32(&pos)}, {f32(five.q.data(), s.d, s.hq)}, &rope),
                  DENSE_OK);
        ASSERT_EQ(call(DENSE_OP_ROPE, {f32(five.k.data(), s.d, s.hkv), i32(&pos)}, {f32(five.k.data(), s.d, s.hkv)}, &rope),
                  DENSE_OK);
        ASSERT_EQ(call(DENSE_OP_KV_STORE, {f32(five.k.data(), s.d, s.hkv), f32(v_in, s.d, s.hkv), i32(&pos)},
                       {cache(five.kc.data(), s.cache_type, s.d, s.hkv, s.n_ctx),
                        cache(five.vc.data(), s.cache_type, s.d, s.hkv, s.n_ctx)},
                       nullptr),
                  DENSE_OK);
        EXPECT_EQ(std::memcmp(fused.q.data(), five.q.data(), fused.q.size() * 4), 0) << "q_out";
        EXPECT_EQ(std::memcmp(fused.k.data(), five.k.data(), fused.k.size() * 4), 0) << "k_out";
        EXPECT_EQ(fused.kc, five.kc) << "K cache";
        EXPECT_EQ(fused.vc, five.vc) << "V cache";
        EXPECT_NE(fused.q, fresh().q) << "q_out was not written";
        EXPECT_TRUE(host_.logs.empty());
    }
};

TEST_F(CpuRefAttnPrep, Qwen27bShapeIsItsFiveOps) { check({256, 24, 4, 64, 8, 5, DENSE_TYPE_F16}, 5001); }

TEST_F(CpuRefAttnPrep, OddShapeWithFullRotaryAndF32CachesIsItsFiveOps) {
    check({8, 3, 1, 8, 3, 0, DENSE_TYPE_F32}, 5002);
    check({6, 4, 2, 2, 5, 4, DENSE_TYPE_F16}, 5003);
}

}  // namespace
