// The values synth chooses keep a deep forward pass finite and non-degenerate: a plain float
// implementation of spec/qwen35-architecture.md section 5-7 (dequantized weights, a few tokens) over a
// 64-layer seed-iq4 model (48 Gated DeltaNet + 16 full-attention blocks, as the 27B) must give
// finite hidden states of bounded growth and logits that are O(1) and depend on the input.
#include "synth_test_support.hpp"

#include "kernels/formats.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

namespace {

using namespace dense::synth;
using Vec = std::vector<float>;

struct Mat {
    int64_t in = 0, out = 0;
    Vec w;
    Vec operator*(const Vec& x) const {
        Vec y(static_cast<size_t>(out));
        for (int64_t o = 0; o < out; ++o) {
            double s = 0;
            const float* row = w.data() + o * in;
            for (int64_t i = 0; i < in; ++i) s += double{row[i]} * x[static_cast<size_t>(i)];
            y[static_cast<size_t>(o)] = static_cast<float>(s);
        }
        return y;
    }
};

class Weights {
public:
    explicit Weights(const dense::gguf::GgufFile& f) : f_(f) {}
    Mat mat(const std::string& name) const {
        const auto* t = f_.find_tensor(name);
        if (t == nullptr) throw std::runtime_error("missing " + name);
        Mat m{t->ne[0], t->ne[1], Vec(static_cast<size_t>(t->n_elements()))};
        dense::cpuref::dequantize_row(t->type, t->data.data(), m.w.data(), t->n_elements());
        return m;
    }
    Vec vec(const std::string& name) const { return mat(name).w; }

private:
    const dense::gguf::GgufFile& f_;
};

void rms_norm(float* x, const float* w, size_t n, float eps = 1e-6f) {
    double ss = 0;
    for (size_t i = 0; i < n; ++i) ss += double{x[i]} * x[i];
    const float scale = 1.0f / std::sqrt(static_cast<float>(ss / static_cast<double>(n)) + eps);
    for (size_t i = 0; i < n; ++i) x[i] = x[i] * scale * w[i];
}
float silu(float x) { return x / (1.0f + std::exp(-x)); }
float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
float softplus(float x) { return x > 20 ? x : std::log1p(std::exp(x)); }
double rms(const Vec& v) {
    double s = 0;
    for (float x : v) s += double{x} * x;
    return std::sqrt(s / static_cast<double>(v.size()));
}

struct LayerState {
    std::vector<Vec> k_cache, v_cache;  // full attention
    std::vector<Vec> conv;              // last (kernel - 1) qkv vectors, oldest first
    Vec S;                              // H_v x d_k x d_v
};

// One token through the model; returns logits; records the hidden state's RMS after every layer.
Vec forward(const Shape& s, const Weights& W,
            std::vector<LayerState>& st, int32_t token, int64_t pos, std::vector<double>& h_rms) {
    const size_t D = s.n_embd, hd = s.head_dim, dk = s.ssm_state;
    const Mat emb = W.mat("token_embd.weight");
    Vec h(emb.w.begin() + static_cast<int64_t>(token) * emb.in, emb.w.begin() + (static_cast<int64_t>(token) + 1) * emb.in);
    for (uint32_t il = 0; il < s.n_layer; ++il) {
        const std::string b = "blk." + std::to_string(il) + ".";
        Vec xn = h;
        rms_norm(xn.data(), W.vec(b + "attn_norm.weight").data(), D);
        Vec m;
        LayerState& L = st[il];
        if (s.is_full_attention(il)) {
            const Vec qg = W.mat(b + "attn_q.weight") * xn;
            Vec k = W.mat(b + "attn_k.weight") * xn;
            const Vec v = W.mat(b + "attn_v.weight") * xn;
            const Vec qn = W.vec(b + "attn_q_norm.weight"), kn = W.vec(b + "attn_k_norm.weight");
            const auto rope = [&](float* x) {
                const size_t half = s.n_rot / 2;
                for (size_t i = 0; i < half; ++i) {
                    const double theta = static_cast<double>(pos) * std::pow(double{s.rope_base}, -2.0 * static_cast<double>(i) / s.n_rot);
                    const float c = static_cast<float>(std::cos(theta)), sn = static_cast<float>(std::sin(theta));
                    const float a = x[i], bb = x[i + half];
                    x[i] = a * c - bb * sn;
                    x[i + half] = a * sn + bb * c;
                }
            };
            for (size_t g = 0; g < s.n_head_kv; ++g) {
                rms_norm(k.data() + g * hd, kn.data(), hd);
                rope(k.data() + g * hd);
            }
            L.k_cache.push_back(k);
            L.v_cache.push_back(v);
            Vec o(s.n_head * hd);
            const size_t group = s.n_head / s.n_head_kv;
            for (size_t hh = 0; hh < s.n_head; ++hh) {
                Vec q(qg.begin() + static_cast<int64_t>(2 * hd * hh), qg.begin() + static_cast<int64_t>(2 * hd * hh + hd));
                rms_norm(q.data(), qn.data(), hd);
                rope(q.data());
                const size_t g = hh / group;
                std::vector<double> sc(L.k_cache.size());
                double mx = -1e300;
                for (size_t j = 0; j < sc.size(); ++j) {
                    double d = 0;
                    for (size_t e = 0; e < hd; ++e) d += double{q[e]} * L.k_cache[j][g * hd + e];
                    sc[j] = d / std::sqrt(static_cast<double>(hd));
                    mx = std::max(mx, sc[j]);
                }
                double z = 0;
                for (auto& x : sc) z += (x = std::exp(x - mx));
                for (size_t e = 0; e < hd; ++e) {
                    double a = 0;
                    for (size_t j = 0; j < sc.size(); ++j) a += sc[j] / z * L.v_cache[j][g * hd + e];
                    o[hh * hd + e] = static_cast<float>(a) * sigmoid(qg[2 * hd * hh + hd + e]);
                }
            }
            m = W.mat(b + "attn_output.weight") * o;
        } else {
            const size_t key_dim = s.key_dim(), conv_dim = s.conv_dim(), hv = s.ssm_heads, hk = s.ssm_groups;
            const Vec qkv = W.mat(b + "attn_qkv.weight") * xn;
            const Vec z = W.mat(b + "attn_gate.weight") * xn;
            const Vec beta_in = W.mat(b + "ssm_beta.weight") * xn, alpha_in = W.mat(b + "ssm_alpha.weight") * xn;
            const Vec dt = W.vec(b + "ssm_dt.bias"), A = W.vec(b + "ssm_a"), conv_w = W.vec(b + "ssm_conv1d.weight");
            const Vec norm_w = W.vec(b + "ssm_norm.weight");
            if (L.conv.empty()) L.conv.assign(s.ssm_conv - 1, Vec(conv_dim, 0.0f));
            if (L.S.empty()) L.S.assign(hv * dk * dk, 0.0f);
            Vec y(conv_dim);
            for (size_t c = 0; c < conv_dim; ++c) {
                float acc = 0;
                for (size_t i = 0; i + 1 < s.ssm_conv; ++i) acc += conv_w[c * s.ssm_conv + i] * L.conv[i][c];
                acc += conv_w[c * s.ssm_conv + s.ssm_conv - 1] * qkv[c];
                y[c] = silu(acc);
            }
            L.conv.erase(L.conv.begin());
            L.conv.push_back(qkv);
            const auto l2 = [&](float* x) {
                double ss = 0;
                for (size_t i = 0; i < dk; ++i) ss += double{x[i]} * x[i];
                const float r = 1.0f / std::sqrt(static_cast<float>(ss) + 1e-6f);
                for (size_t i = 0; i < dk; ++i) x[i] *= r;
            };
            for (size_t kh = 0; kh < hk; ++kh) {
                l2(y.data() + kh * dk);
                l2(y.data() + key_dim + kh * dk);
            }
            Vec o(hv * dk);
            for (size_t hh = 0; hh < hv; ++hh) {
                const size_t kh = hh % hk;
                const float* q = y.data() + kh * dk;
                const float* k = y.data() + key_dim + kh * dk;
                const float* v = y.data() + 2 * key_dim + hh * dk;
                const float beta = sigmoid(beta_in[hh]);
                const float decay = std::exp(softplus(alpha_in[hh] + dt[hh]) * A[hh]);
                float* S = L.S.data() + hh * dk * dk;  // S[i][j] at i*dk + j
                for (size_t i = 0; i < dk * dk; ++i) S[i] *= decay;
                for (size_t j = 0; j < dk; ++j) {
                    float u = 0;
                    for (size_t i = 0; i < dk; ++i) u += S[i * dk + j] * k[i];
                    const float delta = beta * (v[j] - u);
                    for (size_t i = 0; i < dk; ++i) S[i * dk + j] += k[i] * delta;
                }
                for (size_t j = 0; j < dk; ++j) {
                    float a = 0;
                    for (size_t i = 0; i < dk; ++i) a += S[i * dk + j] * q[i];
                    o[hh * dk + j] = a / std::sqrt(static_cast<float>(dk));
                }
                rms_norm(o.data() + hh * dk, norm_w.data(), dk);
                for (size_t j = 0; j < dk; ++j) o[hh * dk + j] *= silu(z[hh * dk + j]);
            }
            m = W.mat(b + "ssm_out.weight") * o;
        }
        for (size_t i = 0; i < D; ++i) h[i] += m[i];
        Vec hn = h;
        rms_norm(hn.data(), W.vec(b + "post_attention_norm.weight").data(), D);
        const Vec g = W.mat(b + "ffn_gate.weight") * hn, u = W.mat(b + "ffn_up.weight") * hn;
        Vec act(g.size());
        for (size_t i = 0; i < g.size(); ++i) act[i] = silu(g[i]) * u[i];
        const Vec f = W.mat(b + "ffn_down.weight") * act;
        for (size_t i = 0; i < D; ++i) h[i] += f[i];
        h_rms.push_back(rms(h));
    }
    rms_norm(h.data(), W.vec("output_norm.weight").data(), D);
    return W.mat("output.weight") * h;
}

TEST(SynthForward, SixtyFourLayersStayFiniteAndNonDegenerate) {
    ShapeOverrides o = dense::synth::test::small_vocab(1024);
    o.n_layer = 64;
    const SynthRequest req = dense::synth::test::request("tiny", "seed-iq4", 1, o);
    const auto m = dense::synth::test::synthesize(req);
    const Weights W(*m.file);
    const std::vector<int32_t> tokens{300, 17, 900, 300, 5, 42};
    std::vector<LayerState> state(req.shape.n_layer);
    std::vector<Vec> logits;
    for (size_t p = 0; p < tokens.size(); ++p) {
        std::vector<double> h_rms;
        logits.push_back(forward(req.shape, W, state, tokens[p], static_cast<int64_t>(p), h_rms));
        for (size_t il = 0; il < h_rms.size(); ++il) {
            ASSERT_TRUE(std::isfinite(h_rms[il])) << "position " << p << " layer " << il;
            EXPECT_GT(h_rms[il], 1e-3) << "position " << p << " layer " << il;
            EXPECT_LT(h_rms[il], 1e3) << "position " << p << " layer " << il;
        }
        if (p == 0 || p + 1 == tokens.size())
            std::printf("position %zu: hidden RMS after layer 0 %.3f, 15 %.3f, 31 %.3f, 63 %.3f; logits RMS %.3f\n", p,
                        h_rms[0], h_rms[15], h_rms[31], h_rms[63], rms(logits.back()));
    }
    for (const auto& l : logits) {
        for (float x : l) ASSERT_TRUE(std::isfinite(x));
        EXPECT_GT(rms(l), 0.1);
        EXPECT_LT(rms(l), 100.0);
    }
    // The same token at positions 0 and 3 sees different contexts: the logits must differ clearly.
    const auto corr = [](const Vec& a, const Vec& b) {
        double ab = 0, aa = 0, bb = 0;
        const double ma = std::accumulate(a.begin(), a.end(), 0.0) / static_cast<double>(a.size());
        const double mb = std::accumulate(b.begin(), b.end(), 0.0) / static_cast<double>(b.size());
        for (size_t i = 0; i < a.size(); ++i) ab += (a[i] - ma) * (b[i] - mb), aa += (a[i] - ma) * (a[i] - ma), bb += (b[i] - mb) * (b[i] - mb);
        return ab / std::sqrt(aa * bb);
    };
    EXPECT_LT(corr(logits[0], logits[3]), 0.999) << "context has an effect";
    EXPECT_LT(std::abs(corr(logits[1], logits[2])), 0.9) << "different tokens give different logits";
}

}  // namespace
