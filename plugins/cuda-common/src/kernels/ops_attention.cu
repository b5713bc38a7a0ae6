// KV_STORE and ATTN_DECODE (spec 6.4). The launch plan (act_launchers.hpp, plan_attention and
// attn_split) is shared with the host, which sizes the workspace from it.
//
// ATTN_DECODE, kernel 1, grid (partitions, Hkv, head blocks), 256 threads. An F16 cache whose head
// size is a multiple of 32 up to 256 (the 27B's) goes to the tensor-core kernel of
// ops_attention_mma.cu (same grid, partitions, spread and partials; DENSE_CUDA_ATTN_MMA=0 turns it
// off); everything else to attn_partition_kernel here:
// the block owns one KV head g, up to 8 of its query heads, and one partition [start, end) of the
// history. It keeps q and the output accumulators of its heads in shared memory and streams the
// partition in tiles of 32 positions:
//   1. scores: warp w takes positions w, w+8, w+16, w+24 of the tile; the lanes split the key rows
//      (16-byte loads when the row allows it, all four rows' loads in flight together), each lane's
//      partial dot products with every head's q are fused multiply-adds; then ONE reduce-scatter
//      over the warp (31 shuffles) sums all 4 x 8 (position, head) partials at once, lane L ending
//      with pair L; s = scale * (q . k), in fp32;
//   2. online softmax: one warp per head, one position per lane: m' = max(m, max_tile s),
//      p = exp(s - m'), l' = l * exp(m - m') + sum p;
//   3. P.V: thread e owns output dim e (and e + 256, ...) of every head; every tile loads its 32
//      values of V[.][e] first (32 loads in flight; rows past its end read as 0), then
//      o = o * exp(m - m') + sum_tile p V[.][e], the tile's terms summed in a register first.
// Each K/V element is read from memory by exactly one block, and used there for all its query heads.
// Spread: in a one-token call (decode) where the history needs at most partitions / group partitions
// (a short history: 640 positions at the 27B shape with 64 partitions) and a KV head's query heads
// fit one block, block x of the grid takes ONE query head (x % group) of partition x / group
// instead, so group times as many blocks share the work and each runs the head loops once: at a
// 1-128 position history the grouped blocks (4 of 256 working) took ~15-20 us each, a serial chain
// of ~3,000 instructions per warp through cold instruction cache (ncu, session 22). Each K/V
// element is then read by `group` blocks (from L2). Every head's sums are formed as in the grouped
// block (its partials, the reduce-scatter tree of its (position, head) pair, its softmax and P.V),
// so spread or not, the same bits. A batched prompt step has blocks enough (the token axis) and is
// bound by total work, which spread multiplies (each block's tile work is per head, not per
// group), so it keeps the grouped blocks.
// Before a tile, the block asks L2 for the K and V rows of the tile kAhead tiles later
// (prefetch.global.L2, one 128-byte line per thread): the three phases of a tile each wait for
// their loads behind a barrier, so without it a block has at most one tile's rows in flight and
// each phase pays a DRAM latency (ncu at 32K: DRAM 25 % busy, session 5). On the H200 at the 27B
// shape and depth 32768 one tile ahead took 100.8 us per call, none 107.6, two 107.0 (session 18).
// A prefetch changes where the bytes come from, never a result. DENSE_CUDA_ATTN_PREFETCH=0|1|2
// picks the distance (read once; for A/B measurements), default kAttnPrefetchDefault.
// Single pass (n_kv <= kAttnSinglePassMaxKv): one partition, which writes dst = o / l (* sigmoid(gate))
// directly. Split: `used` partitions write (o, m, l) to the workspace and kernel 2
// (attn_merge_kernel, one block per (query head, 32 output dims)) combines them:
//   M = max_p m_p, w_p = exp(m_p - M) in fp64, L = sum_p w_p l_p in fp64, o = sum_p w_p o_p / L in fp64
// (each warp sums every 8th partition, then the 8 warp sums are added in warp order: deterministic).
//
// Numerics: fp32 scores (256-term dot: <= 13 * 2^-24 * sum |q_e k_e| each), fp32 softmax with expf,
// fp32 partial sums of at most (32 + tiles) sequential terms per output; fp64 merge. cpu-ref does the
// whole head in double. The tests allow 2e-6 of max |V| + 2e-6 relative per element at every n_kv
// (tests/cuda/ops_attention_gpu_test.cpp says why).
//
// n_kv is read on the device; a value outside [1, n_ctx] makes block (0, g, z) fill its heads' rows of
// dst with NaN and every block return without touching K/V or the workspace.
//
// The token axis (ABI 1.10): grid.z (and the merge's grid.z) also runs over the T tokens, and a block
// first moves its arguments to its token (for_token): the same blocks, reads and sums as T launches of
// one token, so the same bits.
#include "kernels/launch_chain.cuh"
#include "kernels/attn_common.cuh"
#include "kernels/env_switch.hpp"

#include <cuda_fp16.h>

#include <cstdlib>

namespace dense::cuda::act {
namespace {

using attn::cache_value;

// ---- KV_STORE ------------------------------------------------------------------------------------

template <bool kF16>
__global__ void kv_store_kernel(KvStoreArgs a) {
    wait_for_producers();  // launch_chain.cuh: nothing an earlier kernel writes is touched before
    allow_consumers();

    // Token t (the token axis, ABI 1.10) writes k and v elements [t n, (t + 1) n) into its slot.
    const int64_t n = a.d * a.hkv;
    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    for (int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < n * a.tokens; j += stride) {
        const int64_t tok = j / n, i = j - tok * n;
        const int64_t pos = a.position[tok];
        if (pos < 0 || pos >= a.n_ctx) continue;  // nothing written (cpu-ref refuses such a call)
        const int64_t slot = pos * n;
        if constexpr (kF16) {
            static_cast<uint16_t*>(a.k_cache)[slot + i] = f32_to_f16_bits(a.k[j]);
            static_cast<uint16_t*>(a.v_cache)[slot + i] = f32_to_f16_bits(a.v[j]);
        } else {
            static_cast<float*>(a.k_cache)[slot + i] = a.k[j];
            static_cast<float*>(a.v_cache)[slot + i] = a.v[j];
        }
    }
}

// ---- ATTN_DECODE ---------------------------------------------------------------------------------

constexpr int kWarps = kAttnThreads / 32;
constexpr int kHB = kAttnMaxHeadsPerBlock;
constexpr int kPerWarp = kAttnTile / kWarps;  // positions per warp per tile
static_assert(kAttnTile % kWarps == 0, "every warp takes the same number of positions per tile");
static_assert(kPerWarp * kHB == 32, "the reduce-scatter hands one (position, head) pair to each lane");

// 16 bytes of cache row at p (16-byte aligned) as floats: 8 halves or 4 floats.
__device__ __forceinline__ void load16(const uint16_t* p, float* out) {
    const uint4 raw = *reinterpret_cast<const uint4*>(p);
    const uint32_t w[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        out[2 * i] = cache_value(static_cast<uint16_t>(w[i] & 0xFFFFu));
        out[2 * i + 1] = cache_value(static_cast<uint16_t>(w[i] >> 16));
    }
}
__device__ __forceinline__ void load16(const float* p, float* out) {
    const float4 v = *reinterpret_cast<const float4*>(p);
    out[0] = v.x;
    out[1] = v.y;
    out[2] = v.z;
    out[3] = v.w;
}

// One step of warp_reduce_scatter32: lanes l and l ^ O swap halves of a[0 .. 2*O). Each keeps the
// half whose index bit O matches its own lane bit and hands the other half over. The halves are
// selected with bit masks, not `upper ? a[i] : a[i + O]`, which the compiler turns into a selected
// INDEX, and a dynamically indexed array leaves the registers for local memory. O is a template
// argument so every index is a compile-time constant.
template <int O>
__device__ __forceinline__ void reduce_scatter_step(float (&a)[32], int lane) {
    const uint32_t upper = (lane & O) != 0 ? 0xFFFFFFFFu : 0u;  // all ones: this lane keeps a[O ..]
#pragma unroll
    for (int i = 0; i < O; ++i) {
        const uint32_t lo = __float_as_uint(a[i]), hi = __float_as_uint(a[i + O]);
        const float send = __uint_as_float((lo & upper) | (hi & ~upper));
        const float keep = __uint_as_float((hi & upper) | (lo & ~upper));
        a[i] = keep + __shfl_xor_sync(kFullMask, send, O);
    }
}

// Sums a[i] over the 32 lanes of the warp for every i < 32 at once and returns the sum for i = lane:
// 31 shuffles where 32 butterflies would take 160. The order of the additions is fixed:
// deterministic.
__device__ __forceinline__ float warp_reduce_scatter32(float (&a)[32], int lane) {
    reduce_scatter_step<16>(a, lane);
    reduce_scatter_step<8>(a, lane);
    reduce_scatter_step<4>(a, lane);
    reduce_scatter_step<2>(a, lane);
    reduce_scatter_step<1>(a, lane);
    return a[0];
}

struct Shared {
    float* p;  // [hb][tile]: scores, then probabilities
    float* m;  // [hb]
    float* l;  // [hb]
    float* c;  // [hb]: this tile's correction exp(m_old - m_new)
    float* q;  // [hb][d]
    float* o;  // [hb][d]
};

__device__ __forceinline__ Shared carve(float* smem, int hb, int64_t d) {
    Shared s;
    s.p = smem;
    s.m = s.p + hb * kAttnTile;
    s.l = s.m + hb;
    s.c = s.l + hb;
    s.q = smem + attn_shared_header_floats(hb);
    s.o = s.q + hb * d;
    return s;
}

// Scores of positions [t0, t0 + tile) against the block's heads, into s.p (-inf past `end`).
template <class E, bool kVec>
__device__ __forceinline__ void tile_scores(const AttnArgs& a, const Shared& s, const E* kc, int64_t g, int nh,
                                            int64_t t0, int64_t end) {
    constexpr int kV = 16 / static_cast<int>(sizeof(E));
    const int lane = static_cast<int>(threadIdx.x & 31u), warp = static_cast<int>(threadIdx.x >> 5);
    const int64_t d = a.d;
    float part[kPerWarp * kHB];  // (position pp, head hh) at pp * kHB + hh
#pragma unroll
    for (int i = 0; i < kPerWarp * kHB; ++i) part[i] = 0.0f;
    const E* krow[kPerWarp];
    bool live[kPerWarp];
#pragma unroll
    for (int pp = 0; pp < kPerWarp; ++pp) {
        const int64_t j = t0 + warp + pp * kWarps;
        live[pp] = j < end;  // warp-uniform
        krow[pp] = kc + ((live[pp] ? j : t0) * a.hkv + g) * d;
    }
    if constexpr (kVec) {
        for (int64_t e0 = static_cast<int64_t>(lane) * kV; e0 < d; e0 += 32 * kV) {
            float kv[kPerWarp][kV];
#pragma unroll
            for (int pp = 0; pp < kPerWarp; ++pp) {
                if (live[pp]) {
                    load16(krow[pp] + e0, kv[pp]);
                } else {
#pragma unroll
                    for (int v = 0; v < kV; ++v) kv[pp][v] = 0.0f;
                }
            }
#pragma unroll
            for (int hh = 0; hh < kHB; ++hh) {
                if (hh < nh) {
                    const float4* qs = reinterpret_cast<const float4*>(s.q + hh * d + e0);
#pragma unroll
                    for (int v4 = 0; v4 < kV / 4; ++v4) {
                        const float4 qv = qs[v4];
#pragma unroll
                        for (int pp = 0; pp < kPerWarp; ++pp) {
                            float acc = part[pp * kHB + hh];
                            acc = __fmaf_rn(qv.x, kv[pp][4 * v4], acc);
                            acc = __fmaf_rn(qv.y, kv[pp][4 * v4 + 1], acc);
                            acc = __fmaf_rn(qv.z, kv[pp][4 * v4 + 2], acc);
                            acc = __fmaf_rn(qv.w, kv[pp][4 * v4 + 3], acc);
                            part[pp * kHB + hh] = acc;
                        }
                    }
                }
            }
        }
    } else {
        for (int64_t e = lane; e < d; e += 32) {
            float kv[kPerWarp];
#pragma unroll
            for (int pp = 0; pp < kPerWarp; ++pp) kv[pp] = live[pp] ? cache_value(krow[pp][e]) : 0.0f;
#pragma unroll
            for (int hh = 0; hh < kHB; ++hh) {
                if (hh < nh) {
                    const float qv = s.q[hh * d + e];
#pragma unroll
                    for (int pp = 0; pp < kPerWarp; ++pp)
                        part[pp * kHB + hh] = __fmaf_rn(qv, kv[pp], part[pp * kHB + hh]);
                }
            }
        }
    }
    const float dot = warp_reduce_scatter32(part, lane);  // the pair (lane / kHB, lane % kHB)
    const int pp = lane / kHB, hh = lane % kHB;
    bool mine_live = false;
#pragma unroll
    for (int i = 0; i < kPerWarp; ++i) mine_live = i == pp ? live[i] : mine_live;
    if (hh < nh) s.p[hh * kAttnTile + warp + pp * kWarps] = mine_live ? a.scale * dot : -INFINITY;
}

// Online-softmax step of one tile: s.p becomes probabilities, m/l/c updated. One warp per head.
__device__ __forceinline__ void tile_softmax(const Shared& s, int nh) {
    const int lane = static_cast<int>(threadIdx.x & 31u), warp = static_cast<int>(threadIdx.x >> 5);
    for (int hh = warp; hh < nh; hh += kWarps) {
        const float sc = s.p[hh * kAttnTile + lane];
        const float m_old = s.m[hh];
        const float m_new = fmaxf(m_old, warp_max(sc));
        const float p = expf(sc - m_new);  // 0 for the -inf of masked positions
        const float psum = warp_sum(p);
        s.p[hh * kAttnTile + lane] = p;
        if (lane == 0) {
            const float corr = expf(m_old - m_new);  // 0 on the first tile (m_old = -inf)
            s.c[hh] = corr;
            s.l[hh] = s.l[hh] * corr + psum;
            s.m[hh] = m_new;
        }
    }
}

// acc[hh] = sum_r p[hh][r] v[r] over the tile's 32 positions for the block's heads, in position
// order (probabilities read as float4).
__device__ __forceinline__ void tile_pv_sums(const Shared& s, int nh, const float (&v)[kAttnTile], float (&acc)[kHB]) {
#pragma unroll
    for (int hh = 0; hh < kHB; ++hh) {
        if (hh < nh) {
            const float4* p4 = reinterpret_cast<const float4*>(s.p + hh * kAttnTile);
            float sum = 0.0f;
#pragma unroll
            for (int r4 = 0; r4 < kAttnTile / 4; ++r4) {
                const float4 pv = p4[r4];
                sum = __fmaf_rn(pv.x, v[4 * r4], sum);
                sum = __fmaf_rn(pv.y, v[4 * r4 + 1], sum);
                sum = __fmaf_rn(pv.z, v[4 * r4 + 2], sum);
                sum = __fmaf_rn(pv.w, v[4 * r4 + 3], sum);
            }
            acc[hh] = sum;
        }
    }
}

// o = o * c + sum_tile p V for the block's heads. Thread e owns dims e, e + blockDim, ... Every tile
// loads its 32 values of V[.][e] first (32 loads in flight per thread), then tile_pv_sums. A partial
// tile reads only its rows and takes 0 for the rest; their p = exp(-inf) = 0, so the sums are those
// of its own positions (a -0 sum may become +0). It used to take a loop of tile_len load-then-FMA
// iterations, one latency per position, and at short histories every step ends in such a tile. Full
// tiles keep their own unpredicated loads: a build that predicated them too (and changed block_sum)
// ran batched prompt steps at depth 4096, which are compute-bound, ~4 % slower (session 22).
template <class E>
__device__ __forceinline__ void tile_pv(const AttnArgs& a, const Shared& s, const E* vc, int64_t g, int nh,
                                        int64_t t0, int tile_len) {
    const int64_t d = a.d;
    const int64_t row_step = a.hkv * d;
    for (int64_t e = threadIdx.x; e < d; e += blockDim.x) {
        float acc[kHB];
#pragma unroll
        for (int hh = 0; hh < kHB; ++hh) acc[hh] = 0.0f;
        const E* vcol = vc + (t0 * a.hkv + g) * d + e;
        float v[kAttnTile];
        if (tile_len == kAttnTile) {
#pragma unroll
            for (int r = 0; r < kAttnTile; ++r) v[r] = cache_value(vcol[r * row_step]);
            tile_pv_sums(s, nh, v, acc);
        } else {
#pragma unroll
            for (int r = 0; r < kAttnTile; ++r) v[r] = r < tile_len ? cache_value(vcol[r * row_step]) : 0.0f;
            tile_pv_sums(s, nh, v, acc);
        }
#pragma unroll
        for (int hh = 0; hh < kHB; ++hh)
            if (hh < nh) s.o[hh * d + e] = __fmaf_rn(s.o[hh * d + e], s.c[hh], acc[hh]);
    }
}

// Two resident blocks per SM (<= 128 registers): the kernel is latency-bound, and on an H200 a
// variant that prefetched more into registers (174 of them, one block per SM) ran 1.8x slower.
template <class E, bool kVec, int kAhead>
__global__ void __launch_bounds__(kAttnThreads, 2) attn_partition_kernel(AttnArgs all, AttnPlan plan) {
    wait_for_producers();  // launch_chain.cuh: nothing an earlier kernel writes is touched before
    allow_consumers();

    extern __shared__ __align__(16) float smem[];
    const int64_t token = blockIdx.z / plan.head_blocks;
    const AttnArgs a = attn::for_token(all, plan, token);
    const int64_t d = a.d;
    const int64_t g = blockIdx.y;
    const int64_t group = a.hq / a.hkv;
    const int64_t n = *a.n_kv;
    if (!attn::n_kv_valid(n, a.n_ctx)) {
        attn::fill_nan_rows(a, plan, token, group);
        return;
    }
    const AttnSplit split = attn_split(n, plan.partitions);
    const attn::BlockWork work = attn::block_work(all, plan, token, split, group);
    if (work.part >= split.used) return;  // whole block: no barrier is skipped
    const int nh = work.nh;
    const int64_t h0 = g * group + work.first;  // first query head of this block
    const int64_t start = work.part * split.chunk;
    const int64_t end = start + split.chunk < n ? start + split.chunk : n;

    const Shared s = carve(smem, plan.heads_per_block, d);
    for (int64_t i = threadIdx.x; i < nh * d; i += blockDim.x) {
        const int64_t hh = i / d, e = i - hh * d;
        s.q[i] = a.q[(h0 + hh) * a.q_stride + e];
        s.o[i] = 0.0f;
    }
    if (threadIdx.x < static_cast<unsigned>(nh)) {
        s.m[threadIdx.x] = -INFINITY;
        s.l[threadIdx.x] = 0.0f;
    }
    __syncthreads();

    const E* kc = static_cast<const E*>(a.k_cache);
    const E* vc = static_cast<const E*>(a.v_cache);
#pragma unroll
    for (int j = 1; j < kAhead; ++j) attn::prefetch_rows_l2<E>(a, kc, vc, g, start + j * kAttnTile, end, kAttnTile);
    for (int64_t t0 = start; t0 < end; t0 += kAttnTile) {
        if constexpr (kAhead > 0) attn::prefetch_rows_l2<E>(a, kc, vc, g, t0 + kAhead * kAttnTile, end, kAttnTile);
        tile_scores<E, kVec>(a, s, kc, g, nh, t0, end);
        __syncthreads();
        tile_softmax(s, nh);
        __syncthreads();
        const int tile_len = static_cast<int>(end - t0 < kAttnTile ? end - t0 : kAttnTile);
        tile_pv<E>(a, s, vc, g, nh, t0, tile_len);
        __syncthreads();
    }
    attn::write_block_result(a, plan, split, work.part, h0, nh, s.o, s.m, s.l);
}

constexpr int kMergeDims = 32;  // output dims per merge block: one per lane

// Grid (hq, ceil(d / 32)), kAttnMaxPartitions threads. Every thread first takes one partition's
// weight (thread p < used); then lane i of warp w sums partitions w, w + 8, ... for dim e0 + i in
// fp64, and warp 0 adds the 8 warp sums in warp order.
__global__ void __launch_bounds__(kAttnMaxPartitions) attn_merge_kernel(AttnArgs all, AttnPlan plan) {
    wait_for_producers();  // launch_chain.cuh: nothing an earlier kernel writes is touched before
    allow_consumers();
    const AttnArgs a = attn::for_token(all, plan, blockIdx.z);

    constexpr int kMergeWarps = kAttnMaxPartitions / 32;
    __shared__ double weight[kAttnMaxPartitions];
    __shared__ double warp_acc[kMergeWarps][kMergeDims];
    __shared__ float fscratch[33];
    __shared__ double dscratch[33];
    const int64_t n = *a.n_kv;
    if (!attn::n_kv_valid(n, a.n_ctx)) return;  // kernel 1 wrote NaN
    const AttnSplit split = attn_split(n, plan.partitions);
    if (split.used == 1) return;  // kernel 1 wrote dst
    const int64_t h = blockIdx.x;
    const attn::Partials w = attn::partials(a, plan.partitions);
    const int p = static_cast<int>(threadIdx.x);
    const bool mine = p < split.used;
    const float mp = mine ? w.m[static_cast<int64_t>(p) * a.hq + h] : -INFINITY;
    const float M = block_max(mp, fscratch);
    const double wp = mine ? exp(static_cast<double>(mp) - static_cast<double>(M)) : 0.0;
    weight[p] = wp;
    const double L = block_sum(mine ? wp * static_cast<double>(w.l[static_cast<int64_t>(p) * a.hq + h]) : 0.0,
                               dscratch);  // its barriers also publish weight[]
    const int lane = static_cast<int>(threadIdx.x & 31u), warp = static_cast<int>(threadIdx.x >> 5);
    const int64_t e = static_cast<int64_t>(blockIdx.y) * kMergeDims + lane;
    double acc = 0.0;
    if (e < a.d) {
        const float* col = w.o + h * a.d + e;
        const int64_t part_step = a.hq * a.d;
#pragma unroll 4
        for (int q = warp; q < split.used; q += kMergeWarps)
            acc += weight[q] * static_cast<double>(col[static_cast<int64_t>(q) * part_step]);
    }
    warp_acc[warp][lane] = acc;
    __syncthreads();
    if (warp == 0 && e < a.d) {
        double total = 0.0;
#pragma unroll
        for (int k = 0; k < kMergeWarps; ++k) total += warp_acc[k][lane];
        float o = static_cast<float>(total / L);
        if (a.gate != nullptr) o *= sigmoid_f(a.gate[h * a.gate_stride + e]);
        a.out[h * a.d + e] = o;
    }
}

// The L2 prefetch distance in tiles (see the top of this file): DENSE_CUDA_ATTN_PREFETCH, read once;
// unset or not 0, 1 or 2: the default.
constexpr int kAttnPrefetchDefault = 1;
inline int attn_prefetch_tiles() {
    static const int tiles = [] {
        const char* v = std::getenv("DENSE_CUDA_ATTN_PREFETCH");
        if (v != nullptr && v[0] >= '0' && v[0] <= '2' && v[1] == '\0') return v[0] - '0';
        return kAttnPrefetchDefault;
    }();
    return tiles;
}

template <class E, bool kVec>
void launch_partitions(const dim3& grid, const AttnArgs& a, const AttnPlan& plan, cudaStream_t stream) {
    attn::with_prefetch_tiles(attn_prefetch_tiles(), [&](auto ahead) {
        (void)launch_chained(attn_partition_kernel<E, kVec, decltype(ahead)::value>, grid, kAttnThreads,
                             plan.shared_bytes, stream, a, plan);
    });
}

// Whether F16 caches of a head size it takes go to the tensor-core kernel (ops_attention_mma.cu):
// on unless DENSE_CUDA_ATTN_MMA=0 (read once; for A/B measurements).
inline bool attn_mma_enabled() {
    static const bool on = env_switch_on("DENSE_CUDA_ATTN_MMA");
    return on;
}

template <class E>
cudaError_t launch_attn_typed(const AttnArgs& a, const AttnPlan& plan, cudaStream_t stream) {
    const dim3 grid(static_cast<unsigned>(plan.partitions), static_cast<unsigned>(a.hkv),
                    static_cast<unsigned>(plan.head_blocks * a.tokens));
    const bool vec = (a.d * static_cast<int64_t>(sizeof(E))) % 16 == 0 &&
                     reinterpret_cast<uintptr_t>(a.k_cache) % 16u == 0;
    if (attn_mma_enabled() && attn::mma_kernel_applies(a, plan))
        attn::launch_mma_partitions(grid, a, plan, attn_prefetch_tiles(), stream);
    else if (vec)
        launch_partitions<E, true>(grid, a, plan, stream);
    else
        launch_partitions<E, false>(grid, a, plan, stream);
    if (plan.partitions > 1) {
        const cudaError_t err = cudaGetLastError();
        if (err != cudaSuccess) return err;
        const dim3 merge_grid(static_cast<unsigned>(a.hq), static_cast<unsigned>((a.d + kMergeDims - 1) / kMergeDims),
                              static_cast<unsigned>(a.tokens));
        (void)launch_chained(attn_merge_kernel, merge_grid, kAttnMaxPartitions, 0, stream, a, plan);
    }
    return cudaGetLastError();
}

}  // namespace

cudaError_t launch_kv_store(const KvStoreArgs& a, cudaStream_t stream) {
    const int64_t n = a.d * a.hkv * a.tokens;
    if (n <= 0) return cudaSuccess;
    const unsigned blocks = grid_for(n, kEltThreads, kEltMaxBlocks);
    if (a.f16)
        (void)launch_chained(kv_store_kernel<true>, blocks, kEltThreads, 0, stream, a);
    else
        (void)launch_chained(kv_store_kernel<false>, blocks, kEltThreads, 0, stream, a);
    return cudaGetLastError();
}

// Groups of attn_tokens_per_launch tokens, one launch (and merge) each, all on the same workspace.
cudaError_t launch_attn_decode(const AttnArgs& a, const AttnPlan& plan, cudaStream_t stream) {
    if (!plan.fits) return cudaErrorInvalidConfiguration;
    const int64_t per_launch = attn_tokens_per_launch(plan, a.tokens);
    for (int64_t t0 = 0; t0 < a.tokens; t0 += per_launch) {
        AttnArgs g = a;  // tokens [t0, t0 + g.tokens): their views as for_token moves them
        g.q += t0 * a.q_tstride;
        if (g.gate != nullptr) g.gate += t0 * a.gate_tstride;
        g.out += t0 * a.out_tstride;
        g.n_kv += t0;
        g.tokens = a.tokens - t0 < per_launch ? a.tokens - t0 : per_launch;
        const cudaError_t err =
            a.f16 ? launch_attn_typed<uint16_t>(g, plan, stream) : launch_attn_typed<float>(g, plan, stream);
        if (err != cudaSuccess) return err;
    }
    return cudaSuccess;
}

}  // namespace dense::cuda::act
