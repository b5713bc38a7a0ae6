// Which GEMM kernel runs a GEMM_Q call of a format with an Mma decoder (gemm_<fmt>.cu):
//   - a call in free order (ABI 1.13, GemmLaunch::free_order) takes the free-order kernel
//     (gemm_mma_wide.cuh) where it can (weights aligned for the decoder, its shared memory granted,
//     the workspace the host allocated large enough for its K split);
//   - otherwise, and as the free order's fallback, the exact tensor-core kernel (gemm_mma.cuh), whose
//     columns are their GEMVs' bits, or the dp4a GEMM (gemm_launch.cuh) where the mma kernel does not
//     apply (DENSE_CUDA_GEMM=dp4a, unaligned weights).
// A/B knobs of the exact kernels (measurements only; each variant gives the same bits):
// DENSE_CUDA_GEMM_MMA_COLS=32 warp tiles of 32 columns, DENSE_CUDA_GEMM_MMA_STAGE=0 activations read
// from global memory.
#pragma once

#include "kernels/gemm_mma.cuh"
#include "kernels/gemm_mma_wide.cuh"

namespace dense::cuda::gemv {
DENSE_GEMV_FLAVOR_BEGIN

template <class F, class Dot>
cudaError_t launch_gemm_auto(const GemmLaunch& g, cudaStream_t stream) {
    if (mma_applicable<F>(g)) {
        if (g.free_order) {
            cudaError_t err = cudaSuccess;
            if (launch_gemm_mma_wide<F>(g, stream, err)) return err;
        }
        const char* st = std::getenv("DENSE_CUDA_GEMM_MMA_STAGE");
        const bool staged = st == nullptr || std::strcmp(st, "0") != 0;
        const char* v = std::getenv("DENSE_CUDA_GEMM_MMA_COLS");
        if (v != nullptr && std::strcmp(v, "32") == 0) return launch_gemm_mma<F, Dot, 4>(g, stream, staged);
        return launch_gemm_mma<F, Dot, 2>(g, stream, staged);
    }
    return launch_gemm<Dot>(g, stream);
}

DENSE_GEMV_FLAVOR_END
}  // namespace dense::cuda::gemv
