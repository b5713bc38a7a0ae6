// SwiGLU, the Gated DeltaNet gates and the finiteness check: one output per input element, computed
// in double and rounded once, so outputs may alias inputs.
#include "kernels/ops.hpp"
#include "kernels/ops_math.hpp"

#include <cmath>

namespace dense::cpuref {

void swiglu(const float* gate, const float* up, float* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i)
        y[i] = static_cast<float>(detail::silu(static_cast<double>(gate[i])) * static_cast<double>(up[i]));
}

void gdn_gates(const float* b, const float* a, const float* dt_bias, const float* A, float* beta, float* decay,
               int64_t heads) {
    for (int64_t h = 0; h < heads; ++h) {
        // Read all inputs of head h before writing either output (outputs may alias inputs).
        const double bh = b[h], ah = a[h], dt = dt_bias[h], Ah = A[h];
        beta[h] = static_cast<float>(detail::sigmoid(bh));
        decay[h] = static_cast<float>(std::exp(detail::softplus(ah + dt) * Ah));
    }
}

bool has_non_finite(const float* x, int64_t n) {
    for (int64_t i = 0; i < n; ++i)
        if (!std::isfinite(x[i])) return true;
    return false;
}

int64_t first_largest_index(const float* x, int64_t n) {
    // std::max_element's loop, written out: the oracle of the packs' parallel reductions.
    int64_t best = 0;
    for (int64_t i = 1; i < n; ++i)
        if (x[best] < x[i]) best = i;
    return best;
}

}  // namespace dense::cpuref
