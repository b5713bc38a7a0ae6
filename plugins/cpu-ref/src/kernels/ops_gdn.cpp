// The gated delta rule for one token (spec 7.5). Per value head h (key head h % hk): the float state
// is widened to double, decayed, read (u = S^T k), updated with the rank-1 correction, read again
// with the query (the output uses the UPDATED state), and rounded back to float once. O(dk*dv) per
// head. Loading the whole head before storing makes state_out == state_in safe.
#include "kernels/ops.hpp"
#include "kernels/ops_math.hpp"

#include <vector>

namespace dense::cpuref {

void gdn_decode(const GdnDecodeArgs& a) {
    const int64_t dk = a.dk, dv = a.dv, head_size = a.dk * a.dv;
    std::vector<double> S(static_cast<std::size_t>(head_size));  // S[i][j] at j*dk + i, as stored
    std::vector<double> delta(static_cast<std::size_t>(dv));
    auto at = [&](int64_t i, int64_t j) -> double& { return S[static_cast<std::size_t>(j * dk + i)]; };
    for (int64_t h = 0; h < a.hv; ++h) {
        const int64_t kh = h % a.hk;  // tiled mapping (spec 7.4), not h / (hv / hk)
        const float* q = detail::row(a.q, a.q_stride, kh);
        const float* k = detail::row(a.k, a.k_stride, kh);
        const float* v = detail::row(a.v, a.v_stride, h);
        const double decay = a.decay[h], beta = a.beta[h];
        const float* s_in = a.state_in + h * head_size;
        for (int64_t e = 0; e < head_size; ++e) S[static_cast<std::size_t>(e)] = static_cast<double>(s_in[e]) * decay;
        for (int64_t j = 0; j < dv; ++j) {
            double u = 0.0;  // (S^T k)[j]
            for (int64_t i = 0; i < dk; ++i) u += at(i, j) * static_cast<double>(k[i]);
            delta[static_cast<std::size_t>(j)] = beta * (static_cast<double>(v[j]) - u);
        }
        for (int64_t j = 0; j < dv; ++j)
            for (int64_t i = 0; i < dk; ++i) at(i, j) += static_cast<double>(k[i]) * delta[static_cast<std::size_t>(j)];
        float* o = a.o + h * dv;
        for (int64_t j = 0; j < dv; ++j) {
            double acc = 0.0;  // (S^T q)[j] with the updated S
            for (int64_t i = 0; i < dk; ++i) acc += at(i, j) * static_cast<double>(q[i]);
            o[j] = static_cast<float>(static_cast<double>(a.scale) * acc);
        }
        float* s_out = a.state_out + h * head_size;
        for (int64_t e = 0; e < head_size; ++e) s_out[e] = static_cast<float>(S[static_cast<std::size_t>(e)]);
    }
}

}  // namespace dense::cpuref
