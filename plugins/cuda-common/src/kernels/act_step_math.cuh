// The per-value arithmetic of the ops that ABI 1.11's fused kernels (ops_gdn_step.cu, ops_attn_prep.cu)
// stand in for, shared by each op's own kernel and the fused one, so that both make every value by the
// same fp32 / fp64 operations in the same order: the same bits by construction (the files are compiled
// with --fmad=false; every fused multiply-add is an explicit __fmaf_rn).
#pragma once

#include "kernels/act_common.cuh"

#include <cstdint>

namespace dense::cuda::act {

// CONV1D_CAUSAL's sum for one channel: taps[i] * window[i] over the window [past[0 .. keep), xc] (the
// past elements `stride` floats apart), in tap order from 0 with fused multiply-adds (spec 7.2's
// order), before the SiLU. The one place this sum is written: a token's window in the state (stride
// 1) and in the step's own input (the x stride) must give the same bits.
__device__ __forceinline__ float conv_window_sum(const float* taps, const float* past, int64_t stride, float xc,
                                                 int64_t keep) {
    float acc = 0.0f;
    for (int64_t i = 0; i < keep; ++i) acc = __fmaf_rn(taps[i], past[i * stride], acc);
    return __fmaf_rn(taps[keep], xc, acc);
}
__device__ __forceinline__ float conv_window_sum(const float* taps, const float* s_in, float xc, int64_t keep) {
    return conv_window_sum(taps, s_in, 1, xc, keep);
}

// The norms' per-thread partial: the squares of a thread's 8 consecutive elements summed by one FMA chain
// from 0 in element order (ops_norm.cu's one-block rows, shorter than 2048; the fused kernels' q / k head rows). The
// block's total of these partials then gives the scale below.
__device__ __forceinline__ float octet_sum_of_squares(const float (&v)[8]) {
    float ss = 0.0f;
#pragma unroll
    for (int j = 0; j < 8; ++j) ss = __fmaf_rn(v[j], v[j], ss);
    return ss;
}

// A norm's scale from its row's sum of squares: 1 / sqrt(mean + eps) for RMS_NORM, 1 / sqrt(sum + eps)
// for L2_NORM, with one correctly rounded sqrt and one division.
__device__ __forceinline__ float rms_scale(float ss, float n, float eps) { return 1.0f / sqrtf(ss / n + eps); }
__device__ __forceinline__ float l2_scale(float ss, float eps) { return 1.0f / sqrtf(ss + eps); }

// ROPE (NeoX) of dim pair i (dims i and i + n_rot / 2) at position pos >= 0, in two parts: the angle
// pos * freq_scale * freq_base^(-2 i / n_rot) in double (positions reach 262144, where an fp32 angle
// would be off by up to 0.016 rad) with its cos and sin rounded to float, then the rotation with one
// FMA and one product per output.
__device__ __forceinline__ void rope_neox_cos_sin(int64_t i, int64_t pos, int64_t n_rot, float freq_base,
                                                  float freq_scale, float& c, float& s) {
    const double inv_freq = pow(static_cast<double>(freq_base), -2.0 * static_cast<double>(i) / static_cast<double>(n_rot));
    const double theta = static_cast<double>(pos) * static_cast<double>(freq_scale) * inv_freq;
    double sd, cd;
    sincos(theta, &sd, &cd);
    c = static_cast<float>(cd);
    s = static_cast<float>(sd);
}
__device__ __forceinline__ float rope_neox_first(float x0, float x1, float c, float s) {
    return __fmaf_rn(x0, c, -(x1 * s));
}
__device__ __forceinline__ float rope_neox_second(float x0, float x1, float c, float s) {
    return __fmaf_rn(x0, s, x1 * c);
}

// What one token of GDN_DECODE reads for one state column: k and q at the lane's rows lane + 32 r < dk
// (0 past dk), v[j] and the head's gates. Loaded apart from the update so a kernel walking tokens can
// ask for the next token's while the current one computes (none of it depends on the state).
template <int R>
struct GdnTokenInputs {
    float kk[R], qq[R];
    float v, beta, decay;
};
template <int R>
__device__ __forceinline__ GdnTokenInputs<R> gdn_token_inputs(const float* k, const float* q, float v, float beta,
                                                              float decay, int64_t dk, int lane) {
    GdnTokenInputs<R> in;
#pragma unroll
    for (int r = 0; r < R; ++r) {
        const int64_t i = lane + 32 * r;
        const bool inside = i < dk;
        in.kk[r] = inside ? k[i] : 0.0f;
        in.qq[r] = inside ? q[i] : 0.0f;
    }
    in.v = v;
    in.beta = beta;
    in.decay = decay;
    return in;
}

// GDN_DECODE's update of one state column held by a warp in registers (lane l owns rows l, l + 32, ...
// of dk <= 32 R), for one token: S *= decay; u = S . k; S += k beta (v - u); returns S . q (the same
// value in every lane; the caller scales it).
template <int R>
__device__ __forceinline__ float gdn_column_step(float (&s)[R], const GdnTokenInputs<R>& in, int64_t dk, int lane) {
    float u = 0.0f;
#pragma unroll
    for (int r = 0; r < R; ++r) {
        const int64_t i = lane + 32 * r;
        s[r] = i < dk ? s[r] * in.decay : 0.0f;
        u = __fmaf_rn(s[r], in.kk[r], u);
    }
    u = warp_sum(u);
    const float delta = in.beta * (in.v - u);
    float acc = 0.0f;
#pragma unroll
    for (int r = 0; r < R; ++r) {
        s[r] = __fmaf_rn(in.kk[r], delta, s[r]);
        acc = __fmaf_rn(s[r], in.qq[r], acc);
    }
    return warp_sum(acc);
}

// Both for one token (GDN_STEP's kernel).
template <int R>
__device__ __forceinline__ float gdn_column_update(float (&s)[R], const float* k, const float* q, float v, float beta,
                                                   float decay, int64_t dk, int lane) {
    return gdn_column_step(s, gdn_token_inputs<R>(k, q, v, beta, decay, dk, lane), dk, lane);
}

}  // namespace dense::cuda::act
