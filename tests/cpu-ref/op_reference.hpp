// Independent double-precision references for the cpu-ref activation ops, written from
// spec/qwen35-architecture.md (sections 4-7) and tests/data/golden-tiny/ref_forward.py, sharing no
// code with plugins/cpu-ref/src/kernels. They work on nested vectors (one inner vector per head /
// row / channel) so that no stride or layout convention of the kernels is reused; the tests pack
// and unpack the kernels' flat buffers themselves.
//
// Also: seeded random inputs, an fp16 oracle independent of core/half.hpp (the compiler's _Float16
// conversion where available), and the tolerance comparison the op tests use.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace dense::test::opref {

using Rows = std::vector<std::vector<double>>;
using FRows = std::vector<std::vector<float>>;

// ---- random inputs ----------------------------------------------------------------------------------

inline std::vector<float> uniform(std::size_t n, std::mt19937_64& rng, float lo = -1.0f, float hi = 1.0f) {
    std::uniform_real_distribution<float> u(lo, hi);
    std::vector<float> out(n);
    for (auto& v : out) v = u(rng);
    return out;
}

inline FRows uniform_rows(std::size_t rows, std::size_t n, std::mt19937_64& rng, float lo = -1.0f, float hi = 1.0f) {
    FRows out(rows);
    for (auto& r : out) r = uniform(n, rng, lo, hi);
    return out;
}

// ---- scalar functions (spec 4) -----------------------------------------------------------------------

inline double ref_sigmoid(double x) {
    return x >= 0 ? 1.0 / (1.0 + std::exp(-x)) : std::exp(x) / (1.0 + std::exp(x));
}
inline double ref_silu(double x) {
    return x * ref_sigmoid(x);
}
inline double ref_softplus(double x) {
    return x > 20.0 ? x : std::log(1.0 + std::exp(x));
}

// ---- norms -------------------------------------------------------------------------------------------

inline std::vector<double> ref_rms_norm(const std::vector<float>& x, const std::vector<float>& w, double eps) {
    long double ss = 0;
    for (float v : x) ss += static_cast<long double>(v) * v;
    const double mean = static_cast<double>(ss / static_cast<long double>(x.size()));
    std::vector<double> y(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) y[i] = x[i] / std::sqrt(mean + eps) * w[i];
    return y;
}

inline std::vector<double> ref_l2_norm(const std::vector<float>& x, double eps) {
    long double ss = 0;
    for (float v : x) ss += static_cast<long double>(v) * v;
    std::vector<double> y(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) y[i] = x[i] / std::sqrt(static_cast<double>(ss) + eps);
    return y;
}

inline std::vector<double> ref_gated_rms_norm(const std::vector<float>& x, const std::vector<float>& z,
                                              const std::vector<float>& w, double eps) {
    std::vector<double> y = ref_rms_norm(x, w, eps);
    for (std::size_t i = 0; i < y.size(); ++i) y[i] *= ref_silu(z[i]);
    return y;
}

// ---- RoPE (spec 6.3): angle via exp/log, not pow, to be independent of the kernel's form ----------

inline std::vector<double> ref_rope(const std::vector<float>& x, int64_t n_rot, int64_t pos, double base,
                                    double freq_scale = 1.0) {
    std::vector<double> y(x.begin(), x.end());
    const int64_t half = n_rot / 2;
    for (int64_t i = 0; i < half; ++i) {
        const double theta = static_cast<double>(pos) * freq_scale *
                             std::exp(-std::log(base) * 2.0 * static_cast<double>(i) / static_cast<double>(n_rot));
        const double a = x[static_cast<std::size_t>(i)], b = x[static_cast<std::size_t>(i + half)];
        y[static_cast<std::size_t>(i)] = a * std::cos(theta) - b * std::sin(theta);
        y[static_cast<std::size_t>(i + half)] = a * std::sin(theta) + b * std::cos(theta);
    }
    return y;
}

// ---- attention (spec 6.4) ---------------------------------------------------------------------------
// k[j][g], v[j][g]: position j, KV head g (already the values the cache holds). kv_head_of(h) picks
// the KV head of query head h (the tests also run it with a wrong mapping to show they notice).
template <class KvHeadOf>
Rows ref_attention(const FRows& q, const std::vector<FRows>& k, const std::vector<FRows>& v, const FRows* gate,
                   double scale, KvHeadOf kv_head_of) {
    Rows out(q.size());
    for (std::size_t h = 0; h < q.size(); ++h) {
        const std::size_t g = kv_head_of(h);
        std::vector<double> s(k.size());
        for (std::size_t j = 0; j < k.size(); ++j) {
            double dot = 0;
            for (std::size_t e = 0; e < q[h].size(); ++e) dot += static_cast<double>(q[h][e]) * k[j][g][e];
            s[j] = dot * scale;
        }
        const double m = *std::max_element(s.begin(), s.end());
        double z = 0;
        for (double& x : s) z += (x = std::exp(x - m));
        out[h].assign(q[h].size(), 0.0);
        for (std::size_t j = 0; j < k.size(); ++j)
            for (std::size_t e = 0; e < q[h].size(); ++e) out[h][e] += s[j] / z * v[j][g][e];
        if (gate != nullptr)
            for (std::size_t e = 0; e < q[h].size(); ++e) out[h][e] *= ref_sigmoid((*gate)[h][e]);
    }
    return out;
}

// ---- Gated DeltaNet (spec 7) ------------------------------------------------------------------------

// One conv step per channel: window = [state[c]..., x[c]]; returns y and replaces state[c].
inline std::vector<double> ref_conv_step(const std::vector<float>& x, const FRows& taps, FRows& state, bool silu) {
    std::vector<double> y(x.size());
    for (std::size_t c = 0; c < x.size(); ++c) {
        std::vector<float> window = state[c];
        window.push_back(x[c]);
        double acc = 0;
        for (std::size_t i = 0; i < window.size(); ++i) acc += static_cast<double>(taps[c][i]) * window[i];
        y[c] = silu ? ref_silu(acc) : acc;
        state[c].assign(window.begin() + 1, window.end());
    }
    return y;
}

// S[h][i][j]: value head h, key dim i, value dim j (a plain 3-D array, not the kernel's layout).
using State = std::vector<std::vector<std::vector<double>>>;

struct GdnResult {
    Rows o;     // [h][j]
    State S;    // updated state
};

// key_head_of(h) picks the key head of value head h; output_from_old_state = true computes o from the
// decayed-but-not-updated state (a deliberately wrong variant used to show the tests notice).
template <class KeyHeadOf>
GdnResult ref_gdn_step(const FRows& q, const FRows& k, const FRows& v, const std::vector<float>& beta,
                       const std::vector<float>& decay, State S, double scale, KeyHeadOf key_head_of,
                       bool output_from_old_state = false) {
    const std::size_t hv = v.size(), dk = q[0].size(), dv = v[0].size();
    GdnResult r;
    r.o.assign(hv, std::vector<double>(dv, 0.0));
    for (std::size_t h = 0; h < hv; ++h) {
        const std::size_t kh = key_head_of(h);
        auto& s = S[h];
        for (auto& row : s)
            for (double& x : row) x *= decay[h];
        std::vector<double> old_out(dv, 0.0);
        for (std::size_t j = 0; j < dv; ++j)
            for (std::size_t i = 0; i < dk; ++i) old_out[j] += s[i][j] * q[kh][i];
        for (std::size_t j = 0; j < dv; ++j) {
            double u = 0;
            for (std::size_t i = 0; i < dk; ++i) u += s[i][j] * k[kh][i];
            const double delta = beta[h] * (v[h][j] - u);
            for (std::size_t i = 0; i < dk; ++i) s[i][j] += k[kh][i] * delta;
        }
        for (std::size_t j = 0; j < dv; ++j) {
            double acc = 0;
            for (std::size_t i = 0; i < dk; ++i) acc += s[i][j] * q[kh][i];
            r.o[h][j] = scale * (output_from_old_state ? old_out[j] : acc);
        }
    }
    r.S = std::move(S);
    return r;
}

// ---- fp16 (independent of core/half.hpp) -------------------------------------------------------------

#if defined(__FLT16_MAX__)
inline uint16_t ref_fp16_bits(float x) {
    const _Float16 h = static_cast<_Float16>(x);  // IEEE conversion: round to nearest, ties to even
    uint16_t bits;
    std::memcpy(&bits, &h, 2);
    return bits;
}
inline float ref_fp16_value(uint16_t bits) {
    _Float16 h;
    std::memcpy(&h, &bits, 2);
    return static_cast<float>(h);
}
inline constexpr bool kHaveFloat16 = true;
#else
inline uint16_t ref_fp16_bits(float) { return 0; }
inline float ref_fp16_value(uint16_t) { return 0; }
inline constexpr bool kHaveFloat16 = false;
#endif

// ---- comparison ---------------------------------------------------------------------------------------
// Tolerance of a float32 output of double math: |got - want| <= rel * |want| + rel * floor_frac * max|want|.
// Rounding the double result to float costs <= 2^-24 = 6e-8 relative; rel = 1e-6 leaves a 16x margin.
// The floor covers elements that cancel to near zero, where two double evaluations in different
// order may differ by ~1e-16 of the summands' size (far below 1e-6 * 1e-3 of the largest output).
inline ::testing::AssertionResult all_near(const std::vector<float>& got, const std::vector<double>& want,
                                           double rel = 1e-6, double floor_frac = 1e-3) {
    if (got.size() != want.size())
        return ::testing::AssertionFailure() << "size " << got.size() << " != " << want.size();
    double max_abs = 0;
    for (double w : want) max_abs = std::max(max_abs, std::fabs(w));
    std::size_t bad = 0, first = 0;
    double worst = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
        const double err = std::fabs(static_cast<double>(got[i]) - want[i]);
        const double tol = rel * std::fabs(want[i]) + rel * floor_frac * max_abs;
        if (!(err <= tol)) {  // NaN fails too
            if (bad++ == 0) first = i;
            worst = std::max(worst, err);
        }
    }
    if (bad == 0) return ::testing::AssertionSuccess();
    std::ostringstream s;
    s.precision(9);
    s << bad << " of " << got.size() << " elements out of tolerance (rel " << rel << "); first at " << first
      << ": got " << got[first] << ", want " << want[first] << "; worst abs error " << worst;
    return ::testing::AssertionFailure() << s.str();
}

inline std::vector<double> flatten(const Rows& r) {
    std::vector<double> out;
    for (const auto& row : r) out.insert(out.end(), row.begin(), row.end());
    return out;
}

// Largest |a - b| over two equally long sequences (used to show a wrong variant is far off).
template <class A, class B>
double max_abs_diff(const A& a, const B& b) {
    double m = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
        m = std::max(m, std::fabs(static_cast<double>(a[i]) - static_cast<double>(b[i])));
    return m;
}

}  // namespace dense::test::opref
