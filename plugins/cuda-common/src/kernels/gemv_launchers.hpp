// Host entry points of the GEMV and activation-quantize kernels (defined in the gemv_*.cu and
// quantize_act.cu files, one file per format family). Plain C++: gemv_ops.cpp (g++) calls them.
//
// Contract (gemv_ops.cpp validates every call before it gets here):
//   - weight: `out` contiguous rows of `row_bytes` bytes, each `in` elements of the format (in a
//     multiple of the block size); any address (an unaligned matrix takes a slower load path); the
//     16 bytes past the matrix readable (the units of 2-byte-aligned formats read whole aligned
//     words from global memory; this pack's allocations keep that slack, device_api.cpp);
//   - act: `in` elements of the activation format: Q8_32 (codes 16-byte aligned) for the quantized
//     formats, F32 (4-byte aligned) for F32 / F16 / BF16 weights;
//   - dst: `out` floats, 4-byte aligned, disjoint from weight and act; accumulate: dst += W x,
//     else dst = W x.
// All pointers are device memory of the current device. The launch is enqueued on `stream` (no
// host synchronisation); the return value is cudaGetLastError() after the launch.
#pragma once

#include "kernels/gemm_free_order_plan.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>

namespace dense::cuda {

struct GemvLaunch {
    const void* weight = nullptr;
    int64_t in = 0;
    int64_t out = 0;
    int64_t row_bytes = 0;
    const void* act = nullptr;
    float* dst = nullptr;
    bool accumulate = false;
};

using GemvLauncher = cudaError_t (*)(const GemvLaunch& call, cudaStream_t stream);
// Quantized formats take a list: calls[0 .. n) of one format that share `in`, `act` and
// `accumulate` (n = 1 is GEMV_Q; n > 1 serves GEMV_Q_MULTI). Matrices whose rows give the same K
// split share launches of up to 4; since a row's summation order depends only on that split
// (gemv_kernel.cuh), each dst is bit for bit what a launch of its call alone writes.
using GemvListLauncher = cudaError_t (*)(const GemvLaunch* calls, int n, cudaStream_t stream);

// Quantized weights x Q8_32 activation.
cudaError_t launch_gemv_q8_0(const GemvLaunch* calls, int n, cudaStream_t stream);
cudaError_t launch_gemv_q2_k(const GemvLaunch* calls, int n, cudaStream_t stream);
cudaError_t launch_gemv_q3_k(const GemvLaunch* calls, int n, cudaStream_t stream);
cudaError_t launch_gemv_q4_k(const GemvLaunch* calls, int n, cudaStream_t stream);
cudaError_t launch_gemv_q5_k(const GemvLaunch* calls, int n, cudaStream_t stream);
cudaError_t launch_gemv_q6_k(const GemvLaunch* calls, int n, cudaStream_t stream);
cudaError_t launch_gemv_iq2_xs(const GemvLaunch* calls, int n, cudaStream_t stream);
cudaError_t launch_gemv_iq2_s(const GemvLaunch* calls, int n, cudaStream_t stream);
cudaError_t launch_gemv_iq3_xxs(const GemvLaunch* calls, int n, cudaStream_t stream);
cudaError_t launch_gemv_iq3_s(const GemvLaunch* calls, int n, cudaStream_t stream);
cudaError_t launch_gemv_iq4_nl(const GemvLaunch* calls, int n, cudaStream_t stream);
cudaError_t launch_gemv_iq4_xs(const GemvLaunch* calls, int n, cudaStream_t stream);

// GEMV_Q_MULTI lists of two formats, or of one format in two summation orders, as ONE launch
// (gemv_pair.cuh, gemv_pair_plan.hpp): `launch` returns false, having enqueued nothing, when the list
// (types[i] is calls[i]'s dense_type_id) does not fit the pair; else true, with the launch's
// cudaGetLastError() in `err`. Every dst is bit for bit what the per-format launches write.
struct GemvPair {
    uint32_t streamed_type;  // the dense_type_id of the large, streamed group
    uint32_t direct_type;    // and of the small group beside it
    bool (*launch)(const uint32_t* types, const GemvLaunch* calls, int n, cudaStream_t stream, cudaError_t& err);
};
// The pairs this pack has, in two tables compiled side by side (both empty where the arch's tuning
// streams no matrix, which the pair launch needs: target_tuning.hpp).
const GemvPair* gemv_pairs_with_q8_0(int& count);      // a streamed format beside small Q8_0 matrices
const GemvPair* gemv_pairs_same_format(int& count);    // a streamed matrix beside small ones of its format

// Float weights x F32 activation.
cudaError_t launch_gemv_f32(const GemvLaunch& call, cudaStream_t stream);
cudaError_t launch_gemv_f16(const GemvLaunch& call, cudaStream_t stream);
cudaError_t launch_gemv_bf16(const GemvLaunch& call, cudaStream_t stream);

// GEMM_Q: `cols` >= 1 activations against one weight. matrix.act holds them as ONE vector of
// in * cols elements of the activation format (Q8_32: codes, then all d, then all s; F32: column after
// column); matrix.dst is column 0, column j starts dst_col_stride (>= out) floats further on and must
// not overlap another. Column j is bit for bit what the GEMV launcher writes for activation j alone
// (gemm_launch.cuh says how; the float formats run their GEMV once per column).
// free_order (ABI 1.13, dense_gemv_params.order = DENSE_GEMM_ORDER_FREE): a column may add its
// per-block terms in another order than its GEMV and (ABI 1.14) round them differently
// (gemm_mma_wide.cuh; the exact kernels remain a valid answer). `workspace` is the op's (workspace_bytes: gemm_free_order_plan.hpp), where that kernel
// keeps its K splits' partial sums.
struct GemmLaunch {
    GemvLaunch matrix;
    int64_t cols = 0;
    int64_t dst_col_stride = 0;
    bool free_order = false;
    void* workspace = nullptr;
    uint64_t workspace_bytes = 0;
};

using GemmLauncher = cudaError_t (*)(const GemmLaunch& call, cudaStream_t stream);

cudaError_t launch_gemm_q8_0(const GemmLaunch& call, cudaStream_t stream);
cudaError_t launch_gemm_q2_k(const GemmLaunch& call, cudaStream_t stream);
cudaError_t launch_gemm_q3_k(const GemmLaunch& call, cudaStream_t stream);
cudaError_t launch_gemm_q4_k(const GemmLaunch& call, cudaStream_t stream);
cudaError_t launch_gemm_q5_k(const GemmLaunch& call, cudaStream_t stream);
cudaError_t launch_gemm_q6_k(const GemmLaunch& call, cudaStream_t stream);
cudaError_t launch_gemm_iq2_xs(const GemmLaunch& call, cudaStream_t stream);
cudaError_t launch_gemm_iq2_s(const GemmLaunch& call, cudaStream_t stream);
cudaError_t launch_gemm_iq3_xxs(const GemmLaunch& call, cudaStream_t stream);
cudaError_t launch_gemm_iq3_s(const GemmLaunch& call, cudaStream_t stream);
cudaError_t launch_gemm_iq4_nl(const GemmLaunch& call, cudaStream_t stream);
cudaError_t launch_gemm_iq4_xs(const GemmLaunch& call, cudaStream_t stream);
cudaError_t launch_gemm_f32(const GemmLaunch& call, cudaStream_t stream);
cudaError_t launch_gemm_f16(const GemmLaunch& call, cudaStream_t stream);
cudaError_t launch_gemm_bf16(const GemmLaunch& call, cudaStream_t stream);

// F32 x[n] -> Q8_32 (n a multiple of 32, `out` 16-byte aligned, n + n/4 bytes), bit-exact with
// cpu-ref's quantize_q8_32.
cudaError_t launch_quantize_q8_32(const float* x, void* out, int64_t n, cudaStream_t stream);

}  // namespace dense::cuda
