// RMS_NORM, L2_NORM, GATED_RMS_NORM and ROPE on the GPU against the cpu-ref oracle (plugins/cpu-ref/src/
// kernels/ops.hpp), on fresh seeded random inputs, at the Qwen3.5-27B shapes and at small odd shapes,
// with strided rows and in place where the ABI allows it. Outputs and the gaps between strided rows
// are poisoned first, so an element not written or a write outside the view fails.
//
// Tolerances (why):
//   norms: relative 2e-6 per element. The GPU sums squares in fp32 (fused multiply-adds per thread,
//     then a fixed tree: relative error <= ~(n/threads + 10) * 2^-24 ~ 1.2e-6 at n = 2047 in one block,
//     <= 1.7e-6 at n = 17408 spread over blocks (ops_norm.cu), in the worst case, about sqrt of that in
//     practice; the scale takes half of it), then the scale and 2-3 products each add <= 1 ulp;
//     cpu-ref rounds a double result once. The errors are all multiplicative, so a pure relative bound
//     holds for every element. Measured on an H200: worst 3e-7 (a 7x margin).
//   rope: |err| <= 1e-6 * (|x_i| + |x_{i+n_rot/2}|) for rotated dims (angles in double as cpu-ref,
//     cos/sin rounded to float, one fma and one product: <= ~1.5e-7 of that sum), bit-exact for the
//     pass-through dims (a copy).
#include "cuda/gpu_ops_support.hpp"

#include "kernels/ops.hpp"

#include <gtest/gtest.h>

#include <tuple>
#include <utility>

namespace dense::test::cuda {
namespace {

constexpr float kEps = 1e-6f;
constexpr double kNormRel = 2e-6;

struct RowsCase {
    int64_t n, rows;
    int64_t x_stride, y_stride;  // 0 = contiguous
    bool in_place;
    std::string label;
};

std::vector<RowsCase> rms_cases() {
    return {
        {5120, 1, 0, 0, false, "hidden {5120}"},
        {5120, 1, 0, 0, true, "hidden {5120} in place"},
        {17408, 1, 0, 0, false, "ffn {17408}"},
        {5120, 7, 5124, 0, false, "hidden {5120, 7} strided 5124 (rows of several blocks each)"},
        {2048, 3, 0, 0, true, "{2048, 3} in place (the shortest rows of several blocks)"},
        {2047, 3, 0, 0, false, "{2047, 3} (the longest one-block rows)"},
        {4099, 3, 4101, 4103, false, "odd long {4099, 3} strided 4101 -> 4103"},
        {4099, 3, 4101, 4101, true, "odd long {4099, 3} strided 4101 in place"},
        {256, 24, 512, 0, false, "q heads {256, 24} strided 512 (query+gate interleave) -> contiguous"},
        {256, 4, 0, 0, true, "k heads {256, 4} in place"},
        {37, 5, 41, 0, false, "odd {37, 5} strided 41"},
        {37, 5, 45, 45, true, "odd {37, 5} strided 45 in place"},
        {1, 3, 2, 5, false, "{1, 3} strided"},
        {700, 70000, 0, 0, false, "70000 rows (grid-stride over rows)"},
    };
}

TEST(CudaRmsNorm, MatchesCpuRefAtModelAndOddShapes) {
    DENSE_REQUIRE_GPU(gpu);
    uint64_t seed = 100;
    for (const RowsCase& k : rms_cases()) {
        std::mt19937_64 rng(++seed);
        const auto x = uniform(static_cast<std::size_t>(k.n * k.rows), rng, -3.0f, 3.0f);
        const auto w = uniform(static_cast<std::size_t>(k.n), rng, 0.5f, 1.5f);
        std::vector<float> want(x.size());
        cpuref::rms_norm(x.data(), k.n, w.data(), want.data(), k.n, k.n, k.rows, kEps);

        DevMatrix dx = upload_matrix(gpu, &x, k.n, k.rows, k.x_stride);
        DevMatrix dw = upload_matrix(gpu, &w, k.n, 1);
        DevMatrix dy = k.in_place ? DevMatrix{} : upload_matrix(gpu, nullptr, k.n, k.rows, k.y_stride);
        auto p = make_params<dense_norm_params>();
        p.eps = kEps;
        const dense_tensor_view out = k.in_place ? dx.view : dy.view;
        run_op(gpu, DENSE_OP_RMS_NORM, {dx.view, dw.view}, {out}, &p, k.label);
        if (HasFatalFailure()) return;
        const auto got = download_matrix(gpu, k.in_place ? dx : dy);
        EXPECT_TRUE(near_rel(got, want, kNormRel, 0.0, "rms_norm " + k.label));
        if (!k.in_place) {
            EXPECT_TRUE(same_bits(download_matrix(gpu, dx), x)) << k.label << ": src0 was modified";
        }
    }
}

// Rows of 2048 elements or more are spread over several blocks unless the output overlaps the input
// (then one block a row does it all); both must sum the squares in the same order, so a norm written in
// place has the bits of the same norm written elsewhere.
TEST(CudaRmsNorm, LongRowsInPlaceWriteTheBitsOfOutOfPlace) {
    DENSE_REQUIRE_GPU(gpu);
    uint64_t seed = 200;
    for (const auto& [n, rows] : {std::pair<int64_t, int64_t>{5120, 1}, {5120, 3}, {17408, 1}, {4099, 2}}) {
        std::mt19937_64 rng(++seed);
        const auto x = uniform(static_cast<std::size_t>(n * rows), rng, -3.0f, 3.0f);
        const auto w = uniform(static_cast<std::size_t>(n), rng, 0.5f, 1.5f);
        const std::string label = "{" + std::to_string(n) + ", " + std::to_string(rows) + "}";
        DevMatrix dx = upload_matrix(gpu, &x, n, rows), dw = upload_matrix(gpu, &w, n, 1),
                  dy = upload_matrix(gpu, nullptr, n, rows);
        auto p = make_params<dense_norm_params>();
        p.eps = kEps;
        run_op(gpu, DENSE_OP_RMS_NORM, {dx.view, dw.view}, {dy.view}, &p, label + " out of place");
        run_op(gpu, DENSE_OP_RMS_NORM, {dx.view, dw.view}, {dx.view}, &p, label + " in place");
        if (HasFatalFailure()) return;
        const auto out_of_place = download_matrix(gpu, dy), in_place = download_matrix(gpu, dx);
        EXPECT_FALSE(same_bits(in_place, x)) << label << ": the in-place norm wrote nothing";
        EXPECT_TRUE(same_bits(in_place, out_of_place)) << label << ": in place and out of place differ";
    }
}

TEST(CudaL2Norm, MatchesCpuRefInPlaceInsideTheConvOutputAndOutOfPlace) {
    DENSE_REQUIRE_GPU(gpu);
    // The graph normalises the 16 query heads (channels 0..2047) and the 16 key heads (2048..4095) of
    // the 10240-channel conv output in place; the value channels after them must stay untouched.
    std::mt19937_64 rng(7);
    const int64_t dk = 128, hk = 16, channels = 10240;
    const auto conv = uniform(static_cast<std::size_t>(channels), rng, -2.0f, 2.0f);
    DevMatrix buf = upload_matrix(gpu, &conv, channels, 1);
    auto p = make_params<dense_norm_params>();
    p.eps = kEps;
    std::vector<float> want = conv;
    for (const int64_t offset : {int64_t{0}, dk * hk}) {
        const dense_tensor_view v = f32_view(buf.row_ptr(0) + offset, dk, hk, dk);
        run_op(gpu, DENSE_OP_L2_NORM, {v}, {v}, &p, "l2 heads at " + std::to_string(offset));
        if (HasFatalFailure()) return;
        cpuref::l2_norm(conv.data() + offset, dk, want.data() + offset, dk, dk, hk, kEps);
    }
    const auto got = download_matrix(gpu, buf);
    EXPECT_TRUE(near_rel(got, want, kNormRel, 0.0, "l2_norm q|k heads in place"));
    EXPECT_TRUE(same_bits(std::vector<float>(got.begin() + 2 * dk * hk, got.end()),
                          std::vector<float>(conv.begin() + 2 * dk * hk, conv.end())))
        << "value channels changed";

    for (const RowsCase& k : {RowsCase{13, 3, 20, 0, false, "odd {13, 3} strided 20"},
                              RowsCase{13, 3, 17, 17, true, "odd {13, 3} strided 17 in place"},
                              RowsCase{5000, 2, 0, 5003, false, "{5000, 2} -> strided 5003"}}) {
        const auto x = uniform(static_cast<std::size_t>(k.n * k.rows), rng, -1.0f, 1.0f);
        std::vector<float> w2(x.size());
        cpuref::l2_norm(x.data(), k.n, w2.data(), k.n, k.n, k.rows, kEps);
        DevMatrix dx = upload_matrix(gpu, &x, k.n, k.rows, k.x_stride);
        DevMatrix dy = k.in_place ? DevMatrix{} : upload_matrix(gpu, nullptr, k.n, k.rows, k.y_stride);
        run_op(gpu, DENSE_OP_L2_NORM, {dx.view}, {k.in_place ? dx.view : dy.view}, &p, k.label);
        if (HasFatalFailure()) return;
        EXPECT_TRUE(near_rel(download_matrix(gpu, k.in_place ? dx : dy), w2, kNormRel, 0.0, "l2_norm " + k.label));
    }
}

TEST(CudaGatedRmsNorm, MatchesCpuRefAtModelAndOddShapes) {
    DENSE_REQUIRE_GPU(gpu);
    uint64_t seed = 300;
    for (const auto& [n, rows, label] : {std::tuple<int64_t, int64_t, const char*>{128, 48, "gdn {128, 48}"},
                                         {7, 3, "odd {7, 3}"},
                                         {1, 1, "{1, 1}"},
                                         {1000, 9, "{1000, 9}"},
                                         {1500, 2, "{1500, 2}"},
                                         {3000, 2, "{3000, 2}: a row over several blocks"}}) {
        std::mt19937_64 rng(++seed);
        const auto x = uniform(static_cast<std::size_t>(n * rows), rng, -2.0f, 2.0f);
        const auto z = uniform(static_cast<std::size_t>(n * rows), rng, -6.0f, 6.0f);
        const auto w = uniform(static_cast<std::size_t>(n), rng, -1.0f, 1.0f);  // raw ssm_norm: any sign
        std::vector<float> want(x.size());
        cpuref::gated_rms_norm(x.data(), n, z.data(), n, w.data(), want.data(), n, n, rows, kEps);
        DevMatrix dx = upload_matrix(gpu, &x, n, rows), dz = upload_matrix(gpu, &z, n, rows),
                  dw = upload_matrix(gpu, &w, n, 1), dy = upload_matrix(gpu, nullptr, n, rows);
        auto p = make_params<dense_norm_params>();
        p.eps = kEps;
        run_op(gpu, DENSE_OP_GATED_RMS_NORM, {dx.view, dz.view, dw.view}, {dy.view}, &p, label);
        if (HasFatalFailure()) return;
        EXPECT_TRUE(near_rel(download_matrix(gpu, dy), want, kNormRel, 0.0, std::string("gated_rms_norm ") + label));
    }
}

// ---- ROPE -----------------------------------------------------------------------------------------

struct RopeCase {
    int64_t head_dim, heads, n_rot;
    int64_t x_stride, y_stride;
    bool in_place;
    float base, freq_scale;
    std::string label;
};

void check_rope(GpuSession& gpu, const RopeCase& k, int32_t pos, std::mt19937_64& rng) {
    const auto x = uniform(static_cast<std::size_t>(k.head_dim * k.heads), rng, -2.0f, 2.0f);
    std::vector<float> want(x.size());
    cpuref::rope_neox(x.data(), k.head_dim, want.data(), k.head_dim, k.head_dim, k.heads, k.n_rot, pos, k.base,
                      k.freq_scale);
    DevMatrix dx = upload_matrix(gpu, &x, k.head_dim, k.heads, k.x_stride);
    DevMatrix dy = k.in_place ? DevMatrix{} : upload_matrix(gpu, nullptr, k.head_dim, k.heads, k.y_stride);
    DevScalar dp = upload_i32(gpu, pos);
    auto p = make_params<dense_rope_params>();
    p.n_rot = static_cast<int32_t>(k.n_rot);
    p.mode = DENSE_ROPE_NEOX;
    p.freq_base = k.base;
    p.freq_scale = k.freq_scale;
    const std::string label = k.label + " at position " + std::to_string(pos);
    run_op(gpu, DENSE_OP_ROPE, {dx.view, dp.view}, {k.in_place ? dx.view : dy.view}, &p, label);
    if (::testing::Test::HasFatalFailure()) return;
    const auto got = download_matrix(gpu, k.in_place ? dx : dy);
    const int64_t half = k.n_rot / 2;
    auto tol = [&](std::size_t idx) -> double {
        const int64_t h = static_cast<int64_t>(idx) / k.head_dim, i = static_cast<int64_t>(idx) % k.head_dim;
        if (i >= k.n_rot) return 0.0;  // pass-through: exact
        const int64_t a = h * k.head_dim + (i < half ? i : i - half);
        return 1e-6 * (std::fabs(x[static_cast<std::size_t>(a)]) + std::fabs(x[static_cast<std::size_t>(a + half)]));
    };
    EXPECT_TRUE(within(got, want, tol, "rope " + label));
}

TEST(CudaRope, MatchesCpuRefAtModelAndOddShapesUpToTheFullContext) {
    DENSE_REQUIRE_GPU(gpu);
    const std::vector<RopeCase> cases = {
        {256, 24, 64, 0, 0, true, 1e7f, 1.0f, "q {256, 24} n_rot 64 in place"},
        {256, 4, 64, 0, 0, true, 1e7f, 1.0f, "k {256, 4} n_rot 64 in place"},
        {256, 24, 64, 512, 0, false, 1e7f, 1.0f, "q {256, 24} strided 512 -> contiguous"},
        {10, 3, 6, 13, 11, false, 10000.0f, 1.0f, "odd {10, 3} n_rot 6 strided"},
        {10, 3, 10, 0, 0, true, 10000.0f, 0.5f, "odd {10, 3} n_rot = head_dim, freq_scale 0.5, in place"},
        {2, 1, 2, 0, 0, false, 500.0f, 1.0f, "{2, 1}"},
    };
    std::mt19937_64 rng(404);
    for (const RopeCase& k : cases)
        for (const int32_t pos : {0, 1, 7, 1000, 32767, 262143}) {
            check_rope(gpu, k, pos, rng);
            if (HasFatalFailure()) return;
        }
}

// cpu-ref refuses a negative position; on the GPU the value is only known to the kernel, which writes
// NaN into the rotated dims (so a finite-check trips) and leaves everything else alone.
TEST(CudaRope, NegativePositionPoisonsTheRotatedDimsOnly) {
    DENSE_REQUIRE_GPU(gpu);
    std::mt19937_64 rng(405);
    const int64_t d = 16, heads = 3, n_rot = 8;
    const auto x = uniform(static_cast<std::size_t>(d * heads), rng);
    DevMatrix dx = upload_matrix(gpu, &x, d, heads);
    DevScalar dp = upload_i32(gpu, -1);
    auto p = make_params<dense_rope_params>();
    p.n_rot = n_rot;
    p.mode = DENSE_ROPE_NEOX;
    p.freq_base = 1e4f;
    p.freq_scale = 1.0f;
    run_op(gpu, DENSE_OP_ROPE, {dx.view, dp.view}, {dx.view}, &p, "position -1");
    if (HasFatalFailure()) return;
    const auto got = download_matrix(gpu, dx);
    for (int64_t h = 0; h < heads; ++h)
        for (int64_t i = 0; i < d; ++i) {
            const float g = got[static_cast<std::size_t>(h * d + i)], o = x[static_cast<std::size_t>(h * d + i)];
            if (i < n_rot)
                EXPECT_TRUE(std::isnan(g)) << "head " << h << " dim " << i;
            else
                EXPECT_EQ(std::bit_cast<uint32_t>(g), std::bit_cast<uint32_t>(o)) << "head " << h << " dim " << i;
        }
}

}  // namespace
}  // namespace dense::test::cuda
