// CONV1D_CAUSAL: one thread per (channel, token) item of a grid-stride loop, any kernel width >= 2.
//
// y[c] = sum_i taps[c][i] * window[i], window = [state_in[c][0 .. K-2], x[c]], summed in tap order
// from 0 with fused multiply-adds in fp32 (spec 7.2 sums in float in the same order; cpu-ref in
// double). The error is <= K * 2^-24 * sum_i |taps[c][i] * window[i]| before the SiLU, which the
// tests bound per channel.
//
// The token axis (ABI 1.10). Over T tokens a channel's windows are K-wide slices of one sequence,
// state_in[c][0 .. K-2] followed by x[c] of tokens 0 .. T-1: token t's window starts at element t. So
// every token from K-1 on reads only the step's input x, and those tokens run in parallel, one item
// each. The tokens before K-1 (their windows reach into state_in) and the new state belong to one
// item per channel, the "head" item (t = 0), which walks them in order exactly as T one-token launches
// would: it reads the whole window for a sum first, then shifts with state_out[c][i] = state_in[c][i + 1]
// in ascending i (each read happens before that element is overwritten). Only the head item of a
// channel touches its state, so state_out may be the very same memory as state_in; y is apart from x
// (pack_common::check_conv1d_causal). Every y is the same K products summed in the same order as the
// one-token launch's, so the bits are those of T launches (CudaTokenAxis tests).
#include "kernels/launch_chain.cuh"
#include "kernels/act_common.cuh"
#include "kernels/act_launchers.hpp"
#include "kernels/act_step_math.cuh"

namespace dense::cuda::act {
namespace {

__device__ __forceinline__ float conv_out(const ConvArgs& a, float acc) { return a.silu ? silu_f(acc) : acc; }

// Tokens 0 .. min(K-1, T)-1 of channel c in order, then the state: the last K-1 elements of the
// channel's sequence.
__device__ void conv_channel_head(const ConvArgs& a, int64_t c) {
    const int64_t keep = a.kernel - 1;
    const float* taps = a.taps + c * a.kernel;
    float* s_out = a.state_out + c * keep;
    const int64_t head_tokens = a.tokens < keep ? a.tokens : keep;
    for (int64_t t = 0; t < head_tokens; ++t) {
        const float* s_in = t == 0 ? a.state_in + c * keep : s_out;
        const float xc = a.x[t * a.x_stride + c];
        a.y[t * a.y_stride + c] = conv_out(a, conv_window_sum(taps, s_in, xc, keep));
        for (int64_t i = 0; i + 1 < keep; ++i) s_out[i] = s_in[i + 1];
        s_out[keep - 1] = xc;
    }
    // With T >= K-1 the state is x of the last K-1 tokens (the loop above left x of tokens 0 .. K-2).
    if (a.tokens > keep)
        for (int64_t i = 0; i < keep; ++i) s_out[i] = a.x[(a.tokens - keep + i) * a.x_stride + c];
}

// Token t >= K-1 of channel c: its window is x of tokens t-K+1 .. t.
__device__ __forceinline__ void conv_inner_token(const ConvArgs& a, int64_t c, int64_t t) {
    const int64_t keep = a.kernel - 1;
    const float* x = a.x + c;
    const float acc = conv_window_sum(a.taps + c * a.kernel, x + (t - keep) * a.x_stride, a.x_stride,
                                      x[t * a.x_stride], keep);
    a.y[t * a.y_stride + c] = conv_out(a, acc);
}

__global__ void conv1d_causal_kernel(ConvArgs a) {
    wait_for_producers();  // launch_chain.cuh: nothing an earlier kernel writes is touched before
    allow_consumers();

    const int64_t keep = a.kernel - 1;
    const int64_t items = a.channels * a.tokens;  // item = t * channels + c: a warp reads adjacent channels
    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    for (int64_t item = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; item < items; item += stride) {
        const int64_t t = item / a.channels, c = item - t * a.channels;
        if (t == 0)
            conv_channel_head(a, c);
        else if (t >= keep)
            conv_inner_token(a, c, t);
        // 0 < t < K-1: the head item of channel c computes this token.
    }
}

}  // namespace

cudaError_t launch_conv1d_causal(const ConvArgs& a, cudaStream_t stream) {
    if (a.channels <= 0 || a.kernel < 2 || a.tokens <= 0) return cudaSuccess;
    (void)launch_chained(conv1d_causal_kernel, grid_for(a.channels * a.tokens, kEltThreads, kEltMaxBlocks), kEltThreads,
                         0, stream, a);
    return cudaGetLastError();
}

}  // namespace dense::cuda::act
