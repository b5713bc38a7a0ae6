// ROPE (NeoX pairing, partial rotary n_rot): one thread per (head, rotated pair) and, when dst is not
// src, one per (head, pass-through dim); grid-stride. The position is read on the device.
//
// The angle theta_i = p * freq_scale * freq_base^(-2i/n_rot) is evaluated in DOUBLE (pow, product,
// sincos), exactly as cpu-ref does: positions reach 262144, where an fp32 angle (relative error
// 2^-24) would be off by up to 0.016 rad. cos/sin are then rounded to float and the rotation
// x*c - y*s, x*s + y*c is done in fp32 (a fused multiply-add and one product: <= ~3 ulp of
// max(|x|, |y|) off cpu-ref's double result). Double work is O(heads * n_rot / 2) per call.
//
// In place: the pair (i, i + n_rot/2) is read and written by the same thread, both reads first; the
// pass-through dims are not touched. Position < 0 (cpu-ref refuses it): the rotated dims of dst are
// set to NaN instead, nothing out of bounds. The token axis (ABI 1.10) adds T such calls to one grid,
// each reading its own position: the same per-element arithmetic, so the same bits.
#include "kernels/launch_chain.cuh"
#include "kernels/act_common.cuh"
#include "kernels/act_launchers.hpp"
#include "kernels/act_step_math.cuh"

namespace dense::cuda::act {
namespace {

__global__ void rope_neox_kernel(RopeArgs a, bool copy_tail) {
    wait_for_producers();  // launch_chain.cuh: nothing an earlier kernel writes is touched before
    allow_consumers();

    const int64_t half = a.n_rot / 2;
    const int64_t tail = copy_tail ? a.head_dim - a.n_rot : 0;
    const int64_t per_head = half + tail;
    const int64_t per_token = per_head * a.heads;
    const int64_t total = per_token * a.tokens;
    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    for (int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; idx < total; idx += stride) {
        const int64_t tok = idx / per_token;
        const int64_t in_token = idx - tok * per_token;
        const int64_t pos = a.position[tok];
        const int64_t h = in_token / per_head;
        const int64_t t = in_token - h * per_head;
        const float* x = a.x + tok * a.x_tstride + h * a.x_stride;
        float* y = a.y + tok * a.y_tstride + h * a.y_stride;
        if (t >= half) {  // pass-through dim (only when y is not x)
            const int64_t e = a.n_rot + (t - half);
            y[e] = x[e];
            continue;
        }
        if (pos < 0) {
            y[t] = __int_as_float(0x7FC00000);
            y[t + half] = __int_as_float(0x7FC00000);
            continue;
        }
        float c, s;
        rope_neox_cos_sin(t, pos, a.n_rot, a.freq_base, a.freq_scale, c, s);
        const float x0 = x[t], x1 = x[t + half];
        y[t] = rope_neox_first(x0, x1, c, s);
        y[t + half] = rope_neox_second(x0, x1, c, s);
    }
}

}  // namespace

cudaError_t launch_rope_neox(const RopeArgs& a, cudaStream_t stream) {
    if (a.heads <= 0 || a.n_rot < 2 || a.tokens <= 0) return cudaSuccess;
    const bool copy_tail = a.y != a.x && a.head_dim > a.n_rot;
    const int64_t per_head = a.n_rot / 2 + (copy_tail ? a.head_dim - a.n_rot : 0);
    (void)launch_chained(rope_neox_kernel, grid_for(per_head * a.heads * a.tokens, kEltThreads, kEltMaxBlocks),
                         kEltThreads, 0, stream, a, copy_tail);
    return cudaGetLastError();
}

}  // namespace dense::cuda::act
