// The tensor-core GEMM_Q (int8 mma.sync): T Q8_32 activations against one quantized weight, every
// column bit for bit what GEMV_Q of that activation alone writes (gemv_kernel.cuh), for the formats
// that define an Mma decoder (gemm_<fmt>.cu: every quantized format). A format without one would keep
// the dp4a GEMM of gemm_launch.cuh, which DENSE_CUDA_GEMM=dp4a also selects.
//
// Why the bits can match: every format's GEMV term is a float expression of ONE exact integer sum
// per 32-element activation block (or two per-16 sums: Q6_K, Q3_K, IQ2_XS, IQ2_S; or two sums of
// different weight codes: Q2_K's scaled codes and mins), and mma.sync s8 x s8 -> s32 yields the
// same exact integers (no rounding, no overflow at these magnitudes). So a warp decodes a 16-row
// weight tile of one block to int8 (the A fragment, straight from global memory into registers),
// multiplies it with the block's codes of 8 activations per n-tile (the B fragment), and applies the
// format's term expression to each integer with the same helpers (mul/sub/to_f, never fused) and
// operand order as its Dot, then sums the terms in the GEMV's order:
//   - per "unit" u (blocks 2u, 2u+1 of each 256-element step; the GEMV's lane u of a row), one
//     float chain over the K slice's steps in order: acc_u = (acc_u + term(2u)) + term(2u + 1);
//   - the slice's value is (acc_0 + acc_1) + (acc_2 + acc_3) (the GEMV's xor-shuffle tree);
//   - the ks slices (sum_order, the GEMV's K split of this matrix: steps [steps kw / ks, steps (kw+1) /
//     ks)) are added in slice order, starting from slice 0; with accumulate, dst + sum last. A
//     streamed matrix (gemv_kernel.cuh) has 8 strided slices (steps kw, kw + 8, ...) combined as
//     ((S0+S1)+(S2+S3))+((S4+S5)+(S6+S7)).
// A thread keeps its four unit chains for each of its (row, column) outputs, hence the column tile.
//
// Tiles (why these shapes):
//   - mma m16n8k32 (m16n8k16 twice for per-16 formats): a warp owns 16 rows x kMmaCols columns (two
//     n-tiles of 8) of one K slice: 4 units x 2 n-tiles x 4 outputs = 32 float chains per thread,
//     which keeps the kernel far from spilling at 128 registers (2 blocks of 256 threads per SM).
//   - Fragment layout (PTX ISA, m16n8k32 .s8): thread (g = lane / 4, t = lane % 4) holds A words
//     rows g and g + 8, elements 4t..4t+3 and 16+4t..16+4t+3 of the block; B words the same
//     elements of column g; C outputs rows g, g + 8 x columns 2t, 2t + 1. The weight words are read
//     from global memory (L1-cached: the 4 threads of a row read its contiguous bytes); the
//     activation codes, d and s of the warp's columns come through a per-warp double-buffered
//     shared-memory slot filled with cp.async a step ahead (MmaStage below says why).
//   - A block is 8 warps: warp w takes slice w % ks of virtual tile blockIdx * (8 / ks) + w / ks.
//     Virtual tiles are numbered row tile major, column group minor, so the column groups of one
//     row tile run side by side (its weights come from DRAM once, then from L2). The slices of a
//     tile meet in shared memory and warp kw = 0 adds them in order: no global workspace.
//   - K parallelism comes from the GEMV's own slices (ks is 4-8 at the 27B shapes on sm_90); each
//     thread prefetches its rows' step two ahead into L2 to keep bytes in flight.
#pragma once

#include "kernels/gemm_launch.cuh"
#include "kernels/gemv_kernel.cuh"
#include "kernels/gemv_launchers.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <type_traits>

namespace dense::cuda::gemv {
DENSE_GEMV_FLAVOR_BEGIN

inline constexpr int kMmaRows = 16;  // rows per warp tile (the mma's M)
inline constexpr int kMmaWarps = 8;
inline constexpr int kMmaThreads = 32 * kMmaWarps;

// Which GEMM runs the formats that have both: DENSE_CUDA_GEMM=dp4a keeps the dp4a GEMM of
// gemm_launch.cuh (A/B measurements, tests); unset, "mma" or any other value: the tensor-core
// kernel. Read on every call (a getenv per GEMM launch is noise), so a test can switch it.
inline bool gemm_mma_enabled() {
    const char* v = std::getenv("DENSE_CUDA_GEMM");
    return v == nullptr || std::strcmp(v, "dp4a") != 0;
}

struct MmaArgs {
    const uint8_t* w;
    int64_t rows;
    int64_t row_bytes;
    int steps;
    int act_blocks;  // IN / 32
    int ks;
    int strided;  // the streamed order: slice kw is steps kw, kw + ks, ...; tree-combined
    int slices_per_warp;  // 1, or 2 for a streamed matrix (adjacent slices 2w, 2w + 1: see the kernel)
    int n_cols;
    int n_groups;  // ceil(n_cols / kMmaCols)
    int64_t n_vtiles;  // ceil(rows / 16) * n_groups
    ActView act;
    float* dst;
    int64_t dst_col_stride;
    int accumulate;
};

// a * b + c with one rounding (the fast terms; never where a column must be its GEMV's bits).
__device__ __forceinline__ float fma_rn(float a, float b, float c) { return __fmaf_rn(a, b, c); }

__device__ __forceinline__ uint32_t ldg_u32(const void* p) { return *reinterpret_cast<const uint32_t*>(p); }
// Two 2-byte loads (fields of 2-byte-aligned formats: Q8_0, IQ4_NL, Q6_K).
__device__ __forceinline__ uint32_t ld_u32_a2(const uint8_t* p) {
    const auto* h = reinterpret_cast<const uint16_t*>(p);
    return static_cast<uint32_t>(h[0]) | (static_cast<uint32_t>(h[1]) << 16);
}

__device__ __forceinline__ void mma_k32(int32_t (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%10,%11,%12,%13};"
        : "=r"(c[0]), "=r"(c[1]), "=r"(c[2]), "=r"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "r"(0), "r"(0), "r"(0), "r"(0));
}
__device__ __forceinline__ void mma_k16(int32_t (&c)[4], uint32_t a0, uint32_t a1, uint32_t b0) {
    asm("mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%8,%9,%10};"
        : "=r"(c[0]), "=r"(c[1]), "=r"(c[2]), "=r"(c[3])
        : "r"(a0), "r"(a1), "r"(b0), "r"(0), "r"(0), "r"(0), "r"(0));
}

// The Mma decoder of a format F (gemm_<fmt>.cu) provides:
//   kStepBytes, kAlign (weight alignment its loads need), kK16 (per-16 sums: term gets s0 = elements 0..15, s1 = 16..31; else s0 = all 32),
//   kNeedS (term reads the activation's s), kPartialSteps (blocks of 32: the last step may be short),
//   kTable (IqTable for stage_tables),
//   struct Row (per step and row: what every block of the step needs), Row head(step),
//   struct Blk (per row and block), unit(step, row, u, t, tables, nb, lo[2], hi[2], blk[2]): blocks
//     2u + k of the step: int8 codes of elements 4t..4t+3 (lo) and 16+4t..16+4t+3 (hi), and their
//     Blk; nb = blocks the step has (8, fewer for a short last step: read block min(j, nb - 1)),
//   float term(blk, s0, s1, da, sa): EXACTLY the Dot's expression for that block;
//   float fast(blk, s0, s1, da, sa, acc): acc plus the same block's value as term's, formed for the free
//     order (ABI 1.14) with fused multiply-adds (fma_rn) and the weight's scale products taken once per
//     row and block (the compiler hoists them out of the column loop: they depend on blk alone). Fast
//     terms: the free-order kernel spends most of its instructions on the per-output float work (ncu,
//     session 33: issue-bound at ~53 % with 4 warps a scheduler), and the Dot's term costs 5-8
//     instructions an output where fast costs 3-6. Like the Dot's term, a fast term is within a few
//     roundings (at most 3, relative to the magnitudes of its products) of the exact value of the block's
//     integers and scales; tests/cuda/gemm_gpu_test.cpp bounds the column.
// Optional, for a Dot whose term needs two integer sums of different weight codes (Q2_K: the scaled
// codes' sum and the mins' sum against the same activation codes): kDualA = true, and unit takes
// second A words lo2[2], hi2[2] after hi (before blk); the kernel then runs a second m16n8k32 with
// them (kK16 must be false) and term gets its sum as s1. A format without kDualA is kDualA = false.
// Codebooks (kTable a grid of IQ2_* / IQ3_*): copied into dynamic shared memory once per thread block
// (after the staging slots), as the GEMV stages them; tables points there.
// Activation staging (kStage): each warp copies the codes, d and s of its columns for the next step
// into its own double-buffered shared-memory slot with cp.async while it computes the current one,
// and the fragments are read from there. Read straight from global memory instead, the B fragments
// (8 columns per load) and the (d, s) of columns 2t, 2t + 1 touch 4-8 cache lines per warp load:
// L1 wavefronts, not arithmetic, bounded that variant (measured ~1.4x the dp4a GEMM on an H200).
// Slot layout: codes [column][272 bytes] (256 + 16: the 8 columns of a B load fall in distinct banks),
// then d and s as [column][9] floats (the 4 columns of a C load in distinct banks).
template <int NT>
struct MmaStage {
    static constexpr int kCols = 8 * NT;
    static constexpr int kColBytes = 272;
    static constexpr int kScaleStride = 9;
    static constexpr int kCodeBytes = kCols * kColBytes;
    static constexpr int kBufBytes = kCodeBytes + 2 * kCols * kScaleStride * 4;
    static constexpr int kWarpBytes = 2 * kBufBytes;
    static constexpr int kSharedBytes = kMmaWarps * kWarpBytes;
};

__device__ __forceinline__ void cp_async4(void* smem_dst, const void* gmem_src) {
    const auto s = static_cast<unsigned>(__cvta_generic_to_shared(smem_dst));
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(s), "l"(gmem_src) : "memory");
}

// Whether F declares kDualA = true (C++17: detection rather than a requires-expression).
template <class F, class = void>
struct MmaDualA {
    static constexpr bool value = false;
};
template <class F>
struct MmaDualA<F, std::void_t<decltype(F::kDualA)>> {
    static constexpr bool value = F::kDualA;
};

// Four A words (kDualA's second set).
struct MmaWords {
    uint32_t w[4];
};

// Unit u of a step for a warp's 16-row tile (F::unit for its rows g and g + 8, "a" and "b"): the A
// words of its two blocks k and their Blk. Both GEMM kernels decode through it.
template <class F>
struct MmaUnit {
    uint32_t lo_a[2], hi_a[2], lo_b[2], hi_b[2];
    uint32_t lo2_a[2], hi2_a[2], lo2_b[2], hi2_b[2];  // kDualA only
    typename F::Blk ba[2], bb[2];
    __device__ __forceinline__ void decode(const uint8_t* sa, const typename F::Row& ha, const uint8_t* sb,
                                           const typename F::Row& hb, int u, int t, const IqTables& tables, int nb) {
        if constexpr (MmaDualA<F>::value) {
            F::unit(sa, ha, u, t, tables, nb, lo_a, hi_a, lo2_a, hi2_a, ba);
            F::unit(sb, hb, u, t, tables, nb, lo_b, hi_b, lo2_b, hi2_b, bb);
        } else {
            F::unit(sa, ha, u, t, tables, nb, lo_a, hi_a, ba);
            F::unit(sb, hb, u, t, tables, nb, lo_b, hi_b, bb);
        }
    }
    // Block k's m16n8k32 A fragment (rows g, g + 8 x elements 4t.., 16+4t..) and kDualA's second one.
    __device__ __forceinline__ void a(int k, uint32_t (&w)[4]) const {
        w[0] = lo_a[k];
        w[1] = lo_b[k];
        w[2] = hi_a[k];
        w[3] = hi_b[k];
    }
    __device__ __forceinline__ MmaWords a2(int k) const { return MmaWords{{lo2_a[k], lo2_b[k], hi2_a[k], hi2_b[k]}}; }
};

// One 32-element block of a 16 x 8 tile: its mma(s) on the A words a (a2(): kDualA's second set, asked
// for only there) and the B words b0, b1, then each of the thread's four outputs' term (F::term, the
// Dot's expression) added to its chain acc[i] (rows g, g + 8 by i >> 1, columns 2t, 2t + 1 by i & 1;
// scales(i, da, sa) gives that output's activation scales). With kFast (the free order's kernel) F::fast
// folds the block into the chain instead (fused multiply-adds: see F::fast above). Both GEMM kernels run their blocks
// through it (the staged exact kernels' machine code changed with it, not their bits or speed:
// CudaGemm.* memcmp every column against its GEMV; pp512 924-925 tok/s before and after, session 32).
template <class F, bool kFast = false, class A2, class Scales>
__device__ __forceinline__ void mma_block_terms(float (&acc)[4], const uint32_t (&a)[4], A2&& a2, uint32_t b0, uint32_t b1,
                                                const typename F::Blk& ba, const typename F::Blk& bb, Scales&& scales) {
    int32_t c0[4], c1[4];
    if constexpr (F::kK16) {
        mma_k16(c0, a[0], a[1], b0);
        mma_k16(c1, a[2], a[3], b1);
    } else if constexpr (MmaDualA<F>::value) {
        const MmaWords second = a2();
        mma_k32(c0, a, b0, b1);
        mma_k32(c1, second.w, b0, b1);
    } else {
        mma_k32(c0, a, b0, b1);
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        float da, sa = 0.0f;
        scales(i, da, sa);
        const typename F::Blk& bk = (i >> 1) ? bb : ba;
        const int32_t second = F::kK16 || MmaDualA<F>::value ? c1[i] : 0;
        if constexpr (kFast) {
            acc[i] = F::fast(bk, c0[i], second, da, sa, acc[i]);
        } else {
            acc[i] = add(acc[i], F::term(bk, c0[i], second, da, sa));
        }
    }
}

// NT n-tiles of 8 columns per warp tile: 2 (16 columns, 2 blocks of 8 warps per SM) by default.
template <class F, int NT, bool kStage>
__global__ void __launch_bounds__(kMmaThreads, NT <= 2 ? 2 : 1) gemm_mma_kernel(const __grid_constant__ MmaArgs p) {
    constexpr int kMmaNTiles = NT;
    constexpr int kMmaCols = 8 * NT;
    using St = MmaStage<NT>;
    extern __shared__ __align__(16) uint8_t stage_smem[];
    __shared__ float red[kMmaWarps][kMmaNTiles * 4][32];
    const int warp = static_cast<int>(threadIdx.x >> 5);
    const int lane = static_cast<int>(threadIdx.x & 31);
    const int g = lane >> 2, t = lane & 3;
    // A tile's ks slices are taken by wk = ks / spw warps, spw adjacent slices each, walked as ONE
    // step sequence (slice a's steps, then slice b's), so the activation staging and the prefetches
    // run on across the switch; at the switch the warp's chains start afresh, and the two slices'
    // values are added at the end: S(2w) + S(2w + 1), the first level of the GEMV's tree, so the
    // order is the GEMV's. Why: a streamed matrix's 8 slices on 8 warps leave 2-3 steps per warp at
    // K = 5120, and pp512 fell ~5 % (docs/perf-notes.md, session 20); two slices run separately (each
    // restarting the pipeline) did not win it back; one sequence did: pp512 946.50 against 928.26
    // with DENSE_CUDA_GEMM_MMA_PAIRS=0 in the same run (session 21).
    const int ks = p.ks, spw = p.slices_per_warp, wk = ks / spw, kw = warp % wk, sub_tile = warp / wk;
    const int64_t vt = static_cast<int64_t>(blockIdx.x) * (kMmaWarps / wk) + sub_tile;
    const bool active = vt < p.n_vtiles;  // warp-uniform
    const int64_t row0 = active ? vt / p.n_groups * kMmaRows : 0;
    const int col0 = active ? static_cast<int>(vt % p.n_groups) * kMmaCols : 0;
    const int ncols = min(kMmaCols, p.n_cols - col0);
    // The GEMV's order: the warp's first slice, then (spw == 2) the next one.
    const SliceSteps slice_a = slice_steps(p.steps, ks, kw * spw, p.strided);
    const SliceSteps slice_b = spw == 2 ? slice_steps(p.steps, ks, kw * spw + 1, p.strided) : SliceSteps{0, 0, 1};
    const auto count = [](const SliceSteps& sl) { return sl.end > sl.begin ? (sl.end - sl.begin + sl.inc - 1) / sl.inc : 0; };
    const int n_a = count(slice_a), n_steps = n_a + count(slice_b);
    const auto step_at = [&](int it) {
        return it < n_a ? slice_a.begin + it * slice_a.inc : slice_b.begin + (it - n_a) * slice_b.inc;
    };
    const uint8_t* const wa = p.w + min(row0 + g, p.rows - 1) * p.row_bytes;
    const uint8_t* const wb = p.w + min(row0 + g + 8, p.rows - 1) * p.row_bytes;
    // Weights are immutable: start this thread's rows' first steps before waiting for the kernel before.
    // (A short last step of a 32-element format is not prefetched: its step bytes may end the matrix.)
    if (active && n_steps > 0 && (!F::kPartialSteps || step_at(0) < p.steps - 1)) {
        const uint8_t* pf = (t & 2 ? wb : wa) + static_cast<int64_t>(step_at(0)) * F::kStepBytes;
        asm volatile("prefetch.global.L2 [%0];" ::"l"(pf + (t & 1) * (F::kStepBytes - 1)));
    }
    constexpr bool kDualA = MmaDualA<F>::value;
    static_assert(!(kDualA && F::kK16), "a second A fragment set goes with one m16n8k32 per sum");
    IqTables tables;
    if constexpr (table_bytes(F::kTable) > 0) {
        stage_tables<F>(stage_smem + (kStage ? St::kSharedBytes : 0), tables);
        __syncthreads();
    } else {
        stage_tables<F>(nullptr, tables);
    }
    wait_for_producers();
    allow_consumers();

    // Activation pointers: B column (col0 + 8n + g) and C columns (col0 + 8n + 2t + c), clamped.
    const int8_t* bq[kMmaNTiles];
    const float* cd[kMmaNTiles][2];
    const float* cs[kMmaNTiles][2];
#pragma unroll
    for (int n = 0; n < kMmaNTiles; ++n) {
        const int64_t cb = min(col0 + 8 * n + g, p.n_cols - 1);
        bq[n] = p.act.q + cb * 32 * p.act_blocks + 4 * t;
#pragma unroll
        for (int c = 0; c < 2; ++c) {
            const int64_t cc = min(col0 + 8 * n + 2 * t + c, p.n_cols - 1);
            cd[n][c] = p.act.d + cc * p.act_blocks;
            cs[n][c] = p.act.s + cc * p.act_blocks;
        }
    }

    float acc[4][kMmaNTiles][4];
    auto clear_acc = [&] {
#pragma unroll
        for (int u = 0; u < 4; ++u)
#pragma unroll
            for (int n = 0; n < kMmaNTiles; ++n)
#pragma unroll
                for (int i = 0; i < 4; ++i) acc[u][n][i] = 0.0f;
    };
    clear_acc();

    uint8_t* const slot = kStage ? stage_smem + warp * St::kWarpBytes : nullptr;
    // Copies step s's activation data of the warp's columns into buffer buf (one commit group).
    // Lane l copies 16-byte chunk l % 16 of columns l / 16 + 2 i, and (d, s) of block l % 8 of
    // columns l / 8 + 4 i. Columns past the last one are not copied: their slot entries are stale
    // and reach only outputs that are never stored.
    const int64_t in = static_cast<int64_t>(p.act_blocks) * 32;
    const int8_t* const q_src = p.act.q + (col0 + (lane >> 4)) * in + 16 * (lane & 15);
    const int64_t ds_off = static_cast<int64_t>(col0 + (lane >> 3)) * p.act_blocks + (lane & 7);
    auto stage = [&](int s, int buf) {
        uint8_t* const base = slot + buf * St::kBufBytes;
        const bool chunk_in = 16 * (lane & 15) < in - 256 * static_cast<int64_t>(s);
        const int8_t* src = q_src + 256 * static_cast<int64_t>(s);
        uint8_t* dst = base + (lane >> 4) * St::kColBytes + 16 * (lane & 15);
#pragma unroll
        for (int i = 0; i < kMmaCols / 2; ++i, src += 2 * in, dst += 2 * St::kColBytes)
            if (chunk_in && (lane >> 4) + 2 * i < ncols) cp_async16(dst, src);
        const bool block_in = 8 * s + (lane & 7) < p.act_blocks;
        float* sd = reinterpret_cast<float*>(base + St::kCodeBytes) + (lane >> 3) * St::kScaleStride + (lane & 7);
        const int64_t at = ds_off + 8 * static_cast<int64_t>(s);
#pragma unroll
        for (int i = 0; i < kMmaCols / 4; ++i, sd += 4 * St::kScaleStride) {
            if (block_in && (lane >> 3) + 4 * i < ncols) {
                const int64_t o = at + static_cast<int64_t>(4 * i) * p.act_blocks;
                cp_async4(sd, p.act.d + o);
                if constexpr (F::kNeedS) cp_async4(sd + kMmaCols * St::kScaleStride, p.act.s + o);
            }
        }
    };

    // The value of the chains so far, per output: the GEMV's shuffle tree (u0 + u1) + (u2 + u3).
    const auto lane_tree = [&](float (&out)[kMmaNTiles][4]) {
#pragma unroll
        for (int n = 0; n < kMmaNTiles; ++n)
#pragma unroll
            for (int i = 0; i < 4; ++i) out[n][i] = add(add(acc[0][n][i], acc[1][n][i]), add(acc[2][n][i], acc[3][n][i]));
    };
    float slice_a_value[kMmaNTiles][4] = {};  // spw == 2: S(2 kw), once its steps are done

    if (active && n_steps > 0) {
        if constexpr (kStage) {
            stage(step_at(0), 0);
            cp_async_commit();
        }
#pragma unroll 1
        for (int it = 0; it < n_steps; ++it) {  // it: also which staging buffer
            const int s = step_at(it);
            if (it == n_a) {  // slice a is done (spw == 2): keep its value, fresh chains for slice b
                lane_tree(slice_a_value);
                clear_acc();
            }
            const uint8_t* sbuf = nullptr;
            if constexpr (kStage) {
                if (it + 1 < n_steps) stage(step_at(it + 1), (it + 1) & 1);
                cp_async_commit();
                cp_async_wait<1>();  // step s has landed (this lane's copies) ...
                __syncwarp();        // ... and every lane's
                sbuf = slot + (it & 1) * St::kBufBytes;
            }
            const uint8_t* sa_ = wa + static_cast<int64_t>(s) * F::kStepBytes;
            const uint8_t* sb_ = wb + static_cast<int64_t>(s) * F::kStepBytes;
            if (it + 2 < n_steps) {
                const int s2 = step_at(it + 2);
                if (!F::kPartialSteps || s2 < p.steps - 1) {
                    const uint8_t* pf = (t & 2 ? wb : wa) + static_cast<int64_t>(s2) * F::kStepBytes;
                    asm volatile("prefetch.global.L2 [%0];" ::"l"(pf + (t & 1) * (F::kStepBytes - 1)));
                }
            }
            const typename F::Row ha = F::head(sa_), hb = F::head(sb_);
            const int nb = F::kPartialSteps ? min(8, p.act_blocks - 8 * s) : 8;
#pragma unroll
            for (int u = 0; u < 4; ++u) {
                MmaUnit<F> un;
                un.decode(sa_, ha, sb_, hb, u, t, tables, nb);
#pragma unroll
                for (int k = 0; k < 2; ++k) {
                    const int b = 8 * s + 2 * u + k;
                    if (F::kPartialSteps && b >= p.act_blocks) continue;  // past a short row's end
                    uint32_t a[4];
                    un.a(k, a);
                    const auto a2 = [&] { return un.a2(k); };
#pragma unroll
                    for (int n = 0; n < kMmaNTiles; ++n) {
                        if (8 * n >= ncols) break;  // warp-uniform
                        uint32_t b0, b1;
                        if constexpr (kStage) {
                            const uint8_t* bp = sbuf + (8 * n + g) * St::kColBytes + 32 * (2 * u + k) + 4 * t;
                            b0 = *reinterpret_cast<const uint32_t*>(bp);
                            b1 = *reinterpret_cast<const uint32_t*>(bp + 16);
                        } else {
                            b0 = ldg_u32(bq[n] + 32 * b);
                            b1 = ldg_u32(bq[n] + 32 * b + 16);
                        }
                        mma_block_terms<F>(acc[u][n], a, a2, b0, b1, un.ba[k], un.bb[k], [&](int i, float& da, float& sa) {
                            if constexpr (kStage) {
                                const float* sd = reinterpret_cast<const float*>(sbuf + St::kCodeBytes) +
                                                  (8 * n + 2 * t + (i & 1)) * St::kScaleStride + 2 * u + k;
                                da = sd[0];
                                if constexpr (F::kNeedS) sa = sd[kMmaCols * St::kScaleStride];
                            } else {
                                da = cd[n][i & 1][b];
                                if constexpr (F::kNeedS) sa = cs[n][i & 1][b];
                            }
                        });
                    }
                }
            }
            if constexpr (kStage) __syncwarp();  // every lane is done with the buffer the next copy refills
        }
        if constexpr (kStage) cp_async_wait<0>();
    }
    // The warp's value per output: its slice, or S(2 kw) + S(2 kw + 1).
    float part[kMmaNTiles][4];
    lane_tree(part);
    if (spw == 2) {
#pragma unroll
        for (int n = 0; n < kMmaNTiles; ++n)
#pragma unroll
            for (int i = 0; i < 4; ++i) part[n][i] = add(slice_a_value[n][i], part[n][i]);
    }

    auto store = [&](int n, int i, float v) {
        const int64_t row = row0 + g + 8 * (i >> 1);
        const int col = col0 + 8 * n + 2 * t + (i & 1);
        if (row < p.rows && col < p.n_cols) {
            float* dst = p.dst + static_cast<int64_t>(col) * p.dst_col_stride + row;
            *dst = p.accumulate ? add(*dst, v) : v;
        }
    };
    if (wk == 1) {
        if (active) {
#pragma unroll
            for (int n = 0; n < kMmaNTiles; ++n)
#pragma unroll
                for (int i = 0; i < 4; ++i) store(n, i, part[n][i]);
        }
        return;
    }
#pragma unroll
    for (int n = 0; n < kMmaNTiles; ++n)
#pragma unroll
        for (int i = 0; i < 4; ++i) red[warp][n * 4 + i][lane] = part[n][i];
    __syncthreads();
    if (active && kw == 0) {
#pragma unroll
        for (int n = 0; n < kMmaNTiles; ++n)
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                const auto warp_part = [&](int j) { return red[warp + j][n * 4 + i][lane]; };
                // Two slices per warp (a streamed matrix): the upper levels of the GEMV's tree.
                store(n, i, spw == 2 ? tree_sum<kStreamSlices / 2>(warp_part) : add_slices(ks, p.strided, warp_part));
            }
    }
}

// Whether the mma kernel can take this call: weights aligned for the decoder's widest loads
// (F::kAlign: 16 for Q4_K / Q5_K, 8 for IQ4_XS, 2 for the 2-byte formats), and the environment
// does not ask for the dp4a GEMM.
template <class F>
inline bool mma_applicable(const GemmLaunch& g) {
    return gemm_mma_enabled() && reinterpret_cast<uintptr_t>(g.matrix.weight) % F::kAlign == 0;
}

// Whether gemm_mma_kernel<F, NT, true> may use its dynamic shared memory (more than the 48 KB a
// launch gets without opting in) on the current device: set once per device and kernel. When that
// fails, the launch takes the unstaged kernel (same bits).
template <auto Kernel, int Bytes>
bool staged_smem_ready() {
    static std::atomic<int> state[64];  // 0 unknown, 1 ready, 2 refused
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= 64) {
        (void)cudaGetLastError();
        return false;
    }
    const int known = state[dev].load(std::memory_order_relaxed);
    if (known != 0) return known == 1;
    const bool ok = cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Bytes) == cudaSuccess;
    if (!ok) (void)cudaGetLastError();
    state[dev].store(ok ? 1 : 2, std::memory_order_relaxed);
    return ok;
}

// The launch: the GEMV's order for this matrix (sum_order), one virtual tile per (16-row tile,
// column group), 8 / ks virtual tiles per block of 8 warps.
template <class F, class Dot, int NT>
cudaError_t launch_gemm_mma(const GemmLaunch& g, cudaStream_t stream, bool staged) {
    constexpr int kMmaCols = 8 * NT;
    const GemvLaunch& c = g.matrix;
    if (c.in <= 0 || c.out <= 0 || g.cols <= 0) return cudaSuccess;
    const GemvKernelArgs ga = launch_args<Dot>(c, c.in * g.cols);
    MmaArgs p{};
    p.w = static_cast<const uint8_t*>(c.weight);
    p.rows = c.out;
    p.row_bytes = c.row_bytes;
    p.steps = ga.steps;
    p.act_blocks = ga.act_blocks;
    p.ks = ga.ks;
    p.strided = ga.strided;
    // DENSE_CUDA_GEMM_MMA_PAIRS=0: one slice per warp (8 warps per tile), for same-run A/Bs; same bits.
    p.slices_per_warp = ga.strided && env_switch_on("DENSE_CUDA_GEMM_MMA_PAIRS") ? 2 : 1;
    p.n_cols = static_cast<int>(g.cols);
    p.n_groups = static_cast<int>((g.cols + kMmaCols - 1) / kMmaCols);
    p.n_vtiles = (c.out + kMmaRows - 1) / kMmaRows * p.n_groups;
    p.act = ga.act;
    p.dst = c.dst;
    p.dst_col_stride = g.dst_col_stride;
    p.accumulate = c.accumulate ? 1 : 0;
    const int64_t per_block = kMmaWarps / (p.ks / p.slices_per_warp);
    const auto blocks = static_cast<unsigned>((p.n_vtiles + per_block - 1) / per_block);
    constexpr auto kStaged = gemm_mma_kernel<F, NT, true>;
    constexpr int kTableBytes = table_bytes(F::kTable);  // a codebook after the staging slots
    constexpr int kBytes = MmaStage<NT>::kSharedBytes + kTableBytes;
    if (staged && staged_smem_ready<kStaged, kBytes>())
        (void)launch_chained(kStaged, blocks, kMmaThreads, kBytes, stream, p);
    else
        (void)launch_chained(gemm_mma_kernel<F, NT, false>, blocks, kMmaThreads, kTableBytes, stream, p);
    return cudaGetLastError();
}

DENSE_GEMV_FLAVOR_END
}  // namespace dense::cuda::gemv
