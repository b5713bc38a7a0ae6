// ATTN_DECODE's partition kernel on tensor cores, for an F16 cache and head sizes that are a multiple
// of 32 up to 256 (the 27B's 256 included). Same grid, partitions, spread, workspace and merge as the
// fp32 kernel in ops_attention.cu; only how a block computes q.K and P.V differs.
//
// Why: at depth 32K the fp32 kernel is issue-bound, not load-bound (session 36's ncu: issue slots 53 %
// active, DRAM 50 %, and only 30 % of its 42 M warp instructions are the FMAs of q.K and P.V; the rest
// are the reduce-scatter, conversions and addressing). Here a block's 8 warps do a tile of 64
// positions with 16 mma.m16n8k16 each for the scores and 16 for P.V, ~15x fewer warp instructions.
//
// Exactness: the operands of an f16 mma must be f16, but q and p are fp32. Each is split exactly into
// two f16 parts that go into the A operand's two row halves: rows 0-7 hold hi = f16(x), rows 8-15
// hold lo = f16(x - hi) of the same query heads (so M = 16 rows carry <= 8 heads), and the two halves
// of the result are added in fp32. B is the cache itself (f16 already), so every product is exact
// and x is represented to ~2^-22 of the head's largest |x|:
//   - q: each head is first scaled by a power of two that puts its largest |q| in [2^14, 2^15) (so lo
//     stays a normal f16 wherever it matters); the score takes the power back exactly with the scale;
//   - p in [0, 1] is scaled by 2^15 (p = 1 is 32768, exact in f16) and the output accumulators carry
//     that factor until the block writes them.
// The tensor core adds its products into an fp32 accumulator of its own rounding, so the sums are
// kept short: a score sums its 16 k-steps in four independent chains of four mma (added in fp32
// after), and a tile's P.V (four k-steps of 16 positions) starts from zero and is added into the
// running output with one fp32 fma, as the fp32 kernel does. The tests' bar (2e-6 of max|V| + 2e-6
// relative, tests/cuda/ops_attention_gpu_test.cpp) applies unchanged. The order of every sum is fixed
// by the instruction sequence: the same bits on every run.
//
// A block (256 threads = 8 warps; lane = (group g = lane / 4, thread t = lane % 4) in the mma
// fragment layouts) per tile of 64 positions:
//   1. scores: warp w takes positions 8w .. 8w + 7 (the B operand's 8 columns, one K row per g; each
//      lane loads 16 bytes of its row per 32 dims, which serve two k-steps since the order of the
//      dims inside a dot product is free: the q fragments, built once per block in shared memory,
//      use the same order). s = (hi + lo) * scale / 2^a, -inf past the partition's end;
//   2. online softmax: one warp per head, two positions per lane; p written as the split f16 pairs
//      the P.V A operand reads;
//   3. P.V: warp w owns output dims 32w .. 32w + 31 (four n-tiles of 8, whose 8 columns are the dims
//      32w + 4g + i, i = 0..3, so a lane's 8-byte load of a V row serves all four); the B fragments
//      (two positions per register) are paired from two rows' loads with byte permutes. Rows past
//      the tile's end are read as 0 (their p is 0, and 0 * garbage could be NaN).
// Loads are issued a phase ahead: a tile's V rows before its scores, the next tile's K rows before this
// tile's P.V (registers: 128 a thread, two blocks an SM).
// Measured (H100, session 37, docs/perf-notes.md): the 27B's token at depth 32K +1.7 % against the fp32
// kernel, +1.0 % more with the loads a phase ahead (-0.3 % at 8K); the prompt at depth 32K 649 -> 755
// tok/s (before the loads moved ahead; against session 36's run).
// Barriers: two per tile. The scores of tile i + 1 overwrite the score array only after every warp has
// passed the softmax barrier of tile i, and the softmax of tile i + 1 rewrites p and the correction
// only after every warp has passed the scores barrier of tile i + 1, i.e. finished its P.V of tile i.
#include "kernels/attn_common.cuh"
#include "kernels/launch_chain.cuh"

#include <cuda_fp16.h>

namespace dense::cuda::act::attn {
namespace {

constexpr int kTile = 64;         // positions per tile: 8 per warp in the scores
constexpr int kMaxD = 256;        // head size: one 32-dim slice per warp in P.V
constexpr int kKSteps = kMaxD / 16;
constexpr int kHB = kAttnMaxHeadsPerBlock;
static_assert(kHB == 8, "the A operand's rows 0-7 (hi) and 8-15 (lo) hold one head each");
static_assert(kAttnThreads == 256 && kTile == 8 * (kAttnThreads / 32), "8 warps of 8 positions");
constexpr float kPScale = 32768.0f;          // 2^15: p = 1 is still exact in f16
constexpr float kPUnscale = 1.0f / 32768.0f;  // exact

struct MmaShared {
    float s[kHB][kTile];  // the tile's scores
    float m[kHB], l[kHB], c[kHB];  // running max, denominator, this tile's correction
    float qscale[kHB];             // scale * 2^-a of each head
    int qexp[kHB];                 // a
    uint4 qf[kKSteps][32];         // the q A-fragments of every k-step, per lane
    uint32_t phi[kHB][kTile / 2], plo[kHB][kTile / 2];  // p * 2^15 split, f16 pairs of positions (2j, 2j + 1)
    float o[kHB * kMaxD];  // [nh][d]: q staging at the start, the output at the end
};

__device__ __forceinline__ void mma_f16(float (&acc)[4], const uint4& a, uint32_t b0, uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
        : "r"(a.x), "r"(a.y), "r"(a.z), "r"(a.w), "r"(b0), "r"(b1));
}

// Two f16 in one register, `first` in the low half (the element of the lower k or column index).
__device__ __forceinline__ uint32_t pack_f16(__half first, __half second) {
    return static_cast<uint32_t>(__half_as_ushort(first)) | (static_cast<uint32_t>(__half_as_ushort(second)) << 16);
}

// x = hi + lo + (a residual of <= 2^-11 of lo's size): hi = f16(x), and x - hi is exact in fp32.
__device__ __forceinline__ void split_f16(float x, __half& hi, __half& lo) {
    hi = __float2half_rn(x);
    lo = __float2half_rn(x - __half2float(hi));
}

// The power of two a with max * 2^a in [2^14, 2^15): 0 for a zero or non-finite max (a NaN or inf q
// then reaches the scores as in the fp32 kernel), clamped so 2^a and 2^-a stay normal floats.
__device__ __forceinline__ int q_exponent(float max_abs) {
    if (!(max_abs > 0.0f) || !is_finite_bits(max_abs)) return 0;
    int e = 0;
    (void)frexpf(max_abs, &e);  // max_abs = f * 2^e, f in [0.5, 1)
    const int a = 15 - e;
    return a < -100 ? -100 : (a > 100 ? 100 : a);
}

// Loads the block's q, picks each head's power of two and builds the A fragments of every k-step
// (k-step 2c + half reads dims 32c + 8t + 4 half + {0, 1} as its k = 2t, 2t + 1 and + {2, 3} as its
// k = 2t + 8, 2t + 9: the order in which the scores' 16-byte K loads hand out their halves).
__device__ __forceinline__ void build_q_fragments(const AttnArgs& a, MmaShared& sm, int64_t h0, int nh) {
    const int d = static_cast<int>(a.d);
    const int lane = static_cast<int>(threadIdx.x & 31u), warp = static_cast<int>(threadIdx.x >> 5);
    for (int i = static_cast<int>(threadIdx.x); i < nh * d; i += kAttnThreads) {
        const int hh = i / d, e = i - hh * d;
        sm.o[i] = a.q[(h0 + hh) * a.q_stride + e];
    }
    if (threadIdx.x < static_cast<unsigned>(kHB)) {
        sm.m[threadIdx.x] = -INFINITY;
        sm.l[threadIdx.x] = 0.0f;
        sm.c[threadIdx.x] = 0.0f;
    }
    // Rows of heads past nh: only their own (ignored) rows of the products depend on them, but they
    // are read, so they are zeros rather than whatever shared memory held.
    for (int i = static_cast<int>(threadIdx.x); i < kHB * kTile / 2; i += kAttnThreads) {
        (&sm.phi[0][0])[i] = 0u;
        (&sm.plo[0][0])[i] = 0u;
    }
    __syncthreads();
    for (int hh = warp; hh < nh; hh += kAttnThreads / 32) {
        float mx = 0.0f;
        for (int e = lane; e < d; e += 32) mx = fmaxf(mx, fabsf(sm.o[hh * d + e]));
        mx = warp_max(mx);
        if (lane == 0) {
            const int e = q_exponent(mx);
            sm.qexp[hh] = e;
            sm.qscale[hh] = ldexpf(a.scale, -e);
        }
    }
    __syncthreads();
    const int steps = d / 16;
    for (int i = static_cast<int>(threadIdx.x); i < steps * 32; i += kAttnThreads) {
        const int step = i / 32, ln = i % 32, g = ln / 4, t = ln % 4;
        uint4 f = make_uint4(0u, 0u, 0u, 0u);
        if (g < nh) {
            const float mul = ldexpf(1.0f, sm.qexp[g]);
            const float* q = sm.o + g * d + 32 * (step / 2) + 8 * t + 4 * (step % 2);
            __half hi[4], lo[4];
#pragma unroll
            for (int j = 0; j < 4; ++j) split_f16(q[j] * mul, hi[j], lo[j]);
            f = make_uint4(pack_f16(hi[0], hi[1]), pack_f16(lo[0], lo[1]), pack_f16(hi[2], hi[3]),
                           pack_f16(lo[2], lo[3]));
        }
        sm.qf[step][ln] = f;
    }
    __syncthreads();
}

// A tile's K rows as this lane's B fragments for the scores: the row of position t0 + 8 warp + g (a
// valid row in its place past the end: its scores are masked), 16 bytes per 32 dims.
struct KRows {
    uint4 c[kMaxD / 32];
};
__device__ __forceinline__ void load_k_rows(const AttnArgs& a, const uint16_t* kc, int64_t g_kv, int64_t t0,
                                            int64_t end, KRows& k) {
    const int lane = static_cast<int>(threadIdx.x & 31u), warp = static_cast<int>(threadIdx.x >> 5);
    const int g = lane >> 2, t = lane & 3;
    const int chunks = static_cast<int>(a.d / 32);
    const int64_t row_pos = t0 + 8 * warp + g;
    const uint16_t* krow = kc + ((row_pos < end ? row_pos : t0) * a.hkv + g_kv) * a.d + 8 * t;
#pragma unroll
    for (int c = 0; c < kMaxD / 32; ++c)
        if (c < chunks) k.c[c] = __ldg(reinterpret_cast<const uint4*>(krow + 32 * c));
}

// Phase 1: the scores of positions [t0 + 8 warp, + 8) for the block's heads, into sm.s.
__device__ __forceinline__ void tile_scores(const AttnArgs& a, MmaShared& sm, const KRows& k, int nh, int64_t t0,
                                            int64_t end) {
    const int lane = static_cast<int>(threadIdx.x & 31u), warp = static_cast<int>(threadIdx.x >> 5);
    const int g = lane >> 2, t = lane & 3;
    const int chunks = static_cast<int>(a.d / 32);
    float acc[4][4];
#pragma unroll
    for (int i = 0; i < 4; ++i) acc[i][0] = acc[i][1] = acc[i][2] = acc[i][3] = 0.0f;
#pragma unroll
    for (int c = 0; c < kMaxD / 32; ++c) {
        if (c < chunks) {
            mma_f16(acc[(2 * c) & 3], sm.qf[2 * c][lane], k.c[c].x, k.c[c].y);
            mma_f16(acc[(2 * c + 1) & 3], sm.qf[2 * c + 1][lane], k.c[c].z, k.c[c].w);
        }
    }
    if (g < nh) {
#pragma unroll
        for (int j = 0; j < 2; ++j) {
            const int p = 8 * warp + 2 * t + j;  // C column 2t + j
            const float hi = (acc[0][j] + acc[1][j]) + (acc[2][j] + acc[3][j]);
            const float lo = (acc[0][2 + j] + acc[1][2 + j]) + (acc[2][2 + j] + acc[3][2 + j]);
            sm.s[g][p] = t0 + p < end ? (hi + lo) * sm.qscale[g] : -INFINITY;
        }
    }
}

// Phase 2: online softmax of the tile, one warp per head, positions 2 lane and 2 lane + 1.
__device__ __forceinline__ void tile_softmax(MmaShared& sm, int nh) {
    const int lane = static_cast<int>(threadIdx.x & 31u), warp = static_cast<int>(threadIdx.x >> 5);
    for (int hh = warp; hh < nh; hh += kAttnThreads / 32) {
        const float2 sc = *reinterpret_cast<const float2*>(&sm.s[hh][2 * lane]);
        const float m_old = sm.m[hh];
        const float m_new = fmaxf(m_old, warp_max(fmaxf(sc.x, sc.y)));
        const float p0 = expf(sc.x - m_new), p1 = expf(sc.y - m_new);  // 0 for masked positions
        const float psum = warp_sum(p0 + p1);
        __half hi0, lo0, hi1, lo1;
        split_f16(p0 * kPScale, hi0, lo0);
        split_f16(p1 * kPScale, hi1, lo1);
        sm.phi[hh][lane] = pack_f16(hi0, hi1);
        sm.plo[hh][lane] = pack_f16(lo0, lo1);
        if (lane == 0) {
            const float corr = expf(m_old - m_new);  // 0 on the first tile (m_old = -inf)
            sm.c[hh] = corr;
            sm.l[hh] = sm.l[hh] * corr + psum;
            sm.m[hh] = m_new;
        }
    }
}

// A tile's V values for this warp's P.V: dims 32 warp + 4g .. + 3 of rows 16 s + {2t, 2t + 1, 2t + 8,
// 2t + 9} of each k-step s; 0 for rows past the tile (their p is 0, and 0 * garbage could be NaN).
struct VRows {
    uint2 r[4][4];
};
__device__ __forceinline__ void load_v_rows(const AttnArgs& a, const uint16_t* vc, int64_t g_kv, int64_t t0,
                                            int tile_len, VRows& v) {
    const int lane = static_cast<int>(threadIdx.x & 31u), warp = static_cast<int>(threadIdx.x >> 5);
    const int g = lane >> 2, t = lane & 3;
    const uint16_t* col = vc + (t0 * a.hkv + g_kv) * a.d + 32 * warp + 4 * g;
    const int64_t row_step = a.hkv * a.d;
#pragma unroll
    for (int s = 0; s < 4; ++s) {
#pragma unroll
        for (int q = 0; q < 4; ++q) {
            const int r = 16 * s + 2 * t + (q & 1) + 8 * (q >> 1);
            v.r[s][q] = r < tile_len ? __ldg(reinterpret_cast<const uint2*>(col + r * row_step)) : make_uint2(0u, 0u);
        }
    }
}

// Phase 3: o = o * c + P.V of the tile for this warp's 32 dims. o[i][j] is head g's dim
// 32 warp + 4 (2t + j) + i, times 2^15.
__device__ __forceinline__ void tile_pv(const MmaShared& sm, const VRows& v, int tile_len, float (&o)[4][2]) {
    const int lane = static_cast<int>(threadIdx.x & 31u);
    const int g = lane >> 2, t = lane & 3;
    float acc[4][4];
#pragma unroll
    for (int i = 0; i < 4; ++i) acc[i][0] = acc[i][1] = acc[i][2] = acc[i][3] = 0.0f;
#pragma unroll
    for (int s = 0; s < 4; ++s) {
        if (16 * s < tile_len) {  // warp-uniform
            const uint4 pa = make_uint4(sm.phi[g][8 * s + t], sm.plo[g][8 * s + t], sm.phi[g][8 * s + t + 4],
                                        sm.plo[g][8 * s + t + 4]);
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                // Column i of the n-tile: dim 32 warp + 4g + i of rows (2t, 2t + 1) and (2t + 8, 2t + 9).
                const uint32_t sel = (i & 1) != 0 ? 0x7632u : 0x5410u;
                const uint32_t r0 = (i < 2) ? v.r[s][0].x : v.r[s][0].y, r1 = (i < 2) ? v.r[s][1].x : v.r[s][1].y;
                const uint32_t r8 = (i < 2) ? v.r[s][2].x : v.r[s][2].y, r9 = (i < 2) ? v.r[s][3].x : v.r[s][3].y;
                mma_f16(acc[i], pa, __byte_perm(r0, r1, sel), __byte_perm(r8, r9, sel));
            }
        }
    }
    const float corr = sm.c[g];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j) o[i][j] = __fmaf_rn(o[i][j], corr, acc[i][j] + acc[i][2 + j]);
}

template <int kAhead>
__global__ void __launch_bounds__(kAttnThreads, 2) attn_mma_partition_kernel(AttnArgs all, AttnPlan plan) {
    wait_for_producers();  // launch_chain.cuh: nothing an earlier kernel writes is touched before
    allow_consumers();

    __shared__ MmaShared sm;
    const int64_t token = blockIdx.z / plan.head_blocks;
    const AttnArgs a = for_token(all, plan, token);
    const int64_t g_kv = blockIdx.y;
    const int64_t group = a.hq / a.hkv;
    const int64_t n = *a.n_kv;
    if (!n_kv_valid(n, a.n_ctx)) {
        fill_nan_rows(a, plan, token, group);
        return;
    }
    const AttnSplit split = attn_split(n, plan.partitions);
    const BlockWork work = block_work(all, plan, token, split, group);
    if (work.part >= split.used) return;  // whole block: no barrier is skipped
    const int nh = work.nh;
    const int64_t h0 = g_kv * group + work.first;
    const int64_t start = work.part * split.chunk;
    const int64_t end = start + split.chunk < n ? start + split.chunk : n;

    build_q_fragments(a, sm, h0, nh);
    const uint16_t* kc = static_cast<const uint16_t*>(a.k_cache);
    const uint16_t* vc = static_cast<const uint16_t*>(a.v_cache);
    const int warp = static_cast<int>(threadIdx.x >> 5), lane = static_cast<int>(threadIdx.x & 31u);
    const bool pv_warp = 32 * warp < a.d;
    float o[4][2] = {{0.0f, 0.0f}, {0.0f, 0.0f}, {0.0f, 0.0f}, {0.0f, 0.0f}};
#pragma unroll
    for (int j = 1; j < kAhead; ++j) prefetch_rows_l2(a, kc, vc, g_kv, start + j * kTile, end, kTile);
    // Each load is issued a phase before its use: a tile's V rows before its scores, the next tile's
    // K rows before this tile's P.V (session 37: +1.0 % tg at depth 32K against loading each just
    // before its phase, -0.3 % at 8K, where a partition holds two tiles).
    KRows k;
    load_k_rows(a, kc, g_kv, start, end, k);
    for (int64_t t0 = start; t0 < end; t0 += kTile) {
        if constexpr (kAhead > 0) prefetch_rows_l2(a, kc, vc, g_kv, t0 + kAhead * kTile, end, kTile);
        const int tile_len = static_cast<int>(end - t0 < kTile ? end - t0 : kTile);
        VRows v;
        if (pv_warp) load_v_rows(a, vc, g_kv, t0, tile_len, v);
        tile_scores(a, sm, k, nh, t0, end);
        __syncthreads();
        tile_softmax(sm, nh);
        __syncthreads();
        if (t0 + kTile < end) load_k_rows(a, kc, g_kv, t0 + kTile, end, k);
        if (pv_warp) tile_pv(sm, v, tile_len, o);
    }
    // The q staging in sm.o was last read before the first tile; the last softmax (m, l) is behind
    // its barrier. The output goes through shared memory to share write_block_result with the fp32
    // kernel.
    const int g = lane >> 2, t = lane & 3;
    if (pv_warp && g < nh) {
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int j = 0; j < 2; ++j) sm.o[g * a.d + 32 * warp + 4 * (2 * t + j) + i] = o[i][j] * kPUnscale;
    }
    __syncthreads();
    write_block_result(a, plan, split, work.part, h0, nh, sm.o, sm.m, sm.l);
}

}  // namespace

bool mma_kernel_applies(const AttnArgs& a, const AttnPlan& plan) {
    return a.f16 && a.d >= 32 && a.d <= kMaxD && a.d % 32 == 0 && plan.heads_per_block <= kHB &&
           reinterpret_cast<uintptr_t>(a.k_cache) % 16u == 0 && reinterpret_cast<uintptr_t>(a.v_cache) % 16u == 0;
}

void launch_mma_partitions(const dim3& grid, const AttnArgs& a, const AttnPlan& plan, int prefetch_tiles,
                           cudaStream_t stream) {
    with_prefetch_tiles(prefetch_tiles, [&](auto ahead) {
        (void)launch_chained(attn_mma_partition_kernel<decltype(ahead)::value>, grid, kAttnThreads, 0, stream, a, plan);
    });
}

}  // namespace dense::cuda::act::attn
