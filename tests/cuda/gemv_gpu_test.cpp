// DENSE_OP_GEMV_Q and DENSE_OP_QUANTIZE_ACT on the GPU against the cpu-ref oracle. Skips (with the
// reason) without a GPU or without packs.
//   - every quantized format at the 27B shapes (IN x OUT = 5120 x 17408, 17408 x 5120, 5120 x 6144;
//     the 5120 x 248320 LM head for q6_k and q3_k) and at small ones (row tails, partial steps),
//     fresh seeded random weights and activations, dst poisoned first: every row written, nothing
//     past the end, sampled rows within the summation-order bound of cpu-ref's gemv_act, the whole
//     vector within the norm-wise bound, bit-identical run to run, accumulate mode bit-exact with
//     dst + (W x), an unaligned matrix through the any-alignment path;
//   - bad calls refused with DENSE_E_INVALID_ARGUMENT, one log line, dst untouched;
//   - QUANTIZE_ACT to Q8_32 bit-exact with cpu-ref (NaN, Inf, zero, underflowing, subnormal-scale and
//     round-half blocks), to F32 a bit copy;
//   - F32 / F16 / BF16 weights with an F32 activation against the float64 oracle.
// It prints the time and achieved bandwidth of each large GEMV (host clock over back-to-back runs).
//
// Why the bounds (all formats alike): GPU and cpu-ref compute every per-32-block term bit for bit
// the same way (gemv_host_test.cpp checks the code on the CPU, this test checks nvcc's build), so
// the sums differ only by the order of the float additions. Per row that is rigorously bounded by
// (gamma_n + gamma_m) * sum |T_b| (gemv_test_support.hpp). Norm-wise, the rounding errors of a sum
// of n random-sign terms behave like a random walk: each of the ~n partial sums s_k (|s_k| ~
// sqrt(k) |T|) is rounded with error <= u |s_k|, so the error is ~ u |T| n / sqrt(6) against |y| ~
// sqrt(n) |T|: relative ~ u sqrt(n / 6), about 3e-7 at IN = 5120 and 6e-7 at IN = 17408 for
// cpu-ref's sequential order (the GPU's tree order contributes less). We require
// ||gpu - cpu|| / ||cpu|| <= 4 u sqrt(n): ~5x that estimate, i.e. 3.0e-6 at IN = 5120 and 5.6e-6
// at IN = 17408, while any wrong bit in a term, scale or index costs 1e-3 or more.
#include "cuda/gemv_test_support.hpp"
#include "cuda/gpu_compare.hpp"
#include "cuda/scoped_env.hpp"

#include <dense/sdk/pack.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <random>

namespace dense::test::cuda {
namespace {

using cpuref::FormatKernels;

constexpr double kU = 0x1p-24;

// A weight matrix on the device. Its rows repeat a pool of random rows (a prime number of them, so
// an indexing error of any tile size reads a different row): cheap to make even for the 1 GB head.
struct DeviceMatrix {
    const FormatKernels* f = nullptr;
    int64_t in = 0, out = 0, row_bytes = 0, pool_rows = 0;
    uint64_t offset = 0;  // bytes past the (256-byte aligned) allocation
    std::vector<uint8_t> pool;
    DeviceBuffer buf;

    const uint8_t* host_row(int64_t r) const { return pool.data() + (r % pool_rows) * row_bytes; }
    void* data() const { return buf.at(offset); }
    uint64_t bytes() const { return static_cast<uint64_t>(out) * static_cast<uint64_t>(row_bytes); }
    dense_tensor_view view() const { return cuda_view(data(), f->type, f->block_elements, f->block_bytes, {in, out}); }
};

DeviceMatrix make_matrix(GpuSession& gpu, const FormatKernels& f, int64_t in, int64_t out, std::mt19937_64& rng,
                         uint64_t offset = 0) {
    DeviceMatrix m;
    m.f = &f;
    m.in = in;
    m.out = out;
    m.row_bytes = static_cast<int64_t>(cpuref::row_bytes(f.type, in));
    m.pool_rows = std::min<int64_t>(out, 1031);
    m.offset = offset;
    m.pool = quant::random_blocks(f, m.pool_rows * in / f.block_elements, rng, quant::ScaleRange::Moderate);
    m.buf = gpu.alloc(offset + m.bytes());
    if (m.buf.get() == nullptr) return m;
    for (int64_t r0 = 0; r0 < out; r0 += m.pool_rows) {
        const int64_t n = std::min(m.pool_rows, out - r0);
        if (gpu.upload(m.buf.at(offset + static_cast<uint64_t>(r0 * m.row_bytes)), m.pool.data(),
                       static_cast<uint64_t>(n * m.row_bytes)) != DENSE_OK)
            break;
    }
    return m;
}

// The activation: random x, quantized by cpu-ref, on the device at `offset` past an allocation.
struct DeviceAct {
    std::vector<float> x;
    Q832 q;
    DeviceBuffer buf;
    uint64_t offset = 0;
    void* data() const { return buf.at(offset); }
    dense_tensor_view view() const { return cuda_view(data(), DENSE_TYPE_Q8_32, 32, 40, {q.n}); }
};

DeviceAct make_act(GpuSession& gpu, int64_t in, std::mt19937_64& rng, uint64_t offset = 0) {
    DeviceAct a;
    a.x = quant::random_activation(in, rng);
    a.q = quantize_q8_32(a.x);
    a.offset = offset;
    a.buf = gpu.alloc(offset + a.q.bytes.size());
    if (a.buf.get() != nullptr) gpu.upload(a.data(), a.q.bytes.data(), a.q.bytes.size());
    return a;
}

// dst with kGuardFloats poisoned floats after it.
struct DeviceDst {
    int64_t n = 0;
    DeviceBuffer buf;
    float* data() const { return static_cast<float*>(buf.get()); }
    dense_tensor_view view() const { return cuda_view(buf.get(), DENSE_TYPE_F32, 1, 4, {n}); }
};

DeviceDst make_dst(GpuSession& gpu, int64_t n) {
    DeviceDst d;
    d.n = n;
    d.buf = gpu.alloc(static_cast<uint64_t>(n + kGuardFloats) * 4);
    return d;
}

void fill(GpuSession& gpu, const DeviceDst& d, const std::vector<float>& v) {
    ASSERT_EQ(gpu.upload(d.data(), v.data(), v.size() * 4), DENSE_OK);
}

std::vector<float> read(GpuSession& gpu, const DeviceDst& d) {
    std::vector<float> v(static_cast<std::size_t>(d.n + kGuardFloats));
    EXPECT_EQ(gpu.download(v.data(), d.data(), v.size() * 4), DENSE_OK);
    return v;
}

dense_op_call gemv_call(const dense_tensor_view (&src)[2], const dense_tensor_view& dst, const dense_gemv_params* params,
                        void* stream) {
    dense_op_call c = make_call(DENSE_OP_GEMV_Q, src, &dst, params, stream);
    c.n_src = 2;
    return c;
}

dense_status run_gemv(GpuSession& gpu, const DeviceMatrix& m, const dense_tensor_view& act, dense_type_id act_type,
                      const DeviceDst& d, bool accumulate) {
    auto params = dense::sdk::make_struct<dense_gemv_params>();
    params.accumulate = accumulate ? 1u : 0u;
    const dense_tensor_view src[2] = {m.view(), act};
    const dense_tensor_view dv = d.view();
    return gpu.run(m.f->type, act_type, gemv_call(src, dv, &params, gpu.stream()));
}

// The rows checked against cpu-ref: both ends (first and last thread-block tiles, the row tail) and
// a stride through the middle.
std::vector<int64_t> sample_rows(int64_t out) {
    std::vector<int64_t> rows;
    for (int64_t r = 0; r < out; ++r)
        if (r < 64 || r >= out - 64 || r % 61 == 7) rows.push_back(r);
    return rows;
}

// GPU result `got` (all rows) against cpu-ref on the sampled rows: per-row order bound, norm-wise
// relative error. Returns the norm-wise relative error.
double check_against_cpuref(const DeviceMatrix& m, const Q832& act, const std::vector<float>& got,
                            const std::string& label) {
    std::map<int64_t, std::pair<float, double>> by_pool_row;  // pool row -> (cpu-ref value, sum |T|)
    double err2 = 0.0, norm2 = 0.0;
    int reported = 0;
    for (const int64_t r : sample_rows(m.out)) {
        const int64_t pr = r % m.pool_rows;
        auto it = by_pool_row.find(pr);
        if (it == by_pool_row.end()) {
            const float want = cpuref::vec_dot_act(m.f->type, DENSE_TYPE_Q8_32, m.host_row(r), act.bytes.data(), m.in);
            it = by_pool_row.emplace(pr, std::make_pair(want, abs_term_sum(*m.f, m.host_row(r), act))).first;
        }
        const float want = it->second.first;
        const float g = got[static_cast<std::size_t>(r)];
        const double diff = std::fabs(static_cast<double>(g) - static_cast<double>(want));
        const double bound = order_bound(m.in, it->second.second);
        if (!(diff <= bound) && reported++ < 5)
            ADD_FAILURE() << label << " row " << r << ": got " << quant::hex32(g) << ", cpu-ref " << quant::hex32(want)
                          << ", |diff| " << diff << " > order bound " << bound;
        err2 += diff * diff;
        norm2 += static_cast<double>(want) * static_cast<double>(want);
    }
    const double rel = std::sqrt(err2 / norm2);
    const double limit = 4.0 * kU * std::sqrt(static_cast<double>(m.in / 32));
    EXPECT_LE(rel, limit) << label << ": norm-wise relative error";
    return rel;
}

// Mean time of `reps` back-to-back launches (host clock; the launches are asynchronous).
double time_gemv(GpuSession& gpu, const DeviceMatrix& m, const DeviceAct& a, const DeviceDst& d, int reps) {
    if (run_gemv(gpu, m, a.view(), DENSE_TYPE_Q8_32, d, false) != DENSE_OK || gpu.sync() != DENSE_OK) return 0.0;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i)
        if (run_gemv(gpu, m, a.view(), DENSE_TYPE_Q8_32, d, false) != DENSE_OK) return 0.0;
    if (gpu.sync() != DENSE_OK) return 0.0;
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps;
}

class CudaGemv : public ::testing::TestWithParam<const FormatKernels*> {
protected:
    // One shape: plain, determinism, accumulate, cpu-ref comparison; optionally timed.
    void check_shape(GpuSession& gpu, int64_t in, int64_t out, uint64_t seed, uint64_t w_offset, bool timed) {
        const FormatKernels& f = *GetParam();
        const std::string label = std::string(f.name) + " {" + std::to_string(in) + ", " + std::to_string(out) + "}" +
                                  (w_offset != 0 ? " weight at +" + std::to_string(w_offset) : "");
        std::mt19937_64 rng(seed * 1000003u + f.type * 7919u + static_cast<uint64_t>(in * 31 + out));
        const DeviceMatrix m = make_matrix(gpu, f, in, out, rng, w_offset);
        const DeviceAct a = make_act(gpu, in, rng);
        const DeviceDst d = make_dst(gpu, out);
        ASSERT_TRUE(m.buf.get() != nullptr && a.buf.get() != nullptr && d.buf.get() != nullptr) << label;

        fill(gpu, d, poison(out + kGuardFloats));
        gpu.host().clear_logs();
        ASSERT_EQ(run_gemv(gpu, m, a.view(), DENSE_TYPE_Q8_32, d, false), DENSE_OK) << label << "\n"
                                                                                      << gpu.host().log_text();
        EXPECT_TRUE(gpu.host().logs().empty()) << gpu.host().log_text();
        std::vector<float> got = read(gpu, d);
        EXPECT_EQ(count_poison(got, 0, static_cast<std::size_t>(out)), 0) << label << ": rows left unwritten";
        EXPECT_EQ(count_poison(got, static_cast<std::size_t>(out), got.size()), kGuardFloats)
            << label << ": written past the end of dst";
        got.resize(static_cast<std::size_t>(out));
        const double rel = check_against_cpuref(m, a.q, got, label);

        // Same call again: the same bits (the summation order depends on the shape only).
        ASSERT_EQ(run_gemv(gpu, m, a.view(), DENSE_TYPE_Q8_32, d, false), DENSE_OK);
        std::vector<float> again = read(gpu, d);
        again.resize(got.size());
        EXPECT_TRUE(quant::same_bits(again, got)) << label << ": not deterministic";

        // dst += W x: exactly one float addition onto the old dst, after the same sum.
        std::uniform_real_distribution<float> z(-4.0f, 4.0f);
        std::vector<float> base(static_cast<std::size_t>(out + kGuardFloats), std::bit_cast<float>(kPoisonBits));
        for (int64_t r = 0; r < out; ++r) base[static_cast<std::size_t>(r)] = z(rng);
        fill(gpu, d, base);
        ASSERT_EQ(run_gemv(gpu, m, a.view(), DENSE_TYPE_Q8_32, d, true), DENSE_OK) << gpu.host().log_text();
        std::vector<float> acc = read(gpu, d);
        EXPECT_EQ(count_poison(acc, static_cast<std::size_t>(out), acc.size()), kGuardFloats) << label;
        acc.resize(got.size());
        std::vector<float> want_acc(got.size());
        for (std::size_t r = 0; r < got.size(); ++r) want_acc[r] = base[r] + got[r];
        EXPECT_TRUE(quant::same_bits(acc, want_acc)) << label << ": accumulate is not dst + (W x)";

        if (timed) {
            const double t = time_gemv(gpu, m, a, d, 20);
            std::printf("[ gemv     ] %-8s IN %6lld OUT %6lld: %8.1f us, %7.1f GB/s (%.2e rel. to cpu-ref)\n", f.name,
                        static_cast<long long>(in), static_cast<long long>(out), t * 1e6,
                        t > 0 ? static_cast<double>(m.bytes()) / t * 1e-9 : 0.0, rel);
        }
    }
};

TEST_P(CudaGemv, ModelShapesMatchCpuRef) {
    DENSE_REQUIRE_GPU(gpu);
    for (const auto& [in, out] : {std::pair<int64_t, int64_t>{5120, 17408}, {17408, 5120}, {5120, 6144}}) {
        check_shape(gpu, in, out, 1, 0, true);
        if (HasFatalFailure()) return;
    }
}

// The streamed GEMV fed by bulk copies (kernels/gemv_kernel.cuh, stream_part_bulk; the default for
// the formats that measured faster with it, every format with DENSE_CUDA_GEMV_BULK=all) against the
// register-load kernel (DENSE_CUDA_GEMV_BULK=0): the same lanes, units and summation order, so the
// same bits, plain and accumulated, for every format. The shapes are streamed (>= 4096 rows,
// aligned) and reach its corners: a last stage of 4 steps (K = 5120, 20 steps in stages of 8) and of
// 8 (K = 6144), a long row of 8.5 stages (K = 17408), a last task of one row (4101 rows), and for
// the 2-byte-aligned formats odd rows whose copies start mid-word (Q6_K's 4200-byte rows).
TEST_P(CudaGemv, BulkCopyStreamIsBitIdenticalToRegisterStream) {
    DENSE_REQUIRE_GPU(gpu);
    if (gpu.lib().name != "cuda-sm90")
        GTEST_SKIP() << "bulk copies are compiled in the sm_90 pack only (target_tuning.hpp), not in " << gpu.lib().name;
    const FormatKernels& f = *GetParam();
    for (const auto& [in, out] : {std::pair<int64_t, int64_t>{5120, 17408}, {17408, 5120}, {6144, 5120}, {5120, 4101}}) {
        const std::string label = std::string(f.name) + " {" + std::to_string(in) + ", " + std::to_string(out) + "}";
        std::mt19937_64 rng(77 + f.type * 7919u + static_cast<uint64_t>(in * 31 + out));
        const DeviceMatrix m = make_matrix(gpu, f, in, out, rng);
        const DeviceAct a = make_act(gpu, in, rng);
        const DeviceDst d = make_dst(gpu, out);
        ASSERT_TRUE(m.buf.get() != nullptr && a.buf.get() != nullptr && d.buf.get() != nullptr) << label;
        std::uniform_real_distribution<float> z(-4.0f, 4.0f);
        std::vector<float> base(static_cast<std::size_t>(out + kGuardFloats), std::bit_cast<float>(kPoisonBits));
        for (int64_t r = 0; r < out; ++r) base[static_cast<std::size_t>(r)] = z(rng);
        for (const bool accumulate : {false, true}) {
            auto run_with = [&](const char* bulk) {
                const ScopedEnv env("DENSE_CUDA_GEMV_BULK", bulk);
                fill(gpu, d, accumulate ? base : poison(out + kGuardFloats));
                EXPECT_EQ(run_gemv(gpu, m, a.view(), DENSE_TYPE_Q8_32, d, accumulate), DENSE_OK) << gpu.host().log_text();
                return read(gpu, d);
            };
            const std::vector<float> registers = run_with("0");
            const std::vector<float> bulk = run_with("all");
            const std::string what = label + (accumulate ? " accumulate" : "");
            EXPECT_EQ(count_poison(bulk, 0, static_cast<std::size_t>(out)), 0) << what << ": rows left unwritten";
            EXPECT_EQ(count_poison(bulk, static_cast<std::size_t>(out), bulk.size()), kGuardFloats)
                << what << ": written past the end of dst";
            EXPECT_TRUE(quant::same_bits(bulk, registers)) << what << ": bulk copies change the result";
        }
        if (HasFailure()) return;
    }
}

TEST_P(CudaGemv, LmHeadShape) {
    const FormatKernels& f = *GetParam();
    if (f.type != DENSE_TYPE_Q6_K && f.type != DENSE_TYPE_Q3_K)
        GTEST_SKIP() << "the 5120 x 248320 head runs for q6_k and q3_k only (1 GB each)";
    DENSE_REQUIRE_GPU(gpu);
    check_shape(gpu, 5120, 248320, 2, 0, true);
}

TEST_P(CudaGemv, SmallAndOddShapesAndUnalignedMatrices) {
    DENSE_REQUIRE_GPU(gpu);
    const FormatKernels& f = *GetParam();
    // Tiny-model row lengths, row counts that are not multiples of the 8-row tile, short matrices
    // (the K split), and for the 32-element formats lengths ending in a partial 256-element step.
    // 4100 rows: >= 4096, so Q4_K/Q5_K/IQ4_XS take the direct-load kernel with a last row tile of 4
    // rows (warps past the end still pass the K-split barrier); 17408 x 4100 the same with long slices.
    std::vector<std::pair<int64_t, int64_t>> shapes = {{256, 1},     {512, 7},     {768, 48},   {5120, 1024},
                                                       {6144, 5120}, {5120, 4100}, {17408, 4100}};
    if (f.block_elements == 32) {
        shapes.push_back({32, 3});
        shapes.push_back({96, 9});
        shapes.push_back({5120 + 96, 33});
    }
    for (const auto& [in, out] : shapes) {
        check_shape(gpu, in, out, 3, 0, false);
        if (HasFatalFailure()) return;
    }
    // Matrices not 16-byte aligned (the any-alignment load path), odd and even offsets.
    for (const uint64_t offset : {1u, 2u, 8u}) {
        check_shape(gpu, 768, 37, 4, offset, false);
        if (HasFatalFailure()) return;
    }
}

INSTANTIATE_TEST_SUITE_P(QuantizedWeightFormats, CudaGemv, ::testing::ValuesIn(quant::quantized_weight_formats()),
                         quant::format_param_name);

// ---- refused calls ------------------------------------------------------------------------------

TEST(CudaGemvCalls, BadCallsAreRefusedAndWriteNothing) {
    DENSE_REQUIRE_GPU(gpu);
    const FormatKernels& f = cpuref::format(DENSE_TYPE_Q4_K);
    std::mt19937_64 rng(77);
    const int64_t in = 512, out = 16;
    const DeviceMatrix m = make_matrix(gpu, f, in, out, rng);
    const DeviceAct a = make_act(gpu, in, rng, 32);  // at +32: aligned; at +40 below: not
    const DeviceDst d = make_dst(gpu, out);
    ASSERT_TRUE(m.buf.get() != nullptr && a.buf.get() != nullptr && d.buf.get() != nullptr);
    auto params = dense::sdk::make_struct<dense_gemv_params>();

    struct Case {
        std::string what;
        dense_tensor_view w, act, dst;
        const dense_gemv_params* params;
        uint32_t n_src = 2;
    };
    std::vector<Case> cases;
    cases.reserve(16);
    const dense_tensor_view w = m.view(), av = a.view(), dv = d.view();
    auto with = [&](std::string what) {
        cases.push_back({std::move(what), w, av, dv, &params});
        return &cases.back();
    };
    with("activation codes not 16-byte aligned")->act.data = static_cast<uint8_t*>(a.data()) + 8;
    {
        Case* c = with("activation of another type");
        c->act = cuda_view(a.data(), DENSE_TYPE_F32, 1, 4, {in});
    }
    {
        Case* c = with("activation length differs from IN");
        c->act = cuda_view(a.data(), DENSE_TYPE_Q8_32, 32, 40, {in - 32});
    }
    {
        Case* c = with("dst length differs from OUT");
        c->dst = cuda_view(d.data(), DENSE_TYPE_F32, 1, 4, {out + 1});
    }
    {
        Case* c = with("dst overlaps the weight");
        c->dst = cuda_view(m.data(), DENSE_TYPE_F32, 1, 4, {out});
    }
    {
        Case* c = with("dst overlaps the activation");
        c->dst = cuda_view(a.data(), DENSE_TYPE_F32, 1, 4, {out});
    }
    with("weight rows not contiguous")->w.nb[1] += 16;
    {
        Case* c = with("weight is 3-D");
        c->w = cuda_view(m.data(), f.type, f.block_elements, f.block_bytes, {in, out / 2, 2});
    }
    with("weight row length not a multiple of the block")->w.ne[0] = in - 32;
    with("activation on another device")->act.device_index = 1;
    with("dst misaligned")->dst.data = reinterpret_cast<uint8_t*>(d.data()) + 2;
    with("one source only")->n_src = 1;
    auto small_params = params;
    small_params.hdr.struct_size = static_cast<uint32_t>(offsetof(dense_gemv_params, accumulate));
    with("params too small")->params = &small_params;

    for (const Case& c : cases) {
        fill(gpu, d, poison(out + kGuardFloats));
        gpu.host().clear_logs();
        const dense_tensor_view src[2] = {c.w, c.act};
        dense_op_call call = gemv_call(src, c.dst, c.params, gpu.stream());
        call.n_src = c.n_src;
        EXPECT_EQ(gpu.run(f.type, DENSE_TYPE_Q8_32, call), DENSE_E_INVALID_ARGUMENT) << c.what;
        EXPECT_EQ(gpu.host().logs().size(), 1u) << c.what << "\n" << gpu.host().log_text();
        const std::vector<float> after = read(gpu, d);
        EXPECT_EQ(count_poison(after, 0, after.size()), out + kGuardFloats) << c.what << ": dst was written";
        const dense_op_impl* impl = gpu.host().find_op(DENSE_OP_GEMV_Q, f.type, DENSE_TYPE_Q8_32);
        ASSERT_NE(impl, nullptr);
        EXPECT_EQ(impl->supports(impl->user, &call), 0u) << c.what;
    }
    // And the valid call goes through (the cases above differ from it in one field each).
    fill(gpu, d, poison(out + kGuardFloats));
    const dense_tensor_view src[2] = {w, av};
    EXPECT_EQ(gpu.run(f.type, DENSE_TYPE_Q8_32, gemv_call(src, dv, &params, gpu.stream())), DENSE_OK)
        << gpu.host().log_text();
    const std::vector<float> after = read(gpu, d);
    EXPECT_EQ(count_poison(after, 0, static_cast<std::size_t>(out)), 0);
}

// ---- QUANTIZE_ACT ---------------------------------------------------------------------------------

std::vector<uint8_t> run_quantize(GpuSession& gpu, dense_type_id act_type, const std::vector<float>& x,
                                  dense_status* status = nullptr, uint64_t dst_offset = 0) {
    const auto n = static_cast<int64_t>(x.size());
    // Room for the output (Q8_32: n + n/4 bytes; a length the op must refuse gets as much anyway).
    const std::size_t bytes = act_type == DENSE_TYPE_Q8_32 ? x.size() + x.size() / 4 + 8 : x.size() * 4;
    DeviceBuffer src = gpu.alloc(x.size() * 4);
    DeviceBuffer dst = gpu.alloc(dst_offset + bytes + 64);
    if (src.get() == nullptr || dst.get() == nullptr) return {};
    gpu.upload(src.get(), x.data(), x.size() * 4);
    std::vector<uint8_t> out(dst_offset + bytes + 64, 0xAB);
    gpu.upload(dst.get(), out.data(), out.size());
    const auto sv = cuda_view(src.get(), DENSE_TYPE_F32, 1, 4, {n});
    const auto dv = act_type == DENSE_TYPE_Q8_32 ? cuda_view(dst.at(dst_offset), DENSE_TYPE_Q8_32, 32, 40, {n})
                                                 : cuda_view(dst.at(dst_offset), DENSE_TYPE_F32, 1, 4, {n});
    gpu.host().clear_logs();
    const dense_status s =
        gpu.run(DENSE_TYPE_NONE, act_type, make_call(DENSE_OP_QUANTIZE_ACT, &sv, &dv, nullptr, gpu.stream()));
    if (status != nullptr) *status = s;
    gpu.download(out.data(), dst.get(), out.size());
    return out;
}

TEST(CudaQuantizeAct, Q8_32IsBitExactWithCpuRef) {
    DENSE_REQUIRE_GPU(gpu);
    std::mt19937_64 rng(8);
    std::vector<float> x = quant::random_activation(17408, rng);
    auto block = [&](int b) { return x.begin() + 32 * b; };
    std::fill(block(0), block(1), 0.0f);                            // all zero: d = s = +0
    x[32 * 1 + 5] = std::nanf("");                                  // NaN: d = s = 0x7FC00000, q = 0
    x[32 * 2 + 31] = INFINITY;                                      // Inf
    x[32 * 3 + 0] = -INFINITY;
    std::fill(block(4), block(5), 0x1p-149f);                       // amax / 127 underflows: zero block
    auto at = [&](int b, int e) -> float& { return x[static_cast<std::size_t>(32 * b + e)]; };
    for (int e = 0; e < 32; ++e) {
        const auto fe = static_cast<float>(e);
        at(5, e) = (fe - 16.0f) * 0x1p-130f;                      // subnormal d
        at(6, e) = e == 0 ? 127.0f : (fe - 16.0f) + 0.5f;         // d = 1, exact halves
        at(7, e) = e % 2 ? -0.0f : 3.0f * (fe - 16.0f);           // negative zeros
        at(8, e) = -1e30f * (fe + 1.0f);                          // large
    }
    std::vector<uint8_t> want(quant::act_bytes(DENSE_TYPE_Q8_32, static_cast<int64_t>(x.size())));
    cpuref::quantize_activation(DENSE_TYPE_Q8_32, x.data(), want.data(), static_cast<int64_t>(x.size()));

    dense_status s = DENSE_E_INTERNAL;
    std::vector<uint8_t> got = run_quantize(gpu, DENSE_TYPE_Q8_32, x, &s);
    ASSERT_EQ(s, DENSE_OK) << gpu.host().log_text();
    ASSERT_EQ(got.size(), want.size() + 8 + 64);
    for (std::size_t i = want.size(); i < got.size(); ++i) ASSERT_EQ(got[i], 0xAB) << "written past the end at " << i;
    got.resize(want.size());
    EXPECT_TRUE(quant::same_bytes(got, want));
    uint32_t nan_d = 0;
    std::memcpy(&nan_d, got.data() + x.size() + 4, 4);
    EXPECT_EQ(nan_d, 0x7FC00000u);
}

TEST(CudaQuantizeAct, F32IsACopyAndBadCallsAreRefused) {
    DENSE_REQUIRE_GPU(gpu);
    std::mt19937_64 rng(9);
    std::vector<float> x = quant::random_activation(1000, rng);
    x[3] = std::bit_cast<float>(0x7FA5DEAEu);  // a NaN payload survives
    x[4] = -0.0f;
    dense_status s = DENSE_E_INTERNAL;
    std::vector<uint8_t> got = run_quantize(gpu, DENSE_TYPE_F32, x, &s);
    ASSERT_EQ(s, DENSE_OK) << gpu.host().log_text();
    std::vector<uint8_t> want(x.size() * 4);
    std::memcpy(want.data(), x.data(), want.size());
    got.resize(want.size());
    EXPECT_TRUE(quant::same_bytes(got, want));

    // Q8_32 into a dst that is not 16-byte aligned, and a length that is not a multiple of 32.
    std::vector<float> y = quant::random_activation(256, rng);
    got = run_quantize(gpu, DENSE_TYPE_Q8_32, y, &s, 4);
    EXPECT_EQ(s, DENSE_E_INVALID_ARGUMENT);
    for (std::size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], 0xAB) << "byte " << i << " written";
    y.resize(250);
    got = run_quantize(gpu, DENSE_TYPE_Q8_32, y, &s);
    EXPECT_EQ(s, DENSE_E_INVALID_ARGUMENT);
    for (std::size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], 0xAB) << "byte " << i << " written";
}

// ---- float weights ------------------------------------------------------------------------------

// F32 / F16 / BF16 weights x F32 activation against the float64 oracle. Each lane accumulates with
// fused multiply-adds (one rounding per element), then a 5-level shuffle tree: every product passes
// through at most ceil(IN/32) + 5 roundings, so |gpu - exact| <= gamma_(ceil(IN/32)+6) sum |w x|.
TEST(CudaGemvFloat, MatchesFloat64Oracle) {
    DENSE_REQUIRE_GPU(gpu);
    for (const dense_type_id type : {DENSE_TYPE_F32, DENSE_TYPE_F16, DENSE_TYPE_BF16}) {
        const FormatKernels& f = cpuref::format(type);
        // 16-byte rows (vector path) and odd rows (element path); an odd row count.
        for (const auto& [in, out] : {std::pair<int64_t, int64_t>{5120, 1024}, {999, 37}}) {
            const std::string label = std::string(f.name) + " {" + std::to_string(in) + ", " + std::to_string(out) + "}";
            std::mt19937_64 rng(type * 31u + static_cast<uint64_t>(in));
            const DeviceMatrix m = make_matrix(gpu, f, in, out, rng);
            const std::vector<float> x = quant::random_activation(in, rng);
            DeviceBuffer xb = gpu.alloc(x.size() * 4);
            ASSERT_TRUE(m.buf.get() != nullptr && xb.get() != nullptr);
            gpu.upload(xb.get(), x.data(), x.size() * 4);
            const DeviceDst d = make_dst(gpu, out);
            const auto xv = cuda_view(xb.get(), DENSE_TYPE_F32, 1, 4, {in});
            for (const bool accumulate : {false, true}) {
                std::vector<float> base(static_cast<std::size_t>(out + kGuardFloats), std::bit_cast<float>(kPoisonBits));
                if (accumulate)
                    for (int64_t r = 0; r < out; ++r) base[static_cast<std::size_t>(r)] = 0.25f * static_cast<float>(r % 7);
                fill(gpu, d, base);
                ASSERT_EQ(run_gemv(gpu, m, xv, DENSE_TYPE_F32, d, accumulate), DENSE_OK) << label << gpu.host().log_text();
                const std::vector<float> got = read(gpu, d);
                EXPECT_EQ(count_poison(got, static_cast<std::size_t>(out), got.size()), kGuardFloats) << label;
                std::vector<double> ref(static_cast<std::size_t>(out));
                std::vector<float> row(static_cast<std::size_t>(in));
                for (int64_t r = 0; r < out; ++r) {
                    cpuref::gemv_f64_reference(type, m.host_row(r), in, 1, x.data(), &ref[static_cast<std::size_t>(r)]);
                    cpuref::dequantize_row(type, m.host_row(r), row.data(), in);
                    double abs_sum = 0.0;
                    for (int64_t i = 0; i < in; ++i)
                        abs_sum += std::fabs(static_cast<double>(row[static_cast<std::size_t>(i)]) * x[static_cast<std::size_t>(i)]);
                    const double bound = gamma_bound(static_cast<double>((in + 31) / 32 + 6)) * abs_sum;
                    const double b0 = accumulate ? base[static_cast<std::size_t>(r)] : 0.0;
                    const double want = b0 + ref[static_cast<std::size_t>(r)];
                    const double slack = accumulate ? kU * std::fabs(want) + kU * bound : 0.0;  // the final addition
                    EXPECT_LE(std::fabs(got[static_cast<std::size_t>(r)] - want), bound + slack)
                        << label << (accumulate ? " accumulate" : "") << " row " << r;
                }
            }
        }
    }
}

// ---- GEMV_Q_MULTI: several matrices on one activation ----------------------------------------------

// The lists of a qwen35 layer at the 27B shapes (Gated DeltaNet: qkv, gate, beta, alpha; attention:
// q, k, v with v in another format; FFN: gate, up) and small lists that reach the pack's corners:
// more matrices of one K split than one launch takes, several K splits in one format, row tails, an
// unaligned matrix (the any-alignment path) and a 16th matrix. On sm_90 the Gated DeltaNet list and
// the lists marked "pair" go out as one pair launch (kernels/gemv_pair_plan.hpp: a streamed group
// beside small matrices of one other format or order; tests/cuda/gemv_pair_plan_test.cpp checks
// which lists fit), the attention lists as a pair of two of their formats and a launch for the
// third, the others per format and order. Every dst must be bit for bit what GEMV_Q of its matrix
// alone writes (dense_abi.h), every row written, nothing past the end.
void check_lists_against_their_gemvs(GpuSession& gpu) {
    struct M {
        dense_type_id type;
        int64_t out;
        uint64_t offset = 0;
    };
    struct Case {
        const char* name;
        int64_t in;
        std::vector<M> mats;
    };
    std::vector<Case> cases = {
        {"gated deltanet", 5120, {{DENSE_TYPE_Q5_K, 10240}, {DENSE_TYPE_Q5_K, 6144}, {DENSE_TYPE_Q8_0, 48}, {DENSE_TYPE_Q8_0, 48}}},
        {"attention", 5120, {{DENSE_TYPE_Q5_K, 12288}, {DENSE_TYPE_Q8_0, 1024}, {DENSE_TYPE_Q6_K, 1024}}},
        {"ffn", 5120, {{DENSE_TYPE_IQ4_XS, 17408}, {DENSE_TYPE_IQ4_XS, 17408}}},
        {"q4_k_m attention: q and k in q4_k (a pair), v in q6_k", 5120,
         {{DENSE_TYPE_Q4_K, 12288}, {DENSE_TYPE_Q4_K, 1024}, {DENSE_TYPE_Q6_K, 1024}}},
        {"pair: attention with k and v in q8_0", 5120, {{DENSE_TYPE_Q5_K, 12288}, {DENSE_TYPE_Q8_0, 1024}, {DENSE_TYPE_Q8_0, 1024}}},
        {"pair: q4_k in two orders, row tails", 5120, {{DENSE_TYPE_Q4_K, 4100}, {DENSE_TYPE_Q4_K, 1020}, {DENSE_TYPE_Q4_K, 45}}},
        {"pair: q8_0 in two orders", 5120, {{DENSE_TYPE_Q8_0, 48}, {DENSE_TYPE_Q8_0, 4096}}},
        {"pair: iq4_xs beside q8_0, K 17408", 17408, {{DENSE_TYPE_IQ4_XS, 4096}, {DENSE_TYPE_Q8_0, 96}, {DENSE_TYPE_IQ4_XS, 4104}}},
        {"per format: the small q8_0 unaligned", 5120, {{DENSE_TYPE_Q5_K, 4096}, {DENSE_TYPE_Q8_0, 48, 2}}},
        {"six q4_k, two k splits, one unaligned", 512,
         {{DENSE_TYPE_Q4_K, 5}, {DENSE_TYPE_Q4_K, 40}, {DENSE_TYPE_Q4_K, 9, 2}, {DENSE_TYPE_Q4_K, 3000},
          {DENSE_TYPE_Q4_K, 17}, {DENSE_TYPE_Q4_K, 8}}},
        {"mixed small, partial steps", 288, {{DENSE_TYPE_Q8_0, 33}, {DENSE_TYPE_IQ4_NL, 7}, {DENSE_TYPE_Q8_0, 1}}},
    };
    Case sixteen{"sixteen matrices", 256, {}};
    for (int i = 0; i < 16; ++i)
        sixteen.mats.push_back({i % 3 == 0 ? DENSE_TYPE_IQ2_XS : (i % 3 == 1 ? DENSE_TYPE_Q3_K : DENSE_TYPE_Q2_K), 3 + 7 * i});
    cases.push_back(sixteen);

    std::mt19937_64 rng(4242);
    for (const Case& c : cases) {
        SCOPED_TRACE(c.name);
        std::vector<DeviceMatrix> mats;
        std::vector<DeviceDst> singles, listed;
        for (const M& m : c.mats) {
            mats.push_back(make_matrix(gpu, cpuref::format(m.type), c.in, m.out, rng, m.offset));
            singles.push_back(make_dst(gpu, m.out));
            listed.push_back(make_dst(gpu, m.out));
            ASSERT_TRUE(mats.back().buf.get() != nullptr && singles.back().buf.get() != nullptr &&
                        listed.back().buf.get() != nullptr);
        }
        const DeviceAct a = make_act(gpu, c.in, rng);
        ASSERT_TRUE(a.buf.get() != nullptr);
        std::vector<dense_tensor_view> src, dst;
        for (size_t i = 0; i < mats.size(); ++i) {
            ASSERT_EQ(run_gemv(gpu, mats[i], a.view(), DENSE_TYPE_Q8_32, singles[i], false), DENSE_OK) << gpu.host().log_text();
            fill(gpu, listed[i], poison(listed[i].n + kGuardFloats));
            src.push_back(mats[i].view());
            dst.push_back(listed[i].view());
        }
        src.push_back(a.view());
        dense_op_call call = make_call(DENSE_OP_GEMV_Q_MULTI, src.data(), dst.data(), nullptr, gpu.stream());
        call.n_src = static_cast<uint32_t>(src.size());
        call.n_dst = static_cast<uint32_t>(dst.size());
        gpu.host().clear_logs();
        ASSERT_EQ(gpu.run(DENSE_TYPE_NONE, DENSE_TYPE_Q8_32, call), DENSE_OK) << gpu.host().log_text();
        // Nothing above debug level; at debug level the pack says which lists went out as a pair
        // launch: on sm_90 the cases named for it (kernels/gemv_pair_plan.hpp), nowhere else.
        bool paired = false;
        for (const auto& line : gpu.host().logs()) {
            EXPECT_EQ(line.level, static_cast<dense_log_level>(DENSE_LOG_DEBUG)) << line.message;
            paired = paired || line.message.find("in one pair launch") != std::string::npos;
        }
        const std::string name = c.name;
        const bool pairs_here = gpu.lib().name == "cuda-sm90" &&
                                (name.rfind("pair", 0) == 0 || name == "gated deltanet" || name == "attention" ||
                                 name.rfind("q4_k_m", 0) == 0);
        EXPECT_EQ(paired, pairs_here) << gpu.host().log_text();
        for (size_t i = 0; i < mats.size(); ++i) {
            const std::string label = std::string(mats[i].f->name) + " #" + std::to_string(i) + " {" +
                                      std::to_string(c.in) + ", " + std::to_string(mats[i].out) + "}";
            std::vector<float> got = read(gpu, listed[i]);
            std::vector<float> want = read(gpu, singles[i]);
            const auto rows = static_cast<std::size_t>(mats[i].out);
            EXPECT_EQ(count_poison(got, 0, rows), 0) << label << ": rows left unwritten";
            EXPECT_EQ(count_poison(got, rows, got.size()), kGuardFloats) << label << ": written past the end";
            got.resize(rows);
            want.resize(rows);
            EXPECT_TRUE(quant::same_bits(got, want)) << label << ": differs from its own GEMV_Q";
        }
    }
}

TEST(CudaGemvList, EveryOutputIsBitIdenticalToItsOwnGemv) {
    DENSE_REQUIRE_GPU(gpu);
    check_lists_against_their_gemvs(gpu);
}

// The same with every streamed part fed by bulk copies, and with none (the pair kernel's streamed
// blocks and the lists' streamed launches; BulkCopyStreamIsBitIdenticalToRegisterStream ties those
// GEMVs to each other).
TEST(CudaGemvList, WithAndWithoutBulkCopiesEveryOutputIsBitIdenticalToItsOwnGemv) {
    DENSE_REQUIRE_GPU(gpu);
    if (gpu.lib().name != "cuda-sm90")
        GTEST_SKIP() << "bulk copies are compiled in the sm_90 pack only (target_tuning.hpp), not in " << gpu.lib().name;
    for (const char* bulk : {"all", "0"}) {
        SCOPED_TRACE(std::string("DENSE_CUDA_GEMV_BULK=") + bulk);
        const ScopedEnv env("DENSE_CUDA_GEMV_BULK", bulk);
        check_lists_against_their_gemvs(gpu);
        if (HasFatalFailure()) return;
    }
}

}  // namespace
}  // namespace dense::test::cuda
