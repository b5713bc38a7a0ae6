// ATTN_DECODE on the GPU against the cpu-ref oracle: fresh seeded random caches (F16 and F32), the
// Qwen3.5-27B shape (head_dim 256, 24 query heads, 4 KV heads, the sigmoid gate and the query read
// strided out of the interleaved query+gate projection) at n_kv = 1, 2, 64 (single pass), 65, 1024,
// 1025, 8192 and 32768 (split over partitions + fp64 merge), odd shapes (head_dim 37: no vector
// loads; groups of 10 query heads: two head blocks; n_ctx <= 64: no workspace at all), a context of
// 262144 (partitions longer than the minimum, fewer used than the grid has), and n_kv outside
// [1, n_ctx] (dst becomes NaN).
//
// Tolerance: |got - want| <= 2e-6 * max|V| + 2e-6 * |want|, at every n_kv up to 262144. Why: each
// score is an fp32 dot product (worst case ~13 * 2^-24 * sum |q_e k_e| * scale, ~1e-5 absolute for
// these inputs; a random-walk ~sqrt(n) * 2^-24 in practice), which moves softmax weights by that
// relative amount and the output by that times max|V|; the fp32 softmax and P.V sums over <= 32 +
// tiles terms add ~1e-7 relative; the cross-partition merge is fp64; cpu-ref computes the head in
// double and rounds once. Measured on an H200: worst error 1.1e-7 (n_kv = 2), <= 3e-9 at 32768, so
// the bound has a >= 18x margin, and it still catches a single position dropped or counted twice
// at n_kv = 32768 (which moves the output by ~p_j |V_j - o| ~ 3e-5).
// The tensor-core kernel (F16 caches, head sizes a multiple of 32 up to 256; ops_attention_mma.cu)
// meets the same bound: q and p are split exactly into two f16 halves (each represented to ~2^-22
// of its largest element), the products with the f16 cache are exact, and the tensor core's fp32
// sums are kept to chains of <= 4 mma. Measured on an H100 (session 37): worst error / tolerance
// 0.048 at the 27B shape (0.0515 for the fp32 kernel in the same run), 0.088 over every case here;
// each case prints its margin as "[ attn ] ...".
#include "cuda/gpu_ops_support.hpp"

#include "core/half.hpp"
#include "kernels/ops.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <limits>

namespace dense::test::cuda {
namespace {

struct HostCache {
    std::vector<uint8_t> bytes;  // {d, hkv, n_ctx} of F16 or F32
    double max_abs = 0;
};

HostCache random_cache(dense_type_id type, int64_t elements, std::mt19937_64& rng) {
    HostCache c;
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    const std::size_t n = static_cast<std::size_t>(elements);
    c.bytes.resize(n * (type == DENSE_TYPE_F16 ? 2 : 4));
    for (std::size_t i = 0; i < n; ++i) {
        const float v = u(rng);
        c.max_abs = std::max(c.max_abs, std::fabs(static_cast<double>(v)));
        if (type == DENSE_TYPE_F16) {
            const uint16_t h = fp32_to_fp16(v);
            std::memcpy(c.bytes.data() + 2 * i, &h, 2);
        } else {
            std::memcpy(c.bytes.data() + 4 * i, &v, 4);
        }
    }
    return c;
}

struct AttnCase {
    int64_t d, hq, hkv, n_ctx;
    dense_type_id type;
    bool gated;
    bool interleaved;  // q and gate inside one {2d, hq} query+gate buffer (strided views), as in the model
    float q_range;     // q in [-q_range, q_range]: larger = peakier softmax
    std::vector<int32_t> n_kvs;
    std::string label;
};

void check_attention(GpuSession& gpu, const AttnCase& k, uint64_t seed) {
    std::mt19937_64 rng(seed);
    const int64_t d = k.d, hq = k.hq;
    const uint32_t elem = k.type == DENSE_TYPE_F16 ? 2 : 4;
    const HostCache kc = random_cache(k.type, d * k.hkv * k.n_ctx, rng);
    const HostCache vc = random_cache(k.type, d * k.hkv * k.n_ctx, rng);
    DeviceBuffer dkc = gpu.alloc(kc.bytes.size()), dvc = gpu.alloc(vc.bytes.size());
    ASSERT_NE(dkc.get(), nullptr);
    ASSERT_NE(dvc.get(), nullptr);
    gpu.upload(dkc.get(), kc.bytes.data(), kc.bytes.size());
    gpu.upload(dvc.get(), vc.bytes.data(), vc.bytes.size());
    const dense_tensor_view kview = cuda_view(dkc.get(), k.type, 1, elem, {d, k.hkv, k.n_ctx});
    const dense_tensor_view vview = cuda_view(dvc.get(), k.type, 1, elem, {d, k.hkv, k.n_ctx});
    auto p = make_params<dense_attn_params>();
    p.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));

    for (const int32_t n_kv : k.n_kvs) {
        const auto q = uniform(static_cast<std::size_t>(d * hq), rng, -k.q_range, k.q_range);
        const auto gate = uniform(static_cast<std::size_t>(d * hq), rng, -4.0f, 4.0f);
        std::vector<float> want(q.size());
        cpuref::AttnDecodeArgs a;
        a.q = q.data();
        a.q_stride = d;
        a.gate = k.gated ? gate.data() : nullptr;
        a.gate_stride = d;
        a.cache_type = k.type;
        a.k_cache = kc.bytes.data();
        a.v_cache = vc.bytes.data();
        a.d = d;
        a.hq = hq;
        a.hkv = k.hkv;
        a.n_kv = n_kv;
        a.scale = p.scale;
        a.out = want.data();
        cpuref::attn_decode(a);

        // Device q (and gate): either one interleaved {2d, hq} buffer or separate contiguous ones.
        DevMatrix qg, dq, dg;
        dense_tensor_view qv{}, gv{};
        if (k.interleaved) {
            std::vector<float> packed(static_cast<std::size_t>(2 * d * hq));
            for (int64_t h = 0; h < hq; ++h) {
                std::copy_n(q.begin() + h * d, d, packed.begin() + 2 * h * d);
                std::copy_n(gate.begin() + h * d, d, packed.begin() + 2 * h * d + d);
            }
            qg = upload_matrix(gpu, &packed, 2 * d, hq);
            qv = f32_view(qg.row_ptr(0), d, hq, 2 * d);
            gv = f32_view(qg.row_ptr(0) + d, d, hq, 2 * d);
        } else {
            dq = upload_matrix(gpu, &q, d, hq);
            qv = dq.view;
            if (k.gated) {
                dg = upload_matrix(gpu, &gate, d, hq);
                gv = dg.view;
            }
        }
        DevScalar dn = upload_i32(gpu, n_kv);
        DevMatrix out = upload_matrix(gpu, nullptr, d, hq);
        std::vector<dense_tensor_view> src = {qv, kview, vview, dn.view};
        if (k.gated) src.push_back(gv);
        const std::string label = k.label + " n_kv = " + std::to_string(n_kv);
        run_op(gpu, DENSE_OP_ATTN_DECODE, src, {out.view}, &p, label);
        if (::testing::Test::HasFatalFailure()) return;
        const double abs_tol = 2e-6 * std::max(vc.max_abs, 1e-30);
        const std::vector<float> got = download_matrix(gpu, out);
        EXPECT_TRUE(near_rel(got, want, 2e-6, abs_tol, "attention " + label));
        // The margin, for the tolerance's record (the header's measured worst).
        double worst = 0;
        for (std::size_t i = 0; i < got.size() && i < want.size(); ++i)
            worst = std::max(worst, std::fabs(static_cast<double>(got[i]) - want[i]) /
                                        (2e-6 * std::fabs(static_cast<double>(want[i])) + abs_tol));
        std::printf("[ attn     ] %s: worst error / tolerance %.3g\n", label.c_str(), worst);
    }
}

TEST(CudaAttnDecode, Qwen27bShapeF16CacheSinglePassAndSplitUpTo32K) {
    DENSE_REQUIRE_GPU(gpu);
    check_attention(gpu,
                    {256, 24, 4, 32768, DENSE_TYPE_F16, true, true, 3.0f, {1, 2, 64, 65, 1024, 1025, 8192, 32768},
                     "27B f16 {256, 24/4} gated, n_ctx 32768,"},
                    1001);
}

TEST(CudaAttnDecode, F32CacheAndFlatSoftmax) {
    DENSE_REQUIRE_GPU(gpu);
    check_attention(gpu,
                    {256, 24, 4, 2048, DENSE_TYPE_F32, true, false, 3.0f, {7, 1500, 2048},
                     "f32 {256, 24/4} gated, n_ctx 2048,"},
                    1002);
    check_attention(gpu,
                    {256, 24, 4, 4096, DENSE_TYPE_F16, false, false, 0.2f, {4096},
                     "f16 {256, 24/4} near-uniform softmax, n_ctx 4096,"},
                    1003);
}

TEST(CudaAttnDecode, OddShapes) {
    DENSE_REQUIRE_GPU(gpu);
    check_attention(gpu,
                    {37, 6, 2, 1500, DENSE_TYPE_F16, false, false, 4.0f, {1, 500, 1024, 1025, 1300, 1500},
                     "odd f16 {37, 6/2} (scalar loads), n_ctx 1500,"},
                    1004);
    check_attention(gpu,
                    {64, 20, 2, 3000, DENSE_TYPE_F16, true, true, 3.0f, {999, 3000},
                     "f16 {64, 20/2}: 10 query heads per KV head (two head blocks), n_ctx 3000,"},
                    1005);
    check_attention(gpu,
                    {12, 4, 4, 64, DENSE_TYPE_F32, true, false, 3.0f, {1, 33, 64},
                     "f32 {12, 4/4} (no GQA), n_ctx 64 (single pass only, no workspace),"},
                    1006);
    check_attention(gpu,
                    {5, 3, 1, 1, DENSE_TYPE_F16, true, false, 3.0f, {1}, "f16 {5, 3/1}, n_ctx 1,"}, 1007);
}

// F16 caches with head sizes that are a multiple of 32 up to 256 go to the tensor-core kernel
// (ops_attention_mma.cu) unless DENSE_CUDA_ATTN_MMA=0; the rest to the fp32 one. These cases reach
// its edges: the smallest head (one 32-dim slice, one warp doing P.V), a head of three slices, 8
// query heads filling all the A operand's rows (16 heads per KV head: two head blocks), histories
// that end inside a 64-position tile and partitions that hold an odd number of 32-position tiles
// (n_kv 8999 at n_ctx 9000: five), the spread (one head per block) and grouped blocks, very peaky and
// near-flat softmax, and queries from 6 down to 1e-3 in size (q's power-of-two scaling). The d = 40
// case keeps the fp32 kernel's
// 16-byte F16 path under test (40 is not a multiple of 32).
TEST(CudaAttnDecode, TensorCoreKernelEdges) {
    DENSE_REQUIRE_GPU(gpu);
    check_attention(gpu,
                    {32, 4, 2, 5000, DENSE_TYPE_F16, true, false, 3.0f, {1, 63, 64, 65, 97, 700, 4999},
                     "f16 {32, 4/2}, n_ctx 5000,"},
                    1010);
    check_attention(gpu,
                    {96, 12, 3, 3000, DENSE_TYPE_F16, false, false, 6.0f, {2, 130, 1000, 2999},
                     "f16 {96, 12/3} peaky, n_ctx 3000,"},
                    1011);
    check_attention(gpu,
                    {128, 32, 2, 2500, DENSE_TYPE_F16, true, true, 0.05f, {17, 1200, 2500},
                     "f16 {128, 32/2} (8 heads a block, two head blocks) near-flat, n_ctx 2500,"},
                    1012);
    check_attention(gpu,
                    {256, 24, 4, 9000, DENSE_TYPE_F16, true, true, 1e-3f, {5, 640, 641, 8999},
                     "f16 {256, 24/4} tiny q, n_ctx 9000,"},
                    1013);
    check_attention(gpu,
                    {40, 12, 4, 2000, DENSE_TYPE_F16, true, false, 3.0f, {3, 1999},
                     "f16 {40, 12/4} (fp32 kernel, 16-byte loads), n_ctx 2000,"},
                    1014);
}

TEST(CudaAttnDecode, LongContextUsesLongerPartitions) {
    DENSE_REQUIRE_GPU(gpu);
    check_attention(gpu,
                    {64, 8, 2, 262144, DENSE_TYPE_F16, true, false, 3.0f, {2000, 40000, 262144},
                     "f16 {64, 8/2}, n_ctx 262144,"},
                    1008);
}

// cpu-ref refuses n_kv outside [1, n_ctx]; the GPU only sees the value in the kernel, which fills dst
// with NaN (and touches nothing else). Head size 16 runs the fp32 kernel, 64 the tensor-core one.
TEST(CudaAttnDecode, OutOfRangeNkvGivesNan) {
    DENSE_REQUIRE_GPU(gpu);
    std::mt19937_64 rng(1009);
    for (const int64_t d : {int64_t{16}, int64_t{64}}) {
        for (const int64_t n_ctx : {int64_t{100}, int64_t{5000}}) {
            const int64_t hq = 4, hkv = 2;
            const HostCache kc = random_cache(DENSE_TYPE_F16, d * hkv * n_ctx, rng);
            DeviceBuffer dkc = gpu.alloc(kc.bytes.size()), dvc = gpu.alloc(kc.bytes.size());
            gpu.upload(dkc.get(), kc.bytes.data(), kc.bytes.size());
            gpu.upload(dvc.get(), kc.bytes.data(), kc.bytes.size());
            const auto kview = cuda_view(dkc.get(), DENSE_TYPE_F16, 1, 2, {d, hkv, n_ctx});
            const auto vview = cuda_view(dvc.get(), DENSE_TYPE_F16, 1, 2, {d, hkv, n_ctx});
            const auto q = uniform(static_cast<std::size_t>(d * hq), rng);
            DevMatrix dq = upload_matrix(gpu, &q, d, hq);
            auto p = make_params<dense_attn_params>();
            p.scale = 0.25f;
            for (const int32_t n_kv :
                 {0, -5, static_cast<int32_t>(n_ctx + 1), std::numeric_limits<int32_t>::max()}) {
                DevScalar dn = upload_i32(gpu, n_kv);
                DevMatrix out = upload_matrix(gpu, nullptr, d, hq);
                const std::string label =
                    "d " + std::to_string(d) + " n_ctx " + std::to_string(n_ctx) + " n_kv " + std::to_string(n_kv);
                run_op(gpu, DENSE_OP_ATTN_DECODE, {dq.view, kview, vview, dn.view}, {out.view}, &p, label);
                if (HasFatalFailure()) return;
                for (float v : download_matrix(gpu, out)) ASSERT_TRUE(std::isnan(v)) << label;
            }
        }
    }
}

}  // namespace
}  // namespace dense::test::cuda
