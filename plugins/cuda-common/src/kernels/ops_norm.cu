// RMS_NORM, L2_NORM, GATED_RMS_NORM: one thread block per row (grid-stride over rows).
//
// Each thread sums the squares of elements tid, tid + blockDim, ... with fused multiply-adds, then a
// fixed-order block tree adds the partials (fp32 throughout). Error of the sum of squares (all terms
// positive): <= (n / blockDim + log2(blockDim) + 1) * 2^-24 relative, i.e. < 2e-6 for n = 5120 with
// 512 threads; the scale 1/sqrt(.) adds 2 roundings, each output 2-3 more (x*s, *w, *silu(z)).
// cpu-ref does the whole row in double with one final rounding; the tests allow 2e-6 relative
// (measured worst on an H200: 3e-7).
//
// In place (y == x, same stride): every element is read and written by the same thread, and the
// writes come after the block reduction's barriers, so no thread reads an element another has
// already overwritten.
#include "kernels/launch_chain.cuh"
#include "kernels/act_common.cuh"
#include "kernels/act_launchers.hpp"
#include "kernels/q8_32_block.cuh"

namespace dense::cuda::act {
namespace {

enum class NormKind { Rms, L2, GatedRms };

template <NormKind K>
__global__ void norm_rows_kernel(NormArgs a) {
    wait_for_producers();  // launch_chain.cuh: nothing an earlier kernel writes is touched before
    allow_consumers();

    __shared__ float scratch[33];
    const float n_f = static_cast<float>(a.n);
    for (int64_t r = blockIdx.x; r < a.rows; r += gridDim.x) {
        const float* x = a.x + r * a.x_stride;
        float* y = a.y + r * a.y_stride;
        float ss = 0.0f;
        for (int64_t i = threadIdx.x; i < a.n; i += blockDim.x) {
            const float v = x[i];
            ss = __fmaf_rn(v, v, ss);
        }
        ss = block_sum(ss, scratch);
        // mean + eps (RMS) or sum + eps (L2), then one correctly rounded sqrt and division.
        const float denom = K == NormKind::L2 ? ss + a.eps : ss / n_f + a.eps;
        const float scale = 1.0f / sqrtf(denom);
        for (int64_t i = threadIdx.x; i < a.n; i += blockDim.x) {
            float v = x[i] * scale;
            if constexpr (K != NormKind::L2) v *= a.w[i];
            if constexpr (K == NormKind::GatedRms) v *= silu_f(a.z[r * a.z_stride + i]);
            y[i] = v;
            // A warp holds 32 consecutive elements of one row here (blockDim and n are multiples of
            // 32 when a copy is asked for), i.e. exactly one Q8_32 block of the contiguous output.
            if (a.quantized.base != nullptr) quantize_q8_32_block(v, (r * a.n + i) / 32, a.quantized);
        }
    }
}

// Threads per row: about 8 elements each, a multiple of 32, between 32 and 512.
int threads_for_row(int64_t n) {
    int64_t t = (n / 8 + 31) / 32 * 32;
    if (t < 32) t = 32;
    if (t > 512) t = 512;
    return static_cast<int>(t);
}

template <NormKind K>
cudaError_t launch(const NormArgs& a, cudaStream_t stream) {
    if (a.n <= 0 || a.rows <= 0) return cudaSuccess;
    const unsigned blocks = static_cast<unsigned>(a.rows < kMaxRowBlocks ? a.rows : kMaxRowBlocks);
    (void)launch_chained(norm_rows_kernel<K>, blocks, threads_for_row(a.n), 0, stream, a);
    return cudaGetLastError();
}

}  // namespace

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
