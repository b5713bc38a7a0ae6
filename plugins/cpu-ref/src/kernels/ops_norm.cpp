// RMS norm, L2 norm and the gated RMS norm of the Gated DeltaNet output (spec 4, 7.3, 7.6).
//
// Each row: the sum of squares in double, the scale 1/sqrt(.) in double, each output computed in
// double from its float inputs and rounded once. Every output element depends only on its own input
// element and the row's scale, which is known before the first write, so y may alias x.
#include "kernels/ops.hpp"
#include "kernels/ops_math.hpp"

#include <cmath>

namespace dense::cpuref {

using detail::row;

namespace {

double sum_of_squares(const float* x, int64_t n) noexcept {
    double s = 0.0;
    for (int64_t i = 0; i < n; ++i) s += static_cast<double>(x[i]) * static_cast<double>(x[i]);
    return s;
}

// 1 / sqrt(mean(x^2) + eps)
double rms_scale(const float* x, int64_t n, float eps) noexcept {
    return 1.0 / std::sqrt(sum_of_squares(x, n) / static_cast<double>(n) + static_cast<double>(eps));
}

}  // namespace

void rms_norm(const float* x, int64_t x_stride, const float* w, float* y, int64_t y_stride, int64_t n, int64_t rows,
              float eps) {
    for (int64_t r = 0; r < rows; ++r) {
        const float* xr = row(x, x_stride, r);
        float* yr = row(y, y_stride, r);
        const double s = rms_scale(xr, n, eps);
        for (int64_t i = 0; i < n; ++i)
            yr[i] = static_cast<float>(static_cast<double>(xr[i]) * s * static_cast<double>(w[i]));
    }
}

void l2_norm(const float* x, int64_t x_stride, float* y, int64_t y_stride, int64_t n, int64_t rows, float eps) {
    for (int64_t r = 0; r < rows; ++r) {
        const float* xr = row(x, x_stride, r);
        float* yr = row(y, y_stride, r);
        const double s = 1.0 / std::sqrt(sum_of_squares(xr, n) + static_cast<double>(eps));
        for (int64_t i = 0; i < n; ++i) yr[i] = static_cast<float>(static_cast<double>(xr[i]) * s);
    }
}

void gated_rms_norm(const float* x, int64_t x_stride, const float* z, int64_t z_stride, const float* w, float* y,
                    int64_t y_stride, int64_t n, int64_t rows, float eps) {
    for (int64_t r = 0; r < rows; ++r) {
        const float* xr = row(x, x_stride, r);
        const float* zr = row(z, z_stride, r);
        float* yr = row(y, y_stride, r);
        const double s = rms_scale(xr, n, eps);
        for (int64_t i = 0; i < n; ++i) {
            const double normed = static_cast<double>(xr[i]) * s * static_cast<double>(w[i]);
            yr[i] = static_cast<float>(normed * detail::silu(static_cast<double>(zr[i])));
        }
    }
}

}  // namespace dense::cpuref
