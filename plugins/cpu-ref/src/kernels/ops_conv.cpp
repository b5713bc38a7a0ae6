// One step of the depthwise causal convolution of the Gated DeltaNet block (spec 7.2). Per channel
// the window [state_in..., x] is copied out first, so state_out may be the same memory as state_in.
#include "kernels/ops.hpp"
#include "kernels/ops_math.hpp"

#include <vector>

namespace dense::cpuref {

void conv1d_causal(const float* x, const float* taps, const float* state_in, float* y, float* state_out,
                   int64_t channels, int64_t kernel, bool apply_silu) {
    const int64_t keep = kernel - 1;  // state columns per channel
    std::vector<float> window(static_cast<std::size_t>(kernel));
    for (int64_t c = 0; c < channels; ++c) {
        for (int64_t i = 0; i < keep; ++i) window[static_cast<std::size_t>(i)] = state_in[c * keep + i];
        window[static_cast<std::size_t>(keep)] = x[c];
        double acc = 0.0;
        for (int64_t i = 0; i < kernel; ++i)
            acc += static_cast<double>(taps[c * kernel + i]) * static_cast<double>(window[static_cast<std::size_t>(i)]);
        y[c] = static_cast<float>(apply_silu ? detail::silu(acc) : acc);
        for (int64_t i = 0; i < keep; ++i) state_out[c * keep + i] = window[static_cast<std::size_t>(i + 1)];
    }
}

}  // namespace dense::cpuref
