// GDN_STEP (ABI 1.11): a Gated DeltaNet layer's token step after its projections — CONV1D_CAUSAL,
// the L2_NORM of the q and k heads, GDN_GATES and GDN_DECODE — as ONE kernel. At batch 1 each of those
// four was a dependent launch of a few microseconds for a few kilobytes; in the 27B that is 144 of the
// token step's ~550 small nodes.
//
// Layout: block b owns the 8 state columns [8 b, 8 b + 8) of value head h (dv % 8 == 0, so they lie in
// one head), one warp per column exactly as gdn_decode_regs_kernel (ops_gdn.cu). Before the delta rule
// the block makes what those columns read:
//   - warps 0-7, one thread per channel: the convolution of key head kh = h % hk's dk q channels and
//     dk k channels (2 dk <= 256 threads), into shared memory;
//   - warp 8: the convolution of the block's own 8 v channels, and head h's two gates;
//   - warps 0 and 1: the L2 norm of the q row and of the k row, in shared memory.
// Every block whose value head shares key head kh recomputes the same q and k (hv / hk blocks per
// column slice; ~16 KB of L2 reads per block), and exactly one of them (h == kh, first slice) stores
// them into y with their conv state; each v channel, gate and column is stored by the block that owns
// it. So every output element has one writer and no block reads another's output: no grid-wide sync.
//
// The bits are the four kernels' bits: each value is made by the same fp32 operations in the same
// order as there (the file is compiled with --fmad=false like ops_conv.cu, ops_norm.cu,
// ops_elementwise.cu and ops_gdn.cu, and every fused multiply-add is an explicit __fmaf_rn; the conv
// sum and the delta-rule column are act_step_math.cuh's functions, which ops_conv.cu and ops_gdn.cu
// call too):
//   - conv: acc = fma(taps[i], window[i], acc) over the K taps from 0, then SiLU (ops_conv.cu);
//   - L2 norm of a row of dk <= 128: the norm kernel runs it with one warp of 32 threads, lane l
//     holding elements [8 l, 8 l + 8) (zeros past the row), an 8-term FMA chain of squares, warp_sum,
//     then block_sum's second level over that warp's one partial (warp_sum of {partial, 0, ..., 0});
//     denominator ss + eps, scale 1 / sqrtf(.), y = x * scale (ops_norm.cu, NormKind::L2);
//   - gates: beta = sigmoid(b), decay = expf(softplus(a + dt_bias) * A) (ops_elementwise.cu);
//   - the delta rule: gdn_decode_regs_kernel's column code, line for line (ops_gdn.cu).
// CudaGdnStep.* in tests/cuda compares this kernel with the four launches byte for byte.
#include "kernels/launch_chain.cuh"
#include "kernels/act_common.cuh"
#include "kernels/act_launchers.hpp"
#include "kernels/act_step_math.cuh"

namespace dense::cuda::act {
namespace {

constexpr int kColumns = 8;                      // state columns (warps) per block, as in ops_gdn.cu
constexpr int kThreads = 32 * (kColumns + 1);    // + warp 8: v channels and gates
constexpr int kMaxKeyDim = 128;                  // dk: the register path of ops_gdn.cu (4 rows per lane)
constexpr int kRegRows = kMaxKeyDim / 32;

// CONV1D_CAUSAL's channel `ch` (ops_conv.cu's arithmetic); stores the shifted window when `store`.
__device__ __forceinline__ float conv_channel(const GdnStepArgs& a, int64_t ch, bool store) {
    const int64_t keep = a.kernel - 1;
    const float* s_in = a.conv_in + ch * keep;
    const float xc = a.x[ch];
    const float acc = conv_window_sum(a.taps + ch * a.kernel, s_in, xc, keep);
    if (store) {
        float* s_out = a.conv_out + ch * keep;
        for (int64_t i = 0; i + 1 < keep; ++i) s_out[i] = s_in[i + 1];
        s_out[keep - 1] = xc;
    }
    return a.silu ? silu_f(acc) : acc;
}

// L2_NORM of one row of n <= 128 floats in shared memory, in place, by one warp (ops_norm.cu's one-warp
// launch for such rows; see the file comment).
__device__ __forceinline__ void l2_norm_row(float* row, int64_t n, float eps, int lane) {
    const int64_t i0 = static_cast<int64_t>(lane) * 8;
    float v[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) v[j] = i0 + j < n ? row[i0 + j] : 0.0f;
    float ss = warp_sum(octet_sum_of_squares(v));
    ss = warp_sum(lane == 0 ? ss : 0.0f);  // block_sum's second level: one warp's partial and 31 zeros
    const float scale = l2_scale(ss, eps);
    __syncwarp();
#pragma unroll
    for (int j = 0; j < 8; ++j)
        if (i0 + j < n) row[i0 + j] = v[j] * scale;
}

__global__ void __launch_bounds__(kThreads) gdn_step_kernel(GdnStepArgs a) {
    __shared__ float qk[2 * kMaxKeyDim];  // key head kh: q row, then k row
    __shared__ float v_cols[kColumns];
    __shared__ float gates[2];            // beta, decay of head h

    const int tid = static_cast<int>(threadIdx.x);
    const int lane = tid & 31, warp = tid >> 5;
    const int64_t col0 = static_cast<int64_t>(blockIdx.x) * kColumns;
    const int64_t h = col0 / a.dv, j0 = col0 - h * a.dv;
    const int64_t kh = h % a.hk;  // tiled head mapping (spec 7.4)
    const int64_t key_dim = a.hk * a.dk;
    const bool stores_qk = h == kh && j0 == 0;  // the one block that stores kh's q and k channels

    wait_for_producers();  // launch_chain.cuh: nothing an earlier kernel writes is touched before
    allow_consumers();

    // This warp's column of the delta state, loaded first so its latency hides behind the conv.
    const int64_t j = j0 + warp;
    const int64_t state_base = h * a.dk * a.dv + j * a.dk;
    float s[kRegRows];
    if (warp < kColumns) {
#pragma unroll
        for (int r = 0; r < kRegRows; ++r) {
            const int64_t i = lane + 32 * r;
            s[r] = i < a.dk ? a.state_in[state_base + i] : 0.0f;
        }
    }

    if (warp < kColumns) {
        if (tid < 2 * a.dk) {
            const int64_t ch = tid < a.dk ? kh * a.dk + tid : key_dim + kh * a.dk + (tid - a.dk);
            qk[tid] = conv_channel(a, ch, stores_qk);
        }
    } else if (lane < kColumns) {
        const int64_t ch = 2 * key_dim + h * a.dv + j0 + lane;
        const float v = conv_channel(a, ch, true);
        v_cols[lane] = v;
        a.y[ch] = v;
    } else if (lane == kColumns) {
        const float b = a.b[h], x = a.a[h] + a.dt_bias[h], A = a.A[h];
        const float beta = sigmoid_f(b), decay = expf(softplus_f(x) * A);
        gates[0] = beta;
        gates[1] = decay;
        if (j0 == 0) {
            a.beta[h] = beta;
            a.decay[h] = decay;
        }
    }
    __syncthreads();
    if (warp < 2) {
        float* row = qk + warp * a.dk;
        l2_norm_row(row, a.dk, a.eps, lane);
        if (stores_qk) {
            __syncwarp();
            float* y = a.y + (warp == 0 ? kh * a.dk : key_dim + kh * a.dk);
            for (int64_t i = lane; i < a.dk; i += 32) y[i] = row[i];
        }
    }
    __syncthreads();
    if (warp >= kColumns) return;

    // gdn_decode_regs_kernel's column, token 0 (ops_gdn.cu).
    const float acc = gdn_column_update(s, qk + a.dk, qk, v_cols[warp], gates[0], gates[1], a.dk, lane);
    if (lane == 0) a.o[h * a.dv + j] = a.scale * acc;
#pragma unroll
    for (int r = 0; r < kRegRows; ++r) {
        const int64_t i = lane + 32 * r;
        if (i < a.dk) a.state_out[state_base + i] = s[r];
    }
}

}  // namespace

bool gdn_step_fits(const GdnStepArgs& a) noexcept {
    const int64_t blocks = a.dv > 0 ? a.hv * a.dv / kColumns : 0;
    return a.dk >= 1 && a.dk <= kMaxKeyDim && a.dv % kColumns == 0 && a.hk >= 1 && a.hv % a.hk == 0 && a.kernel >= 2 &&
           blocks >= 1 && blocks <= 0x7FFFFFFF;
}

cudaError_t launch_gdn_step(const GdnStepArgs& a, cudaStream_t stream) {
    if (!gdn_step_fits(a)) return cudaErrorInvalidValue;
    const auto blocks = static_cast<unsigned>(a.hv * a.dv / kColumns);
    (void)launch_chained(gdn_step_kernel, blocks, kThreads, 0, stream, a);
    return cudaGetLastError();
}

}  // namespace dense::cuda::act
