// The quantized GEMM (GEMM_Q, dense_abi.h): T activations against one weight through the GEMV kernel
// of gemv_kernel.cuh, instantiated with C = tuning::kGemmColumns columns. Each warp decodes a weight
// step once (staged in shared memory, or loaded straight into registers by the direct variant) and
// applies it to the C activations of its column group in turn; the T columns form ceil(T / C)
// groups, and each block tile of the matrix becomes that many virtual tiles, numbered tile-major so
// a row tile's groups run on neighbouring blocks at the same time (its weights come from DRAM once,
// then from L2).
//
// Bit-identity with the GEMV (what the op promises): the launch takes the K split of the matrix's
// rows (sum_order, the same as GEMV_Q's), and every column is summed in the GEMV's order: per lane over
// its K slice's steps in order (term 2u, then 2u + 1), the same xor-shuffle tree, the slices in
// order, accumulate last. The column count only changes which activation a sum reads, never the
// order. The op (gemm_ops.cpp) sends T = 1 to the GEMV's own launcher instead (the vector layouts
// coincide): the same bits, by the GEMV's tuned kernel.
//
// This header is compiled in the pure-asm flavour (gemv_common.cuh): gemm_*.cu define
// DENSE_GEMV_PURE_ASM, so the C units of a step share its loads and decoding.
#pragma once

#include "kernels/gemv_kernel.cuh"
#include "kernels/gemv_launchers.hpp"

namespace dense::cuda::gemv {
DENSE_GEMV_FLAVOR_BEGIN

template <class Dot>
cudaError_t launch_gemm(const GemmLaunch& g, cudaStream_t stream) {
    constexpr int C = tuning::kGemmColumns;
    const GemvLaunch& c = g.matrix;
    if (c.in <= 0 || c.out <= 0 || g.cols <= 0) return cudaSuccess;
    GemvKernelArgs p = launch_args<Dot>(c, c.in * g.cols);
    p.n_cols = static_cast<int>(g.cols);  // the op checked T * IN fits the kernels' int counts
    p.n_groups = static_cast<int>((g.cols + C - 1) / C);
    p.dst_col_stride = g.dst_col_stride;
    p.act_pairs_aligned = p.act_blocks % 2 == 0 ? 1 : 0;
    add_matrix(p, c, p.n_groups);
    return launch_gemv_args<Dot, 1, C>(p, c.in, c.out, stream);
}

DENSE_GEMV_FLAVOR_END
}  // namespace dense::cuda::gemv
