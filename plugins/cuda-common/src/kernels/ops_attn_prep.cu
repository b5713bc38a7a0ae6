// ATTN_PREP (ABI 1.11): a full-attention layer's token step between its projections and its attention —
// RMS_NORM of the q heads and of the k heads, ROPE (NeoX) of both, KV_STORE of k and v — as ONE kernel.
// At batch 1 those were five dependent launches of a few kilobytes each (80 per token on the 27B).
//
// Layout: one block per head, the q heads first, then the k heads (each also storing its v head);
// norm_threads_for_row(d) threads holding 8 consecutive elements each, exactly as ops_norm.cu's
// norm_rows_kernel does a row. Every output element has one writer and no block reads another's.
//
// The bits are the five kernels' bits: each value is made by the same fp32 / fp64 operations in the same
// order as there (--fmad=false like the rest of the pack; explicit __fmaf_rn where they fuse; the
// rotation is act_step_math.cuh's rope_neox_*, which ops_rope.cu calls too):
//   - RMS norm: the 8-term FMA chain of squares per thread, block_sum over the same block size,
//     ss / n + eps, 1 / sqrtf(.), y = (x * scale) * w (ops_norm.cu);
//   - ROPE: theta = p * freq_scale * freq_base^(-2 i / n_rot) in double (pow, sincos), cos and sin
//     rounded to float, y_i = fma(x_i, c, -(x_j s)), y_j = fma(x_i, s, x_j c) (ops_rope.cu, in place);
//     position < 0 gives NaN in the rotated dims as there;
//   - KV_STORE: the rotated k and the v of slot `position` converted as ops_attention.cu converts them
//     (round to nearest even to F16, or copied to F32), nothing stored for a position outside
//     [0, n_ctx).
// CudaAttnPrep.* in tests/cuda compares this kernel with the five launches byte for byte.
#include "kernels/launch_chain.cuh"
#include "kernels/act_common.cuh"
#include "kernels/act_launchers.hpp"
#include "kernels/act_step_math.cuh"

namespace dense::cuda::act {
namespace {

constexpr int kPer = 8;  // elements per thread, as ops_norm.cu
constexpr int64_t kMaxRow = kNormSpreadMinRow - 1;  // the norm's one-block rows (act_launchers.hpp)

template <bool kF16>
__global__ void attn_prep_kernel(AttnPrepArgs a) {
    extern __shared__ float row[];  // the head being made: d floats
    __shared__ float scratch[33];
    const int t = static_cast<int>(threadIdx.x);
    const int64_t i0 = static_cast<int64_t>(t) * kPer;
    const bool is_k = blockIdx.x >= a.hq;
    const int64_t h = is_k ? blockIdx.x - a.hq : blockIdx.x;
    // The norm weight is immutable: read before waiting for the kernel before (launch_chain.cuh).
    const float* w = is_k ? a.k_norm : a.q_norm;
    float wv[kPer];
    load_octet(w, i0, a.d, aligned16(w), wv);
    wait_for_producers();
    allow_consumers();

    const float* x = is_k ? a.k + h * a.d : a.q + h * a.q_stride;
    float v[kPer];
    load_octet(x, i0, a.d, aligned16(x), v);
    const float ss = block_sum(octet_sum_of_squares(v), scratch);
    const float scale = rms_scale(ss, static_cast<float>(a.d), a.eps);
#pragma unroll
    for (int j = 0; j < kPer; ++j) {
        float o = v[j] * scale;
        o *= wv[j];
        if (i0 + j < a.d) row[i0 + j] = o;
    }
    __syncthreads();

    const int64_t pos = a.position[0];
    const int64_t half = a.n_rot / 2;
    for (int64_t i = t; i < half; i += blockDim.x) {
        if (pos < 0) {
            row[i] = __int_as_float(0x7FC00000);
            row[i + half] = __int_as_float(0x7FC00000);
            continue;
        }
        float c, s;
        rope_neox_cos_sin(i, pos, a.n_rot, a.freq_base, a.freq_scale, c, s);
        const float x0 = row[i], x1 = row[i + half];
        row[i] = rope_neox_first(x0, x1, c, s);
        row[i + half] = rope_neox_second(x0, x1, c, s);
    }
    __syncthreads();

    float* y = is_k ? a.k_out + h * a.d : a.q_out + h * a.d;
    for (int64_t i = t; i < a.d; i += blockDim.x) y[i] = row[i];
    if (!is_k || pos < 0 || pos >= a.n_ctx) return;
    const int64_t slot = pos * a.d * a.hkv + h * a.d;
    const float* vh = a.v + h * a.d;
    for (int64_t i = t; i < a.d; i += blockDim.x) {
        if constexpr (kF16) {
            static_cast<uint16_t*>(a.k_cache)[slot + i] = f32_to_f16_bits(row[i]);
            static_cast<uint16_t*>(a.v_cache)[slot + i] = f32_to_f16_bits(vh[i]);
        } else {
            static_cast<float*>(a.k_cache)[slot + i] = row[i];
            static_cast<float*>(a.v_cache)[slot + i] = vh[i];
        }
    }
}

}  // namespace

bool attn_prep_fits(const AttnPrepArgs& a) noexcept {
    return a.d >= 1 && a.d <= kMaxRow && a.hq >= 1 && a.hkv >= 1 && a.hq + a.hkv <= 0x7FFFFFFF && a.n_rot >= 2 &&
           a.n_rot <= a.d;
}

cudaError_t launch_attn_prep(const AttnPrepArgs& a, cudaStream_t stream) {
    if (!attn_prep_fits(a)) return cudaErrorInvalidValue;
    const auto blocks = static_cast<unsigned>(a.hq + a.hkv);
    const int threads = norm_threads_for_row(a.d);
    const size_t shared = static_cast<size_t>(a.d) * sizeof(float);
    if (a.f16)
        (void)launch_chained(attn_prep_kernel<true>, blocks, threads, shared, stream, a);
    else
        (void)launch_chained(attn_prep_kernel<false>, blocks, threads, shared, stream, a);
    return cudaGetLastError();
}

}  // namespace dense::cuda::act
