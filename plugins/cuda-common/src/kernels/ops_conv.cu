// CONV1D_CAUSAL: one thread per channel (grid-stride), any kernel width >= 2.
//
// y[c] = sum_i taps[c][i] * window[i], window = [state_in[c][0 .. K-2], x[c]], summed in tap order
// from 0 with fused multiply-adds in fp32 (spec 7.2 sums in float in the same order; cpu-ref in
// double). The error is <= K * 2^-24 * sum_i |taps[c][i] * window[i]| before the SiLU, which the
// tests bound per channel.
//
// state_out[c] = window[1 ..]: the thread reads the whole window for the sum first, then shifts with
// state_out[c][i] = state_in[c][i + 1] in ascending i (each read happens before that element is
// overwritten), so state_out may be the very same memory as state_in. Channels are disjoint.
//
// T tokens (ABI 1.10's token axis) run in order in the same thread: token 0's window comes from
// state_in, every later one's from the state_out the thread itself just wrote, which is exactly what
// T launches of one token would read (same operations, same bits).
#include "kernels/launch_chain.cuh"
#include "kernels/act_common.cuh"
#include "kernels/act_launchers.hpp"
#include "kernels/act_step_math.cuh"

namespace dense::cuda::act {
namespace {

__global__ void conv1d_causal_kernel(ConvArgs a) {
    wait_for_producers();  // launch_chain.cuh: nothing an earlier kernel writes is touched before
    allow_consumers();

    const int64_t keep = a.kernel - 1;
    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    for (int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < a.channels; c += stride) {
        const float* taps = a.taps + c * a.kernel;
        float* s_out = a.state_out + c * keep;
        for (int64_t t = 0; t < a.tokens; ++t) {
            const float* s_in = t == 0 ? a.state_in + c * keep : s_out;
            const float xc = a.x[t * a.x_stride + c];
            const float acc = conv_window_sum(taps, s_in, xc, keep);
            a.y[t * a.y_stride + c] = a.silu ? silu_f(acc) : acc;
            for (int64_t i = 0; i + 1 < keep; ++i) s_out[i] = s_in[i + 1];
            s_out[keep - 1] = xc;
        }
    }
}

}  // namespace

cudaError_t launch_conv1d_causal(const ConvArgs& a, cudaStream_t stream) {
    if (a.channels <= 0 || a.kernel < 2) return cudaSuccess;
    (void)launch_chained(conv1d_causal_kernel, grid_for(a.channels, kEltThreads, kEltMaxBlocks), kEltThreads, 0, stream, a);
    return cudaGetLastError();
}

}  // namespace dense::cuda::act
