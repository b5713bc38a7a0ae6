// RMS_NORM, L2_NORM, GATED_RMS_NORM: one thread block per row (grid-stride over rows).
//
// Each thread sums the squares of its (up to 8) consecutive elements with fused multiply-adds, then a
// fixed-order block tree adds the partials (fp32 throughout). Error of the sum of squares (all terms
// positive): <= (n / blockDim + log2(blockDim) + 1) * 2^-24 relative, i.e. < 2e-6 for n = 5120 with
// 640 threads; the scale 1/sqrt(.) adds 2 roundings, each output 2-3 more (x*s, *w, *silu(z)).
// cpu-ref does the whole row in double with one final rounding; the tests allow 2e-6 relative
// (measured worst on an H200: 3e-7).
//
// In place (y == x, same stride): every element is read and written by the same thread, and the
// writes come after the block reduction's barriers, so no thread reads an element another has
// already overwritten.
#include "kernels/launch_chain.cuh"
#include "kernels/act_common.cuh"
#include "kernels/act_step_math.cuh"
#include "kernels/act_launchers.hpp"
#include "kernels/q8_32_block.cuh"

namespace dense::cuda::act {
namespace {

enum class NormKind { Rms, L2, GatedRms };

// Elements a thread keeps in registers: thread t holds elements [8 t, 8 t + 8) of a row of up to
// kPer * 1024 elements, read with all its loads in flight at once (16-byte loads where the row is
// 16-byte aligned). A strided loop issues them one latency after another: that made a 5120 RMS norm
// take ~9 us on an H200. Consecutive elements per thread also put a Q8_32 block in 4 lanes, so the
// quantized copy takes 2-level shuffle trees for 8 blocks at once (q8_32_block.cuh) instead of 8
// warp-wide quantizations in a row: the norm + quantize is on the token step's critical path (one
// block per row, ~4.2 us of marginal cost per node on an H200 with the warp-wide layout, session 21).
inline constexpr int kPer = 8;

template <NormKind K>
__global__ void norm_rows_kernel(NormArgs a) {
    __shared__ float scratch[33];
    const int t = static_cast<int>(threadIdx.x);
    const int64_t i0 = static_cast<int64_t>(t) * kPer;
    // Rows start 16-byte aligned when the base is and the row strides are multiples of 4 floats.
    const bool vec_w = aligned16(a.w);
    const bool vec_x = aligned16(a.x) && a.x_stride % 4 == 0 && a.x_tstride % 4 == 0;
    const bool vec_y = aligned16(a.y) && a.y_stride % 4 == 0 && a.y_tstride % 4 == 0;
    const bool vec_z = K == NormKind::GatedRms && aligned16(a.z) && a.z_stride % 4 == 0;
    // The norm weight is immutable: read it before waiting for the kernel before (launch_chain.cuh),
    // so its load overlaps that kernel's tail.
    float w[kPer];
    if constexpr (K != NormKind::L2) {
        load_octet(a.w, i0, a.n, vec_w, w);
    } else {
#pragma unroll
        for (int j = 0; j < kPer; ++j) w[j] = 1.0f;
    }
    wait_for_producers();  // nothing an earlier kernel writes is touched before this
    allow_consumers();

    const float n_f = static_cast<float>(a.n);
    for (int64_t r = blockIdx.x; r < a.rows * a.tokens; r += gridDim.x) {
        const int64_t tok = r / a.rows, rr = r - tok * a.rows;  // tok = 0 but for L2_NORM's token axis
        const float* x = a.x + tok * a.x_tstride + rr * a.x_stride;
        float* y = a.y + tok * a.y_tstride + rr * a.y_stride;
        float v[kPer];
        load_octet(x, i0, a.n, vec_x, v);
        float g[kPer];
        if constexpr (K == NormKind::GatedRms) load_octet(a.z + r * a.z_stride, i0, a.n, vec_z, g);
        const float ss = block_sum(octet_sum_of_squares(v), scratch);
        const float scale = K == NormKind::L2 ? l2_scale(ss, a.eps) : rms_scale(ss, n_f, a.eps);
        float o[kPer];
#pragma unroll
        for (int j = 0; j < kPer; ++j) {
            o[j] = v[j] * scale;
            if constexpr (K != NormKind::L2) o[j] *= w[j];
            if constexpr (K == NormKind::GatedRms) o[j] *= silu_f(g[j]);
        }
        store_octet(y, i0, a.n, vec_y, o);
        // 4 lanes hold one Q8_32 block of the contiguous output (n % 32 == 0 with a quantized copy,
        // so a group is wholly inside or wholly past the row). Every lane of the block's warps calls
        // the quantizer (blockDim is a multiple of 32).
        if (a.quantized.base != nullptr) quantize_q8_32_octets(o, i0 < a.n, (r * a.n + i0) / 32, a.quantized);
    }
}

// Rows longer than kPer * 1024 elements (no qwen35 norm is): the same math in a strided loop.
template <NormKind K>
__global__ void norm_long_rows_kernel(NormArgs a) {
    wait_for_producers();
    allow_consumers();
    __shared__ float scratch[33];
    const float n_f = static_cast<float>(a.n);
    for (int64_t r = blockIdx.x; r < a.rows * a.tokens; r += gridDim.x) {
        const int64_t tok = r / a.rows, rr = r - tok * a.rows;
        const float* x = a.x + tok * a.x_tstride + rr * a.x_stride;
        float* y = a.y + tok * a.y_tstride + rr * a.y_stride;
        float ss = 0.0f;
        for (int64_t i = threadIdx.x; i < a.n; i += blockDim.x) ss = __fmaf_rn(x[i], x[i], ss);
        ss = block_sum(ss, scratch);
        const float scale = K == NormKind::L2 ? l2_scale(ss, a.eps) : rms_scale(ss, n_f, a.eps);
        for (int64_t i = threadIdx.x; i < a.n; i += blockDim.x) {
            float o = x[i] * scale;
            if constexpr (K != NormKind::L2) o *= a.w[i];
            if constexpr (K == NormKind::GatedRms) o *= silu_f(a.z[r * a.z_stride + i]);
            y[i] = o;
            if (a.quantized.base != nullptr) quantize_q8_32_block(o, (r * a.n + i) / 32, a.quantized);
        }
    }
}

template <NormKind K>
cudaError_t launch(const NormArgs& a, cudaStream_t stream) {
    if (a.n <= 0 || a.rows <= 0 || a.tokens <= 0) return cudaSuccess;
    const int64_t rows = a.rows * a.tokens;
    const unsigned blocks = static_cast<unsigned>(rows < kMaxRowBlocks ? rows : kMaxRowBlocks);
    if (a.n <= int64_t{kPer} * 1024)
        (void)launch_chained(norm_rows_kernel<K>, blocks, norm_threads_for_row(a.n), 0, stream, a);
    else
        (void)launch_chained(norm_long_rows_kernel<K>, blocks, 1024, 0, stream, a);
    return cudaGetLastError();
}

}  // namespace

int norm_threads_for_row(int64_t n) {
    int64_t t = ((n + kPer - 1) / kPer + 31) / 32 * 32;
    if (t < 32) t = 32;
    if (t > 1024) t = 1024;
    return static_cast<int>(t);
}

cudaError_t launch_rms_norm(const NormArgs& a, cudaStream_t stream) {
    return launch<NormKind::Rms>(a, stream);
}

cudaError_t launch_l2_norm(const NormArgs& a, cudaStream_t stream) {
    return launch<NormKind::L2>(a, stream);
}

cudaError_t launch_gated_rms_norm(const NormArgs& a, cudaStream_t stream) {
    return launch<NormKind::GatedRms>(a, stream);
}

}  // namespace dense::cuda::act
