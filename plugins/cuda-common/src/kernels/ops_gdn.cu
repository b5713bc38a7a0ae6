// GDN_DECODE, the gated delta rule for one token (spec 7.5). One WARP per state column (value head h,
// value dim j), 8 columns per block, grid-stride over the hv * dv columns.
//
// Column j of head h is S[.][j], stored contiguously at h*dk*dv + j*dk (the state layout of the ABI),
// and everything the rule does to it depends only on that column, k, q, v[j], beta_h and decay_h:
//   S[.][j] *= decay;  u = S[.][j] . k;  delta = beta (v[j] - u);  S[.][j] += k delta;  o[j] = scale S[.][j] . q
// So the 32 lanes of a warp hold the column in registers (dk <= 128: lane l owns rows l, l+32, ...),
// both dot products are lane-local fused multiply-adds plus a 5-level butterfly, and the column is
// written back once. Columns never overlap, and a warp reads its whole column before writing it, so
// state_out may be the very same memory as state_in. dk > 128 takes a second path that streams the
// column from memory twice instead of holding it (same arithmetic, same aliasing argument: each
// element is read, then written, by one lane).
//
// Numerics (fp32): decay * S is one rounding, S + k delta one fused rounding; u and o are 128-term
// dot products, error <= (4 + 5) * 2^-24 * sum |terms|. cpu-ref keeps each step in double and rounds
// the state once, so the two drift apart by a few ulp per step; the recurrence is contractive
// (decay <= 1, and with unit-norm k and beta in (0, 1) the update is a projection), so the drift
// does not grow without bound. The tests chain several steps and allow 2e-6 of max |o| (+ 2e-6
// relative per element), for o and for the state.
//
// T tokens (ABI 1.10's token axis, a batched prefill step): the warp walks them in order with its
// column still in registers, so the state is read once and written once per launch instead of once
// per token, and each token's operations are the one-token kernel's, in the same order (the column
// a launch would have stored and the next reloaded is the same float): T launches' bits. The walk is
// latency-bound (a 512-token step: 596 us a layer, ~1.2 us a token, session 33), so the column's
// place (two 64-bit divisions) is found once, not per token, and token t + 1's inputs (k, q, v[j], the
// gates) are loaded while token t computes: the same floats, so the same bits.
#include "kernels/launch_chain.cuh"
#include "kernels/act_common.cuh"
#include "kernels/act_launchers.hpp"
#include "kernels/act_step_math.cuh"

namespace dense::cuda::act {
namespace {

constexpr int kGdnWarps = 8;
constexpr int kGdnThreads = 32 * kGdnWarps;
constexpr int kGdnRegRows = 4;  // rows per lane held in registers: dk <= 32 * 4
constexpr int64_t kGdnMaxBlocks = 1 << 20;

// Column view shared by both paths.
struct Column {
    const float* q;
    const float* k;
    const float* s_in;
    float* s_out;
    float v, beta, decay;
    float* o;
};

// Where column `col` lives: its value head h, value dim j, key head kh and state offset. Found once
// per column (two 64-bit divisions and a remainder), not once per token.
struct ColumnPlace {
    int64_t h, j, kh, base;
};

__device__ __forceinline__ ColumnPlace place_of(const GdnArgs& a, int64_t col) {
    ColumnPlace p;
    p.h = col / a.dv;
    p.j = col - p.h * a.dv;
    p.kh = p.h % a.hk;  // tiled head mapping (spec 7.4)
    p.base = p.h * a.dk * a.dv + p.j * a.dk;
    return p;
}

// The column at place p as token t sees it (its q, k, v[j], gates and output slot).
__device__ __forceinline__ Column column_at(const GdnArgs& a, const ColumnPlace& p, int64_t t) {
    Column c;
    c.q = a.q + t * a.q_tstride + p.kh * a.q_stride;
    c.k = a.k + t * a.k_tstride + p.kh * a.k_stride;
    c.s_in = a.state_in + p.base;
    c.s_out = a.state_out + p.base;
    c.v = a.v[t * a.v_tstride + p.h * a.v_stride + p.j];
    c.beta = a.beta[t * a.hv + p.h];
    c.decay = a.decay[t * a.hv + p.h];
    c.o = a.o + t * a.o_tstride + p.h * a.dv + p.j;
    return c;
}

__global__ void __launch_bounds__(kGdnThreads) gdn_decode_regs_kernel(GdnArgs a) {
    wait_for_producers();  // launch_chain.cuh: nothing an earlier kernel writes is touched before
    allow_consumers();

    const int lane = static_cast<int>(threadIdx.x & 31u);
    const int64_t n_cols = a.hv * a.dv;
    const int64_t warp_stride = static_cast<int64_t>(gridDim.x) * kGdnWarps;
    for (int64_t col = static_cast<int64_t>(blockIdx.x) * kGdnWarps + (threadIdx.x >> 5); col < n_cols;
         col += warp_stride) {
        const ColumnPlace p = place_of(a, col);
        const Column c0 = column_at(a, p, 0);
        const float* const v0 = a.v + p.h * a.v_stride + p.j;  // column_at's v[j] of token 0
        float s[kGdnRegRows];
#pragma unroll
        for (int r = 0; r < kGdnRegRows; ++r) {
            const int64_t i = lane + 32 * r;
            s[r] = i < a.dk ? c0.s_in[i] : 0.0f;
        }
        // Token t's inputs at token 0's plus t strides (column_at's values).
        const auto inputs = [&](int64_t t) {
            return gdn_token_inputs<kGdnRegRows>(c0.k + t * a.k_tstride, c0.q + t * a.q_tstride, v0[t * a.v_tstride],
                                                 a.beta[t * a.hv + p.h], a.decay[t * a.hv + p.h], a.dk, lane);
        };
        GdnTokenInputs<kGdnRegRows> next = inputs(0);
        for (int64_t t = 0; t < a.tokens; ++t) {
            const GdnTokenInputs<kGdnRegRows> cur = next;
            if (t + 1 < a.tokens) next = inputs(t + 1);
            const float acc = gdn_column_step(s, cur, a.dk, lane);
            if (lane == 0) c0.o[t * a.o_tstride] = a.scale * acc;
        }
#pragma unroll
        for (int r = 0; r < kGdnRegRows; ++r) {
            const int64_t i = lane + 32 * r;
            if (i < a.dk) c0.s_out[i] = s[r];
        }
    }
}

__global__ void __launch_bounds__(kGdnThreads) gdn_decode_stream_kernel(GdnArgs a) {
    wait_for_producers();  // launch_chain.cuh: nothing an earlier kernel writes is touched before
    allow_consumers();

    const int lane = static_cast<int>(threadIdx.x & 31u);
    const int64_t n_cols = a.hv * a.dv;
    const int64_t warp_stride = static_cast<int64_t>(gridDim.x) * kGdnWarps;
    for (int64_t col = static_cast<int64_t>(blockIdx.x) * kGdnWarps + (threadIdx.x >> 5); col < n_cols;
         col += warp_stride) {
        const ColumnPlace p = place_of(a, col);
        for (int64_t t = 0; t < a.tokens; ++t) {
            const Column c = column_at(a, p, t);
            const float* s_in = t == 0 ? c.s_in : c.s_out;  // a later token reads what this lane wrote
            float u = 0.0f;
            for (int64_t i = lane; i < a.dk; i += 32) u = __fmaf_rn(s_in[i] * c.decay, c.k[i], u);
            u = warp_sum(u);
            const float delta = c.beta * (c.v - u);
            float acc = 0.0f;
            for (int64_t i = lane; i < a.dk; i += 32) {
                const float s = __fmaf_rn(c.k[i], delta, s_in[i] * c.decay);
                c.s_out[i] = s;
                acc = __fmaf_rn(s, c.q[i], acc);
            }
            acc = warp_sum(acc);
            if (lane == 0) *c.o = a.scale * acc;
        }
    }
}

}  // namespace

cudaError_t launch_gdn_decode(const GdnArgs& a, cudaStream_t stream) {
    const int64_t n_cols = a.hv * a.dv;
    if (n_cols <= 0 || a.dk <= 0) return cudaSuccess;
    const unsigned blocks = grid_for(n_cols, kGdnWarps, kGdnMaxBlocks);
    if (a.dk <= 32 * kGdnRegRows)
        (void)launch_chained(gdn_decode_regs_kernel, blocks, kGdnThreads, 0, stream, a);
    else
        (void)launch_chained(gdn_decode_stream_kernel, blocks, kGdnThreads, 0, stream, a);
    return cudaGetLastError();
}

}  // namespace dense::cuda::act
