// SwiGLU, the Gated DeltaNet gates and the finiteness check: one output per input element, computed
// in double and rounded once, so outputs may alias inputs. Then the selections over a vector (ARGMAX,
// TOP_K), which only compare.
#include "kernels/ops.hpp"
#include "kernels/ops_math.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

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

void top_k(const float* x, int64_t n, int64_t k, int32_t* ids, float* values) {
    // Every candidate, then a partial sort by the contract's order: the oracle of the packs' kernels
    // (the same order as the host sampler's, text::sorted_candidates).
    struct Entry {
        int32_t id;
        float value;
    };
    std::vector<Entry> c;
    c.reserve(static_cast<std::size_t>(n));
    for (int64_t i = 0; i < n; ++i)
        if (!std::isnan(x[i]) && x[i] != -std::numeric_limits<float>::infinity())
            c.push_back({static_cast<int32_t>(i), x[i]});
    const auto kept = static_cast<std::ptrdiff_t>(std::min<std::size_t>(static_cast<std::size_t>(k), c.size()));
    std::partial_sort(c.begin(), c.begin() + kept, c.end(), [](const Entry& a, const Entry& b) {
        return a.value != b.value ? a.value > b.value : a.id < b.id;
    });
    for (int64_t i = 0; i < k; ++i) {
        const bool some = i < kept;
        ids[i] = some ? c[static_cast<std::size_t>(i)].id : -1;
        values[i] = some ? c[static_cast<std::size_t>(i)].value : -std::numeric_limits<float>::infinity();
    }
}

}  // namespace dense::cpuref
