// DENSE_OP_GEMM_Q (ABI 1.9) on CUDA devices: the GEMV of T activations at once (batched prefill).
//
//   src0: contiguous weight {IN, OUT} of a format; src1: the T activations as ONE contiguous vector
//   {IN * T} of the activation format (Q8_32 quantized over all IN * T elements, codes 16-byte
//   aligned; F32 for float weights); dst: F32 {OUT, T}, column j at byte j * nb[1] (nb[1] >= 4 OUT, a
//   multiple of 4), disjoint from both sources; params (optional) dense_gemv_params: accumulate, and
//   (ABI 1.13) order: exact (0) or free (1); another order is refused.
//   Registered for every weight format GEMV_Q is (gemv_ops.hpp), with the same activation type.
// In free order a quantized format with an aligned weight runs kernels/gemm_mma_wide.cuh: one float
// chain per output, 64 columns a warp, the weight tile decoded once for them, K split over blocks
// with the partial sums in the op's workspace (workspace_bytes asks for it: gemm_free_order_plan) and
// added in split order by a second kernel. Its columns differ from the GEMV's in the order of the block
// terms and (ABI 1.14) their last-bit roundings (F::fast, kernels/gemm_mma.cuh); without the
// workspace, or where that kernel cannot run, the exact kernels answer.
// In exact order column j is bit for bit what GEMV_Q of src0 on activation j alone writes: every quantized format
// runs int8 tensor-core (mma.sync) tiles whose exact integer block sums get the GEMV's float terms in
// the GEMV's order (kernels/gemm_mma.cuh); DENSE_CUDA_GEMM=dp4a, or a weight not aligned for the
// decoder, picks the dp4a GEMM instead: the GEMV kernel with up to tuning::kGemmColumns columns per
// pass (kernels/gemm_launch.cuh says why the order is the GEMV's); T = 1 runs the GEMV's own launcher; the float formats run their GEMV once per
// column. A bad call is refused on the host (DENSE_E_INVALID_ARGUMENT, one log line, nothing
// launched).
#pragma once

#include "pack_state.hpp"

namespace dense::cuda {

// Appends the GEMM_Q contexts to state.ops.
void plan_gemm_ops(PackState& state);

}  // namespace dense::cuda
