// GEMM_Q in free order (ABI 1.13: dense_gemv_params.order = DENSE_GEMM_ORDER_FREE): the tensor-core
// GEMM with one float chain per output instead of the GEMV's four, so a warp holds 64 columns and
// decodes each weight tile once for all of them.
//
// Why a second kernel: the exact GEMM (gemm_mma.cuh) must give every column its GEMV's bits, so a
// thread keeps the GEMV's four unit chains per output; that caps a warp at 16 columns, and every 16
// columns decode the same weight tile again (~71 instructions per mma, session 15). Here each output
// is ONE chain over its K range: acc = fast(b, acc) for the 32-element blocks b in K order, F::fast
// adding the block's value (the Dot's term up to its roundings: fused multiply-adds, the weight's scale
// products once per row and block, gemm_mma.cuh) to the chain, so a column differs from its GEMV by the
// order of the block terms and their last-bit roundings (ABI 1.14's free order; the tests bound that:
// tests/cuda/gemm_gpu_test.cpp).
//
// Layout (why these shapes):
//   - A block is 8 warps, each owning one 16-row tile of a 128-row group, all on the same 64 columns
//     and the same K step at a time: the activation codes and scales of a step are staged ONCE per
//     block in shared memory (cp.async, double-buffered) and read by all 8 warps. Per-warp staging of
//     64 columns (22 KB a step) would not fit enough warps on an SM.
//   - A warp decodes its tile's step unit by unit (F::unit: two 32-element blocks of rows g and g+8),
//     then runs the 2 blocks x 8 n-tiles of mma against it: the decode is paid once per 64 columns.
//   - K is split over grid.y (`splits` contiguous step ranges) so that small row counts still fill
//     the GPU (5120 rows are only 40 row groups). With splits > 1 each split writes its partial sums
//     to the op's workspace, and a second (chained) kernel adds the splits in split order: the result
//     does not depend on timing (no atomics), only on the device's SM count (which picks `splits`).
//   - Codes are staged as [column][272 bytes]: the 8 column rows of an ldmatrix fall in distinct banks,
//     and one ldmatrix.x2 gives a thread both B words of an n-tile (the values two 32-bit shared loads
//     gave it; ncu, session 33: shared-load issue, "mio throttle", was a top stall). (An x4 for two
//     n-tiles at once, with their scales as one 16-byte load, spilled at the 128 registers of 2 blocks
//     an SM.)
//   - Scales are staged as [block of the step][column], so a thread's two columns (2t, 2t+1) are one
//     8-byte load.
#pragma once

#include "kernels/gemm_mma.cuh"

#include <algorithm>
#include <type_traits>

namespace dense::cuda::gemv {
DENSE_GEMV_FLAVOR_BEGIN

inline constexpr int kWideWarps = 8;              // 16-row tiles per block
inline constexpr int kWideThreads = 32 * kWideWarps;
inline constexpr int kWideRows = kMmaRows * kWideWarps;  // 128 rows per block
inline constexpr int kWideNTiles = 8;             // n-tiles of 8 columns per warp
inline constexpr int kWideCols = 8 * kWideNTiles;  // 64 columns per block

struct WideStage {
    static constexpr int kColBytes = 272;
    static constexpr int kCodeBytes = kWideCols * kColBytes;
    static constexpr int kScaleBytes = 8 * kWideCols * 4;  // [block 0..7][column] floats
    static constexpr int kBufBytes = kCodeBytes + 2 * kScaleBytes;  // codes, d, s
    static constexpr int kSharedBytes = 2 * kBufBytes;
};

struct WideArgs {
    const uint8_t* w;
    int64_t rows;
    int64_t row_bytes;
    int steps;
    int act_blocks;  // IN / 32
    int splits;      // grid.y: contiguous step ranges
    int n_cols;
    int n_groups;    // ceil(n_cols / 64): grid.x = row groups x n_groups, groups minor
    ActView act;
    float* partial;  // splits > 1: [split][column][rows] floats
    float* dst;
    int64_t dst_col_stride;
    int accumulate;
};

// Two 8 x 8 matrices of 16-bit elements from shared memory (lane l < 16 gives row l % 8 of matrix l / 8):
// thread (g, t) gets elements 2t, 2t + 1 of row g of each, i.e. bytes 4t .. 4t + 3 of that row.
__device__ __forceinline__ void ldmatrix_x2(uint32_t (&r)[2], const void* row) {
    const auto a = static_cast<unsigned>(__cvta_generic_to_shared(row));
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];" : "=r"(r[0]), "=r"(r[1]) : "r"(a));
}

template <class F>
__global__ void __launch_bounds__(kWideThreads, 2) gemm_mma_wide_kernel(const __grid_constant__ WideArgs p) {
    extern __shared__ __align__(16) uint8_t stage_smem[];
    const int warp = static_cast<int>(threadIdx.x >> 5);
    const int lane = static_cast<int>(threadIdx.x & 31);
    const int g = lane >> 2, t = lane & 3;
    const int64_t group = blockIdx.x / p.n_groups;
    const int col0 = static_cast<int>(blockIdx.x % p.n_groups) * kWideCols;
    const int ncols = min(kWideCols, p.n_cols - col0);
    const int64_t row0 = group * kWideRows + kMmaRows * warp;
    const bool rows_in = row0 < p.rows;  // warp-uniform; a warp past the last row still stages
    const int split = static_cast<int>(blockIdx.y);
    const int s_begin = static_cast<int>(static_cast<int64_t>(p.steps) * split / p.splits);
    const int s_end = static_cast<int>(static_cast<int64_t>(p.steps) * (split + 1) / p.splits);
    const uint8_t* const wa = p.w + min(row0 + g, p.rows - 1) * p.row_bytes;
    const uint8_t* const wb = p.w + min(row0 + g + 8, p.rows - 1) * p.row_bytes;
    // Weights are immutable: ask L2 for this thread's rows' first step before waiting for the kernel
    // before. (A short last step of a 32-element format is not prefetched: it may end the matrix.)
    const auto prefetch_step = [&](int s) {
        if (rows_in && (!F::kPartialSteps || s < p.steps - 1)) {
            const uint8_t* pf = (t & 2 ? wb : wa) + static_cast<int64_t>(s) * F::kStepBytes;
            asm volatile("prefetch.global.L2 [%0];" ::"l"(pf + (t & 1) * (F::kStepBytes - 1)));
        }
    };
    if (s_begin < s_end) prefetch_step(s_begin);
    constexpr bool kDualA = MmaDualA<F>::value;
    static_assert(!(kDualA && F::kK16), "a second A fragment set goes with one m16n8k32 per sum");
    IqTables tables;
    if constexpr (table_bytes(F::kTable) > 0) {
        stage_tables<F>(stage_smem + WideStage::kSharedBytes, tables);
        __syncthreads();
    } else {
        stage_tables<F>(nullptr, tables);
    }
    wait_for_producers();
    allow_consumers();

    // Step s's activation codes and scales of the block's columns into buffer buf (one commit group).
    // Thread i copies 16-byte chunk i % 16 of columns i / 16 + 16 j, and (d, s) of block i / 64 + 4 j
    // of column i % 64. Columns past the last are not copied: their entries reach no stored output.
    const int64_t in = static_cast<int64_t>(p.act_blocks) * 32;
    const int tid = static_cast<int>(threadIdx.x);
    const auto stage = [&](int s, int buf) {
        uint8_t* const base = stage_smem + buf * WideStage::kBufBytes;
        const int chunk = tid & 15;
        const bool chunk_in = 16 * chunk < in - 256 * static_cast<int64_t>(s);
#pragma unroll
        for (int j = 0; j < kWideCols / 16; ++j) {
            const int c = (tid >> 4) + 16 * j;
            if (chunk_in && c < ncols)
                cp_async16(base + c * WideStage::kColBytes + 16 * chunk,
                           p.act.q + (col0 + c) * in + 256 * static_cast<int64_t>(s) + 16 * chunk);
        }
        const int c = tid & 63;
#pragma unroll
        for (int j = 0; j < 2; ++j) {
            const int b = (tid >> 6) + 4 * j;
            if (c < ncols && 8 * s + b < p.act_blocks) {
                const int64_t o = static_cast<int64_t>(col0 + c) * p.act_blocks + 8 * s + b;
                float* sd = reinterpret_cast<float*>(base + WideStage::kCodeBytes) + b * kWideCols + c;
                cp_async4(sd, p.act.d + o);
                if constexpr (F::kNeedS) cp_async4(sd + 8 * kWideCols, p.act.s + o);
            }
        }
    };

    float acc[kWideNTiles][4];
#pragma unroll
    for (int n = 0; n < kWideNTiles; ++n)
#pragma unroll
        for (int i = 0; i < 4; ++i) acc[n][i] = 0.0f;

    if (s_begin < s_end) {
        stage(s_begin, 0);
        cp_async_commit();
    }
    // The steps, compiled twice: for a block of 64 columns (every block but a GEMM's last column group)
    // without the per-n-tile column test (ncu, session 33: those tests and branches were ~11 % of the
    // kernel's instructions), and for a short last group with it.
    const auto run_steps = [&](auto all_cols) {
        constexpr bool kAllCols = decltype(all_cols)::value;
#pragma unroll 1
        for (int s = s_begin; s < s_end; ++s) {
            const int buf = (s - s_begin) & 1;
            if (s + 1 < s_end) stage(s + 1, buf ^ 1);
            cp_async_commit();
            if (s + 2 < s_end) prefetch_step(s + 2);
            cp_async_wait<1>();  // step s has landed (this thread's copies) ...
            __syncthreads();     // ... and every thread's
            if (rows_in) {
                const uint8_t* const sbuf = stage_smem + buf * WideStage::kBufBytes;
                const float* const sd = reinterpret_cast<const float*>(sbuf + WideStage::kCodeBytes);
                const uint8_t* sa_ = wa + static_cast<int64_t>(s) * F::kStepBytes;
                const uint8_t* sb_ = wb + static_cast<int64_t>(s) * F::kStepBytes;
                const typename F::Row ha = F::head(sa_), hb = F::head(sb_);
                const int nb = F::kPartialSteps ? min(8, p.act_blocks - 8 * s) : 8;
#pragma unroll
                for (int u = 0; u < 4; ++u) {
                    MmaUnit<F> un;  // decoded once for the warp's 64 columns
                    un.decode(sa_, ha, sb_, hb, u, t, tables, nb);
#pragma unroll
                    for (int k = 0; k < 2; ++k) {
                        const int j = 2 * u + k;  // the block within the step
                        if (F::kPartialSteps && 8 * s + j >= p.act_blocks) continue;  // past a short row's end
                        uint32_t a[4];
                        un.a(k, a);
                        const auto a2 = [&] { return un.a2(k); };
#pragma unroll
                        for (int n = 0; n < kWideNTiles; ++n) {
                            if (!kAllCols && 8 * n >= ncols) break;  // block-uniform
                            // B words: matrices (n-tile n, bytes 0..15) and (n, 16..31) of block j; lane l < 16
                            // names row l % 8 of matrix l / 8 (the other lanes' addresses are not read).
                            uint32_t b[2];
                            const int row = 8 * n + (lane & 7), half = (lane >> 3) & 1;
                            ldmatrix_x2(b, sbuf + row * WideStage::kColBytes + 32 * j + 16 * half);
                            const int sc = 8 * n + 2 * t;  // the thread's first column's scale
                            const float2 da = *reinterpret_cast<const float2*>(sd + j * kWideCols + sc);
                            float2 sa = make_float2(0.0f, 0.0f);
                            if constexpr (F::kNeedS)
                                sa = *reinterpret_cast<const float2*>(sd + (8 + j) * kWideCols + sc);
                            const auto scales = [&](int i, float& d, float& s_) {
                                d = (i & 1) ? da.y : da.x;
                                s_ = (i & 1) ? sa.y : sa.x;
                            };
                            mma_block_terms<F, true>(acc[n], a, a2, b[0], b[1], un.ba[k], un.bb[k], scales);
                        }
                    }
                }
            }
            __syncthreads();  // every warp is done with `buf` before the next iteration's copy refills it
        }
    };
    if (ncols == kWideCols) {
        run_steps(std::true_type{});
    } else {
        run_steps(std::false_type{});
    }
    cp_async_wait<0>();
    if (!rows_in) return;

#pragma unroll
    for (int n = 0; n < kWideNTiles; ++n)
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const int64_t row = row0 + g + 8 * (i >> 1);
            const int col = col0 + 8 * n + 2 * t + (i & 1);
            if (row >= p.rows || col >= p.n_cols) continue;
            if (p.splits > 1) {
                p.partial[(static_cast<int64_t>(split) * p.n_cols + col) * p.rows + row] = acc[n][i];
            } else {
                float* dst = p.dst + static_cast<int64_t>(col) * p.dst_col_stride + row;
                *dst = p.accumulate ? add(*dst, acc[n][i]) : acc[n][i];
            }
        }
}

// The splits' partial sums of every output added in split order (then dst + sum with accumulate).
// A template (one per format) because every gemm_<fmt>.cu includes this header: a plain __global__
// function would be defined in each of them.
template <class F>
__global__ void __launch_bounds__(256) gemm_wide_merge_kernel(const __grid_constant__ WideArgs p) {
    wait_for_producers();
    allow_consumers();
    const int64_t n = p.rows * p.n_cols;
    for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < n;
         e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
        const int64_t col = e / p.rows, row = e - col * p.rows;
        float v = p.partial[e];
        for (int s = 1; s < p.splits; ++s) v = add(v, p.partial[s * n + e]);
        float* dst = p.dst + col * p.dst_col_stride + row;
        *dst = p.accumulate ? add(*dst, v) : v;
    }
}

// The launch. Returns false (nothing enqueued) where the free-order kernel cannot take the call: its
// shared memory refused, or the workspace too small for the splits it needs; the caller then runs the
// exact GEMM, which the free order allows.
template <class F>
bool launch_gemm_mma_wide(const GemmLaunch& g, cudaStream_t stream, cudaError_t& err) {
    const GemvLaunch& c = g.matrix;
    const GemmFreeOrderPlan plan = gemm_free_order_plan(c.out, c.in, g.cols, sm_count(), gemm_free_order_forced_splits());
    if (plan.workspace_bytes > g.workspace_bytes) return false;
    constexpr auto kKernel = gemm_mma_wide_kernel<F>;
    constexpr int kBytes = WideStage::kSharedBytes + table_bytes(F::kTable);
    if (!staged_smem_ready<kKernel, kBytes>()) return false;
    WideArgs p{};
    p.w = static_cast<const uint8_t*>(c.weight);
    p.rows = c.out;
    p.row_bytes = c.row_bytes;
    p.act_blocks = static_cast<int>(c.in / 32);
    p.steps = static_cast<int>((c.in + 255) / 256);
    p.splits = plan.splits;
    p.n_cols = static_cast<int>(g.cols);
    p.n_groups = static_cast<int>((g.cols + kWideCols - 1) / kWideCols);
    const int64_t n_act = c.in * g.cols;  // the Q8_32 vector: codes, then every d, then every s
    const auto* base = static_cast<const int8_t*>(c.act);
    p.act.q = base;
    p.act.d = reinterpret_cast<const float*>(base + n_act);
    p.act.s = reinterpret_cast<const float*>(base + n_act + n_act / 8);
    p.partial = static_cast<float*>(g.workspace);
    p.dst = c.dst;
    p.dst_col_stride = g.dst_col_stride;
    p.accumulate = c.accumulate ? 1 : 0;
    const int64_t groups = (c.out + kWideRows - 1) / kWideRows;
    (void)launch_chained(kKernel, dim3(static_cast<unsigned>(groups * p.n_groups), static_cast<unsigned>(p.splits)),
                         kWideThreads, kBytes, stream, p);
    if (p.splits > 1) {
        const int64_t n = c.out * g.cols;
        const auto blocks = static_cast<unsigned>(std::min<int64_t>((n + 255) / 256, 4096));
        (void)launch_chained(gemm_wide_merge_kernel<F>, blocks, 256, 0, stream, p);
    }
    err = cudaGetLastError();
    return true;
}

DENSE_GEMV_FLAVOR_END
}  // namespace dense::cuda::gemv
