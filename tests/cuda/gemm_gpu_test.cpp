// DENSE_OP_GEMM_Q (ABI 1.9) on the GPU: every column of a GEMM must be bit for bit what the pack's
// GEMV_Q of that column's activation alone writes (dense_abi.h), so a prompt run T tokens at a time
// gives the token-at-a-time result. Skips (with the reason) without a GPU or without packs.
//   - every quantized format at the 27B shapes (IN x OUT = 5120 x 6144, 17408 x 5120, 5120 x 17408)
//     with T in {1, 3, 8, 16}, and at small ones that reach the kernel's corners (row tails, the
//     direct-load kernel with a short last tile, an unaligned matrix, for the 32-element formats a
//     partial last step and an odd IN/32, so columns whose scale pairs are not 8-byte aligned) with T
//     up to 17 (column groups of 8 with a short last one), accumulate on and off;
//   - dst with its columns further apart than OUT floats: gaps and the tail poisoned, must stay so;
//   - fresh seeded random weights and activations (never zeros); the GEMM's activation is the T
//     columns quantized as one vector, each GEMV's the column quantized alone in its own buffer;
//   - the float weights (their GEMM is the GEMV per column) at an aligned and an odd shape;
//   - both GEMM kernels of every quantized format: the tensor-core one (default; gemm_mma.cuh, with
//     its staged / unstaged / 32-column variants) and the dp4a one (DENSE_CUDA_GEMM=dp4a, read by
//     the pack on every call), with T up to 64 and odd T (37: column groups of 16 with a short last
//     one).
// It prints the time of a GEMM of 16 columns against 16 GEMVs at each large shape (host clock).
#include "cuda/gemv_test_support.hpp"
#include "cuda/gpu_compare.hpp"
#include "cuda/scoped_env.hpp"

#include <dense/sdk/pack.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace dense::test::cuda {
namespace {

using cpuref::FormatKernels;

constexpr int64_t kGapFloats = 5;  // between one dst column's end and the next column

// The kernels a test runs every case with: the default (the tensor-core GEMM with staged
// activations where a format has one, gemm_mma.cuh), the dp4a GEMM, and the mma variants kept for
// A/B runs and as the fallback (unstaged: also what runs where the staged kernel's shared memory is
// refused; warp tiles of 32 columns).
struct GemmKernel {
    const char* env;  // nullptr: the defaults
    const char* value;
    const char* label;
};
constexpr GemmKernel kGemmKernels[] = {{nullptr, nullptr, "mma"},
                                       {"DENSE_CUDA_GEMM", "dp4a", "dp4a"},
                                       {"DENSE_CUDA_GEMM_MMA_STAGE", "0", "mma-unstaged"},
                                       {"DENSE_CUDA_GEMM_MMA_COLS", "32", "mma-32col"}};

// A weight on the device whose rows repeat a prime-sized pool of random rows (cheap to make at the
// 27B shapes; an indexing error of any tile size still reads a different row).
struct Weight {
    const FormatKernels* f = nullptr;
    int64_t in = 0, out = 0, row_bytes = 0;
    uint64_t offset = 0;  // bytes past the (256-byte aligned) allocation
    DeviceBuffer buf;
    int64_t pool_rows = 0;
    std::vector<uint8_t> pool;  // the pool's blocks (row r of the matrix is pool row r % pool_rows)
    dense_tensor_view view() const {
        return cuda_view(buf.at(offset), f->type, f->block_elements, f->block_bytes, {in, out});
    }
};

Weight make_weight(GpuSession& gpu, const FormatKernels& f, int64_t in, int64_t out, std::mt19937_64& rng,
                   uint64_t offset) {
    Weight w;
    w.f = &f;
    w.in = in;
    w.out = out;
    w.offset = offset;
    w.row_bytes = static_cast<int64_t>(cpuref::row_bytes(f.type, in));
    const int64_t pool_rows = std::min<int64_t>(out, 1031);
    const auto pool = quant::random_blocks(f, pool_rows * in / f.block_elements, rng, quant::ScaleRange::Moderate);
    w.pool_rows = pool_rows;
    w.pool = pool;
    w.buf = gpu.alloc(offset + static_cast<uint64_t>(out * w.row_bytes));
    if (w.buf.get() == nullptr) return w;
    for (int64_t r0 = 0; r0 < out; r0 += pool_rows) {
        const int64_t n = std::min(pool_rows, out - r0);
        if (gpu.upload(w.buf.at(offset + static_cast<uint64_t>(r0 * w.row_bytes)), pool.data(),
                       static_cast<uint64_t>(n * w.row_bytes)) != DENSE_OK)
            break;
    }
    return w;
}

// `bytes` on the device.
DeviceBuffer upload_bytes(GpuSession& gpu, const void* data, std::size_t bytes) {
    DeviceBuffer b = gpu.alloc(bytes);
    if (b.get() != nullptr) gpu.upload(b.get(), data, bytes);
    return b;
}

dense_status run_op(GpuSession& gpu, dense_op_kind kind, dense_type_id weight, dense_type_id act,
                    const dense_tensor_view& w, const dense_tensor_view& x, const dense_tensor_view& y,
                    bool accumulate) {
    auto params = dense::sdk::make_struct<dense_gemv_params>();
    params.accumulate = accumulate ? 1u : 0u;
    const dense_tensor_view src[2] = {w, x};
    dense_op_call c = make_call(kind, src, &y, &params, gpu.stream());
    c.n_src = 2;
    return gpu.run(weight, act, c);
}

// dst {out, cols}, column j at float j * (out + kGapFloats): the columns hold `base` values (what
// accumulate adds to), the gaps and kGuardFloats after the last column hold the poison.
struct Columns {
    int64_t out = 0, cols = 0;
    std::vector<float> host;
    DeviceBuffer buf;
    int64_t stride() const { return out + kGapFloats; }
    float at(int64_t j, int64_t r) const { return host[static_cast<std::size_t>(j * stride() + r)]; }
    dense_tensor_view view() const {
        dense_tensor_view v = cuda_view(buf.get(), DENSE_TYPE_F32, 1, 4, {out, cols});
        v.nb[1] = 4 * stride();
        v.nb[2] = v.nb[3] = v.nb[1] * cols;
        return v;
    }
};

Columns make_columns(GpuSession& gpu, int64_t out, int64_t cols, std::mt19937_64& rng) {
    Columns d;
    d.out = out;
    d.cols = cols;
    d.host = poison(d.stride() * cols + kGuardFloats);
    std::uniform_real_distribution<float> base(-4.0f, 4.0f);
    for (int64_t j = 0; j < cols; ++j)
        for (int64_t r = 0; r < out; ++r) d.host[static_cast<std::size_t>(j * d.stride() + r)] = base(rng);
    d.buf = upload_bytes(gpu, d.host.data(), d.host.size() * 4);
    return d;
}

std::vector<float> download(GpuSession& gpu, const DeviceBuffer& b, std::size_t floats) {
    std::vector<float> v(floats);
    EXPECT_EQ(gpu.download(v.data(), b.get(), floats * 4), DENSE_OK);
    return v;
}

// Column j of the activations x (`in` elements each) quantized alone as `at`.
std::vector<uint8_t> quantized_column(dense_type_id at, const std::vector<float>& x, int64_t j, int64_t in) {
    std::vector<uint8_t> one(quant::act_bytes(at, in));
    cpuref::quantize_activation(at, x.data() + j * in, one.data(), in);
    return one;
}

// What GEMV_Q writes for activation column j (`one`: quantized alone, in a buffer of its own, as `at`)
// onto column j's starting values in `start` (what the GEMM accumulated onto); empty (with the
// failure reported) where that could not run.
std::vector<float> column_gemv(GpuSession& gpu, const Weight& w, dense_type_id at, const std::vector<uint8_t>& one,
                               int64_t j, const Columns& start, bool accumulate, const std::string& label) {
    const bool quantized = at == DENSE_TYPE_Q8_32;
    const DeviceBuffer one_dev = upload_bytes(gpu, one.data(), one.size());
    std::vector<float> want(static_cast<std::size_t>(w.out));
    for (int64_t r = 0; r < w.out; ++r) want[static_cast<std::size_t>(r)] = start.at(j, r);
    const DeviceBuffer want_dev = upload_bytes(gpu, want.data(), want.size() * 4);
    EXPECT_TRUE(one_dev.get() != nullptr && want_dev.get() != nullptr) << label;
    if (one_dev.get() == nullptr || want_dev.get() == nullptr) return {};
    const auto one_view =
        quantized ? cuda_view(one_dev.get(), at, 32, 40, {w.in}) : cuda_view(one_dev.get(), at, 1, 4, {w.in});
    if (run_op(gpu, DENSE_OP_GEMV_Q, w.f->type, at, w.view(), one_view,
               cuda_view(want_dev.get(), DENSE_TYPE_F32, 1, 4, {w.out}), accumulate) != DENSE_OK) {
        ADD_FAILURE() << label << ": GEMV_Q of column " << j << " failed\n" << gpu.host().log_text();
        return {};
    }
    return download(gpu, want_dev, want.size());
}

// The GEMM wrote every row of its columns and nothing else: the gaps between columns and the guard
// after the last keep their poison.
void expect_only_the_columns_written(const std::vector<float>& got, const Columns& c, const std::string& label) {
    for (int64_t j = 0; j < c.cols; ++j) {
        EXPECT_EQ(count_poison(got, static_cast<std::size_t>(j * c.stride()), static_cast<std::size_t>(j * c.stride() + c.out)),
                  0)
            << label << ": rows of column " << j << " left unwritten";
        EXPECT_EQ(count_poison(got, static_cast<std::size_t>(j * c.stride() + c.out),
                               static_cast<std::size_t>((j + 1) * c.stride())),
                  kGapFloats)
            << label << ": the gap after column " << j << " was written";
    }
    EXPECT_EQ(count_poison(got, static_cast<std::size_t>(c.cols * c.stride()), got.size()), kGuardFloats)
        << label << ": written past the last column";
}

// One GEMM of `cols` columns against the GEMV of each column alone. The activations are quantized by
// cpu-ref's quantizer (the CUDA one is bit-exact with it, gemv_gpu_test.cpp).
void check_columns(GpuSession& gpu, const Weight& w, int64_t cols, bool accumulate, std::mt19937_64& rng,
                   const std::string& shape) {
    const dense_type_id wt = w.f->type;
    const bool quantized = w.f->block_elements > 1;
    const dense_type_id at = quantized ? DENSE_TYPE_Q8_32 : DENSE_TYPE_F32;
    const std::string label = shape + " T=" + std::to_string(cols) + (accumulate ? " +=" : "");
    const std::vector<float> x = quant::random_activation(w.in * cols, rng);
    // The GEMM's activation: the T columns as ONE vector of IN * T elements.
    std::vector<uint8_t> all(quant::act_bytes(at, w.in * cols));
    cpuref::quantize_activation(at, x.data(), all.data(), w.in * cols);
    const DeviceBuffer all_dev = upload_bytes(gpu, all.data(), all.size());
    Columns gemm = make_columns(gpu, w.out, cols, rng);
    ASSERT_TRUE(all_dev.get() != nullptr && gemm.buf.get() != nullptr) << label;
    const auto all_view = quantized ? cuda_view(all_dev.get(), at, 32, 40, {w.in * cols})
                                    : cuda_view(all_dev.get(), at, 1, 4, {w.in * cols});
    gpu.host().clear_logs();
    ASSERT_EQ(run_op(gpu, DENSE_OP_GEMM_Q, wt, at, w.view(), all_view, gemm.view(), accumulate), DENSE_OK)
        << label << "\n"
        << gpu.host().log_text();
    EXPECT_TRUE(gpu.host().logs().empty()) << gpu.host().log_text();
    const std::vector<float> got = download(gpu, gemm.buf, gemm.host.size());

    for (int64_t j = 0; j < cols; ++j) {
        const std::vector<float> want = column_gemv(gpu, w, at, quantized_column(at, x, j, w.in), j, gemm, accumulate, label);
        if (want.size() != static_cast<std::size_t>(w.out)) return;
        const float* column = got.data() + j * gemm.stride();
        if (std::memcmp(column, want.data(), want.size() * 4) != 0) {
            int64_t first = 0;
            while (std::memcmp(column + first, want.data() + first, 4) == 0) ++first;
            ADD_FAILURE() << label << ": column " << j << " differs from its GEMV_Q, first at row " << first << ": got "
                          << quant::hex32(column[first]) << ", GEMV "
                          << quant::hex32(want[static_cast<std::size_t>(first)]);
        }
    }
    expect_only_the_columns_written(got, gemm, label);
}

// GEMM_Q in free order (ABI 1.13) through its impl, with the workspace the impl asks for (poisoned,
// as the runtime's is uninitialised); `ws_bytes` says how much that was.
dense_status run_free_order(GpuSession& gpu, const Weight& w, const dense_tensor_view& x, const dense_tensor_view& y,
                            bool accumulate, uint64_t& ws_bytes) {
    const dense_op_impl* impl = gpu.host().find_op(DENSE_OP_GEMM_Q, w.f->type, DENSE_TYPE_Q8_32);
    if (impl == nullptr) return DENSE_E_UNSUPPORTED;
    auto params = dense::sdk::make_struct<dense_gemv_params>();
    params.accumulate = accumulate ? 1u : 0u;
    params.order = DENSE_GEMM_ORDER_FREE;
    const dense_tensor_view src[2] = {w.view(), x};
    dense_op_call c = make_call(DENSE_OP_GEMM_Q, src, &y, &params, gpu.stream());
    c.n_src = 2;
    ws_bytes = impl->workspace_bytes != nullptr ? impl->workspace_bytes(impl->user, &c) : 0;
    DeviceBuffer ws;
    if (ws_bytes > 0) {
        ws = gpu.alloc(ws_bytes);
        if (ws.get() == nullptr) return DENSE_E_OUT_OF_MEMORY;
        const auto fill = poison(static_cast<int64_t>((ws_bytes + 3) / 4));
        if (gpu.upload(ws.get(), fill.data(), ws_bytes) != DENSE_OK) return DENSE_E_DEVICE;
        c.workspace = ws.get();
        c.workspace_bytes = ws_bytes;
    }
    const dense_status st = impl->run(impl->user, &c);
    return st != DENSE_OK ? st : gpu.sync();
}

// A free-order GEMM of `cols` columns against the GEMV of each column alone. Both add the terms of
// the same blocks in different orders: the free-order kernel adds a K split's blocks in order (at most
// n = IN/32 additions a term) and then the <= 8 splits, the GEMV as order_bound says (2 steps + 9).
// Since ABI 1.14 the free-order terms are also rounded differently (F::fast: fused multiply-adds, the
// scale products once per row and block): each term, the GEMV's and the fast one, is within <= 4
// roundings of the exact value V_b of its block's integer sums and scales, gamma_4 of its products'
// magnitudes. So, by the bound of gemv_test_support.hpp, per output
//   |gemm - gemv| <= (gamma_(n + 9) + gamma_(2 steps + 9) + 2 gamma_4) * sum_b |V_b| + u (|gemm| + |gemv|),
// the last term for the final rounding of dst + sum when accumulating. sum_b |V_b| is bounded on the
// host by sum_i |w_i| |x_i| over the dequantized weight row and activation column (V_b is that
// block's dot product of the dequantized values up to the dequantization's own roundings: the factor
// 1 + 2^-16 covers them). For the formats with mins (Q4_K, Q5_K, Q2_K) a term's products can be
// larger than its value (d sc q - dmin m cancels); the n + 9 additions' slack covers that at these
// sizes, and the test prints how close each case came to the bound. Also: the same call twice gives
// the same bits (no timing in the order), and rows, gaps and the tail are written exactly as in the
// exact GEMM.
void check_free_order_columns(GpuSession& gpu, const Weight& w, int64_t cols, bool accumulate, std::mt19937_64& rng,
                              const std::string& shape) {
    const std::string label = shape + " free order T=" + std::to_string(cols) + (accumulate ? " +=" : "");
    const std::vector<float> x = quant::random_activation(w.in * cols, rng);
    std::vector<uint8_t> all(quant::act_bytes(DENSE_TYPE_Q8_32, w.in * cols));
    cpuref::quantize_activation(DENSE_TYPE_Q8_32, x.data(), all.data(), w.in * cols);
    const DeviceBuffer all_dev = upload_bytes(gpu, all.data(), all.size());
    Columns gemm = make_columns(gpu, w.out, cols, rng);
    Columns again = make_columns(gpu, w.out, cols, rng);
    ASSERT_TRUE(all_dev.get() != nullptr && gemm.buf.get() != nullptr && again.buf.get() != nullptr) << label;
    ASSERT_EQ(gpu.upload(again.buf.get(), gemm.host.data(), gemm.host.size() * 4), DENSE_OK);
    const auto all_view = cuda_view(all_dev.get(), DENSE_TYPE_Q8_32, 32, 40, {w.in * cols});
    uint64_t ws_bytes = 0;
    gpu.host().clear_logs();
    ASSERT_EQ(run_free_order(gpu, w, all_view, gemm.view(), accumulate, ws_bytes), DENSE_OK)
        << label << "\n" << gpu.host().log_text();
    ASSERT_EQ(run_free_order(gpu, w, all_view, again.view(), accumulate, ws_bytes), DENSE_OK) << label;
    EXPECT_TRUE(gpu.host().logs().empty()) << gpu.host().log_text();
    const std::vector<float> got = download(gpu, gemm.buf, gemm.host.size());
    const std::vector<float> got2 = download(gpu, again.buf, again.host.size());
    EXPECT_EQ(std::memcmp(got.data(), got2.data(), got.size() * 4), 0) << label << ": a second run differs";

    std::vector<float> pool_f32(static_cast<std::size_t>(w.pool_rows * w.in));
    for (int64_t r = 0; r < w.pool_rows; ++r)
        cpuref::dequantize_row(w.f->type, w.pool.data() + r * w.row_bytes, pool_f32.data() + r * w.in, w.in);
    const double n = static_cast<double>(w.in / 32), steps = static_cast<double>((w.in + 255) / 256);
    const double rel =
        (gamma_bound(n + 9.0) + gamma_bound(2.0 * steps + 9.0) + 2.0 * gamma_bound(4.0)) * (1.0 + 0x1p-16);
    double worst = 0.0;  // the largest |gemm - gemv| / bound seen (printed: how close to the bound)
    for (int64_t j = 0; j < cols; ++j) {
        const std::vector<uint8_t> one = quantized_column(DENSE_TYPE_Q8_32, x, j, w.in);
        // |x_i| of the quantized column: |code| * d.
        std::vector<float> xa(static_cast<std::size_t>(w.in));
        const auto* codes = reinterpret_cast<const int8_t*>(one.data());
        const auto* d = reinterpret_cast<const float*>(one.data() + w.in);
        for (int64_t i = 0; i < w.in; ++i) xa[static_cast<std::size_t>(i)] = std::fabs(static_cast<float>(codes[i]) * d[i / 32]);
        std::vector<double> abs_dot(static_cast<std::size_t>(w.pool_rows));
        for (int64_t r = 0; r < w.pool_rows; ++r) {
            const float* wr = pool_f32.data() + r * w.in;
            double acc = 0.0;
            for (int64_t i = 0; i < w.in; ++i) acc += std::fabs(static_cast<double>(wr[i])) * xa[static_cast<std::size_t>(i)];
            abs_dot[static_cast<std::size_t>(r)] = acc;
        }
        const std::vector<float> want = column_gemv(gpu, w, DENSE_TYPE_Q8_32, one, j, gemm, accumulate, label);
        if (want.size() != static_cast<std::size_t>(w.out)) return;
        const float* column = got.data() + j * gemm.stride();
        int bad = 0;
        for (int64_t r = 0; r < w.out; ++r) {
            const double g = column[r], v = want[static_cast<std::size_t>(r)];
            const double bound = rel * abs_dot[static_cast<std::size_t>(r % w.pool_rows)] + 0x1p-24 * (std::fabs(g) + std::fabs(v));
            const double diff = std::fabs(g - v);
            if (bound > 0) worst = std::max(worst, diff / bound);
            if (!(diff <= bound) && ++bad <= 3)
                ADD_FAILURE() << label << ": column " << j << " row " << r << ": " << g << " vs GEMV " << v << ", |diff| "
                              << diff << " > bound " << bound;
        }
    }
    expect_only_the_columns_written(got, gemm, label);
    std::printf("[ free     ] %-44s workspace %9llu B, worst |gemm - gemv| = %.3f of the bound\n", label.c_str(),
                static_cast<unsigned long long>(ws_bytes), worst);
}

// Mean time of `reps` GEMMs of 16 columns and of 16 GEMVs (host clock around back-to-back launches).
void time_gemm(GpuSession& gpu, const Weight& w, std::mt19937_64& rng, const std::string& shape) {
    constexpr int64_t kCols = 16;
    constexpr int kReps = 10;
    const std::vector<float> x = quant::random_activation(w.in * kCols, rng);
    std::vector<uint8_t> all(quant::act_bytes(DENSE_TYPE_Q8_32, w.in * kCols));
    cpuref::quantize_activation(DENSE_TYPE_Q8_32, x.data(), all.data(), w.in * kCols);
    const DeviceBuffer all_dev = upload_bytes(gpu, all.data(), all.size());
    Columns d = make_columns(gpu, w.out, kCols, rng);
    const auto gemm_x = cuda_view(all_dev.get(), DENSE_TYPE_Q8_32, 32, 40, {w.in * kCols});
    const auto gemv_x = cuda_view(all_dev.get(), DENSE_TYPE_Q8_32, 32, 40, {w.in});  // column 0's codes (timing only)
    const auto y = cuda_view(d.buf.get(), DENSE_TYPE_F32, 1, 4, {w.out});
    auto timed = [&](auto&& launch) {
        if (launch() != DENSE_OK || gpu.sync() != DENSE_OK) return 0.0;
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < kReps; ++i)
            if (launch() != DENSE_OK) return 0.0;
        if (gpu.sync() != DENSE_OK) return 0.0;
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / kReps;
    };
    const double gemm_s = timed(
        [&] { return run_op(gpu, DENSE_OP_GEMM_Q, w.f->type, DENSE_TYPE_Q8_32, w.view(), gemm_x, d.view(), false); });
    const double gemv_s = timed([&] {
        for (int64_t j = 0; j < kCols; ++j)
            if (const dense_status s =
                    run_op(gpu, DENSE_OP_GEMV_Q, w.f->type, DENSE_TYPE_Q8_32, w.view(), gemv_x, y, false);
                s != DENSE_OK)
                return s;
        return dense_status{DENSE_OK};
    });
    const double gb = static_cast<double>(w.out * w.row_bytes) / 1e9;
    std::printf("[ gemm     ] %-8s %-34s T=16: GEMM %8.1f us (%6.0f GB/s of weight), 16 GEMVs %8.1f us, %.2fx\n",
                w.f->name, shape.c_str(), gemm_s * 1e6, gemm_s > 0 ? gb / gemm_s : 0.0, gemv_s * 1e6,
                gemm_s > 0 ? gemv_s / gemm_s : 0.0);
}

class CudaGemm : public ::testing::TestWithParam<const FormatKernels*> {};

TEST_P(CudaGemm, ModelShapesEveryColumnIsItsGemv) {
    DENSE_REQUIRE_GPU(gpu);
    const FormatKernels& f = *GetParam();
    for (const auto& [in, out] : {std::pair<int64_t, int64_t>{5120, 6144}, {17408, 5120}, {5120, 17408}}) {
        std::mt19937_64 rng(f.type * 7919u + static_cast<uint64_t>(in * 31 + out));
        const Weight w = make_weight(gpu, f, in, out, rng, 0);
        ASSERT_TRUE(w.buf.get() != nullptr) << f.name;
        for (const GemmKernel& k : kGemmKernels) {
            const ScopedEnv env(k.env, k.value);
            const std::string shape = std::string(f.name) + " {" + std::to_string(in) + ", " + std::to_string(out) +
                                      "} " + k.label;
            for (const int64_t cols : {1, 3, 8, 16, 32, 37, 64}) {
                check_columns(gpu, w, cols, true, rng, shape);
                if (HasFatalFailure()) return;
            }
            time_gemm(gpu, w, rng, shape);
        }
    }
}

// Free order (ABI 1.13, fast terms 1.14) at the 27B shapes: every column within the rounding bound of its
// GEMV (check_free_order_columns says why that bound), the same bits on a second run; T = 64 (the
// prompt chunk: one whole column group), accumulating.
TEST_P(CudaGemm, ModelShapesInFreeOrderStayWithinTheOrderBound) {
    DENSE_REQUIRE_GPU(gpu);
    const FormatKernels& f = *GetParam();
    for (const auto& [in, out] : {std::pair<int64_t, int64_t>{5120, 6144}, {17408, 5120}, {5120, 17408}}) {
        std::mt19937_64 rng(f.type * 6151u + static_cast<uint64_t>(in * 37 + out));
        const Weight w = make_weight(gpu, f, in, out, rng, 0);
        ASSERT_TRUE(w.buf.get() != nullptr) << f.name;
        const std::string shape = std::string(f.name) + " {" + std::to_string(in) + ", " + std::to_string(out) + "}";
        check_free_order_columns(gpu, w, 64, true, rng, shape);
        if (HasFatalFailure()) return;
    }
}

// Free order at the small shapes' corners (row tails, a streamed matrix with a short last tile, an
// unaligned matrix, which the free-order kernel leaves to the exact one; for the 32-element formats a
// partial last step and an odd IN/32), T = 2 (dst overwritten), 17 (a short last n-tile) and 65 (a
// second column group of one column), accumulating.
TEST_P(CudaGemm, SmallShapesInFreeOrderStayWithinTheOrderBound) {
    DENSE_REQUIRE_GPU(gpu);
    const FormatKernels& f = *GetParam();
    struct Shape {
        int64_t in, out;
        uint64_t w_offset;
    };
    std::vector<Shape> shapes = {{768, 37, 0}, {5120, 4100, 0}, {768, 37, 2}};
    if (f.block_elements == 32) {
        shapes.push_back({288, 9, 0});
        shapes.push_back({5120 + 96, 33, 0});
    }
    for (const Shape& s : shapes) {
        const std::string shape = std::string(f.name) + " {" + std::to_string(s.in) + ", " + std::to_string(s.out) + "}" +
                                  (s.w_offset != 0 ? " at +" + std::to_string(s.w_offset) : "");
        std::mt19937_64 rng(f.type * 7121u + static_cast<uint64_t>(s.in * 31 + s.out) + s.w_offset);
        const Weight w = make_weight(gpu, f, s.in, s.out, rng, s.w_offset);
        ASSERT_TRUE(w.buf.get() != nullptr) << shape;
        for (const int64_t cols : {2, 17, 65}) {
            check_free_order_columns(gpu, w, cols, cols != 2, rng, shape);
            if (HasFatalFailure()) return;
        }
    }
}

// An order this ABI does not define is refused with a log line, nothing written.
TEST_P(CudaGemm, UnknownOrderIsRefused) {
    DENSE_REQUIRE_GPU(gpu);
    const FormatKernels& f = *GetParam();
    std::mt19937_64 rng(f.type * 3301u);
    const Weight w = make_weight(gpu, f, 512, 48, rng, 0);
    ASSERT_TRUE(w.buf.get() != nullptr) << f.name;
    std::vector<uint8_t> act(quant::act_bytes(DENSE_TYPE_Q8_32, 512 * 4));
    const std::vector<float> x = quant::random_activation(512 * 4, rng);
    cpuref::quantize_activation(DENSE_TYPE_Q8_32, x.data(), act.data(), 512 * 4);
    const DeviceBuffer act_dev = upload_bytes(gpu, act.data(), act.size());
    Columns y = make_columns(gpu, 48, 4, rng);
    ASSERT_TRUE(act_dev.get() != nullptr && y.buf.get() != nullptr);
    auto params = dense::sdk::make_struct<dense_gemv_params>();
    params.order = 2;
    const dense_tensor_view src[2] = {w.view(), cuda_view(act_dev.get(), DENSE_TYPE_Q8_32, 32, 40, {512 * 4})};
    const dense_tensor_view dst = y.view();
    dense_op_call c = make_call(DENSE_OP_GEMM_Q, src, &dst, &params, gpu.stream());
    c.n_src = 2;
    gpu.host().clear_logs();
    EXPECT_EQ(gpu.run(f.type, DENSE_TYPE_Q8_32, c), DENSE_E_INVALID_ARGUMENT);
    EXPECT_NE(gpu.host().log_text().find("order 2"), std::string::npos) << gpu.host().log_text();
    const std::vector<float> after = download(gpu, y.buf, y.host.size());
    EXPECT_EQ(std::memcmp(after.data(), y.host.data(), after.size() * 4), 0) << "dst was written";
}

// An unknown DENSE_CUDA_GEMM value is the default: the call succeeds, the columns are their GEMVs.
TEST_P(CudaGemm, UnknownKernelChoiceIsTheDefault) {
    DENSE_REQUIRE_GPU(gpu);
    const FormatKernels& f = *GetParam();
    const ScopedEnv env("DENSE_CUDA_GEMM", "no-such-kernel");
    std::mt19937_64 rng(f.type * 15485863u);
    const Weight w = make_weight(gpu, f, 512, 48, rng, 0);
    ASSERT_TRUE(w.buf.get() != nullptr) << f.name;
    check_columns(gpu, w, 19, false, rng, std::string(f.name) + " {512, 48} DENSE_CUDA_GEMM=no-such-kernel");
}

TEST_P(CudaGemm, SmallShapesColumnGroupsAndUnalignedViews) {
    DENSE_REQUIRE_GPU(gpu);
    const FormatKernels& f = *GetParam();
    struct Shape {
        int64_t in, out;
        uint64_t w_offset;
    };
    // Row tails; 4100 rows: a streamed matrix (8 strided K slices; every quantized format on sm_90,
    // read straight from global memory by the dp4a GEMM too) with a short last tile; a matrix 2 bytes
    // past 16-byte alignment (the any-alignment path, the ring's order).
    std::vector<Shape> shapes = {{768, 37, 0}, {5120, 4100, 0}, {768, 37, 2}};
    if (f.block_elements == 32) {  // a partial last step; IN/32 odd: column j's scale pairs 4-byte aligned
        shapes.push_back({288, 9, 0});
        shapes.push_back({5120 + 96, 33, 0});
    }
    for (const GemmKernel& k : kGemmKernels) {
        const ScopedEnv env(k.env, k.value);
        for (const Shape& s : shapes) {
            const std::string shape = std::string(f.name) + " {" + std::to_string(s.in) + ", " +
                                      std::to_string(s.out) + "}" +
                                      (s.w_offset != 0 ? " at +" + std::to_string(s.w_offset) : "") + " " + k.label;
            std::mt19937_64 rng(f.type * 104729u + static_cast<uint64_t>(s.in * 31 + s.out) + s.w_offset);
            const Weight w = make_weight(gpu, f, s.in, s.out, rng, s.w_offset);
            ASSERT_TRUE(w.buf.get() != nullptr) << shape;
            for (const int64_t cols : {1, 2, 3, 8, 9, 16, 17, 37})
                for (const bool accumulate : {true, false}) {
                    check_columns(gpu, w, cols, accumulate, rng, shape);
                    if (HasFatalFailure()) return;
                }
        }
    }
}

INSTANTIATE_TEST_SUITE_P(QuantizedWeightFormats, CudaGemm, ::testing::ValuesIn(quant::quantized_weight_formats()),
                         quant::format_param_name);

// F32 / F16 / BF16 weights: the GEMM is the GEMV per column (the 16-byte vector path at 5120 x 64,
// the element path at 999 x 37).
TEST(CudaGemmFloat, EveryColumnIsItsGemv) {
    DENSE_REQUIRE_GPU(gpu);
    for (const dense_type_id type : {DENSE_TYPE_F32, DENSE_TYPE_F16, DENSE_TYPE_BF16}) {
        const FormatKernels& f = cpuref::format(type);
        for (const auto& [in, out] : {std::pair<int64_t, int64_t>{5120, 64}, {999, 37}}) {
            const std::string shape =
                std::string(f.name) + " {" + std::to_string(in) + ", " + std::to_string(out) + "}";
            std::mt19937_64 rng(type * 31u + static_cast<uint64_t>(in));
            const Weight w = make_weight(gpu, f, in, out, rng, 0);
            ASSERT_TRUE(w.buf.get() != nullptr) << shape;
            for (const int64_t cols : {1, 3, 8})
                for (const bool accumulate : {true, false}) {
                    check_columns(gpu, w, cols, accumulate, rng, shape);
                    if (HasFatalFailure()) return;
                }
        }
    }
}

}  // namespace
}  // namespace dense::test::cuda
