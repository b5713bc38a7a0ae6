// The pair launch of a GEMV_Q_MULTI list (gemv_pair_plan.hpp says when and why): one grid whose
// first blocks run the streamed group's matrices with the streamed kernel's code (stream_part) and
// the rest the small group's with the direct kernel's code (direct_part), both from
// gemv_kernel.cuh, so each matrix sums exactly as its own launch would. Included by the
// gemv_pair_*.cu files after the dot headers of their formats.
#pragma once

#include "kernels/env_switch.hpp"
#include "kernels/gemv_kernel.cuh"
#include "kernels/gemv_pair_plan.hpp"

namespace dense::cuda::gemv {
DENSE_GEMV_FLAVOR_BEGIN

struct PairKernelArgs {
    GemvKernelArgs streamed;  // task-numbered (number_stream_tasks)
    GemvKernelArgs direct;    // block tiles, one K split
    unsigned streamed_blocks;  // blocks [0, streamed_blocks) run the streamed group, the rest the direct one
};

// Compiled for the streamed kernel's occupancy: the direct code is the smaller of the two and gets
// at least the registers of its own kernel. The streamed part takes the first blocks, so its block
// number is blockIdx.x itself (with the direct part first, ptxas spilled a register of the Q5_K +
// Q8_0 pair). The grid is at most one wave of resident blocks (pair_grid), so neither part waits for
// the other's blocks to leave.
// kBulk: the streamed part takes its weights through bulk copies (stream_part_bulk; the launch then
// gives every block kStreamBulkSharedBytes<DotS> of dynamic shared memory for the rings).
template <class DotS, class DotD, bool kBulk>
__global__ void __launch_bounds__(kThreads, kBulk ? tuning::kGemvStreamBulkMinBlocksPerSm : tuning::kGemvStreamMinBlocksPerSm)
    gemv_pair_kernel(const __grid_constant__ PairKernelArgs p) {
    __shared__ __align__(16) uint8_t table[kTableSmem<DotD>];
    __shared__ float red[2][1][kWarps][kRowsPerWarp];
    if (blockIdx.x < p.streamed_blocks) {  // block-uniform: each part's barriers see its whole block
        if constexpr (kBulk) {
            extern __shared__ __align__(128) uint8_t rings[];
            stream_part_bulk<DotS, kMaxMatrices>(p.streamed, GridPart{0, p.streamed_blocks}, rings);
        } else {
            stream_part<DotS, kMaxMatrices, kStreamRows, kStreamUnroll>(p.streamed, GridPart{0, p.streamed_blocks});
        }
    } else {
        direct_part<DotD, DotD::kAlign, kMaxMatrices, 1>(p.direct, GridPart{p.streamed_blocks, gridDim.x - p.streamed_blocks},
                                                         table, red);
    }
}

// The pair's grid (pair_grid: one wave, split by bytes) and its launch.
template <auto Kernel, int SharedBytes>
void launch_pair_grid(PairKernelArgs& p, double s_bytes, int64_t stream_units, double d_bytes, cudaStream_t stream) {
    const int64_t max_blocks = static_cast<int64_t>(sm_count()) * blocks_per_sm<Kernel, SharedBytes>();
    const PairGrid grid = pair_grid(max_blocks, s_bytes, stream_units, d_bytes, p.direct.n_block_tiles);
    p.streamed_blocks = grid.streamed_blocks;
    (void)launch_chained(Kernel, grid.direct_blocks + grid.streamed_blocks, kThreads, SharedBytes, stream, p);
}

// DENSE_CUDA_GEMV_PAIR=0 launches every list per format and order, as before the pairs (read once;
// for A/B measurements).
inline bool pair_launches_enabled() {
    static const bool enabled = env_switch_on("DENSE_CUDA_GEMV_PAIR");
    return enabled;
}

// Whether this arch's tuning streams any matrix, which a pair needs (its large group is streamed).
inline constexpr bool kPairLaunches = tuning::kGemvStreamLayout && tuning::kGemvDirectLoads;

// The list as pair (DotS streamed, DotD beside it) of types (s_type, d_type); false when it does
// not fit (gemv_pair_plan.hpp), nothing enqueued.
template <class DotS, class DotD>
bool launch_pair(const uint32_t* types, const GemvLaunch* calls, int n, uint32_t s_type, uint32_t d_type,
                 cudaStream_t stream, cudaError_t& err) {
    if constexpr (!kPairLaunches) {
        (void)types;
        (void)calls;
        (void)n;
        (void)s_type;
        (void)d_type;
        (void)stream;
        (void)err;
        return false;  // this arch streams no matrix: nothing to pair
    } else {
        if (!pair_launches_enabled() || n < 2 || n > 16 || calls[0].in <= 0) return false;
        ListMatrixOrder orders[16];
        for (int i = 0; i < n; ++i) {
            const GemvLaunch& c = calls[i];
            if (c.accumulate || c.in != calls[0].in || c.act != calls[0].act) return false;
            ListMatrixOrder& o = orders[i];
            o.type = types[i];
            o.rows = c.out;
            o.bytes = static_cast<double>(c.out) * static_cast<double>(c.row_bytes);
            o.direct_ok = reinterpret_cast<uintptr_t>(c.weight) % 16 == 0 && c.in % kStepElems == 0;
            SumOrder so{};
            if (types[i] == s_type) so = sum_order<DotS>(c.out, c.in, c.weight);
            else if (types[i] == d_type) so = sum_order<DotD>(c.out, c.in, c.weight);
            else return false;
            o.ks = so.ks;
            o.strided = so.strided != 0;
        }
        const PairPlan plan = plan_pair(orders, n, s_type, d_type, kMaxMatrices);
        if (!plan.ok) return false;

        PairKernelArgs p{};
        double s_bytes = 0, d_bytes = 0;
        p.streamed = launch_args<DotS>(calls[plan.streamed[0]], calls[0].in);
        for (int j = 0; j < plan.n_streamed; ++j) {
            add_matrix(p.streamed, calls[plan.streamed[j]], 1);
            s_bytes += orders[plan.streamed[j]].bytes;
        }
        const int64_t tasks = number_stream_tasks(p.streamed);
        p.direct = launch_args<DotD>(calls[plan.direct[0]], calls[0].in);
        for (int j = 0; j < plan.n_direct; ++j) {
            add_matrix(p.direct, calls[plan.direct[j]], 1);
            d_bytes += orders[plan.direct[j]].bytes;
        }

        const int64_t stream_units = (tasks + kWarps - 1) / kWarps;
        bool bulk = false;
        if constexpr (tuning::kGemvStreamBulkCopies) {
            bulk = stream_bulk_enabled<DotS>();
            if (bulk)
                launch_pair_grid<gemv_pair_kernel<DotS, DotD, true>, kStreamBulkSharedBytes<DotS>>(p, s_bytes, stream_units,
                                                                                                   d_bytes, stream);
        }
        if (!bulk) launch_pair_grid<gemv_pair_kernel<DotS, DotD, false>, 0>(p, s_bytes, stream_units, d_bytes, stream);
        err = cudaGetLastError();
        return true;
    }
}

DENSE_GEMV_FLAVOR_END
}  // namespace dense::cuda::gemv

// One GemvPair entry (gemv_launchers.hpp) for formats S (streamed) and D beside it.
#define DENSE_GEMV_PAIR(S, D, s_type, d_type)                                                              \
    dense::cuda::GemvPair {                                                                                \
        s_type, d_type,                                                                                    \
            [](const uint32_t* types, const dense::cuda::GemvLaunch* calls, int n, cudaStream_t stream,    \
               cudaError_t& err) {                                                                         \
                return dense::cuda::gemv::launch_pair<dense::cuda::gemv::S, dense::cuda::gemv::D>(         \
                    types, calls, n, s_type, d_type, stream, err);                                         \
            }                                                                                              \
    }
