// NeoX rotary embedding with a partial rotary dimension (spec 6.3): pair (i, i + n_rot/2) for
// i < n_rot/2, dims >= n_rot unchanged. The angle is evaluated directly as
// pos * freq_scale * freq_base^(-2i/n_rot) in double (the spec's preferred "direct power" form, not
// llama.cpp CPU's repeated float products, which drift at large positions).
#include "kernels/ops.hpp"
#include "kernels/ops_math.hpp"

#include <cmath>
#include <vector>

namespace dense::cpuref {

void rope_neox(const float* x, int64_t x_stride, float* y, int64_t y_stride, int64_t head_dim, int64_t heads,
               int64_t n_rot, int64_t pos, float freq_base, float freq_scale) {
    const int64_t half = n_rot / 2;
    // The angles are the same for every head: compute cos/sin once (O(n_rot), not O(heads * n_rot)).
    std::vector<double> cos_t(static_cast<std::size_t>(half)), sin_t(static_cast<std::size_t>(half));
    for (int64_t i = 0; i < half; ++i) {
        const double inv_freq =
            std::pow(static_cast<double>(freq_base), -2.0 * static_cast<double>(i) / static_cast<double>(n_rot));
        const double theta = static_cast<double>(pos) * static_cast<double>(freq_scale) * inv_freq;
        cos_t[static_cast<std::size_t>(i)] = std::cos(theta);
        sin_t[static_cast<std::size_t>(i)] = std::sin(theta);
    }
    for (int64_t h = 0; h < heads; ++h) {
        const float* xr = detail::row(x, x_stride, h);
        float* yr = detail::row(y, y_stride, h);
        for (int64_t i = 0; i < half; ++i) {
            const double a = xr[i], b = xr[i + half];  // both read before either is written (aliasing)
            const double c = cos_t[static_cast<std::size_t>(i)], s = sin_t[static_cast<std::size_t>(i)];
            yr[i] = static_cast<float>(a * c - b * s);
            yr[i + half] = static_cast<float>(a * s + b * c);
        }
        if (yr != xr)
            for (int64_t i = n_rot; i < head_dim; ++i) yr[i] = xr[i];
    }
}

}  // namespace dense::cpuref
