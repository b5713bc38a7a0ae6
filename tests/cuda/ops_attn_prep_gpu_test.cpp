// ATTN_PREP (ABI 1.11) on the GPU: one kernel for a full-attention layer's RMS_NORM of the q and k heads,
// ROPE of both and KV_STORE (ops_attn_prep.cu).
//
// 1. Byte for byte the five ops: the contract (dense_abi.h) is that ATTN_PREP leaves exactly what the
//    five calls of the same pack leave, so q_out, k_out and both whole caches are compared bit for bit
//    with the five CUDA launches on the same inputs: at the 27B shape (d 256, 24 / 4 heads, q read out of
//    the query+gate slices, partial rotary 64, freq_base 1e7) at positions 0, 5 and 40000 (F16 caches,
//    so the store's rounding is covered), at an odd shape with full rotary and F32 caches, and at
//    positions outside the cache (-1: NaN rotated dims and nothing stored; n_ctx: nothing stored).
//    Outputs start as poison, and download_matrix fails on any write outside a view.
// 2. Against cpu-ref (its five ops in double) with F32 caches. Tolerances: q_out, k_out and the K cache
//    <= 4e-6 relative + 4e-6 of max|want| (the norm's 2e-6, ops_norm_gpu_test, then the rotation's few
//    ulp of max(|x|, |y|), ops_rope); the V cache is a copy: exact.
#include "common/scoped_env.hpp"
#include "cuda/gpu_ops_support.hpp"

#include "kernels/ops.hpp"

#include <gtest/gtest.h>

#include <cstring>

namespace dense::test::cuda {
namespace {

struct PrepShape {
    int64_t d, hq, hkv, n_rot, n_ctx;
    int32_t position;
    dense_type_id cache_type;
    std::string label;
};

struct PrepInputs {
    std::vector<float> qg, k, v, wq, wk;
};

// Device buffers for one way of running the step: inputs uploaded, q_out / k_out poisoned, the caches
// filled with one byte pattern.
struct PrepBuffers {
    DevMatrix qg, k, v, wq, wk, q_out, k_out;
    DevScalar pos;
    DeviceBuffer kc, vc;
    std::size_t cache_bytes = 0;
    dense_tensor_view kc_view{}, vc_view{};

    PrepBuffers(GpuSession& gpu, const PrepShape& s, const PrepInputs& in) {
        qg = upload_matrix(gpu, &in.qg, 2 * s.d, s.hq);
        k = upload_matrix(gpu, &in.k, s.d, s.hkv);
        v = upload_matrix(gpu, &in.v, s.d, s.hkv);
        wq = upload_matrix(gpu, &in.wq, s.d, 1);
        wk = upload_matrix(gpu, &in.wk, s.d, 1);
        q_out = upload_matrix(gpu, nullptr, s.d, s.hq);
        k_out = upload_matrix(gpu, nullptr, s.d, s.hkv);
        pos = upload_i32(gpu, s.position);
        const uint32_t elem = s.cache_type == DENSE_TYPE_F16 ? 2 : 4;
        cache_bytes = static_cast<std::size_t>(s.d * s.hkv * s.n_ctx) * elem;
        const std::vector<uint8_t> fill(cache_bytes, 0x3C);
        kc = gpu.alloc(cache_bytes);
        vc = gpu.alloc(cache_bytes);
        if (kc.get() != nullptr) gpu.upload(kc.get(), fill.data(), cache_bytes);
        if (vc.get() != nullptr) gpu.upload(vc.get(), fill.data(), cache_bytes);
        kc_view = cuda_view(kc.get(), s.cache_type, 1, elem, {s.d, s.hkv, s.n_ctx});
        vc_view = cuda_view(vc.get(), s.cache_type, 1, elem, {s.d, s.hkv, s.n_ctx});
    }
    // The query halves of the query+gate slices: {d, hq}, rows 2 d apart.
    dense_tensor_view q_view(const PrepShape& s) const { return f32_view(qg.row_ptr(0), s.d, s.hq, 2 * s.d); }

    struct Result {
        std::vector<float> q, k;
        std::vector<uint8_t> kc, vc;
    };
    Result download(GpuSession& gpu) const {
        Result r{download_matrix(gpu, q_out), download_matrix(gpu, k_out), std::vector<uint8_t>(cache_bytes),
                 std::vector<uint8_t>(cache_bytes)};
        gpu.download(r.kc.data(), kc.get(), cache_bytes);
        gpu.download(r.vc.data(), vc.get(), cache_bytes);
        return r;
    }
};

dense_attn_prep_params prep_params(const PrepShape& s) {
    auto p = make_params<dense_attn_prep_params>();
    p.eps = 1e-6f;
    p.n_rot = static_cast<int32_t>(s.n_rot);
    p.mode = DENSE_ROPE_NEOX;
    p.freq_base = 1e7f;
    p.freq_scale = 1.0f;
    return p;
}

void run_fused(GpuSession& gpu, const PrepShape& s, PrepBuffers& d) {
    const auto p = prep_params(s);
    run_op(gpu, DENSE_OP_ATTN_PREP, {d.q_view(s), d.k.view, d.v.view, d.wq.view, d.wk.view, d.pos.view},
           {d.q_out.view, d.k_out.view, d.kc_view, d.vc_view}, &p, s.label + " ATTN_PREP");
}

// The five ops ATTN_PREP stands for, as the token step's graph ran them before (step_lowering.cpp).
void run_five(GpuSession& gpu, const PrepShape& s, PrepBuffers& d) {
    const auto p = prep_params(s);
    auto norm = make_params<dense_norm_params>();
    norm.eps = p.eps;
    auto rope = make_params<dense_rope_params>();
    rope.n_rot = p.n_rot;
    rope.mode = p.mode;
    rope.freq_base = p.freq_base;
    rope.freq_scale = p.freq_scale;
    run_op(gpu, DENSE_OP_RMS_NORM, {d.q_view(s), d.wq.view}, {d.q_out.view}, &norm, s.label + " norm q");
    if (::testing::Test::HasFatalFailure()) return;
    run_op(gpu, DENSE_OP_RMS_NORM, {d.k.view, d.wk.view}, {d.k_out.view}, &norm, s.label + " norm k");
    if (::testing::Test::HasFatalFailure()) return;
    run_op(gpu, DENSE_OP_ROPE, {d.q_out.view, d.pos.view}, {d.q_out.view}, &rope, s.label + " rope q");
    if (::testing::Test::HasFatalFailure()) return;
    run_op(gpu, DENSE_OP_ROPE, {d.k_out.view, d.pos.view}, {d.k_out.view}, &rope, s.label + " rope k");
    if (::testing::Test::HasFatalFailure()) return;
    run_op(gpu, DENSE_OP_KV_STORE, {d.k_out.view, d.v.view, d.pos.view}, {d.kc_view, d.vc_view}, nullptr,
           s.label + " kv_store");
}

PrepInputs random_inputs(const PrepShape& s, std::mt19937_64& rng) {
    return {uniform(static_cast<std::size_t>(2 * s.d * s.hq), rng, -3.0f, 3.0f),
            uniform(static_cast<std::size_t>(s.d * s.hkv), rng, -3.0f, 3.0f),
            uniform(static_cast<std::size_t>(s.d * s.hkv), rng, -3.0f, 3.0f),
            uniform(static_cast<std::size_t>(s.d), rng, 0.5f, 1.5f), uniform(static_cast<std::size_t>(s.d), rng, 0.5f, 1.5f)};
}

bool same_floats_or_nans(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

void check_bits(GpuSession& gpu, const PrepShape& s, uint64_t seed) {
    std::mt19937_64 rng(seed);
    const PrepInputs in = random_inputs(s, rng);
    PrepBuffers fused(gpu, s, in), five(gpu, s, in);
    run_fused(gpu, s, fused);
    if (::testing::Test::HasFatalFailure()) return;
    run_five(gpu, s, five);
    if (::testing::Test::HasFatalFailure()) return;
    const auto got = fused.download(gpu), want = five.download(gpu);
    EXPECT_TRUE(same_floats_or_nans(got.q, want.q)) << s.label << ": q_out";
    EXPECT_TRUE(same_floats_or_nans(got.k, want.k)) << s.label << ": k_out";
    EXPECT_TRUE(got.kc == want.kc) << s.label << ": K cache";
    EXPECT_TRUE(got.vc == want.vc) << s.label << ": V cache";
    const bool stored = s.position >= 0 && s.position < s.n_ctx;
    EXPECT_EQ(got.kc == std::vector<uint8_t>(got.kc.size(), 0x3C), !stored) << s.label << ": the K cache slot";
}

TEST(CudaAttnPrep, Qwen27bShapeIsTheFiveOpsBitForBit) {
    DENSE_REQUIRE_GPU(gpu);
    const ScopedEnv kernel_on("DENSE_CUDA_ATTN_PREP", nullptr);  // the default: the kernel
    for (const int32_t pos : {0, 5, 40000}) {
        check_bits(gpu, {256, 24, 4, 64, 40001, pos, DENSE_TYPE_F16, "27B pos " + std::to_string(pos)},
                   6000 + static_cast<uint64_t>(pos));
        if (HasFatalFailure()) return;
    }
}

TEST(CudaAttnPrep, OddShapesAndPositionsOutsideTheCacheAreTheFiveOpsBitForBit) {
    DENSE_REQUIRE_GPU(gpu);
    const ScopedEnv kernel_on("DENSE_CUDA_ATTN_PREP", nullptr);  // the default: the kernel
    check_bits(gpu, {8, 3, 1, 8, 4, 2, DENSE_TYPE_F32, "odd {d 8, 3/1, full rotary, F32}"}, 6101);
    if (HasFatalFailure()) return;
    check_bits(gpu, {40, 6, 3, 10, 4, 3, DENSE_TYPE_F16, "odd {d 40, 6/3, n_rot 10}"}, 6102);
    if (HasFatalFailure()) return;
    check_bits(gpu, {256, 24, 4, 64, 8, -1, DENSE_TYPE_F16, "27B pos -1"}, 6103);
    if (HasFatalFailure()) return;
    check_bits(gpu, {256, 24, 4, 64, 8, 8, DENSE_TYPE_F16, "27B pos = n_ctx"}, 6104);
}

TEST(CudaAttnPrep, WithTheSwitchOffRunsTheFiveLaunches) {
    DENSE_REQUIRE_GPU(gpu);
    const ScopedEnv kernel_off("DENSE_CUDA_ATTN_PREP", "0");
    check_bits(gpu, {256, 24, 4, 64, 16, 7, DENSE_TYPE_F16, "27B, DENSE_CUDA_ATTN_PREP=0"}, 6201);
}

TEST(CudaAttnPrep, MatchesCpuRefAtThe27bShape) {
    DENSE_REQUIRE_GPU(gpu);
    const ScopedEnv kernel_on("DENSE_CUDA_ATTN_PREP", nullptr);  // the default: the kernel
    const PrepShape s{256, 24, 4, 64, 16, 11, DENSE_TYPE_F32, "27B vs cpu-ref"};
    std::mt19937_64 rng(6301);
    const PrepInputs in = random_inputs(s, rng);
    PrepBuffers dev(gpu, s, in);
    run_fused(gpu, s, dev);
    if (HasFatalFailure()) return;
    const auto got = dev.download(gpu);

    const auto p = prep_params(s);
    std::vector<float> q(static_cast<std::size_t>(s.d * s.hq)), k(static_cast<std::size_t>(s.d * s.hkv));
    cpuref::rms_norm(in.qg.data(), 2 * s.d, in.wq.data(), q.data(), s.d, s.d, s.hq, p.eps);
    cpuref::rms_norm(in.k.data(), s.d, in.wk.data(), k.data(), s.d, s.d, s.hkv, p.eps);
    cpuref::rope_neox(q.data(), s.d, q.data(), s.d, s.d, s.hq, s.n_rot, s.position, p.freq_base, p.freq_scale);
    cpuref::rope_neox(k.data(), s.d, k.data(), s.d, s.d, s.hkv, s.n_rot, s.position, p.freq_base, p.freq_scale);
    std::vector<uint8_t> kc(dev.cache_bytes, 0x3C), vc(dev.cache_bytes, 0x3C);
    cpuref::kv_store(DENSE_TYPE_F32, k.data(), s.d, in.v.data(), s.d, s.d, s.hkv, s.position, kc.data(), vc.data());
    EXPECT_TRUE(near_rel(got.q, q, 4e-6, 4e-6 * max_abs(q), s.label + " q_out"));
    EXPECT_TRUE(near_rel(got.k, k, 4e-6, 4e-6 * max_abs(k), s.label + " k_out"));
    std::vector<float> got_kc(dev.cache_bytes / 4), want_kc(dev.cache_bytes / 4);
    std::memcpy(got_kc.data(), got.kc.data(), dev.cache_bytes);
    std::memcpy(want_kc.data(), kc.data(), dev.cache_bytes);
    EXPECT_TRUE(near_rel(got_kc, want_kc, 4e-6, 4e-6 * max_abs(k), s.label + " K cache"));
    EXPECT_TRUE(got.vc == vc) << s.label << ": the V cache is a copy and must be exact";
}

}  // namespace
}  // namespace dense::test::cuda
