// The fused-quantization variants of RMS_NORM, GATED_RMS_NORM and SWIGLU (dense_abi.h: registered
// with act_type Q8_32, they also write dst1 = dst0 in Q8_32) on the GPU. Bit-exact twice over, no
// tolerance: dst0 equals the plain op's output bit for bit (same kernel arithmetic), and dst1 equals
// cpu-ref's QUANTIZE_ACT of that output byte for byte (the GPU quantizer is bit-exact with cpu-ref,
// gemv_gpu_test.cpp). Fresh seeded random inputs at the 27B shapes, with some all-zero 32-element
// blocks (the d = 0 path) where the op lets an input make them.
#include "cuda/gemv_test_support.hpp"
#include "cuda/gpu_ops_support.hpp"

#include <gtest/gtest.h>

#include <cstring>

namespace dense::test::cuda {
namespace {

struct Q8_32Buffer {
    DeviceBuffer buf;
    int64_t n = 0;
    uint64_t bytes() const { return static_cast<uint64_t>(n) / 32 * 40; }
    dense_tensor_view view() const { return cuda_view(buf.get(), DENSE_TYPE_Q8_32, 32, 40, {n}); }
};

Q8_32Buffer poisoned_q8_32(GpuSession& gpu, int64_t n) {
    Q8_32Buffer q;
    q.n = n;
    q.buf = gpu.alloc(q.bytes());
    const auto fill = poison(static_cast<int64_t>(q.bytes() / 4));
    gpu.upload(q.buf.get(), fill.data(), q.bytes());
    return q;
}

std::vector<uint8_t> download(GpuSession& gpu, const Q8_32Buffer& q) {
    std::vector<uint8_t> host(q.bytes());
    gpu.download(host.data(), q.buf.get(), q.bytes());
    return host;
}

// Runs the plain op into a fresh output, then the fused op into another fresh output + a Q8_32
// buffer, and holds both to the rules above.
void check_fused(GpuSession& gpu, dense_op_kind kind, std::vector<dense_tensor_view> src, int64_t n, int64_t rows,
                 const void* params, const std::string& label) {
    DevMatrix plain_out = upload_matrix(gpu, nullptr, n, rows);
    run_op(gpu, kind, src, {plain_out.view}, params, label + " (plain)");
    if (::testing::Test::HasFatalFailure()) return;
    const std::vector<float> want = download_matrix(gpu, plain_out);

    DevMatrix fused_out = upload_matrix(gpu, nullptr, n, rows);
    Q8_32Buffer q = poisoned_q8_32(gpu, n * rows);
    run_op(gpu, kind, src, {fused_out.view, q.view()}, params, label + " (fused)", DENSE_TYPE_Q8_32);
    if (::testing::Test::HasFatalFailure()) return;
    EXPECT_TRUE(same_bits(download_matrix(gpu, fused_out), want)) << label << ": dst0 differs from the plain op";
    const Q832 expected = quantize_q8_32(want);
    const std::vector<uint8_t> got = download(gpu, q);
    ASSERT_EQ(got.size(), expected.bytes.size());
    int64_t first_bad = -1;
    for (size_t i = 0; i < got.size() && first_bad < 0; ++i)
        if (got[i] != expected.bytes[i]) first_bad = static_cast<int64_t>(i);
    EXPECT_EQ(first_bad, -1) << label << ": the quantized copy differs from cpu-ref's quantization of dst0 at byte "
                             << first_bad << " of " << got.size() << " (codes, then d, then s)";
}

TEST(CudaFusedQuantize, RmsNormWritesItsOutputAndTheExactQ8_32Copy) {
    DENSE_REQUIRE_GPU(gpu);
    std::mt19937_64 rng(901);
    for (const int64_t n : {int64_t{5120}, int64_t{17408}, int64_t{96}}) {
        const auto x = uniform(static_cast<std::size_t>(n), rng, -3.0f, 3.0f);
        auto w = uniform(static_cast<std::size_t>(n), rng, 0.5f, 1.5f);
        std::fill(w.begin() + 32, w.begin() + 64, 0.0f);  // one all-zero output block: d = s = 0
        DevMatrix dx = upload_matrix(gpu, &x, n, 1);
        DevMatrix dw = upload_matrix(gpu, &w, n, 1);
        auto p = make_params<dense_norm_params>();
        p.eps = 1e-6f;
        check_fused(gpu, DENSE_OP_RMS_NORM, {dx.view, dw.view}, n, 1, &p, "rms_norm {" + std::to_string(n) + "}");
    }
}

TEST(CudaFusedQuantize, GatedRmsNormWritesItsOutputAndTheExactQ8_32Copy) {
    DENSE_REQUIRE_GPU(gpu);
    std::mt19937_64 rng(902);
    const int64_t d = 128, heads = 48;  // the 27B's Gated DeltaNet output: 48 value heads of 128
    const auto x = uniform(static_cast<std::size_t>(d * heads), rng, -2.0f, 2.0f);
    auto z = uniform(static_cast<std::size_t>(d * heads), rng, -4.0f, 4.0f);
    std::fill(z.begin() + 5 * d, z.begin() + 5 * d + 32, 0.0f);  // silu(0) = 0: an all-zero block
    const auto w = uniform(static_cast<std::size_t>(d), rng, 0.5f, 1.5f);
    DevMatrix dx = upload_matrix(gpu, &x, d, heads);
    DevMatrix dz = upload_matrix(gpu, &z, d, heads);
    DevMatrix dw = upload_matrix(gpu, &w, d, 1);
    auto p = make_params<dense_norm_params>();
    p.eps = 1e-6f;
    check_fused(gpu, DENSE_OP_GATED_RMS_NORM, {dx.view, dz.view, dw.view}, d, heads, &p, "gated_rms_norm {128, 48}");
}

TEST(CudaFusedQuantize, SwigluWritesItsOutputAndTheExactQ8_32Copy) {
    DENSE_REQUIRE_GPU(gpu);
    std::mt19937_64 rng(903);
    for (const int64_t n : {int64_t{17408}, int64_t{64}, int64_t{1} << 20}) {  // 2^20: several grid-stride rounds
        auto gate = uniform(static_cast<std::size_t>(n), rng, -6.0f, 6.0f);
        const auto up = uniform(static_cast<std::size_t>(n), rng, -2.0f, 2.0f);
        std::fill(gate.begin(), gate.begin() + 32, 0.0f);  // silu(0) * up = 0: an all-zero block
        DevMatrix dg = upload_matrix(gpu, &gate, n, 1);
        DevMatrix du = upload_matrix(gpu, &up, n, 1);
        check_fused(gpu, DENSE_OP_SWIGLU, {dg.view, du.view}, n, 1, nullptr, "swiglu {" + std::to_string(n) + "}");
    }
}

}  // namespace
}  // namespace dense::test::cuda
