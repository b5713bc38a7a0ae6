// Scalar helpers shared by the op kernels (internal to dense_cpuref_kernels). All in double: the
// oracle rounds to float only when it stores an output.
#pragma once

#include <cmath>
#include <cstdint>

namespace dense::cpuref::detail {

inline double sigmoid(double x) noexcept {
    return 1.0 / (1.0 + std::exp(-x));  // exp overflow to inf gives exactly 0, as it should
}

inline double silu(double x) noexcept {
    return x * sigmoid(x);
}

// llama.cpp's threshold (spec 4): the identity above 20, where log(1 + e^x) differs from x by < 2e-9.
inline double softplus(double x) noexcept {
    return x > 20.0 ? x : std::log1p(std::exp(x));
}

// Element i of a row-strided matrix: row r at base + r * stride.
inline const float* row(const float* base, int64_t stride, int64_t r) noexcept {
    return base + r * stride;
}
inline float* row(float* base, int64_t stride, int64_t r) noexcept {
    return base + r * stride;
}

}  // namespace dense::cpuref::detail
