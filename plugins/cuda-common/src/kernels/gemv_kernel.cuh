// The one quantized GEMV kernel (dst = W x or dst += W x, W quantized, x in Q8_32), instantiated per
// format by the gemv_*.cu files with that format's Dot (gemv_dot_*.cuh).
//
// Work decomposition
//   - A warp owns a "row tile" of 8 rows; lane = 4 * row + unit: the 4 lanes of a row split each
//     256-element step of it into 4 units of 64 elements (two activation blocks each), so one warp
//     step consumes 8 rows x one super-block (8 x 144 bytes for Q4_K).
//   - A thread block has kWarps (8) warps. Along K a row tile is split over ks in {1, 2, 4, 8} of
//     them (contiguous step ranges, "slices"); the block then handles 8/ks row tiles at a time (a
//     "block tile") and loops over block tiles in a grid-stride fashion, the grid sized so every
//     block gets the same number of tiles. ks is chosen from the shape and per-arch constants
//     (choose_ks), never from the device, so a given shape always sums in the same order.
//   - Weights are read in place, as stored (raw GGUF blocks, no expanded copy): each warp streams
//     its work items (G consecutive steps of its row tile, G chosen per format so an item is about
//     2.3 KB) through a private ring of P shared-memory stages with 16-byte cp.async copies
//     (cache-global: weights do not pollute L1, which keeps the activation). A stage holds, per
//     row, the 16-byte-aligned chunks covering the item's bytes of that row, so data starting at
//     byte offset m (mod 16) in global memory starts at offset m of its slot; the format code then
//     reads its fields with loads of the alignment it can prove (Dot::kAlign, 16 for Q4_K when the
//     matrix is 16-byte aligned) or, for 2-byte-aligned formats and unaligned matrices, with aligned
//     32-bit loads and funnel shifts. The 4 lanes of a row copy that row's chunks (consecutive 16
//     bytes per lane, one bounds check per item), and up to P items are in flight per warp
//     (target_tuning.hpp says how many bytes that is).
//   - IQ codebooks are copied to shared memory once per thread block (lookups are data dependent).
//   - The activation (codes, d, s) is read through the read-only cache: every row reads all of it.
//
// Summation order (deterministic; differs from cpu-ref's block order only, see gemv_common.cuh):
//   each lane adds its terms in step order (term of block 2u, then 2u+1), the 4 lanes of a row are
//   combined by a fixed xor-shuffle tree ((u0+u1)+(u2+u3)), the ks slices in slice order; with
//   accumulate the sum is added to dst last (one rounding).
//   Streamed matrices (see "streamed matrices" below: on sm_90 every quantized format's matrices of
//   >= 4096 rows, 16-byte aligned, whole steps) differ in two places: ks = 8 STRIDED slices (slice j takes steps j, j + 8,
//   j + 16, ... in that order) and the slices combined as a tree
//   (((S0+S1)+(S2+S3))+((S4+S5)+(S6+S7))). sum_order() says which order a matrix gets; the GEMMs
//   (gemm_launch.cuh, gemm_mma.cuh) take it from there too.
//
// Columns (GEMM_Q, gemm_launch.cuh): with C > 1 the kernel multiplies one matrix by up to C
// activations per pass. A warp's step crosses DRAM once for its C columns (staged once in shared
// memory, or loaded once by the direct variant) and is decoded once: each column runs Dot::unit on it
// with its own activation, and the compiler shares the weight loads and decoding of the C inlined
// units (for_columns). Each column keeps its own sum in the order above, so every column is bit for
// bit the GEMV of its activation (the K split is the GEMV's, ks_of of the matrix's rows). C = 1
// compiles to exactly the GEMV's code (see "columns" below).
#pragma once

#include "kernels/bulk_copy.cuh"
#include "kernels/env_switch.hpp"
#include "kernels/launch_chain.cuh"
#include "kernels/gemv_common.cuh"
#include "kernels/gemv_launchers.hpp"
#include "kernels/iq_tables.cuh"
#include "target_tuning.hpp"

#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <type_traits>

namespace dense::cuda::gemv {
DENSE_GEMV_FLAVOR_BEGIN

inline constexpr int kWarps = tuning::kGemvWarps;
inline constexpr int kThreads = 32 * kWarps;
static_assert(kWarps == 8, "the K split uses ks in {1, 2, 4, 8} and 8/ks row tiles per block");

DENSE_GEMV_CONSTEXPR int table_bytes(IqTable t) {
    switch (t) {
        case IqTable::Iq2xsGrid: return 512 * 8;
        case IqTable::Iq2sGrid: return 1024 * 8;
        case IqTable::Iq3xxsGrid: return 256 * 4;
        case IqTable::Iq3sGrid: return 512 * 4;
        case IqTable::Iq3xxsSignedGrid: return 16 * 256 * 4;
        case IqTable::Iq3sSignedGrid: return 16 * 512 * 4;
        default: return 0;
    }
}

// Static shared memory a kernel declares for codebook t (16 bytes for none: no zero-size array).
DENSE_GEMV_CONSTEXPR int table_smem(IqTable t) {
    return table_bytes(t) > 0 ? table_bytes(t) : 16;
}

// Shared-memory geometry of a format's kernel. A warp's work item is G consecutive steps of its
// row tile (G x 8 rows x step bytes, about kGemvItemBytes); its ring holds P items. C columns (GEMM)
// need C times the K-split partials; where that leaves too little room, G (or P) shrinks, which
// changes how the steps are batched into copies, never the order in which they are summed.
template <class Dot, int C = 1>
struct Staging {
    // 16-byte chunks covering g steps of one row at any start offset: ceil((15 + bytes) / 16).
    static DENSE_GEMV_CONSTEXPR int max_chunks(int g) { return (g * Dot::kStepBytes + 30) / 16; }
    // One more chunk of room for the funnel-shift loads that read a word past the data, and an odd
    // number of chunks so the 8 row slots start in 8 different 16-byte bank groups.
    static DENSE_GEMV_CONSTEXPR int slot_bytes(int g) { return 16 * ((max_chunks(g) + 1) | 1); }
    static DENSE_GEMV_CONSTEXPR int shared_bytes(int g, int stages) {
        return kWarps * stages * kRowsPerWarp * slot_bytes(g) + table_bytes(Dot::kTable) +
               2 * C * kWarps * kRowsPerWarp * 4;
    }
    static DENSE_GEMV_CONSTEXPR int pick_group() {
        int g = tuning::kGemvItemBytes / (kRowsPerWarp * Dot::kStepBytes);
        g = g < 1 ? 1 : (g > 4 ? 4 : g);
        while (g > 1 && shared_bytes(g, 2) > tuning::kGemvMaxSharedBytes) --g;
        return g;
    }
    static DENSE_GEMV_CONSTEXPR int pick_stages(int g) {
        const int item = g * kRowsPerWarp * Dot::kStepBytes;
        int p = (tuning::kGemvBytesInFlightPerWarp + item - 1) / item;
        p = p < 2 ? 2 : (p > tuning::kGemvMaxStages ? tuning::kGemvMaxStages : p);
        while (p > 2 && shared_bytes(g, p) > tuning::kGemvMaxSharedBytes) --p;
        return p;
    }
    static constexpr int kGroup = pick_group();
    static constexpr int kStages = pick_stages(kGroup);
    static constexpr int kMaxChunks = max_chunks(kGroup);
    static constexpr int kSlotBytes = slot_bytes(kGroup);
    static constexpr int kStageBytes = kRowsPerWarp * kSlotBytes;
    static constexpr int kTableBytes = table_bytes(Dot::kTable);
    static constexpr int kSharedBytes = shared_bytes(kGroup, kStages);
    static_assert(kSharedBytes <= tuning::kGemvMaxSharedBytes, "two stages of one step must fit in shared memory");
};

// One matrix of a launch. A launch multiplies up to kMaxMatrices matrices of one format by the same
// activation (GEMV_Q_MULTI: the small ones then cost no kernel start and tail of their own; a pair
// launch, gemv_pair.cuh, runs two such groups of different formats or orders); block tiles are
// numbered matrix after matrix, [tile_end of the one before, tile_end).
inline constexpr int kMaxMatrices = 4;
struct GemvMatrix {
    const uint8_t* w;      // row 0
    uintptr_t w_begin;     // [w_begin, w_end): the whole matrix, never read outside
    uintptr_t w_end;
    int64_t rows;
    float* dst;
    int64_t tile_end;      // one past its last block tile
};

struct GemvKernelArgs {
    GemvMatrix mats[kMaxMatrices];
    int n_mats;            // 1 .. kMaxMatrices
    int64_t row_bytes;     // the same for every matrix: one format, one input length
    int steps;             // ceil(in / 256)
    int act_blocks;        // in / 32
    int last_step_bytes;   // weight bytes of the last step (less than a step when in % 256 != 0)
    int ks;                // warps per row tile along K
    int strided;           // 1: the slices are strided and tree-combined (streamed matrices, ks 8)
    int64_t n_block_tiles; // sum over the matrices of ceil(ceil(rows / 8) / (8 / ks))
    ActView act;
    int accumulate;
    // GEMM only (kernels of C > 1 columns, gemm_launch.cuh; a GEMV leaves them 0): `act` is the whole
    // Q8_32 vector of n_cols activations (column j: codes at q + j IN, scales at d + j IN/32 and
    // s + j IN/32), column j of dst starts at mats[0].dst + j dst_col_stride. Block tiles are virtual:
    // tile t is block tile t / n_groups of the matrix for columns [C (t % n_groups), + C), so the
    // column groups of one row tile run side by side and read its weights from DRAM once.
    int n_cols;
    int n_groups;
    int64_t dst_col_stride;  // floats
    int act_pairs_aligned;   // IN/32 even: every column's (d, s) pairs are 8-byte aligned
};

// Which matrix block tile `bt` belongs to, and the first row of that tile in it (block tiles of
// `tile_rows` rows). Matrix fields are then read as p.mats[m].x: the arguments are a
// __grid_constant__, so the indexed read comes from the constant bank, no local copy. M is the
// kernel's most matrices per launch: 1 for a lone GEMV, where m is the constant 0 and the kernel
// compiles to the single-matrix code (the list bookkeeping costs registers the K loop needs: with
// it, the lone-GEMV micro-bench ran ~5 % slower on the H200, docs/perf-notes.md session 12).
struct TileAt {
    int m;
    int64_t row0;
};
// With `row_in_tile` = the row's offset inside its block tile (rws row tiles of 8 rows). C > 1 (a
// GEMM, one matrix): `bt` is a virtual tile (GemvKernelArgs), its columns come from column_group.
// The matrix of work unit t (units numbered matrix after matrix, mats[j].tile_end one past matrix
// j's last) and the number of its first unit: block tiles here, warp tasks for a streamed launch.
struct MatrixAt {
    int m;
    int64_t begin;
};
template <int M>
__device__ __forceinline__ MatrixAt matrix_of(const GemvKernelArgs& p, int64_t t) {
    int m = 0;
    int64_t begin = 0;
#pragma unroll
    for (int j = 0; j + 1 < M; ++j)
        if (j + 1 < p.n_mats && t >= p.mats[j].tile_end) {  // tile_end increases with j
            m = j + 1;
            begin = p.mats[j].tile_end;
        }
    return {m, begin};
}

template <int M, int C = 1>
__device__ __forceinline__ TileAt tile_at(const GemvKernelArgs& p, int64_t bt, int rws, int row_in_tile) {
    if constexpr (C > 1) {
        static_assert(M == 1, "a GEMM multiplies one matrix");
        return {0, bt / p.n_groups * rws * kRowsPerWarp + row_in_tile};
    } else if constexpr (M == 1) {
        return {0, bt * rws * kRowsPerWarp + row_in_tile};  // the single-matrix arithmetic
    } else {
        const MatrixAt at = matrix_of<M>(p, bt);
        return {at.m, (bt - at.begin) * rws * kRowsPerWarp + row_in_tile};
    }
}

// ---- the K slices of the summation order (sum_order below) ---------------------------------------
// The steps of slice kw of ks, in the order its lane chains add them: [begin, end) by inc. Contiguous
// ranges; for a streamed matrix (strided) steps kw, kw + ks, kw + 2 ks, ...
struct SliceSteps {
    int begin;
    int end;
    int inc;
};
__device__ __forceinline__ SliceSteps slice_steps(int steps, int ks, int kw, int strided) {
    if (strided) return {kw, steps, ks};
    return {static_cast<int>(static_cast<int64_t>(steps) * kw / ks),
            static_cast<int>(static_cast<int64_t>(steps) * (kw + 1) / ks), 1};
}

// The K split of a streamed matrix (gemv_stream_kernel below): 8 strided slices, one per 4 lanes of
// a warp.
inline constexpr int kStreamSlices = 8;

// part(first) .. part(first + N - 1) added as a pairwise tree: (p0+p1)+(p2+p3), and so on up. For
// N = kStreamSlices that is a streamed GEMV's xor-shuffle tree.
template <int N, class Part>
__device__ __forceinline__ float tree_sum(Part&& part, int first = 0) {
    static_assert(N >= 1 && (N & (N - 1)) == 0, "a pairwise tree over a power of two");
    if constexpr (N == 1) {
        return part(first);
    } else {
        return add(tree_sum<N / 2>(part, first), tree_sum<N / 2>(part, first + N / 2));
    }
}

// One output's value from its ks slice partials part(0) .. part(ks - 1): added in slice order from
// slice 0; for a streamed matrix (ks = kStreamSlices) as ((S0+S1)+(S2+S3))+((S4+S5)+(S6+S7)), the
// xor tree of its GEMV.
template <class Part>
__device__ __forceinline__ float add_slices(int ks, int strided, Part&& part) {
    if (strided) return tree_sum<kStreamSlices>(part);
    float sum = part(0);
    for (int j = 1; j < ks; ++j) sum = add(sum, part(j));
    return sum;
}

// ---- columns (GEMM) ------------------------------------------------------------------------------
// A kernel of C > 1 columns multiplies one matrix by C activations of a GEMM (gemm_launch.cuh). Each
// column is summed exactly like a GEMV of that activation alone: the same terms (Dot::unit on the same
// weight bytes), added per lane in step order, by the same shuffle tree, the K slices in order.
// C = 1 is the GEMV, and its code must stay what it was (the lone-GEMV micro-bench is sensitive to
// it, docs/perf-notes.md session 12): the kernels keep the GEMV's own statements under
// `if constexpr (C == 1)` and a plain float sum. That is checked on the cubin's bytes: a loop of one
// column, an array of one sum, or a lambda or helper taking the sum by reference each reorder the
// GEMV's instructions.

// A lane's sums, one per column; `ColumnSums<C> acc{}` starts them at 0.
template <int C>
using ColumnSums = std::conditional_t<C == 1, float, float[C]>;

// The columns of a virtual tile: the first, and how many exist (the last group may be short). Both
// are block-uniform. A GEMV has nothing to carry.
template <int C>
struct ColumnGroup {
    int col0 = 0;
    int n = 0;
};
template <>
struct ColumnGroup<1> {};

template <int C>
__device__ __forceinline__ ColumnGroup<C> column_group(const GemvKernelArgs& p, int64_t bt) {
    if constexpr (C == 1) {
        (void)p;
        (void)bt;
        return {};
    } else {
        const int col0 = static_cast<int>(bt % p.n_groups) * C;
        return {col0, min(C, p.n_cols - col0)};
    }
}

// f(c, column) for the columns c of group g in order, unrolled (C > 1 only). Column 0 always exists
// and a later column runs only after the one before (a break, not a test per column), so column 0's
// code dominates the others' and the compiler reuses what they share with it: the step's weight
// words and their decoding (gemv_common.cuh, load_column_pair below say what else that needs).
template <int C, class F>
__device__ __forceinline__ void for_columns(const ColumnGroup<C>& g, F&& f) {
    static_assert(C > 1, "a GEMV runs its own statements");
    f(0, g.col0);
#pragma unroll
    for (int c = 1; c < C; ++c) {
        if (c >= g.n) break;
        f(c, g.col0 + c);
    }
}

// The activation of column `col`.
__device__ __forceinline__ ActView column_act(const GemvKernelArgs& p, int col) {
    const int64_t blocks = static_cast<int64_t>(col) * p.act_blocks;
    return {p.act.q + 32 * blocks, p.act.d + blocks, p.act.s + blocks};
}

// Row `row` of column `col` of the matrix gets `v` (or += v).
__device__ __forceinline__ void store_column(const GemvKernelArgs& p, const GemvMatrix& mat, int col, int64_t row,
                                             float v) {
    float* const dst = mat.dst + static_cast<int64_t>(col) * p.dst_col_stride;
    dst[row] = p.accumulate ? add(dst[row], v) : v;
}

// Activation block b of a column into half k of `a`; blocks b, b + 1 (b even) of column `col` into
// both halves. Plain loads (L1-cached like __ldg's), because __ldg is an `asm volatile` statement: the
// compiler could not reuse the weight words and decoding of the column before across it, and would
// decode the step again for every column. A column past the first starts IN/32 scale floats further
// on, so for odd IN/32 its (d, s) pairs are only 4-byte aligned: then single loads (the same values).
__device__ __forceinline__ void load_column_block(const ActView& act, int64_t b, ActUnit& a, int k) {
    const int4* src = reinterpret_cast<const int4*>(act.q + 32 * b);
#pragma unroll
    for (int i = 0; i < 2; ++i) {
        const int4 v = src[i];
        a.q[8 * k + 4 * i + 0] = static_cast<uint32_t>(v.x);
        a.q[8 * k + 4 * i + 1] = static_cast<uint32_t>(v.y);
        a.q[8 * k + 4 * i + 2] = static_cast<uint32_t>(v.z);
        a.q[8 * k + 4 * i + 3] = static_cast<uint32_t>(v.w);
    }
    a.d[k] = act.d[b];
    a.s[k] = act.s[b];
}

__device__ __forceinline__ void load_column_pair(const GemvKernelArgs& p, int col, int64_t b, ActUnit& a) {
    const ActView act = column_act(p, col);
    if (p.act_pairs_aligned) {
        const int4* src = reinterpret_cast<const int4*>(act.q + 32 * b);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const int4 v = src[i];
            a.q[4 * i + 0] = static_cast<uint32_t>(v.x);
            a.q[4 * i + 1] = static_cast<uint32_t>(v.y);
            a.q[4 * i + 2] = static_cast<uint32_t>(v.z);
            a.q[4 * i + 3] = static_cast<uint32_t>(v.w);
        }
        const float2 d = *reinterpret_cast<const float2*>(act.d + b);
        const float2 sv = *reinterpret_cast<const float2*>(act.s + b);
        a.d[0] = d.x;
        a.d[1] = d.y;
        a.s[0] = sv.x;
        a.s[1] = sv.y;
    } else {
        load_column_block(act, b, a, 0);
        load_column_block(act, b + 1, a, 1);
    }
}

__device__ __forceinline__ void cp_async16(void* smem_dst, const void* gmem_src) {
    const auto s = static_cast<unsigned>(__cvta_generic_to_shared(smem_dst));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem_src) : "memory");
}
__device__ __forceinline__ void cp_async_commit() {
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}
template <int N>
__device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// The bytes of the 16-byte chunk at `chunk` that lie inside [begin, end), copied one by one (only
// the first and last chunk of a matrix that is not 16-byte aligned at its ends get here).
static __device__ __noinline__ void copy_partial_chunk(uint8_t* dst, uintptr_t chunk, uintptr_t begin, uintptr_t end) {
#pragma unroll 1
    for (int b = 0; b < 16; ++b)
        if (chunk + b >= begin && chunk + b < end) dst[b] = *reinterpret_cast<const uint8_t*>(chunk + b);
}

// dst[0, N) = src[0, N) by every thread of the block, each thread's loads issued together before its
// stores (up to 8 a thread a round): a blockDim-strided copy loop waited for each load before the next
// (ptxas keeps the load, the store and the branch in one iteration), a chain of dependent L2 round
// trips in front of the block, like the IQ3 staging that session 41 removed.
template <class T, int N>
__device__ __forceinline__ void copy_table(T* __restrict__ dst, const T* __restrict__ src) {
    constexpr int kInFlight = 8;
    for (int base = static_cast<int>(threadIdx.x); base < N; base += kInFlight * static_cast<int>(blockDim.x)) {
        T v[kInFlight];
#pragma unroll
        for (int j = 0; j < kInFlight; ++j) {
            const int i = base + j * static_cast<int>(blockDim.x);
            if (i < N) v[j] = src[i];
        }
#pragma unroll
        for (int j = 0; j < kInFlight; ++j) {
            const int i = base + j * static_cast<int>(blockDim.x);
            if (i < N) dst[i] = v[j];
        }
    }
}

// Copies codebook kT into shared memory `at` (all threads of the block; the caller synchronises) and
// points `t` at it, before the kernel waits for the one ahead of it. The signed IQ3 grids are computed
// from the grid: a thread reads one grid entry and writes its 16 signed forms (entries g + s * 2^bits,
// signed_grid_entry's values: the sign masks are constants once the loop is unrolled, so each form is
// two integer operations; a warp's stores of one form are 32 consecutive words). Computing each of the
// 4,096 / 8,192 entries on its own (a grid load, the mask, the signs, one 4-byte store) made a chain of
// 16 / 32 dependent iterations a thread (a blockDim-strided loop, not unrolled) in front of every
// block, and in the token step nothing hid it: H100, session 41, the 27B's tg128 +1.9 % with one grid
// entry a thread, the IQ3_S attn_output 28.0 -> 19.6 us a node in the uncaptured profile
// (docs/perf-notes.md).
template <IqTable kT>
__device__ void stage_table(uint8_t* at, IqTables& t) {
    if constexpr (kT == IqTable::Iq3xxsSignedGrid || kT == IqTable::Iq3sSignedGrid) {
        const uint32_t* src = kT == IqTable::Iq3xxsSignedGrid ? dense_iq3xxs_grid : dense_iq3s_grid;
        auto* dst = reinterpret_cast<uint32_t*>(at);
        constexpr int kGridEntries = table_bytes(kT) / (16 * 4);
        for (int g = threadIdx.x; g < kGridEntries; g += blockDim.x) {
            const uint32_t magnitudes = src[g];
            DENSE_DECODE_UNROLL
            for (int s = 0; s < 16; ++s) dst[s * kGridEntries + g] = apply_signs(magnitudes, sign_bytes4(static_cast<uint32_t>(s)));
        }
        t.signed_grid32 = dst;
    } else if constexpr (kT == IqTable::Iq2xsGrid || kT == IqTable::Iq2sGrid) {
        const uint64_t* src = kT == IqTable::Iq2xsGrid ? dense_iq2xs_grid : dense_iq2s_grid;
        auto* dst = reinterpret_cast<uint64_t*>(at);
        copy_table<uint64_t, table_bytes(kT) / 8>(dst, src);
        t.grid64 = dst;
    } else if constexpr (kT == IqTable::Iq3xxsGrid || kT == IqTable::Iq3sGrid) {
        const uint32_t* src = kT == IqTable::Iq3xxsGrid ? dense_iq3xxs_grid : dense_iq3s_grid;
        auto* dst = reinterpret_cast<uint32_t*>(at);
        copy_table<uint32_t, table_bytes(kT) / 4>(dst, src);
        t.grid32 = dst;
    } else if constexpr (kT == IqTable::Iq4Values) {
        (void)at;
        for (int w = 0; w < 4; ++w) {
            uint32_t v = 0;
            for (int j = 0; j < 4; ++j) {
#if DENSE_GEMV_PURE_ASM
                const int8_t b = dense_kvalues_iq4nl[4 * w + j];
#else
                // Loaded, not folded: as constants, ptxas re-made each table word in a register before
                // every permute that reads it (two extra moves per 4 IQ4 values in the GEMV; H200 SASS,
                // session 19). Loaded once, the words stay in registers.
                const int8_t b = __ldg(&dense_kvalues_iq4nl[4 * w + j]);
#endif
                v |= static_cast<uint32_t>(static_cast<uint8_t>(b)) << (8 * j);
            }
            t.kvalues[w] = v;
        }
    } else {
        (void)at;
        (void)t;
    }
}

// The codebook of Dot (its ring, direct and GEMM kernels).
template <class Dot>
__device__ void stage_tables(uint8_t* at, IqTables& t) {
    stage_table<Dot::kTable>(at, t);
}

// Resident blocks per SM the kernels are compiled for: the GEMV's (64 registers a thread), or for C
// columns the GEMM's, which keeps C sums and a column's activation in registers besides the
// decoded weights.
template <int C>
inline constexpr int kMinBlocksPerSm = C == 1 ? tuning::kGemvMinBlocksPerSm : tuning::kGemmMinBlocksPerSm;

template <class Dot, int A, int M, int C = 1>
__global__ void __launch_bounds__(kThreads, kMinBlocksPerSm<C>) gemv_q_kernel(const __grid_constant__ GemvKernelArgs p) {
    using S = Staging<Dot, C>;
    constexpr int G = S::kGroup;
    constexpr int P = S::kStages;
    constexpr int kChunkIters = (S::kMaxChunks + 3) / 4;  // chunks per lane per item (4 lanes a row)
    extern __shared__ __align__(16) uint8_t smem[];
    const int warp = static_cast<int>(threadIdx.x >> 5);
    const int lane = static_cast<int>(threadIdx.x & 31);
    const int r8 = lane >> 2;  // the lane's row of the tile: it copies and computes that row
    const int u = lane & 3;    // the lane's unit of each step, and its share of the row's chunks
    const int ks = p.ks;
    const int kw = warp % ks;     // slice along K
    const int rw = warp / ks;     // row tile inside the block tile
    const int rws = kWarps / ks;  // row tiles per block tile
    uint8_t* const stages = smem + warp * (P * S::kStageBytes) + r8 * S::kSlotBytes;  // this row's slot
    uint8_t* const table = smem + kWarps * P * S::kStageBytes;
    float* const red = reinterpret_cast<float*>(table + S::kTableBytes);

    const int s_begin = static_cast<int>(static_cast<int64_t>(p.steps) * kw / ks);
    const int n_s = static_cast<int>(static_cast<int64_t>(p.steps) * (kw + 1) / ks) - s_begin;  // >= 1
    const int n_g = (n_s + G - 1) / G;  // items per tile
    const int64_t my_tiles = static_cast<int64_t>(blockIdx.x) < p.n_block_tiles
                                 ? (p.n_block_tiles - 1 - blockIdx.x) / gridDim.x + 1
                                 : 0;
    const int64_t n_items = my_tiles * n_g;
    // This lane's matrix and row (in that matrix) in the block's t-th tile (rows past a matrix's end:
    // its last row, whose address is harmless; such a lane copies nothing, its results are dropped).
    auto lane_row = [&](int64_t t) -> TileAt {
        return tile_at<M, C>(p, static_cast<int64_t>(blockIdx.x) + t * gridDim.x, rws, rw * kRowsPerWarp + r8);
    };
    auto row_start = [&](const TileAt& at) -> uintptr_t {
        const GemvMatrix& mat = p.mats[at.m];
        return reinterpret_cast<uintptr_t>(mat.w) +
               static_cast<uintptr_t>(min(at.row0, mat.rows - 1)) * static_cast<uintptr_t>(p.row_bytes);
    };

    // ---- copying: the 4 lanes of a row copy its 16-byte chunks u, u + 4, u + 8, ... -------------------
    int64_t issue_tile = 0;
    int issue_group = 0, issue_slot = 0;
    int issue_m;  // the matrix of the item being issued (its bounds guard the copies)
    bool issue_valid;
    uintptr_t issue_base;
    {
        const TileAt at0 = lane_row(0);
        issue_m = at0.m;
        issue_valid = n_items > 0 && at0.row0 < p.mats[at0.m].rows;
        issue_base = row_start(at0);
    }
    // Enqueues the next item (one commit group per item, by the caller) and advances the cursor.
    auto issue_next = [&]() {
        const int step0 = s_begin + issue_group * G;
        const int nsteps = min(G, s_begin + n_s - step0);
        int bytes = nsteps * Dot::kStepBytes;
        if (step0 + nsteps == p.steps) bytes -= Dot::kStepBytes - p.last_step_bytes;
        if (issue_valid) {
            const uintptr_t start = issue_base + static_cast<uintptr_t>(step0) * Dot::kStepBytes;
            const uintptr_t first = start & ~uintptr_t{15};
            const auto n_chunks = static_cast<int>((start + static_cast<uintptr_t>(bytes) - first + 15) >> 4);
            uint8_t* const dst = stages + issue_slot * S::kStageBytes;
            const uintptr_t w_begin = p.mats[issue_m].w_begin, w_end = p.mats[issue_m].w_end;
            if (first >= w_begin && first + 16u * static_cast<uint32_t>(n_chunks) <= w_end) {
#pragma unroll
                for (int k = 0; k < kChunkIters; ++k) {
                    const int c = u + 4 * k;
                    if (c < n_chunks) cp_async16(dst + 16 * c, reinterpret_cast<const void*>(first + 16u * static_cast<uint32_t>(c)));
                }
            } else {  // the first or last row of a matrix that is not 16-byte aligned at its ends
#pragma unroll 1
                for (int c = u; c < n_chunks; c += 4) {
                    const uintptr_t chunk = first + 16u * static_cast<uint32_t>(c);
                    if (chunk >= w_begin && chunk + 16 <= w_end)
                        cp_async16(dst + 16 * c, reinterpret_cast<const void*>(chunk));
                    else
                        copy_partial_chunk(dst + 16 * c, chunk, w_begin, w_end);
                }
            }
        }
        issue_slot = issue_slot + 1 == P ? 0 : issue_slot + 1;
        if (++issue_group == n_g) {
            issue_group = 0;
            ++issue_tile;
            const TileAt at = lane_row(issue_tile);
            issue_m = at.m;
            issue_valid = at.row0 < p.mats[at.m].rows;
            issue_base = row_start(at);
        }
    };

    // Prologue: the first P - 1 items in flight, then the codebook (overlapping them). Weights and
    // codebooks are immutable, so this runs before wait_for_producers(): with chained launches
    // (launch_chain.cuh) the weight stream starts while the kernel before still finishes.
#pragma unroll
    for (int s = 0; s < P - 1; ++s) {
        if (s < n_items) issue_next();
        cp_async_commit();
    }
    IqTables tables;
    stage_tables<Dot>(table, tables);
    __syncthreads();
    // From here on the activation is read and dst written: both belong to earlier kernels.
    wait_for_producers();
    allow_consumers();

    // ---- computing ----------------------------------------------------------------------------------
    const bool partial_last = p.act_blocks % 8 != 0;  // the last step has fewer than 8 blocks
    int64_t tile = 0;
    int group = 0, slot = 0;
    TileAt at = lane_row(0);
    uintptr_t my_base = row_start(at);
    ColumnGroup<C> cols = column_group<C>(p, blockIdx.x);
    ColumnSums<C> acc{};  // one sum per column, each in the GEMV's order
    for (int64_t i = 0; i < n_items; ++i) {
        if (i + P - 1 < n_items) issue_next();
        cp_async_commit();
        cp_async_wait<P - 1>();  // item i has landed (for this lane's copies) ...
        __syncwarp();            // ... and for every lane's

        if (at.row0 - r8 < p.mats[at.m].rows) {  // warp-uniform: the tile has rows; lanes past the end drop theirs
            const int step0 = s_begin + group * G;
            const int nsteps = min(G, s_begin + n_s - step0);
            const uintptr_t start = my_base + static_cast<uintptr_t>(step0) * Dot::kStepBytes;
            const int mis = A >= 16 ? 0 : static_cast<int>(start & 15u);  // A = 16: the matrix is aligned
            const uint8_t* data = stages + slot * S::kStageBytes + mis;
            int b = step0 * 8 + 2 * u;  // this unit's first activation block
#pragma unroll 1
            for (int g = 0; g < nsteps; ++g, data += Dot::kStepBytes, b += 8) {
                ActUnit a;
                float term[2];
                if (!partial_last || step0 + g < p.steps - 1) {
                    if constexpr (C == 1) {
                        load_act_pair(p.act, b, a);
                        Dot::template unit<A>(data, u, a, tables, term);
                        acc = add(add(acc, term[0]), term[1]);
                    } else {  // the step's staged bytes serve every column: its decode is common to them
                        for_columns<C>(cols, [&](int c, int col) {
                            load_column_pair(p, col, b, a);
                            Dot::template unit<A>(data, u, a, tables, term);
                            acc[c] = add(add(acc[c], term[0]), term[1]);
                        });
                    }
                } else {  // a partial last step: blocks past the end read the last one, terms dropped
                    if constexpr (C == 1) {
                        load_act_block(p.act, min(b, p.act_blocks - 1), a, 0);
                        load_act_block(p.act, min(b + 1, p.act_blocks - 1), a, 1);
                        Dot::template unit<A>(data, u, a, tables, term);
                        if (b < p.act_blocks) acc = add(acc, term[0]);
                        if (b + 1 < p.act_blocks) acc = add(acc, term[1]);
                    } else {
                        for_columns<C>(cols, [&](int c, int col) {
                            const ActView act = column_act(p, col);
                            load_column_block(act, min(b, p.act_blocks - 1), a, 0);
                            load_column_block(act, min(b + 1, p.act_blocks - 1), a, 1);
                            Dot::template unit<A>(data, u, a, tables, term);
                            if (b < p.act_blocks) acc[c] = add(acc[c], term[0]);
                            if (b + 1 < p.act_blocks) acc[c] = add(acc[c], term[1]);
                        });
                    }
                }
            }
        }
        __syncwarp();  // everyone is done with this slot before it is refilled
        slot = slot + 1 == P ? 0 : slot + 1;

        if (++group == n_g) {  // the warp's slice of this row tile is complete
            group = 0;
            if constexpr (C == 1) {
                acc = add(acc, __shfl_xor_sync(0xFFFFFFFFu, acc, 1));
                acc = add(acc, __shfl_xor_sync(0xFFFFFFFFu, acc, 2));
            } else {
                for_columns<C>(cols, [&](int c, int) {
                    acc[c] = add(acc[c], __shfl_xor_sync(0xFFFFFFFFu, acc[c], 1));
                    acc[c] = add(acc[c], __shfl_xor_sync(0xFFFFFFFFu, acc[c], 2));
                });
            }
            const GemvMatrix& mat = p.mats[at.m];
            if (ks == 1) {
                if constexpr (C == 1) {
                    if (u == 0 && at.row0 < mat.rows) mat.dst[at.row0] = p.accumulate ? add(mat.dst[at.row0], acc) : acc;
                } else {
                    for_columns<C>(cols, [&](int c, int col) {
                        if (u == 0 && at.row0 < mat.rows) store_column(p, mat, col, at.row0, acc[c]);
                    });
                }
            } else {
                // Every warp of the block reaches this barrier once per block tile (they share the
                // tile sequence), so the count matches; the parity buffer lets the next tile's
                // partials land while warp kw = 0 still reads these. Column c's partials sit in
                // their own C-th of each parity half.
                const int parity = static_cast<int>(tile & 1);
                if constexpr (C == 1) {
                    if (u == 0) red[(parity * kWarps + warp) * kRowsPerWarp + r8] = acc;
                } else {
                    for_columns<C>(cols, [&](int c, int) {
                        if (u == 0) red[((parity * C + c) * kWarps + warp) * kRowsPerWarp + r8] = acc[c];
                    });
                }
                __syncthreads();
                if (kw == 0 && lane < kRowsPerWarp) {
                    if constexpr (C == 1) {
                        const float* part = red + (parity * kWarps + rw * ks) * kRowsPerWarp + lane;
                        float sum = part[0];
                        for (int j = 1; j < ks; ++j) sum = add(sum, part[j * kRowsPerWarp]);
                        const int64_t out_row = at.row0 - r8 + lane;
                        if (out_row < mat.rows) mat.dst[out_row] = p.accumulate ? add(mat.dst[out_row], sum) : sum;
                    } else {
                        for_columns<C>(cols, [&](int c, int col) {
                            const float* part = red + ((parity * C + c) * kWarps + rw * ks) * kRowsPerWarp + lane;
                            float sum = part[0];
                            for (int j = 1; j < ks; ++j) sum = add(sum, part[j * kRowsPerWarp]);
                            const int64_t out_row = at.row0 - r8 + lane;
                            if (out_row < mat.rows) store_column(p, mat, col, out_row, sum);
                        });
                    }
                }
            }
            if constexpr (C == 1) {
                acc = 0.0f;
            } else {
#pragma unroll
                for (int c = 0; c < C; ++c) acc[c] = 0.0f;
            }
            ++tile;
            at = lane_row(tile);
            my_base = row_start(at);
            cols = column_group<C>(p, static_cast<int64_t>(blockIdx.x) + tile * gridDim.x);
        }
    }
    cp_async_wait<0>();
}

// ---- the direct variant -----------------------------------------------------------------------------
// The same work decomposition, summation order and results as gemv_q_kernel (8 rows x 4 units per
// warp, the same K slices for the same ks), but each lane reads its unit's weight words straight from
// global memory into registers, two steps per iteration, instead of through the shared-memory ring.
// For formats whose unit reads a few wide, aligned fields (Q4_K, Q5_K, IQ4_XS: 8/16-byte loads) that
// saves the copy bookkeeping and the shared-memory round trip, and measured 10-25 % faster on an H200
// at the 27B shapes with >= 4096 rows (docs/perf-notes.md, session 5); for formats read in many small
// or unaligned pieces (Q8_0, Q6_K, Q3_K, IQ2_*) the ring is faster, and for short matrices (1024 rows)
// too. Only for matrices that start 16-byte aligned and whose rows are whole steps (in % 256 == 0):
// then every load stays inside the matrix, since a unit at A >= 8 reads its step's own bytes only.
// DENSE_CUDA_GEMV_DIRECT=0 keeps every format on the ring (read once; for A/B measurements).
inline bool direct_loads_enabled() {
    static const bool enabled = env_switch_on("DENSE_CUDA_GEMV_DIRECT");
    return enabled;
}

// Whether format D declares kDirectLoads = true (the pack's CUDA code is C++17: a trait, not a concept).
template <class D, class = void>
struct DirectLoadFormat : std::false_type {};
template <class D>
struct DirectLoadFormat<D, std::void_t<decltype(D::kDirectLoads)>> : std::bool_constant<D::kDirectLoads> {};

// The blocks a kernel's work is spread over: the whole grid (WholeGrid, every kernel of one
// format), or one part of it (GridPart, gemv_pair.cuh). Read where the work needs them, as the
// kernels read blockIdx / gridDim: with the values passed in, ptxas scheduled the unchanged kernels
// differently. With these every gemv_q / gemv_direct / GEMM kernel compiles to the same bytes as
// before the parts existed (sm_90 cubins compared section by section); 9 gemv_stream kernels (of 6
// formats) differ in which constant offsets their loads fold (same sizes but Q8_0's two, +-128
// bytes; the Q4_K one's PTX differs in that address arithmetic only).
struct WholeGrid {
    __device__ __forceinline__ unsigned block() const { return blockIdx.x; }
    __device__ __forceinline__ unsigned blocks() const { return gridDim.x; }
};
struct GridPart {
    unsigned first;  // blocks [first, first + count) of the grid
    unsigned count;
    __device__ __forceinline__ unsigned block() const { return blockIdx.x - first; }
    __device__ __forceinline__ unsigned blocks() const { return count; }
};

// Static shared memory of a part's codebook (16 bytes for a format without one).
template <class Dot>
inline constexpr int kTableSmem = table_smem(Dot::kTable);

// The direct variant's work on `grid`'s blocks (gemv_direct_kernel: the whole grid; gemv_pair_kernel:
// one part of it). `table` (kTableSmem<Dot> bytes) and `red` are the block's shared memory. Every
// thread of the block calls it (it has block barriers).
template <class Dot, int A, int M, int C, class Grid>
__device__ __forceinline__ void direct_part(const GemvKernelArgs& p, const Grid& grid, uint8_t* table,
                                            float (*red)[C][kWarps][kRowsPerWarp]) {
    const int warp = static_cast<int>(threadIdx.x >> 5);
    const int lane = static_cast<int>(threadIdx.x & 31);
    const int r8 = lane >> 2, u = lane & 3;
    const int ks = p.ks, kw = warp % ks, rw = warp / ks, rws = kWarps / ks;
    const int s_begin = static_cast<int>(static_cast<int64_t>(p.steps) * kw / ks);
    const int s_end = static_cast<int>(static_cast<int64_t>(p.steps) * (kw + 1) / ks);
    auto row_base = [&](int m, int64_t row) {
        return p.mats[m].w + static_cast<int64_t>(min(row, p.mats[m].rows - 1)) * p.row_bytes;
    };
    // Weights are immutable: ask L2 for this lane's share of its first two steps before waiting for
    // the kernel before (launch_chain.cuh), so the stream starts during that kernel's tail.
    if (grid.block() < p.n_block_tiles) {
        const TileAt at = tile_at<M, C>(p, grid.block(), rws, rw * kRowsPerWarp + r8);
        const uint8_t* first = row_base(at.m, at.row0) +
                               static_cast<int64_t>(s_begin) * Dot::kStepBytes;
        const int span = min(2, s_end - s_begin) * Dot::kStepBytes;
        for (int off = 32 * u; off < span; off += 128) asm volatile("prefetch.global.L2 [%0];" ::"l"(first + off));
    }
    IqTables tables;
    stage_tables<Dot>(table, tables);
    __syncthreads();
    wait_for_producers();
    allow_consumers();

    int parity = 0;
    for (int64_t bt = grid.block(); bt < p.n_block_tiles; bt += grid.blocks(), parity ^= 1) {
        const TileAt at = tile_at<M, C>(p, bt, rws, rw * kRowsPerWarp);
        const GemvMatrix& mat = p.mats[at.m];
        const int64_t row0 = at.row0;  // the warp's row tile in its matrix
        const int64_t row = row0 + r8;
        const uint8_t* base = row_base(at.m, row);
        const ColumnGroup<C> cols = column_group<C>(p, bt);
        ColumnSums<C> acc{};  // one sum per column, each in the GEMV's order
        if (row0 < mat.rows) {  // warp-uniform; lanes of rows past the end read the last row, dropped
            int s = s_begin;
            if constexpr (C == 1) {
                for (; s + 2 <= s_end; s += 2) {
#pragma unroll
                    for (int j = 0; j < 2; ++j) {
                        ActUnit a;
                        load_act_pair(p.act, (s + j) * 8 + 2 * u, a);
                        float term[2];
                        Dot::template unit<A>(base + static_cast<int64_t>(s + j) * Dot::kStepBytes, u, a, tables, term);
                        acc = add(add(acc, term[0]), term[1]);
                    }
                }
                if (s < s_end) {
                    ActUnit a;
                    load_act_pair(p.act, s * 8 + 2 * u, a);
                    float term[2];
                    Dot::template unit<A>(base + static_cast<int64_t>(s) * Dot::kStepBytes, u, a, tables, term);
                    acc = add(add(acc, term[0]), term[1]);
                }
            } else {
                // The terms of step s_at for every column: the step's weight words serve them all.
                auto step_terms = [&](int s_at) {
                    const uint8_t* step = base + static_cast<int64_t>(s_at) * Dot::kStepBytes;
                    for_columns<C>(cols, [&](int c, int col) {
                        ActUnit a;
                        load_column_pair(p, col, s_at * 8 + 2 * u, a);
                        float term[2];
                        Dot::template unit<A>(step, u, a, tables, term);
                        acc[c] = add(add(acc[c], term[0]), term[1]);
                    });
                };
                // The slice's steps in the GEMV's order (strided for a streamed matrix), two at a time.
                const SliceSteps sl = slice_steps(p.steps, ks, kw, p.strided);
                for (s = sl.begin; s + sl.inc < sl.end; s += 2 * sl.inc) {
                    step_terms(s);
                    step_terms(s + sl.inc);
                }
                if (s < sl.end) step_terms(s);
            }
        }
        if constexpr (C == 1) {
            acc = add(acc, __shfl_xor_sync(0xFFFFFFFFu, acc, 1));
            acc = add(acc, __shfl_xor_sync(0xFFFFFFFFu, acc, 2));
        } else {
            for_columns<C>(cols, [&](int c, int) {
                acc[c] = add(acc[c], __shfl_xor_sync(0xFFFFFFFFu, acc[c], 1));
                acc[c] = add(acc[c], __shfl_xor_sync(0xFFFFFFFFu, acc[c], 2));
            });
        }
        if (ks == 1) {
            if constexpr (C == 1) {
                if (u == 0 && row < mat.rows) mat.dst[row] = p.accumulate ? add(mat.dst[row], acc) : acc;
            } else {
                for_columns<C>(cols, [&](int c, int col) {
                    if (u == 0 && row < mat.rows) store_column(p, mat, col, row, acc[c]);
                });
            }
        } else {
            // As in gemv_q_kernel: every warp of the block passes this barrier once per block tile;
            // the parity buffer lets the next tile's partials land while these are read.
            if constexpr (C == 1) {
                if (u == 0) red[parity][0][warp][r8] = acc;
            } else {
                for_columns<C>(cols, [&](int c, int) {
                    if (u == 0) red[parity][c][warp][r8] = acc[c];
                });
            }
            __syncthreads();
            if (kw == 0 && lane < kRowsPerWarp) {
                if constexpr (C == 1) {
                    float sum = red[parity][0][rw * ks][lane];
                    for (int j = 1; j < ks; ++j) sum = add(sum, red[parity][0][rw * ks + j][lane]);
                    const int64_t out_row = row0 + lane;
                    if (out_row < mat.rows) mat.dst[out_row] = p.accumulate ? add(mat.dst[out_row], sum) : sum;
                } else {
                    for_columns<C>(cols, [&](int c, int col) {
                        const float sum = add_slices(ks, p.strided, [&](int j) { return red[parity][c][rw * ks + j][lane]; });
                        const int64_t out_row = row0 + lane;
                        if (out_row < mat.rows) store_column(p, mat, col, out_row, sum);
                    });
                }
            }
        }
    }
}

template <class Dot, int A, int M, int C = 1>
__global__ void __launch_bounds__(kThreads, kMinBlocksPerSm<C>) gemv_direct_kernel(const __grid_constant__ GemvKernelArgs p) {
    // A >= 8: the direct GEMV / GEMM of the direct-load formats. A < 8 (the ring formats): the dp4a
    // GEMM of a streamed matrix (launch_gemv_args), the one dp4a kernel with strided slices; and
    // the unstreamed matrices of a pair launch (gemv_pair.cuh).
    __shared__ __align__(16) uint8_t table[kTableSmem<Dot>];
    __shared__ float red[2][C][kWarps][kRowsPerWarp];
    direct_part<Dot, A, M, C>(p, WholeGrid{}, table, red);
}

// Multiprocessors of the current device (cached per device ordinal).
inline int sm_count() {
    static std::atomic<int> cache[64];  // zero-initialised (static storage)
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || dev < 0) return 1;
    if (dev < 64) {
        const int cached = cache[dev].load(std::memory_order_relaxed);
        if (cached > 0) return cached;
    }
    int n = 0;
    if (cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess || n <= 0) return 1;
    if (dev < 64) cache[dev].store(n, std::memory_order_relaxed);
    return n;
}

// Resident thread blocks per multiprocessor of one kernel instantiation (asked once per kernel).
template <auto Kernel, int SharedBytes>
int blocks_per_sm() {
    static const int n = [] {
        // A block whose static plus dynamic shared memory passes the 48 KB a launch gets by default
        // (the bulk-copy rings; IQ3_S's beside its 32 KB codebook) launches only after the kernel
        // opts in: once, before the occupancy query and every launch, which all come through here.
        // If that fails, the launch fails and reports it.
        if (SharedBytes > 0) {
            cudaFuncAttributes attr{};
            if (cudaFuncGetAttributes(&attr, Kernel) != cudaSuccess ||
                (attr.sharedSizeBytes + SharedBytes > 48 * 1024 &&
                 cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, SharedBytes) != cudaSuccess)) {
                (void)cudaGetLastError();
                return 1;
            }
        }
        int b = 0;
        if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, Kernel, kThreads, SharedBytes) != cudaSuccess || b <= 0) {
            (void)cudaGetLastError();
            return 1;
        }
        return b;
    }();
    return n;
}

// Warps per row tile along K (1, 2, 4 or 8, at most the steps of a row). More splits mean more,
// shorter warp tasks: better latency hiding and fewer idle slots in the last round, at the cost of
// a block barrier and a partial-sum exchange per tile. The choice uses the per-arch constant
// kGemvResidentWarps, never the device, so a shape always sums in the same order: for each ks the
// fraction of resident warp slots busy over the rounds of a balanced grid; the smallest ks within
// 5% of the best wins.
inline int choose_ks(int64_t row_tiles, int steps) {
    const int64_t slots = tuning::kGemvResidentWarps / kWarps;  // resident blocks
    double best = 0.0;
    int best_ks = 1;
    double use[4] = {0, 0, 0, 0};
    for (int i = 0, ks = 1; i < 4; ++i, ks *= 2) {
        if (ks > steps) break;
        const int64_t blocks = (row_tiles + kWarps / ks - 1) / (kWarps / ks);
        const int64_t rounds = (blocks + slots - 1) / slots;
        use[i] = static_cast<double>(blocks) / static_cast<double>(rounds * slots);
        if (use[i] > best) best = use[i];
    }
    for (int i = 0, ks = 1; i < 4; ++i, ks *= 2)
        if (use[i] >= 0.95 * best) {
            best_ks = ks;
            break;
        }
    return best_ks;
}

// Grid: as many blocks as can be resident, but with the block tiles spread evenly (every block gets
// the same number of tiles, give or take one), so no wave of stragglers runs alone.
// `units` is what a block takes per round: block tiles (args.n_block_tiles), or 8 warp tasks of a
// streamed launch.
template <auto Kernel, int SharedBytes>
cudaError_t launch_balanced(const GemvKernelArgs& args, cudaStream_t stream, int64_t units) {
    const int64_t max_blocks = static_cast<int64_t>(sm_count()) * blocks_per_sm<Kernel, SharedBytes>();
    const int64_t per_block = (units + max_blocks - 1) / max_blocks;
    const int64_t blocks = (units + per_block - 1) / per_block;
    (void)launch_chained(Kernel, static_cast<unsigned>(blocks), kThreads, SharedBytes, stream, args);
    return cudaGetLastError();
}
template <auto Kernel, int SharedBytes>
cudaError_t launch_balanced(const GemvKernelArgs& args, cudaStream_t stream) {
    return launch_balanced<Kernel, SharedBytes>(args, stream, args.n_block_tiles);
}

// ---- streamed matrices ------------------------------------------------------------------------------
// The GEMV of Q4_K / Q5_K / IQ4_XS matrices of >= 4096 rows (16-byte aligned, whole steps) where the
// arch enables it (tuning::kGemvStreamLayout), and since session 24 of every other quantized format's
// (tuning::kGemvStreamRingFormats, below): no K split across warps and no block barrier. A warp
// is one row group: lane (j, u) takes unit u of steps j, j + 8, j + 16, ... of the task's
// kStreamRows rows (the lane's activation unit serves them all), so one load instruction of the warp
// reads 8 consecutive steps of a row, kStreamUnroll steps are in flight per lane, and the 32 lanes
// of a row meet by xor shuffles: (u0+u1)+(u2+u3) per slice, then ((S0+S1)+(S2+S3))+((S4+S5)+(S6+S7))
// (IEEE addition is commutative, so every lane ends with the same bits).
// Why 8 slices x 2 rows x 2 steps (experiments/gemv_stream.cu, docs/perf-notes.md sessions 18 and
// 20, H200, µs): session 18's 4 slices (2 row groups of 16 lanes per warp) left the K = 17408 shape
// (ffn_down) with tasks for only ~40 % of the resident warps and a warp load covering 4 steps; 8
// slices double the tasks and the bytes per load instruction. Against 4 slices, same run: IQ4_XS
// 17408 x 5120 19.20 -> 16.88, 5120 x 17408 20.73 -> 16.84; Q4_K 16.75 -> 14.51 and 19.31 -> 14.80
// (85-87 % of the read ceiling); Q5_K 22.11 -> 18.96, 24.44 -> 19.80, 6144 x 5120 9.14 -> 7.50; only
// 10240 x 5120 is 3-9 % slower than 4 slices at 2 x 2. 2 rows per activation load with 2 steps in
// flight was the best shape of 8 slices for every format and shape measured. In the 27B step, same
// run: decode 115.00 tok/s against 105.64 with DENSE_CUDA_GEMV_STREAM=0 (the unstreamed order;
// against session 18's 4 slices ~+3 %, measured on other allocations). The cost
// is on the prompt side: the GEMMs follow the order with 8 warps per tile, 2-3 steps each at
// K = 5120, and pp512 fell ~5 % (~1040 -> ~985); the mma GEMM's warps now walk two adjacent slices
// as one step sequence, +2 % in the same run (gemm_mma.cuh, session 21), which wins part of it back.
// It is a different summation order, so it is part of sum_order(): the GEMMs of those matrices take
// the same strided slices and tree (gemv_direct_kernel with C > 1, gemm_mma.cuh).
// DENSE_CUDA_GEMV_STREAM=0 keeps the old order and kernels (read once; for A/B measurements).
// Session 24: the ring formats (Q6_K, Q3_K, Q2_K, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ4_NL, Q8_0) take
// the same layout on the same matrices (tuning::kGemvStreamRingFormats), their units reading their
// 2-byte-aligned fields straight from global memory (a unit reads its own step's bytes, as whole
// aligned 32-bit words: the last field of a matrix may load up to 4 bytes past its end, which every
// buffer of this pack has as slack, device_api.cpp kReadSlack). experiments/gemv_stream.cu, H200, same run, the
// ring kernel against this layout (8 slices, 2 rows, 2 steps in flight), µs: Q6_K 5120 x 6144 15.64
// -> 14.09, 17408 x 5120 34.60 -> 32.50, 5120 x 17408 41.17 -> 34.76; IQ3_S 15.63 -> 12.12; IQ3_XXS
// ffn_down 35.25 -> 26.49; Q3_K 35.05 -> 28.60 and 40.31 -> 28.06; Q2_K 19.90 -> 14.91 and 22.60 ->
// 14.77; IQ2_XS 27.28 -> 23.63, 32.62 -> 25.08; IQ2_S 28.73 -> 24.73, 34.24 -> 25.73; IQ4_NL 26.70 ->
// 19.94, 30.75 -> 19.78; Q8_0 38.29 -> 29.97, 46.54 -> 32.46 (docs/perf-notes.md, session 24).
// DENSE_CUDA_GEMV_STREAM=0 keeps the old order and kernels for every format; =direct streams only the
// direct-load formats (session 23's orders, for A/B measurements of this change).
enum class StreamLayout { Off, DirectFormats, AllFormats };
inline StreamLayout stream_layout() {
    static const StreamLayout layout = [] {
        const char* v = std::getenv("DENSE_CUDA_GEMV_STREAM");
        if (v != nullptr && std::strcmp(v, "0") == 0) return StreamLayout::Off;
        if (v != nullptr && std::strcmp(v, "direct") == 0) return StreamLayout::DirectFormats;
        return StreamLayout::AllFormats;
    }();
    return layout;
}

// Whether this arch's tuning streams format Dot's large matrices (the run-time switches above aside).
template <class Dot>
inline constexpr bool kStreamableFormat = DirectLoadFormat<Dot>::value
                                              ? tuning::kGemvDirectLoads && tuning::kGemvStreamLayout
                                              : tuning::kGemvStreamRingFormats;

// DENSE_CUDA_GEMV_DIRECT=0 (every format on the ring) turns streaming off too: it reads straight
// from global memory.
template <class Dot>
bool stream_layout_enabled() {
    const StreamLayout layout = stream_layout();
    if (!direct_loads_enabled()) return false;
    if constexpr (DirectLoadFormat<Dot>::value) {
        return layout != StreamLayout::Off;
    } else {
        return layout == StreamLayout::AllFormats;
    }
}

inline constexpr int kStreamGroupLanes = 4 * kStreamSlices;  // lanes of one row group
inline constexpr int kStreamGroupsPerWarp = 32 / kStreamGroupLanes;
inline constexpr int kStreamRows = 2;    // rows of a row group: one activation load serves them
inline constexpr int kStreamUnroll = 2;  // steps in flight per lane

// Warp task t (tasks numbered matrix after matrix, each kStreamGroupsPerWarp x R rows): its matrix and
// first row.
template <int M>
__device__ __forceinline__ TileAt stream_task_at(const GemvKernelArgs& p, int64_t t, int task_rows) {
    const MatrixAt at = matrix_of<M>(p, t);
    return {at.m, (t - at.begin) * task_rows};
}

// The end of a streamed task, in the register and the bulk-copy kernels alike: the R row sums of a row
// group are added over the group's lanes by a fixed xor tree (the order every streamed GEMV and GEMM
// column of the format shares), then lane r of the group writes row row0 + r (rows past the matrix
// were computed on a clamped row and are dropped), adding to dst for a fused residual.
template <int R>
__device__ __forceinline__ void finish_stream_task(float (&acc)[R], int lane, const GemvMatrix& mat, int64_t row0,
                                                   int accumulate) {
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
        for (int m = 1; m < kStreamGroupLanes; m *= 2) acc[r] = add(acc[r], __shfl_xor_sync(0xFFFFFFFFu, acc[r], m));
    const int mine = lane & (kStreamGroupLanes - 1);
    if (mine < R) {
        float v = acc[0];
#pragma unroll
        for (int r = 1; r < R; ++r)
            if (mine == r) v = acc[r];
        const int64_t row = row0 + mine;
        if (row < mat.rows) mat.dst[row] = accumulate ? add(mat.dst[row], v) : v;
    }
}

// The streamed GEMV's work on `grid`'s blocks (gemv_stream_kernel: the whole grid; gemv_pair_kernel:
// one part of it). Every thread of the block calls it (it has a block barrier).
template <class Dot, int M, int R, int UNR, class Grid>
__device__ __forceinline__ void stream_part(const GemvKernelArgs& p, const Grid& grid) {
    // The unit's loads straight from global memory, at the alignment every step of a streamed matrix
    // has (16-byte-aligned matrix, whole steps): Dot::kAlign, or more for Q8_0 and IQ4_NL (step_align).
    constexpr int A = step_align(Dot::kStepBytes);
    static_assert(A >= Dot::kAlign, "a step of a streamed matrix is at least kAlign-aligned");
    constexpr int kTaskRows = kStreamGroupsPerWarp * R;
    constexpr IqTable kTable = StreamTableOf<Dot>::value;  // the IQ3 formats' signed grid, else Dot::kTable
    __shared__ __align__(16) uint8_t table[table_smem(kTable)];
    const int warp = static_cast<int>(threadIdx.x >> 5);
    const int lane = static_cast<int>(threadIdx.x & 31);
    const int u = lane & 3;
    const int slice = (lane >> 2) & (kStreamSlices - 1);
    const int group_row = (lane / kStreamGroupLanes) * R;  // the row group's first row in the task
    const int64_t n_warps = static_cast<int64_t>(grid.blocks()) * kWarps;
    const int64_t first_task = static_cast<int64_t>(grid.block()) * kWarps + warp;
    // Weights are immutable: ask L2 for this lane's unit of its first two steps before waiting for
    // the kernel before (launch_chain.cuh).
    if (first_task < p.n_block_tiles) {
        const TileAt at = stream_task_at<M>(p, first_task, kTaskRows);
        const GemvMatrix& mat = p.mats[at.m];
        const int64_t row = min(at.row0 + group_row, mat.rows - 1);
#pragma unroll
        for (int j = 0; j < 2; ++j) {
            const int st = slice + j * kStreamSlices;
            if (st < p.steps) {
                const uint8_t* step = mat.w + row * p.row_bytes + static_cast<int64_t>(st) * Dot::kStepBytes;
                for (int off = 32 * u; off < Dot::kStepBytes; off += 128) asm volatile("prefetch.global.L2 [%0];" ::"l"(step + off));
            }
        }
    }
    IqTables tables;
    stage_table<kTable>(table, tables);
    __syncthreads();
    wait_for_producers();
    allow_consumers();

    for (int64_t t = first_task; t < p.n_block_tiles; t += n_warps) {  // warp-uniform
        const TileAt at = stream_task_at<M>(p, t, kTaskRows);
        const GemvMatrix& mat = p.mats[at.m];
        const int64_t row0 = at.row0 + group_row;
        const uint8_t* base[R];
#pragma unroll
        for (int r = 0; r < R; ++r) base[r] = mat.w + min(row0 + r, mat.rows - 1) * p.row_bytes;  // past the end: dropped
        float acc[R];
#pragma unroll
        for (int r = 0; r < R; ++r) acc[r] = 0.0f;
#pragma unroll UNR
        for (int st = slice; st < p.steps; st += kStreamSlices) {
            ActUnit a;
            load_act_pair(p.act, st * 8 + 2 * u, a);
#pragma unroll
            for (int r = 0; r < R; ++r) {
                float term[2];
                stream_unit<Dot, A>(base[r] + static_cast<int64_t>(st) * Dot::kStepBytes, u, a, tables, term);
                acc[r] = add(add(acc[r], term[0]), term[1]);
            }
        }
        finish_stream_task<R>(acc, lane, mat, row0, p.accumulate);
    }
}

template <class Dot, int M, int R, int UNR>
__global__ void __launch_bounds__(kThreads, tuning::kGemvStreamMinBlocksPerSm)
    gemv_stream_kernel(const __grid_constant__ GemvKernelArgs p) {
    stream_part<Dot, M, R, UNR>(p, WholeGrid{});
}

// ---- streamed matrices fed by bulk copies (sm_90) ------------------------------------------------
// stream_part's lanes, units and summation order, so the same bits, but a warp's weights reach it
// through shared memory: one lane asks for each stage (the 8 steps x R rows one loop iteration of
// the warp decodes: R bulk copies, one per row) kStreamBulkStages stages ahead, and the 32 lanes
// read the units from there. A bulk copy holds no registers, so the bytes in flight no longer
// compete with the decoder for them (in stream_part each lane keeps 2 steps of 2 rows in registers,
// and Q5_K's 20 words a unit spill at 80 registers). A row's stage is copied from the 16-byte
// boundary at or below its first byte (bulk copies move aligned 16-byte runs) to at most 15 bytes
// past its last (inside every buffer's read slack, device_api.cpp kReadSlack, and never before the
// matrix's 16-byte-aligned start), so a step keeps its address mod 16 and Dot::unit's aligned loads
// stay legal.
inline constexpr int kStreamBulkStages = tuning::kGemvStreamBulkStages;
// A row's piece of a stage: 8 steps, the copy's head and tail (at most 16 bytes together), and 16
// more for the word loads that reach past a unit's last byte (Q6_K's funnel shifts).
template <class Dot>
inline constexpr int kStreamBulkPieceBytes = kStreamSlices * Dot::kStepBytes + 32;
template <class Dot>
inline constexpr int kStreamBulkStageBytes = kStreamRows * kStreamBulkPieceBytes<Dot>;
// The dynamic shared memory of a block: every warp's ring.
template <class Dot>
inline constexpr int kStreamBulkSharedBytes = kWarps * kStreamBulkStages * kStreamBulkStageBytes<Dot>;
static_assert(kStreamGroupsPerWarp == 1, "a bulk stage is one row group's rows");

// Which formats take it is measured per format (experiments/tma_gemv.cu on an H200, session 30, µs
// a GEMV at 5120 x 17408 / 17408 x 5120 / 6144 x 5120 / 5120 x 10240, register loads -> bulk copies):
//   Q8_0    27.7 / 29.6 / 12.3 / 19.0 -> 23.7 / 24.4 /  9.4 / 14.9  (78-62 % of read -> 92-82 %)
//   Q6_K    30.0 / 31.5 / 12.7 / 20.7 -> 29.3 / 28.5 / 10.1 / 19.3
//   IQ3_S   30.7 / 32.3 / 14.4 / 20.3 -> 29.7 / 29.5 / 13.2 / 19.3
//   IQ3_XXS 27.1 / 28.5 / 11.1 / 18.4 -> 27.2 / 27.2 / 10.5 / 18.1
// Q8_0, Q6_K, IQ3_XXS and IQ3_S declare kStreamBulk: their bulk kernels gave the register kernels'
// bits on that H200 (CudaGemv.BulkCopyStreamIsBitIdenticalToRegisterStream; IQ3_S's, whose codebook
// and rings pass 48 KB, after the opt-in below came to count static memory: on an H100, session 31,
// where it ran 30.8 / 32.2 / 14.5 / 20.3 -> 29.8 / 29.6 / 13.4 / 19.3 µs as well).
// The others lose: Q4_K 14.7 / 14.8 / 6.5 / 10.1 -> 17.8 / 17.8 / 6.7 /
// 11.9, IQ4_XS, IQ4_NL, Q2_K and Q5_K (but for ssm_out) alike, Q3_K and the IQ2 formats mostly; a ring
// of 3, 4 or 6 stages at 2 or 1 blocks an SM was slower for every format. The formats that gain are
// the ones whose units need the most load instructions per byte (Q8_0 was the one format bound by the
// load queue, session 29) or the most registers; where the decode is short, the register loads of
// 2 steps x 2 rows overlap better than a ring of 2 stages whose next copy waits for the warp.
template <class D, class = void>
struct StreamBulkOf : std::false_type {};
template <class D>
struct StreamBulkOf<D, std::void_t<decltype(D::kStreamBulk)>> : std::bool_constant<D::kStreamBulk> {};

// Whether a streamed launch of format Dot takes the bulk-copy kernel: where the arch's tuning compiles
// them, for the formats above; DENSE_CUDA_GEMV_BULK=0 for none, =all for every format (the tests'
// bit-for-bit comparison, A/B runs). Read at every launch, so a test can compare them in one process.
template <class Dot>
bool stream_bulk_enabled() {
    if constexpr (!tuning::kGemvStreamBulkCopies) {
        return false;
    } else {
        const char* v = std::getenv("DENSE_CUDA_GEMV_BULK");
        if (v != nullptr && std::strcmp(v, "0") == 0) return false;
        if (v != nullptr && std::strcmp(v, "all") == 0) return true;
        return StreamBulkOf<Dot>::value;
    }
}

// A warp's walk over its stages: its tasks first_task, first_task + n_warps, ..., each `chunks`
// stages of 8 steps.
struct BulkWalk {
    int64_t first_task;
    int64_t n_warps;
    int64_t stages;
    int chunks;
};

// A stage of the walk as (task k of the warp, chunk c of the task), advanced one stage at a time:
// stage g is k * chunks + c, without the 64-bit division per stage that g / chunks compiled to (a
// call of ~25 instructions in the loop, twice a stage with lane 0's request).
struct BulkStageAt {
    int64_t k = 0;
    int c = 0;
    __device__ __forceinline__ void next(int chunks) {
        if (++c == chunks) {
            c = 0;
            ++k;
        }
    }
};

// Lane 0's request for stage s of the walk into `stage`, counted on bar.
template <class Dot, int M>
__device__ __forceinline__ void request_bulk_stage(const GemvKernelArgs& p, const BulkWalk& walk, BulkStageAt s,
                                                   uint8_t* stage, uint64_t* bar) {
    const int64_t k = s.k;
    const int c = s.c;
    const TileAt at = stream_task_at<M>(p, walk.first_task + k * walk.n_warps, kStreamRows);
    const GemvMatrix& mat = p.mats[at.m];
    const int steps = min(kStreamSlices, p.steps - kStreamSlices * c);
    const uint8_t* from[kStreamRows];
    uint32_t bytes[kStreamRows];
    uint32_t total = 0;
#pragma unroll
    for (int r = 0; r < kStreamRows; ++r) {
        const uint8_t* first = mat.w + min(at.row0 + r, mat.rows - 1) * p.row_bytes +
                               static_cast<int64_t>(kStreamSlices * c) * Dot::kStepBytes;
        const uint32_t head = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(first) & 15u);
        from[r] = first - head;
        bytes[r] = (head + static_cast<uint32_t>(steps * Dot::kStepBytes) + 15u) & ~15u;
        total += bytes[r];
    }
    bulk_barrier_expect(bar, total);
#pragma unroll
    for (int r = 0; r < kStreamRows; ++r) bulk_copy_to_shared(stage + r * kStreamBulkPieceBytes<Dot>, from[r], bytes[r], bar);
}

// stream_part over bulk-copied stages; `rings` is the block's dynamic shared memory
// (kStreamBulkSharedBytes<Dot>). Every thread of the block calls it (it has a block barrier).
template <class Dot, int M, class Grid>
__device__ __forceinline__ void stream_part_bulk(const GemvKernelArgs& p, const Grid& grid, uint8_t* rings) {
    constexpr int A = step_align(Dot::kStepBytes);
    constexpr int D = kStreamBulkStages;
    constexpr int R = kStreamRows;
    // Every stage of a row starts a multiple of 8 steps after the row, which keeps its address mod 16.
    static_assert(kStreamSlices * Dot::kStepBytes % 16 == 0, "8 steps are whole 16-byte runs");
    constexpr IqTable kTable = StreamTableOf<Dot>::value;
    __shared__ __align__(16) uint8_t table[table_smem(kTable)];
    __shared__ uint64_t bars[kWarps][D];
    const int warp = static_cast<int>(threadIdx.x >> 5);
    const int lane = static_cast<int>(threadIdx.x & 31);
    const int u = lane & 3;
    const int slice = (lane >> 2) & (kStreamSlices - 1);
    uint8_t* ring = rings + warp * D * kStreamBulkStageBytes<Dot>;
    uint64_t* bar = bars[warp];
    BulkWalk walk;
    walk.n_warps = static_cast<int64_t>(grid.blocks()) * kWarps;
    walk.first_task = static_cast<int64_t>(grid.block()) * kWarps + warp;
    walk.chunks = (p.steps + kStreamSlices - 1) / kStreamSlices;
    const int64_t tasks = walk.first_task < p.n_block_tiles ? (p.n_block_tiles - 1 - walk.first_task) / walk.n_warps + 1 : 0;
    walk.stages = tasks * walk.chunks;
    // Weights are immutable: the ring fills while the kernel ahead finishes (launch_chain.cuh).
    BulkStageAt requested;  // the next stage lane 0 asks for (every lane keeps it: warp-uniform)
    if (lane == 0) {
#pragma unroll
        for (int i = 0; i < D; ++i) bulk_barrier_init(&bar[i]);
        bulk_barrier_init_fence();
    }
    for (int64_t g = 0; g < D && g < walk.stages; ++g) {
        if (lane == 0) request_bulk_stage<Dot, M>(p, walk, requested, ring + g * kStreamBulkStageBytes<Dot>, &bar[g]);
        requested.next(walk.chunks);
    }
    __syncwarp();
    IqTables tables;
    stage_table<kTable>(table, tables);
    __syncthreads();
    wait_for_producers();
    allow_consumers();

    float acc[R];
    uint32_t head[R];
    TileAt at{0, 0};
    BulkStageAt here;  // stage g
    for (int64_t g = 0; g < walk.stages; ++g, here.next(walk.chunks)) {  // warp-uniform
        const int64_t k = here.k;
        const int c = here.c;
        if (c == 0) {
            at = stream_task_at<M>(p, walk.first_task + k * walk.n_warps, kStreamRows);
#pragma unroll
            for (int r = 0; r < R; ++r) {
                acc[r] = 0.0f;
                const uint8_t* row = p.mats[at.m].w + min(at.row0 + r, p.mats[at.m].rows - 1) * p.row_bytes;
                head[r] = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(row) & 15u);
            }
        }
        const int slot = static_cast<int>(g % D);
        const int st = kStreamSlices * c + slice;
        ActUnit a;
        if (st < p.steps) load_act_pair(p.act, st * 8 + 2 * u, a);  // its L1/L2 latency overlaps the wait
        bulk_barrier_wait(&bar[slot], static_cast<uint32_t>((g / D) & 1));
        const uint8_t* stage = ring + slot * kStreamBulkStageBytes<Dot>;
        if (st < p.steps) {
#pragma unroll
            for (int r = 0; r < R; ++r) {
                float term[2];
                stream_unit<Dot, A>(stage + r * kStreamBulkPieceBytes<Dot> + head[r] + slice * Dot::kStepBytes, u, a,
                                    tables, term);
                acc[r] = add(add(acc[r], term[0]), term[1]);
            }
        }
        __syncwarp();  // every lane has read this slot before lane 0 asks for its next stage
        if (g + D < walk.stages) {
            if (lane == 0) request_bulk_stage<Dot, M>(p, walk, requested, ring + slot * kStreamBulkStageBytes<Dot>, &bar[slot]);
            requested.next(walk.chunks);
        }
        if (c == walk.chunks - 1) finish_stream_task<R>(acc, lane, p.mats[at.m], at.row0, p.accumulate);
    }
}

template <class Dot, int M>
__global__ void __launch_bounds__(kThreads, tuning::kGemvStreamBulkMinBlocksPerSm)
    gemv_stream_bulk_kernel(const __grid_constant__ GemvKernelArgs p) {
    extern __shared__ __align__(128) uint8_t rings[];
    stream_part_bulk<Dot, M>(p, WholeGrid{}, rings);
}

// Numbers the warp tasks of kStreamGroupsPerWarp x kStreamRows rows of p's matrices (tile_end,
// n_block_tiles count tasks from here on) and returns how many there are.
inline int64_t number_stream_tasks(GemvKernelArgs& p) {
    constexpr int kTaskRows = kStreamGroupsPerWarp * kStreamRows;
    int64_t tasks = 0;
    for (int m = 0; m < p.n_mats; ++m) {
        tasks += (p.mats[m].rows + kTaskRows - 1) / kTaskRows;
        p.mats[m].tile_end = tasks;
    }
    p.n_block_tiles = tasks;
    return tasks;
}

// The warp tasks spread evenly over as many blocks as can be resident.
template <class Dot, int M>
cudaError_t launch_stream(GemvKernelArgs p, cudaStream_t stream) {
    const int64_t tasks = number_stream_tasks(p);
    if (tasks == 0) return cudaSuccess;
    if constexpr (tuning::kGemvStreamBulkCopies) {
        if (stream_bulk_enabled<Dot>())
            return launch_balanced<gemv_stream_bulk_kernel<Dot, M>, kStreamBulkSharedBytes<Dot>>(p, stream,
                                                                                              (tasks + kWarps - 1) / kWarps);
    }
    return launch_balanced<gemv_stream_kernel<Dot, M, kStreamRows, kStreamUnroll>, 0>(p, stream,
                                                                                     (tasks + kWarps - 1) / kWarps);
}

template <class Dot, int A, int M, int C = 1>
cudaError_t launch_gemv_as(const GemvKernelArgs& args, cudaStream_t stream) {
    return launch_balanced<gemv_q_kernel<Dot, A, M, C>, Staging<Dot, C>::kSharedBytes>(args, stream);
}

// Whether a launch takes the direct variant: the format reads wide aligned fields, this arch's
// tuning says direct loads pay (measured), every matrix is 16-byte aligned with whole steps per row,
// and there are enough rows (below ~4096 rows the ring's deeper prefetch wins: 1024 x 5120 took
// 3.5 us staged vs 3.9 us direct on an H200).
inline constexpr int64_t kDirectMinRows = 4096;

inline bool all_aligned16(const GemvKernelArgs& p) {
    for (int m = 0; m < p.n_mats; ++m)
        if (p.mats[m].w_begin % 16 != 0) return false;
    return true;
}

template <class Dot>
bool use_direct_loads(const GemvKernelArgs& p, int64_t in, int64_t total_rows) {
    if constexpr (DirectLoadFormat<Dot>::value && tuning::kGemvDirectLoads) {
        return all_aligned16(p) && in % kStepElems == 0 && total_rows >= kDirectMinRows && direct_loads_enabled();
    } else {
        (void)p;
        (void)in;
        (void)total_rows;
        return false;
    }
}

// The kernel for filled-in arguments of up to M matrices (C columns: a GEMM's column groups). The
// variants sum in the same order, so which one runs never changes a bit.
template <class Dot, int M, int C = 1>
cudaError_t launch_gemv_args(const GemvKernelArgs& p, int64_t in, int64_t total_rows, cudaStream_t stream) {
    if constexpr (kStreamableFormat<Dot>) {
        // Streamed matrices: their GEMV, or the direct kernel's GEMM, the one dp4a kernel that takes
        // strided slices (sum_order made sure they can be read directly).
        if (p.strided) {
            if constexpr (C == 1) return launch_stream<Dot, M>(p, stream);
            else return launch_balanced<gemv_direct_kernel<Dot, Dot::kAlign, M, C>, 0>(p, stream);
        }
    }
    if constexpr (DirectLoadFormat<Dot>::value && tuning::kGemvDirectLoads) {
        if (use_direct_loads<Dot>(p, in, total_rows))
            return launch_balanced<gemv_direct_kernel<Dot, Dot::kAlign, M, C>, 0>(p, stream);
    }
    if constexpr (Dot::kAlign > 2) {
        // Every step of a 16-byte-aligned matrix is kAlign-aligned (row_bytes is a multiple of the
        // step size, itself a multiple of kAlign); otherwise the any-alignment path.
        if (all_aligned16(p)) return launch_gemv_as<Dot, Dot::kAlign, M, C>(p, stream);
    }
    return launch_gemv_as<Dot, 2, M, C>(p, stream);
}

// The K split a matrix of `rows` rows gets, alone or in a list: its own rows decide it, so a matrix
// sums in the same order whichever launch it is in.
inline int ks_of(int64_t rows, int steps) {
    return choose_ks((rows + kRowsPerWarp - 1) / kRowsPerWarp, steps);
}

// The summation order of one matrix, by the GEMV and both GEMMs: its K split and whether the
// slices are strided (a streamed matrix, above). A function of the format, the shape, the arch's
// tuning, the matrix's alignment and the A/B switches, never of the list it is launched in.
struct SumOrder {
    int ks;
    int strided;
};
template <class Dot>
SumOrder sum_order(int64_t rows, int64_t in, const void* weight) {
    const int steps = static_cast<int>((in + kStepElems - 1) / kStepElems);
    if constexpr (kStreamableFormat<Dot>) {
        if (rows >= kDirectMinRows && in % kStepElems == 0 && steps >= kStreamSlices &&
            reinterpret_cast<uintptr_t>(weight) % 16 == 0 && stream_layout_enabled<Dot>())
            return {kStreamSlices, 1};
    } else {
        (void)weight;
    }
    return {ks_of(rows, steps), 0};
}

// One launch over calls[0 .. n) (1 <= n <= kMaxMatrices): the same format, input length, activation
// and accumulate flag (gemv_launchers.hpp), and the same sum_order.
// The arguments of a launch of `c`'s input length, K split and accumulate flag, with no matrix yet;
// the activation is a Q8_32 vector of n_act elements at c.act (IN for a GEMV, IN x T for a GEMM).
template <class Dot>
GemvKernelArgs launch_args(const GemvLaunch& c, int64_t n_act) {
    GemvKernelArgs p{};
    p.row_bytes = c.row_bytes;
    p.steps = static_cast<int>((c.in + kStepElems - 1) / kStepElems);
    p.act_blocks = static_cast<int>(c.in / 32);
    const int64_t last_elems = c.in - static_cast<int64_t>(p.steps - 1) * kStepElems;
    p.last_step_bytes = static_cast<int>(last_elems / Dot::kBlockElems * Dot::kBlockBytes);
    const SumOrder order = sum_order<Dot>(c.out, c.in, c.weight);
    p.ks = order.ks;
    p.strided = order.strided;
    const auto* base = static_cast<const int8_t*>(c.act);
    p.act.q = base;
    p.act.d = reinterpret_cast<const float*>(base + n_act);
    p.act.s = reinterpret_cast<const float*>(base + n_act + n_act / 8);
    p.accumulate = c.accumulate ? 1 : 0;
    return p;
}

// Appends matrix `cm` to the launch; `per_tile` virtual tiles per block tile (a GEMM's column
// groups, else 1).
inline void add_matrix(GemvKernelArgs& p, const GemvLaunch& cm, int64_t per_tile) {
    const int64_t tiles_per_block = kWarps / p.ks;
    GemvMatrix& mat = p.mats[p.n_mats];
    mat.w = static_cast<const uint8_t*>(cm.weight);
    mat.w_begin = reinterpret_cast<uintptr_t>(cm.weight);
    mat.w_end = mat.w_begin + static_cast<uintptr_t>(cm.out) * static_cast<uintptr_t>(p.row_bytes);
    mat.rows = cm.out;
    mat.dst = cm.dst;
    const int64_t tiles = ((cm.out + kRowsPerWarp - 1) / kRowsPerWarp + tiles_per_block - 1) / tiles_per_block;
    p.n_block_tiles += tiles * per_tile;
    mat.tile_end = p.n_block_tiles;
    ++p.n_mats;
}

template <class Dot>
cudaError_t launch_gemv_group(const GemvLaunch* const* calls, int n, cudaStream_t stream) {
    const GemvLaunch& c = *calls[0];
    if (c.in <= 0) return cudaSuccess;
    GemvKernelArgs p = launch_args<Dot>(c, c.in);
    int64_t total_rows = 0;
    for (int m = 0; m < n; ++m) {
        total_rows += calls[m]->out;
        add_matrix(p, *calls[m], 1);
    }
    return p.n_mats == 1 ? launch_gemv_args<Dot, 1>(p, c.in, total_rows, stream)
                         : launch_gemv_args<Dot, kMaxMatrices>(p, c.in, total_rows, stream);
}

// calls[0 .. n): the matrices of equal sum_order share launches (up to kMaxMatrices each, in list
// order); a matrix with no rows launches nothing.
template <class Dot>
cudaError_t launch_gemv(const GemvLaunch* calls, int n, cudaStream_t stream) {
    if (n <= 0 || calls[0].in <= 0) return cudaSuccess;
    constexpr int kNoKs = 0;
    int key[64];  // the matrix's sum_order as 2 ks + strided
    if (n > 64) return cudaErrorInvalidValue;  // the op takes at most 16
    for (int i = 0; i < n; ++i) {
        const SumOrder o = sum_order<Dot>(calls[i].out, calls[i].in, calls[i].weight);
        key[i] = calls[i].out > 0 ? 2 * o.ks + o.strided : kNoKs;
    }
    for (int i = 0; i < n; ++i) {
        if (key[i] == kNoKs) continue;
        const GemvLaunch* group[kMaxMatrices];
        int g = 0;
        const int want = key[i];
        for (int j = i; j < n && g < kMaxMatrices; ++j)
            if (key[j] == want) {
                group[g++] = &calls[j];
                key[j] = kNoKs;  // taken
            }
        const cudaError_t err = launch_gemv_group<Dot>(group, g, stream);
        if (err != cudaSuccess) return err;
    }
    return cudaSuccess;
}

DENSE_GEMV_FLAVOR_END
}  // namespace dense::cuda::gemv
