// SWIGLU, GDN_GATES, CHECK_FINITE, ARGMAX, TOP_K, CONV1D_CAUSAL and KV_STORE on the GPU against the cpu-ref oracle, on
// fresh seeded random inputs at the Qwen3.5-27B shapes and at small odd shapes, outputs poisoned first.
//
// Tolerances (why):
//   swiglu, beta: relative 2e-6 (expf <= 2 ulp, a division and a product: <= ~5 ulp = 3e-7).
//   decay = exp(y), y = softplus(a + dt) * A: the fp32 sum a + dt, softplus and the product put an
//     absolute error of <= ~4 ulp * (|y| + |A| |a + dt|) into y, which exp turns into that relative
//     error; the test allows 1e-6 * (1 + |y| + |A| |a + dt|) relative.
//   conv1d: |err| <= 1e-6 * (sum_i |taps_i window_i| + |want|): the GPU sums the K products in fp32 in
//     tap order (error <= K * 2^-24 of the sum of magnitudes), SiLU's slope is <= 1.1, and cpu-ref
//     rounds a double result once. The shifted state is a copy: bit-exact.
//   kv_store, check_finite, argmax and top_k: exact (conversion with round-to-nearest-even, a flag, an
//     index, indices and the values' bits).
#include "cuda/gpu_ops_support.hpp"

#include "kernels/ops.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <iterator>
#include <limits>
#include <tuple>

namespace dense::test::cuda {
namespace {

TEST(CudaSwiglu, MatchesCpuRefAtTheFfnWidthAndOddLengths) {
    DENSE_REQUIRE_GPU(gpu);
    uint64_t seed = 500;
    for (const int64_t n : {int64_t{17408}, int64_t{5}, int64_t{1}, int64_t{1000003}}) {
        std::mt19937_64 rng(++seed);
        auto gate = uniform(static_cast<std::size_t>(n), rng, -12.0f, 12.0f);
        const auto up = uniform(static_cast<std::size_t>(n), rng, -3.0f, 3.0f);
        if (n > 2) gate[1] = -100.0f;  // exp(100) overflows in float: silu must give -0, not NaN
        std::vector<float> want(gate.size());
        cpuref::swiglu(gate.data(), up.data(), want.data(), n);
        DevMatrix dg = upload_matrix(gpu, &gate, n, 1), du = upload_matrix(gpu, &up, n, 1),
                  dy = upload_matrix(gpu, nullptr, n, 1);
        run_op(gpu, DENSE_OP_SWIGLU, {dg.view, du.view}, {dy.view}, nullptr, "swiglu n = " + std::to_string(n));
        if (HasFatalFailure()) return;
        // The absolute 1e-30 only matters for gate = -100: the GPU's x / (1 + expf(100)) is -0 (float exp
        // overflows), cpu-ref's double gives a subnormal -3.7e-42.
        EXPECT_TRUE(near_rel(download_matrix(gpu, dy), want, 2e-6, 1e-30, "swiglu n = " + std::to_string(n)));
    }
}

TEST(CudaGdnGates, MatchesCpuRefIncludingTheSoftplusThreshold) {
    DENSE_REQUIRE_GPU(gpu);
    uint64_t seed = 600;
    for (const int64_t heads : {int64_t{48}, int64_t{3}, int64_t{5000}}) {
        std::mt19937_64 rng(++seed);
        const auto b = uniform(static_cast<std::size_t>(heads), rng, -8.0f, 8.0f);
        auto a = uniform(static_cast<std::size_t>(heads), rng, -6.0f, 6.0f);
        const auto dt = uniform(static_cast<std::size_t>(heads), rng, -2.0f, 2.0f);
        const auto A = uniform(static_cast<std::size_t>(heads), rng, -3.0f, -0.05f);
        for (int64_t h = 0; h < heads; h += 7) a[static_cast<std::size_t>(h)] = 19.0f + static_cast<float>(h % 3);  // around 20
        std::vector<float> beta(b.size()), decay(b.size());
        cpuref::gdn_gates(b.data(), a.data(), dt.data(), A.data(), beta.data(), decay.data(), heads);
        DevMatrix db = upload_matrix(gpu, &b, heads, 1), da = upload_matrix(gpu, &a, heads, 1),
                  ddt = upload_matrix(gpu, &dt, heads, 1), dA = upload_matrix(gpu, &A, heads, 1),
                  dbeta = upload_matrix(gpu, nullptr, heads, 1), ddecay = upload_matrix(gpu, nullptr, heads, 1);
        const std::string label = "gdn_gates heads = " + std::to_string(heads);
        run_op(gpu, DENSE_OP_GDN_GATES, {db.view, da.view, ddt.view, dA.view}, {dbeta.view, ddecay.view}, nullptr,
               label);
        if (HasFatalFailure()) return;
        EXPECT_TRUE(near_rel(download_matrix(gpu, dbeta), beta, 2e-6, 0.0, label + " beta"));
        auto decay_tol = [&](std::size_t h) {
            const double x = static_cast<double>(a[h]) + dt[h];
            const double y = std::log(static_cast<double>(decay[h]));
            return 1e-6 * (1.0 + std::fabs(y) + std::fabs(static_cast<double>(A[h]) * x)) * decay[h];
        };
        EXPECT_TRUE(within(download_matrix(gpu, ddecay), decay, decay_tol, label + " decay"));
    }
}

TEST(CudaCheckFinite, SetsTheStatusWordOnlyForNanOrInf) {
    DENSE_REQUIRE_GPU(gpu);
    std::mt19937_64 rng(700);
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    struct Case {
        int64_t n;
        int64_t bad_at;  // -1: all finite
        float bad;
        int32_t status_before, status_after;
    };
    const Case cases[] = {
        {5120, -1, 0.0f, 0, 0},       {5120, -1, 0.0f, 7, 7},   {5120, 5119, nan, 0, 1},    {5120, 0, inf, 0, 1},
        {248320, 123457, -inf, 0, 1}, {1, 0, nan, 0, 1},        {1, -1, 0.0f, 0, 0},         {5120, 17, nan, 1, 1},
        {3000000, 2999999, inf, 0, 1}, {3000000, -1, 0.0f, 0, 0},
    };
    for (const Case& k : cases) {
        auto x = uniform(static_cast<std::size_t>(k.n), rng, -1e30f, 1e30f);  // large but finite
        if (k.bad_at >= 0) x[static_cast<std::size_t>(k.bad_at)] = k.bad;
        ASSERT_EQ(cpuref::has_non_finite(x.data(), k.n), k.bad_at >= 0);
        DevMatrix dx = upload_matrix(gpu, &x, k.n, 1);
        DevScalar status = upload_i32(gpu, k.status_before);
        const std::string label = "n = " + std::to_string(k.n) + ", bad at " + std::to_string(k.bad_at);
        run_op(gpu, DENSE_OP_CHECK_FINITE, {dx.view}, {status.view}, nullptr, label);
        if (HasFatalFailure()) return;
        EXPECT_EQ(download_i32(gpu, status), k.status_after) << label;
    }
}

// ARGMAX against cpu-ref's sequential loop (std::max_element's answer): random logits at the 27B's
// vocabulary and odd lengths, with planted ties (the lowest index wins), NaN past index 0 (never
// chosen), NaN at index 0 (0 stays), +-Inf, and a view starting 4 bytes into its buffer (the kernel's
// path without 16-byte loads).
TEST(CudaArgmax, IsTheFirstLargestElementAsCpuRefGivesIt) {
    DENSE_REQUIRE_GPU(gpu);
    std::mt19937_64 rng(710);
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    struct Case {
        int64_t n;
        const char* plant;
    };
    const Case cases[] = {{248320, "none"}, {248320, "tie"},      {151936, "nan"},  {248320, "nan0"}, {248320, "inf"},
                          {248320, "-inf"}, {1, "none"},          {3, "tie"},       {4097, "tie"},    {1000003, "none"},
                          {8191, "tie end"}, {248320, "all equal"}};
    for (const Case& k : cases) {
        for (const bool offset : {false, true}) {
            auto buf = uniform(static_cast<std::size_t>(k.n), rng, -30.0f, 30.0f);
            float* x = buf.data();
            const std::string plant = k.plant;
            std::uniform_int_distribution<int64_t> at(0, k.n - 1);
            if (plant == "tie" || plant == "tie end") {
                const int64_t a = plant == "tie end" ? k.n - 2 : at(rng), b = plant == "tie end" ? k.n - 1 : at(rng);
                x[a] = 31.0f;
                x[b] = 31.0f;
            } else if (plant == "nan") {
                x[at(rng)] = nan;
                x[k.n - 1] = nan;
            } else if (plant == "nan0") {
                x[0] = nan;
            } else if (plant == "inf") {
                x[at(rng)] = inf;
            } else if (plant == "-inf") {
                for (int64_t i = 0; i < k.n; ++i) x[i] = -inf;
                x[k.n / 3] = -1e38f;
            } else if (plant == "all equal") {
                for (int64_t i = 0; i < k.n; ++i) x[i] = 2.5f;
            }
            const auto want = static_cast<int32_t>(cpuref::first_largest_index(x, k.n));
            DevMatrix dx = upload_matrix(gpu, &buf, k.n, 1, 0, offset ? 1 : 0);
            DevScalar index = upload_i32(gpu, -7);
            const std::string label = "n = " + std::to_string(k.n) + ", " + plant + (offset ? ", at +4 bytes" : "");
            run_op(gpu, DENSE_OP_ARGMAX, {dx.view}, {index.view}, nullptr, label);
            if (HasFatalFailure()) return;
            EXPECT_EQ(download_i32(gpu, index), want) << label;
        }
    }
}

// TOP_K against cpu-ref's partial sort, ids and value bits alike: random logits at the 27B's vocabulary
// and at other lengths (fewer than the kernel's 64 groups, past its 4,096-key list), k = 1, 40, 64, with
// planted ties (equal values among the best, -0.0 beside +0.0: the lower index first, the stored sign
// kept), NaN and -inf (never candidates), fewer candidates than k and none (slots padded with -1, -inf),
// inputs whose filter passes more keys than the list holds (ascending logits, all equal, a group with
// no candidate: the kernel's walk over x), and a view starting 4 bytes into its buffer. Outputs are
// poisoned first and their guards checked.
TEST(CudaTopK, IsCpuRefsSortedCandidatesBitForBit) {
    DENSE_REQUIRE_GPU(gpu);
    std::mt19937_64 rng(720);
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    struct Case {
        int64_t n;
        const char* plant;
    };
    const Case cases[] = {{248320, "none"},  {248320, "ties"},   {248320, "zeros"}, {248320, "nan -inf"},
                          {5, "none"},       {5, "nan -inf"},    {5, "all -inf"},   {4097, "ties"},
                          {8193, "zeros"},   {8193, "nan -inf"}, {4096, "equal"},   {1000003, "ties"},
                          {100, "few"},      {1, "none"},       {248320, "ascending"}, {248320, "equal"},
                          {63, "none"},      {200000, "one -inf group"}};
    int checked = 0;
    for (const Case& c : cases) {
        for (const int64_t k : {int64_t{1}, int64_t{40}, int64_t{64}}) {
            const bool offset = (checked++ % 2) == 1;
            auto x = uniform(static_cast<std::size_t>(c.n), rng, -30.0f, 30.0f);
            const std::string plant = c.plant;
            std::uniform_int_distribution<int64_t> at(0, c.n - 1);
            const auto sprinkle = [&](int count, auto value_of) {
                for (int i = 0; i < count; ++i) x[static_cast<std::size_t>(at(rng))] = value_of(i);
            };
            if (plant == "ties") {
                sprinkle(100, [](int i) { return 31.0f + static_cast<float>(i % 5); });
            } else if (plant == "zeros") {
                for (float& v : x) v = -std::fabs(v) - 1.0f;
                sprinkle(80, [](int i) { return i % 2 == 0 ? -0.0f : 0.0f; });
            } else if (plant == "nan -inf") {
                sprinkle(std::max<int>(1, static_cast<int>(c.n / 1000)), [&](int) { return nan; });
                sprinkle(std::max<int>(1, static_cast<int>(c.n / 1000)), [&](int) { return -inf; });
                x[static_cast<std::size_t>(c.n - 1)] = inf;
            } else if (plant == "all -inf") {
                for (float& v : x) v = -inf;
                x[2] = nan;
            } else if (plant == "equal") {
                for (float& v : x) v = 2.5f;
            } else if (plant == "ascending") {  // every key above the smallest group maximum: the list overflows
                for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) * 1e-3f - 100.0f;
            } else if (plant == "one -inf group") {  // a group without a candidate: its maximum is 0, so is T
                for (std::size_t i = 0; i < x.size() / 64; ++i) x[i] = -inf;
            } else if (plant == "few") {  // 7 candidates, the rest NaN or -inf
                for (std::size_t i = 0; i < x.size(); ++i) x[i] = i % 2 == 0 ? -inf : nan;
                for (std::size_t i = 3; i < x.size(); i += 14) x[i] = static_cast<float>(i % 3);
            }
            std::vector<int32_t> want_ids(static_cast<std::size_t>(k));
            std::vector<float> want_values(static_cast<std::size_t>(k));
            cpuref::top_k(x.data(), c.n, k, want_ids.data(), want_values.data());
            DevMatrix dx = upload_matrix(gpu, &x, c.n, 1, 0, offset ? 1 : 0);
            DevMatrix ids = upload_matrix(gpu, nullptr, k, 1), values = upload_matrix(gpu, nullptr, k, 1);
            ids.view.type = DENSE_TYPE_I32;  // 4-byte words as well: the same view and poison checks
            const std::string label = "n = " + std::to_string(c.n) + ", k = " + std::to_string(k) + ", " + plant +
                                      (offset ? ", at +4 bytes" : "");
            run_op(gpu, DENSE_OP_TOP_K, {dx.view}, {ids.view, values.view}, nullptr, label);
            if (HasFatalFailure()) return;
            const std::vector<float> got_ids = download_matrix(gpu, ids), got_values = download_matrix(gpu, values);
            int wrong = 0;
            for (int64_t i = 0; i < k; ++i) {
                const auto u = static_cast<std::size_t>(i);
                const bool same = std::bit_cast<int32_t>(got_ids[u]) == want_ids[u] &&
                                  std::bit_cast<uint32_t>(got_values[u]) == std::bit_cast<uint32_t>(want_values[u]);
                if (!same && wrong++ < 3) {
                    ADD_FAILURE() << label << ", slot " << i << ": id " << std::bit_cast<int32_t>(got_ids[u])
                                  << " value " << got_values[u] << ", cpu-ref id " << want_ids[u] << " value "
                                  << want_values[u];
                }
            }
            EXPECT_EQ(wrong, 0) << label;
        }
    }
}

// ---- CONV1D_CAUSAL ------------------------------------------------------------------------------------

void check_conv(GpuSession& gpu, int64_t channels, int64_t kernel, bool silu, bool in_place, int steps,
                std::mt19937_64& rng) {
    const int64_t keep = kernel - 1;
    const auto taps = uniform(static_cast<std::size_t>(kernel * channels), rng, -1.0f, 1.0f);
    std::vector<float> state = uniform(static_cast<std::size_t>(keep * channels), rng, -2.0f, 2.0f);
    DevMatrix dtaps = upload_matrix(gpu, &taps, kernel, channels);
    DevMatrix bank[2] = {upload_matrix(gpu, &state, keep, channels), upload_matrix(gpu, nullptr, keep, channels)};
    auto p = make_params<dense_conv_params>();
    p.apply_silu = silu ? 1u : 0u;
    const std::string base = "conv1d {" + std::to_string(channels) + "} kernel " + std::to_string(kernel) +
                             (silu ? " silu" : "") + (in_place ? " state in place" : " state ping-pong");
    for (int step = 0; step < steps; ++step) {
        const auto x = uniform(static_cast<std::size_t>(channels), rng, -2.0f, 2.0f);
        std::vector<float> want(x.size()), new_state(state.size());
        cpuref::conv1d_causal(x.data(), taps.data(), state.data(), want.data(), new_state.data(), channels, kernel,
                              silu);
        const int in = in_place ? 0 : step % 2, out = in_place ? 0 : 1 - in;
        DevMatrix dx = upload_matrix(gpu, &x, channels, 1), dy = upload_matrix(gpu, nullptr, channels, 1);
        const std::string label = base + " step " + std::to_string(step);
        run_op(gpu, DENSE_OP_CONV1D_CAUSAL, {dx.view, dtaps.view, bank[in].view}, {dy.view, bank[out].view}, &p,
               label);
        if (::testing::Test::HasFatalFailure()) return;
        auto tol = [&](std::size_t c) {
            double mag = std::fabs(static_cast<double>(taps[c * kernel + keep]) * x[c]);
            for (int64_t i = 0; i < keep; ++i)
                mag += std::fabs(static_cast<double>(taps[c * kernel + static_cast<std::size_t>(i)]) *
                                 state[c * keep + static_cast<std::size_t>(i)]);
            return 1e-6 * (mag + std::fabs(static_cast<double>(want[c])));
        };
        EXPECT_TRUE(within(download_matrix(gpu, dy), want, tol, label + " y"));
        EXPECT_TRUE(same_bits(download_matrix(gpu, bank[out]), new_state)) << label << ": state_out";
        state = new_state;
    }
}

TEST(CudaConv1dCausal, MatchesCpuRefOverChainedStepsInPlaceAndPingPong) {
    DENSE_REQUIRE_GPU(gpu);
    std::mt19937_64 rng(800);
    check_conv(gpu, 10240, 4, true, true, 3, rng);
    check_conv(gpu, 10240, 4, true, false, 3, rng);
    check_conv(gpu, 11, 3, false, true, 3, rng);
    check_conv(gpu, 7, 2, true, false, 2, rng);
    check_conv(gpu, 600000, 5, true, true, 1, rng);  // more channels than one grid covers
}

// ---- KV_STORE -----------------------------------------------------------------------------------------

// Raw cache bytes: position p's row of a {d, hkv, n_ctx} cache of `elem` bytes per element.
struct DevCache {
    DeviceBuffer buf;
    dense_tensor_view view{};
    std::vector<uint8_t> host;  // what was uploaded
};

DevCache make_cache(GpuSession& gpu, dense_type_id type, int64_t d, int64_t hkv, int64_t n_ctx, std::mt19937_64& rng) {
    DevCache c;
    const uint32_t elem = type == DENSE_TYPE_F16 ? 2 : 4;
    c.host.resize(static_cast<std::size_t>(d * hkv * n_ctx) * elem);
    for (auto& b : c.host) b = static_cast<uint8_t>(rng());
    c.buf = gpu.alloc(c.host.size());
    if (c.buf.get() != nullptr) gpu.upload(c.buf.get(), c.host.data(), c.host.size());
    c.view = cuda_view(c.buf.get(), type, 1, elem, {d, hkv, n_ctx});
    return c;
}

std::vector<uint8_t> download_bytes(GpuSession& gpu, const DeviceBuffer& b, std::size_t n) {
    std::vector<uint8_t> out(n);
    gpu.download(out.data(), b.get(), n);
    return out;
}

TEST(CudaKvStore, WritesExactlyTheSlotBitExactForF16AndF32) {
    DENSE_REQUIRE_GPU(gpu);
    std::mt19937_64 rng(900);
    for (const dense_type_id type : {DENSE_TYPE_F16, DENSE_TYPE_F32}) {
        for (const auto& [d, hkv, n_ctx] : {std::tuple<int64_t, int64_t, int64_t>{256, 4, 64}, {5, 3, 7}}) {
            DevCache kc = make_cache(gpu, type, d, hkv, n_ctx, rng), vc = make_cache(gpu, type, d, hkv, n_ctx, rng);
            std::vector<uint8_t> want_k = kc.host, want_v = vc.host;
            for (const int32_t pos : {0, static_cast<int32_t>(n_ctx / 2), static_cast<int32_t>(n_ctx - 1),
                                      static_cast<int32_t>(n_ctx), -1, 1 << 30}) {
                auto k = uniform(static_cast<std::size_t>(d * hkv), rng, -70000.0f, 70000.0f);
                auto v = uniform(static_cast<std::size_t>(d * hkv), rng, -1.0f, 1.0f);
                // Rounding corner cases: a tie (rounds to even), subnormal halves, overflow, NaN payload.
                const float specials[] = {1.0f + 1.0f / 2048.0f, 3e-6f, -6e-8f, 65520.0f, -1e-10f,
                                          std::bit_cast<float>(0x7FA00001u), std::numeric_limits<float>::infinity()};
                for (std::size_t i = 0; i < std::size(specials) && i < k.size(); ++i) v[i] = k[i] = specials[i];
                const bool valid = pos >= 0 && pos < n_ctx;
                if (valid)
                    cpuref::kv_store(type, k.data(), d, v.data(), d, d, hkv, pos, want_k.data(), want_v.data());
                DevMatrix dk = upload_matrix(gpu, &k, d, hkv), dv = upload_matrix(gpu, &v, d, hkv);
                DevScalar dp = upload_i32(gpu, pos);
                const std::string label = std::string(type == DENSE_TYPE_F16 ? "f16" : "f32") + " {" +
                                          std::to_string(d) + ", " + std::to_string(hkv) + ", " +
                                          std::to_string(n_ctx) + "} position " + std::to_string(pos);
                run_op(gpu, DENSE_OP_KV_STORE, {dk.view, dv.view, dp.view}, {kc.view, vc.view}, nullptr, label);
                if (HasFatalFailure()) return;
                EXPECT_TRUE(download_bytes(gpu, kc.buf, want_k.size()) == want_k)
                    << label << (valid ? ": K cache differs from cpu-ref" : ": an out-of-range position wrote");
                EXPECT_TRUE(download_bytes(gpu, vc.buf, want_v.size()) == want_v) << label << ": V cache";
            }
        }
    }
}

}  // namespace
}  // namespace dense::test::cuda
