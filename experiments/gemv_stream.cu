// GEMV layout experiment (not part of the build), session 18. The pack's GEMV (gemv_kernel.cuh)
// gives a warp 8 rows x 4 units of a step and splits K over up to 8 warps of a block, which for the
// 27B's K = 5120 leaves each warp 2-3 steps between block barriers (ks = 8). This file measures a
// "stream" layout with no K split across warps and no barrier: a warp's lanes cover consecutive
// steps of ONE row group (SL steps x 4 units per row, so a warp load instruction reads SL x 4
// contiguous units of a row), each lane applies its activation unit to R rows (the activation is
// loaded once per R rows), and the lanes of a row are combined by shuffles at the end of the row.
// Same per-format Dot code as the pack (Dot::unit), so each row's terms are the pack's terms;
// only the order of the additions differs. Every variant is checked against the host build of the
// Dot code (gemv_ab_host.cpp, double sums), and timed as graphs of chained launches rotating over
// copies of the matrix larger than L2, with the pack's own launch and a pure-read kernel over the
// same buffers in the same run.
//
// Build (here or on the GPU machine):
//   nvcc -O3 -std=c++20 -arch=sm_90 -DDENSE_CUDA_TARGET_CC=90 -Iplugins/cuda-common/src \
//        -Ibuild/plugins/generated experiments/gemv_stream.cu experiments/gemv_ab_host.cpp \
//        plugins/cuda-common/src/kernels/launch_chain.cu -o experiments/gemv_stream
// Run: experiments/gemv_stream [formats...]   prints us and GB/s per format x shape x variant.
//   formats: iq4_xs q4_k q5_k q6_k iq3_s iq3_xxs q3_k q2_k iq2_xs iq2_s iq4_nl q8_0, and the session-18
//   code of two formats, for A/Bs in one run (same sums, same bits): iq4_xs_lookup (lookup16 codes
//   against today's sign split) and q6_k_sub (sub_bytes codes against today's activation-sum
//   correction).
// Session 22: the ring formats (q6_k, iq3_s, iq3_xxs) get the lane-split and streamed variants too,
// reading their 2-byte-aligned fields straight from global memory.
// Since the streamed GEMV shipped (session 18), "pack" is that kernel for Q4_K / Q5_K / IQ4_XS on
// >= 4096 rows, so the `k` variants (the old order) no longer print "= pack, bit for bit" there; the
// numbers in docs/perf-notes.md were taken before, against the direct kernel.
#include "kernels/gemv_dot_iq2.cuh"
#include "kernels/gemv_dot_iq3.cuh"
#include "kernels/gemv_dot_iq4.cuh"
#include "kernels/gemv_dot_q4_k.cuh"
#include "kernels/gemv_dot_q2_k.cuh"
#include "kernels/gemv_dot_q3_k.cuh"
#include "kernels/gemv_dot_q5_k.cuh"
#include "kernels/gemv_dot_q6_k.cuh"
#include "kernels/gemv_dot_q8_0.cuh"
#include "kernels/gemv_kernel.cuh"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

using namespace dense::cuda;
using namespace dense::cuda::gemv;

#define CK(x)                                                                                       \
    do {                                                                                            \
        cudaError_t e_ = (x);                                                                       \
        if (e_ != cudaSuccess) {                                                                    \
            std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            std::exit(1);                                                                           \
        }                                                                                           \
    } while (0)

struct StreamArgs {
    const uint8_t* w;
    int64_t rows, row_bytes;
    int steps;
    int64_t row_tiles;  // ceil(rows / rows per warp)
    ActView act;
    float* dst;
};

// SL: steps a row group covers per iteration (4 lanes each); 8 / SL row groups per warp; R rows per
// row group share each lane's activation unit. UNR: iterations unrolled (their loads in flight
// together). MINB: resident blocks per SM asked of the register allocator.
//
// PF (session 20): at the start of each task, ask L2 for the lane's unit of the first PF steps of
// the warp's NEXT task, so that task's first loads hit L2 instead of DRAM (a task here is 5 steps
// per lane at K = 5120: two DRAM latencies per task, with nothing in flight during the shuffles).
template <class Dot, int SL, int R, int UNR, int MINB, int PF = 0>
__global__ void __launch_bounds__(256, MINB) gemv_stream_kernel(const __grid_constant__ StreamArgs p) {
    static_assert(SL == 4 || SL == 8, "a row group is 16 or 32 lanes");
    constexpr int kGroups = 8 / SL;
    constexpr int kRowsPerWarpHere = kGroups * R;
    constexpr int kGroupLanes = 4 * SL;
    constexpr int A = Dot::kAlign;
    __shared__ __align__(16) uint8_t table[table_bytes(Dot::kTable) > 0 ? table_bytes(Dot::kTable) : 16];
    const int warp = static_cast<int>(threadIdx.x >> 5);
    const int lane = static_cast<int>(threadIdx.x & 31);
    const int u = lane & 3;
    const int sl = (lane >> 2) % SL;
    const int grp = lane / kGroupLanes;
    IqTables tables;
    stage_tables<Dot>(table, tables);
    __syncthreads();
    wait_for_producers();
    allow_consumers();
    const int64_t nw = static_cast<int64_t>(gridDim.x) * 8;
    for (int64_t t = static_cast<int64_t>(blockIdx.x) * 8 + warp; t < p.row_tiles; t += nw) {
        const int64_t row0 = t * kRowsPerWarpHere + grp * R;
        if constexpr (PF > 0) {
            if (t + nw < p.row_tiles) {
                const int64_t next0 = (t + nw) * kRowsPerWarpHere + grp * R;
#pragma unroll
                for (int r = 0; r < R; ++r) {
                    const uint8_t* nb = p.w + min(next0 + r, p.rows - 1) * p.row_bytes;
#pragma unroll
                    for (int j = 0; j < PF; ++j) {
                        const int st = sl + j * SL;
                        if (st < p.steps)
                            for (int off = 32 * u; off < Dot::kStepBytes; off += 128)
                                asm volatile("prefetch.global.L2 [%0];" ::"l"(nb + static_cast<int64_t>(st) * Dot::kStepBytes + off));
                    }
                }
            }
        }
        const uint8_t* base[R];
#pragma unroll
        for (int r = 0; r < R; ++r) base[r] = p.w + min(row0 + r, p.rows - 1) * p.row_bytes;
        float acc[R];
#pragma unroll
        for (int r = 0; r < R; ++r) acc[r] = 0.0f;
#pragma unroll UNR
        for (int s = sl; s < p.steps; s += SL) {
            ActUnit a;
            load_act_pair(p.act, s * 8 + 2 * u, a);
#pragma unroll
            for (int r = 0; r < R; ++r) {
                float term[2];
                Dot::template unit<A>(base[r] + static_cast<int64_t>(s) * Dot::kStepBytes, u, a, tables, term);
                acc[r] = add(add(acc[r], term[0]), term[1]);
            }
        }
#pragma unroll
        for (int r = 0; r < R; ++r)
            for (int m = 1; m < kGroupLanes; m *= 2) acc[r] = add(acc[r], __shfl_xor_sync(0xFFFFFFFFu, acc[r], m));
        const int my = lane % kGroupLanes;
        if (my < R) {
            float v = acc[0];
#pragma unroll
            for (int r = 1; r < R; ++r)
                if (my == r) v = acc[r];
            if (row0 + my < p.rows) p.dst[row0 + my] = v;
        }
    }
}

template <class Dot, int SL, int R, int UNR, int MINB, int PF = 0>
void launch_stream(const GemvLaunch& c, cudaStream_t stream) {
    constexpr int kRowsPerWarpHere = (8 / SL) * R;
    StreamArgs p{};
    p.w = static_cast<const uint8_t*>(c.weight);
    p.rows = c.out;
    p.row_bytes = c.row_bytes;
    p.steps = static_cast<int>(c.in / 256);
    p.row_tiles = (c.out + kRowsPerWarpHere - 1) / kRowsPerWarpHere;
    const auto* base = static_cast<const int8_t*>(c.act);
    p.act.q = base;
    p.act.d = reinterpret_cast<const float*>(base + c.in);
    p.act.s = reinterpret_cast<const float*>(base + c.in + c.in / 8);
    p.dst = c.dst;
    static int occ = 0;
    if (occ == 0) CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, gemv_stream_kernel<Dot, SL, R, UNR, MINB, PF>, 256, 0));
    const int64_t max_blocks = static_cast<int64_t>(sm_count()) * occ;
    const int64_t need = (p.row_tiles + 7) / 8;
    // Balanced: every block the same number of warp tiles (give or take one round).
    const int64_t per_block = (need + max_blocks - 1) / max_blocks;
    const int64_t blocks = (need + per_block - 1) / per_block;
    CK(launch_chained(gemv_stream_kernel<Dot, SL, R, UNR, MINB, PF>, static_cast<unsigned>(blocks), 256, 0, stream, p));
}

// The same idea with the pack's summation order, so bit for bit the pack's GEMV (and hence its
// GEMMs): the K split ks (ks_of: 1, 2, 4 or 8 contiguous step slices) goes over the LANES of a row
// group (4 ks lanes: slice sl, unit u) instead of over warps, so a row's partial sums meet by
// shuffles, not through shared memory behind a block barrier. A warp holds 8 / ks row groups of R
// rows each; a lane's activation unit serves its R rows. Per lane: one chain over its slice's steps
// in order (term 2u, then 2u + 1), then (u0 + u1) + (u2 + u3) by xor shuffles, then the slices added
// in slice order from slice 0 - the pack's order exactly.
//
// STRIDED: slice sl takes steps sl, sl + ks, sl + 2 ks, ... instead of a contiguous range (the same
// combine otherwise), so the lanes of a row group read ks consecutive steps per iteration. That is a
// different order from today's pack, but one its GEMMs could emulate the same way (a step loop).
template <class Dot, int R, int UNR, int MINB, bool STRIDED = false>
__global__ void __launch_bounds__(256, MINB) gemv_lanesplit_kernel(const __grid_constant__ StreamArgs p, int ks) {
    constexpr int A = Dot::kAlign;
    __shared__ __align__(16) uint8_t table[table_bytes(Dot::kTable) > 0 ? table_bytes(Dot::kTable) : 16];
    const int warp = static_cast<int>(threadIdx.x >> 5);
    const int lane = static_cast<int>(threadIdx.x & 31);
    const int u = lane & 3;
    const int sl = (lane >> 2) & (ks - 1);
    const int grp = (lane >> 2) / ks;
    const int group_lane0 = 4 * ks * grp;
    const int rows_per_warp = (8 / ks) * R;
    const int s_begin = STRIDED ? sl : static_cast<int>(static_cast<int64_t>(p.steps) * sl / ks);
    const int s_end = STRIDED ? p.steps : static_cast<int>(static_cast<int64_t>(p.steps) * (sl + 1) / ks);
    const int s_inc = STRIDED ? ks : 1;
    IqTables tables;
    stage_tables<Dot>(table, tables);
    __syncthreads();
    wait_for_producers();
    allow_consumers();
    const int64_t nw = static_cast<int64_t>(gridDim.x) * 8;
    for (int64_t t = static_cast<int64_t>(blockIdx.x) * 8 + warp; t < p.row_tiles; t += nw) {
        const int64_t row0 = t * rows_per_warp + grp * R;
        const uint8_t* base[R];
#pragma unroll
        for (int r = 0; r < R; ++r) base[r] = p.w + min(row0 + r, p.rows - 1) * p.row_bytes;
        float acc[R];
#pragma unroll
        for (int r = 0; r < R; ++r) acc[r] = 0.0f;
#pragma unroll UNR
        for (int s = s_begin; s < s_end; s += s_inc) {
            ActUnit a;
            load_act_pair(p.act, s * 8 + 2 * u, a);
#pragma unroll
            for (int r = 0; r < R; ++r) {
                float term[2];
                Dot::template unit<A>(base[r] + static_cast<int64_t>(s) * Dot::kStepBytes, u, a, tables, term);
                acc[r] = add(add(acc[r], term[0]), term[1]);
            }
        }
#pragma unroll
        for (int r = 0; r < R; ++r) {
            acc[r] = add(acc[r], __shfl_xor_sync(0xFFFFFFFFu, acc[r], 1));
            acc[r] = add(acc[r], __shfl_xor_sync(0xFFFFFFFFu, acc[r], 2));
            float sum = __shfl_sync(0xFFFFFFFFu, acc[r], group_lane0);
            for (int j = 1; j < ks; ++j) sum = add(sum, __shfl_sync(0xFFFFFFFFu, acc[r], group_lane0 + 4 * j));
            if (lane == group_lane0 + r && row0 + r < p.rows) p.dst[row0 + r] = sum;
        }
    }
}

template <class Dot, int R, int UNR, int MINB, bool STRIDED = false>
void launch_lanesplit(const GemvLaunch& c, cudaStream_t stream, int ks_force = 0) {
    const int steps = static_cast<int>(c.in / 256);
    const int ks = ks_force > 0 ? ks_force : ks_of(c.out, steps);
    const int rows_per_warp = (8 / ks) * R;
    StreamArgs p{};
    p.w = static_cast<const uint8_t*>(c.weight);
    p.rows = c.out;
    p.row_bytes = c.row_bytes;
    p.steps = steps;
    p.row_tiles = (c.out + rows_per_warp - 1) / rows_per_warp;
    const auto* base = static_cast<const int8_t*>(c.act);
    p.act.q = base;
    p.act.d = reinterpret_cast<const float*>(base + c.in);
    p.act.s = reinterpret_cast<const float*>(base + c.in + c.in / 8);
    p.dst = c.dst;
    static int occ = 0;
    if (occ == 0) CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, gemv_lanesplit_kernel<Dot, R, UNR, MINB, STRIDED>, 256, 0));
    const int64_t max_blocks = static_cast<int64_t>(sm_count()) * occ;
    const int64_t need = (p.row_tiles + 7) / 8;
    const int64_t per_block = (need + max_blocks - 1) / max_blocks;
    const int64_t blocks = (need + per_block - 1) / per_block;
    CK(launch_chained(gemv_lanesplit_kernel<Dot, R, UNR, MINB, STRIDED>, static_cast<unsigned>(blocks), 256, 0, stream, p, ks));
}

// Pure read of the same bytes (16-byte loads, 4 in flight per thread), one float per block: the
// ceiling the GEMVs are compared with, in the same run.
__global__ void __launch_bounds__(256) read_kernel(const int4* __restrict__ src, int64_t n16, float* out) {
    wait_for_producers();
    allow_consumers();
    int acc = 0;
    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    for (; i + 3 * stride < n16; i += 4 * stride) {
        const int4 a = __ldcs(src + i), b = __ldcs(src + i + stride), c = __ldcs(src + i + 2 * stride),
                   d = __ldcs(src + i + 3 * stride);
        acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^ c.w ^ d.x ^ d.y ^ d.z ^ d.w;
    }
    for (; i < n16; i += stride) {
        const int4 a = __ldcs(src + i);
        acc ^= a.x ^ a.y ^ a.z ^ a.w;
    }
    if (acc == 0x7fffffff) out[blockIdx.x] = 1.0f;  // never in practice; keeps the loads
}

// ---- data -----------------------------------------------------------------------------------------
struct Fmt {
    const char* name;
    int block_elems, block_bytes;
    std::vector<int> f16;  // offsets of fp16 scale fields in a block (kept finite and small)
};

double host_row(const char* fmt, const uint8_t* row, int64_t in, const int8_t* q, const float* d, const float* s);

// IQ4_XS as the pack computed it before session 19: codes decoded by lookup16 into element order
// (three permutes per 4 codes, de-interleaved), one dp4a per 4 codes. Same integer sums, same terms
// as IQ4_XSDot (which now uses the sign split of iq4_block_dot), so it A/Bs the lookup alone.
struct IQ4_XSLookupDot : IQ4_XSDot {
    template <int A>
    DENSE_DECODE_FN static void unit(const uint8_t* step, int u, const ActUnit& a, const IqTables& t, float (&term)[2]) {
        uint32_t head[2];
        ld_words<A>(step, head);
        const float d = half_to_float(head[0]);
        const uint32_t scales_l = byte_of(head[1], u);
        uint32_t qs[8];
        ld_words<sub_align(A, 8)>(step + 8 + 32 * u, qs);
#pragma unroll
        for (int k = 0; k < 2; ++k) {
            const int ib = 2 * u + k;
            const uint32_t ls = ((scales_l >> (4 * k)) & 15u) | (((head[0] >> (16 + 2 * ib)) & 3u) << 4);
            int32_t isum = 0;
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                uint32_t lo, hi;
                lookup16(qs[4 * k + i], t.kvalues, lo, hi);
                isum = dp4a(lo, a.q[8 * k + i], isum);
                isum = dp4a(hi, a.q[8 * k + 4 + i], isum);
            }
            term[k] = mul(mul(d, a.d[k]), to_f((static_cast<int32_t>(ls) - 32) * isum));
        }
    }
};

// Q6_K as the pack computed it before session 19: 32 taken off each code byte (sub_bytes), where
// Q6_KDot now takes 32 x the activation sums off the integer sums. Same sums, same terms.
struct Q6_KSubBytesDot : Q6_KDot {
    template <int A>
    DENSE_DECODE_FN static void unit(const uint8_t* step, int u, const ActUnit& a, const IqTables&, float (&term)[2]) {
        const int h = u >> 1;
        uint32_t ql[16], qh[8];
        ld_words<sub_align(A, 64)>(step + 64 * h, ql);
        ld_words<sub_align(A, 128)>(step + 128 + 32 * h, qh);
        const uint32_t scales = ld_u32<sub_align(A, 4)>(step + 192 + 4 * u);
        const float d = half_to_float(ld_u32<sub_align(A, 206)>(step + 206) >> 16);
        const uint32_t nib_shift = 4u * static_cast<uint32_t>(u & 1);
#pragma unroll
        for (int k = 0; k < 2; ++k) {
            const uint32_t hshift = 2u * static_cast<uint32_t>(2 * (u & 1) + k);
            uint32_t q[8];
#pragma unroll
            for (int i = 0; i < 8; ++i)
                q[i] = sub_bytes(((ql[8 * k + i] >> nib_shift) & 0x0F0F0F0Fu) | (((qh[i] >> hshift) & 0x03030303u) << 4), 0x20202020u);
            int32_t s0, s1;
            dot16x2(q, &a.q[8 * k], s0, s1);
            const auto sc0 = static_cast<int32_t>(static_cast<int8_t>(byte_of(scales, 2 * k)));
            const auto sc1 = static_cast<int32_t>(static_cast<int8_t>(byte_of(scales, 2 * k + 1)));
            term[k] = mul(mul(d, a.d[k]), to_f(sc0 * s0 + sc1 * s1));
        }
    }
};

template <class Dot>
void run_format(const Fmt& f, const std::vector<std::pair<int64_t, int64_t>>& shapes, cudaStream_t stream) {
    for (auto [in, out] : shapes) {
        const int64_t row_bytes = in / f.block_elems * f.block_bytes;
        const int64_t w_bytes = row_bytes * out;
        const int copies = static_cast<int>(std::max<int64_t>(2, (512ll << 20) / w_bytes + 1));
        std::vector<uint8_t> host(static_cast<size_t>(w_bytes));
        std::mt19937_64 rng(1234 + in + out);
        for (auto& b : host) b = static_cast<uint8_t>(rng());
        const int64_t nblocks = w_bytes / f.block_bytes;
        std::uniform_real_distribution<float> sc(0.0005f, 0.004f);
        for (int64_t b = 0; b < nblocks; ++b)
            for (int off : f.f16) {
                const uint16_t h = static_cast<uint16_t>(__half_as_ushort(__float2half(sc(rng))));
                std::memcpy(&host[static_cast<size_t>(b * f.block_bytes + off)], &h, 2);
            }
        std::vector<void*> w(static_cast<size_t>(copies));
        for (auto& ptr : w) {
            CK(cudaMalloc(&ptr, static_cast<size_t>(w_bytes + 256)));
            CK(cudaMemcpy(ptr, host.data(), static_cast<size_t>(w_bytes), cudaMemcpyHostToDevice));
        }
        std::vector<int8_t> aq(static_cast<size_t>(in));
        std::vector<float> ad(static_cast<size_t>(in / 32)), as(static_cast<size_t>(in / 32));
        for (auto& v : aq) v = static_cast<int8_t>(static_cast<int>(rng() % 255) - 127);
        for (int64_t b = 0; b < in / 32; ++b) {
            ad[b] = std::uniform_real_distribution<float>(0.001f, 0.02f)(rng);
            int sum = 0;
            for (int i = 0; i < 32; ++i) sum += aq[b * 32 + i];
            as[b] = ad[b] * static_cast<float>(sum);
        }
        std::vector<uint8_t> act(static_cast<size_t>(in + in / 4));
        std::memcpy(act.data(), aq.data(), static_cast<size_t>(in));
        std::memcpy(act.data() + in, ad.data(), static_cast<size_t>(in / 8));
        std::memcpy(act.data() + in + in / 8, as.data(), static_cast<size_t>(in / 8));
        void* act_dev;
        CK(cudaMalloc(&act_dev, act.size()));
        CK(cudaMemcpy(act_dev, act.data(), act.size(), cudaMemcpyHostToDevice));
        float* y;
        CK(cudaMalloc(&y, static_cast<size_t>(out) * 4 + 4096));
        std::vector<float> yh(static_cast<size_t>(out));
        std::vector<int64_t> check_rows;  // the first 64 rows, 64 spread rows, the last 8
        for (int64_t r = 0; r < std::min<int64_t>(64, out); ++r) check_rows.push_back(r);
        for (int64_t k = 1; k <= 64; ++k) check_rows.push_back(out * k / 65);
        for (int64_t r = std::max<int64_t>(64, out - 8); r < out; ++r) check_rows.push_back(r);
        std::vector<float> pack_out;  // the pack's GEMV, for the bit-for-bit column
        std::vector<double> ref;
        for (int64_t r : check_rows)
            ref.push_back(host_row(f.name, host.data() + r * row_bytes, in, aq.data(), ad.data(), as.data()));

        struct Variant {
            std::string name;
            std::function<void(const GemvLaunch&)> launch;
            bool checked;
        };
        std::vector<Variant> variants;
        variants.push_back({"read ceiling", [&](const GemvLaunch& c) {
                                const int64_t n16 = w_bytes / 16;
                                CK(launch_chained(read_kernel, static_cast<unsigned>(sm_count() * 8), 256, 0, stream,
                                                  static_cast<const int4*>(c.weight), n16, c.dst));
                            }, false});
        variants.push_back({"pack", [&](const GemvLaunch& c) { CK(launch_gemv<Dot>(&c, 1, stream)); }, true});
        // The pack's own kernels (ring or direct, as it would pick) with the K split forced to ks:
        // what choose_ks leaves on the table (ks is part of the summation order, so a different
        // choice changes bits, but the GEMMs follow any ks_of).
        for (int ks : {1, 2, 4, 8}) {
            if (ks > static_cast<int>(in / 256)) break;
            variants.push_back({"pack ks" + std::to_string(ks) + (ks == ks_of(out, static_cast<int>(in / 256)) ? "*" : ""),
                                [&, ks](const GemvLaunch& c) {
                                    GemvKernelArgs p = launch_args<Dot>(c, c.in);
                                    p.ks = ks;
                                    p.strided = 0;  // the contiguous-slice kernels (ring or direct)
                                    add_matrix(p, c, 1);
                                    const cudaError_t e = launch_gemv_args<Dot, 1>(p, c.in, c.out, stream);
                                    CK(e);
                                },
                                true});
        }
        if constexpr (Dot::kAlign >= 8) {
            variants.push_back({"k r1 u4 b3", [&](const GemvLaunch& c) { launch_lanesplit<Dot, 1, 4, 3>(c, stream); }, true});
            variants.push_back({"kC4 r1 u4 b3", [&](const GemvLaunch& c) { launch_lanesplit<Dot, 1, 4, 3>(c, stream, 4); }, true});
            variants.push_back({"kS4 r1 u4 b3", [&](const GemvLaunch& c) { launch_lanesplit<Dot, 1, 4, 3, true>(c, stream, 4); }, true});
            variants.push_back({"kS4 r2 u2 b3", [&](const GemvLaunch& c) { launch_lanesplit<Dot, 2, 2, 3, true>(c, stream, 4); }, true});
            variants.push_back({"kS4 r2 u4 b2", [&](const GemvLaunch& c) { launch_lanesplit<Dot, 2, 4, 2, true>(c, stream, 4); }, true});
            variants.push_back({"kS4 r1 u2 b4", [&](const GemvLaunch& c) { launch_lanesplit<Dot, 1, 2, 4, true>(c, stream, 4); }, true});
            variants.push_back({"kS8 r1 u4 b3", [&](const GemvLaunch& c) { launch_lanesplit<Dot, 1, 4, 3, true>(c, stream, 8); }, true});
            variants.push_back({"kS2 r1 u4 b3", [&](const GemvLaunch& c) { launch_lanesplit<Dot, 1, 4, 3, true>(c, stream, 2); }, true});
            variants.push_back({"kS2 r2 u2 b3", [&](const GemvLaunch& c) { launch_lanesplit<Dot, 2, 2, 3, true>(c, stream, 2); }, true});
            variants.push_back({"s4 r2 u2 b3", [&](const GemvLaunch& c) { launch_stream<Dot, 4, 2, 2, 3>(c, stream); }, true});
            variants.push_back({"s4 r1 u4 b3", [&](const GemvLaunch& c) { launch_stream<Dot, 4, 1, 4, 3>(c, stream); }, true});
            // Session 19: with fewer instructions (IQ4's sign split) a lane may need fewer registers:
            // 4 blocks per SM (64 registers) and 2 rows per activation load (its permutes shared).
            variants.push_back({"s4 r1 u4 b4", [&](const GemvLaunch& c) { launch_stream<Dot, 4, 1, 4, 4>(c, stream); }, true});
            variants.push_back({"s4 r2 u2 b4", [&](const GemvLaunch& c) { launch_stream<Dot, 4, 2, 2, 4>(c, stream); }, true});
            // Session 20: the next task's first steps asked of L2 at the start of each task.
            variants.push_back({"s4 r1 u4 b3 pf2", [&](const GemvLaunch& c) { launch_stream<Dot, 4, 1, 4, 3, 2>(c, stream); }, true});
            variants.push_back({"s4 r1 u4 b3 pf4", [&](const GemvLaunch& c) { launch_stream<Dot, 4, 1, 4, 3, 4>(c, stream); }, true});
            variants.push_back({"s4 r2 u2 b3 pf2", [&](const GemvLaunch& c) { launch_stream<Dot, 4, 2, 2, 3, 2>(c, stream); }, true});
            variants.push_back({"s4 r2 u2 b3 pf4", [&](const GemvLaunch& c) { launch_stream<Dot, 4, 2, 2, 3, 4>(c, stream); }, true});
            variants.push_back({"s4 r1 u8 b2", [&](const GemvLaunch& c) { launch_stream<Dot, 4, 1, 8, 2>(c, stream); }, true});
            // 8 strided slices over a warp's 32 lanes (one row group per warp): twice the warp tasks of
            // s4 for the same rows, for the long-K shapes (ffn_down, K = 17408) that fill only ~40 % of
            // the resident warps with s4's tasks.
            variants.push_back({"s8 r1 u4 b3", [&](const GemvLaunch& c) { launch_stream<Dot, 8, 1, 4, 3>(c, stream); }, true});
            variants.push_back({"s8 r2 u2 b3", [&](const GemvLaunch& c) { launch_stream<Dot, 8, 2, 2, 3>(c, stream); }, true});
            variants.push_back({"s8 r1 u2 b3", [&](const GemvLaunch& c) { launch_stream<Dot, 8, 1, 2, 3>(c, stream); }, true});
            variants.push_back({"s8 r2 u4 b2", [&](const GemvLaunch& c) { launch_stream<Dot, 8, 2, 4, 2>(c, stream); }, true});
        } else {
            // Session 22: the ring formats (2-byte-aligned blocks: Q6_K, IQ3_S, IQ3_XXS) read straight
            // from global memory, each field by aligned 32-bit loads and funnel shifts (ld_words<2>),
            // with no shared-memory ring and no block barrier. The pack's Q6_K ring kernel at ssm_out
            // (5120 x 6144) issued ~0.43 instructions per cycle per scheduler with ~5 warps each (ncu):
            // latency-bound. "k" keeps the pack's summation order (its ks, contiguous slices), so a
            // winner there is bit for bit the GEMV and its GEMMs need no change; "s" is the streamed
            // order (8 strided slices), which the GEMMs would have to follow.
            variants.push_back({"k r1 u4 b3", [&](const GemvLaunch& c) { launch_lanesplit<Dot, 1, 4, 3>(c, stream); }, true});
            variants.push_back({"k r2 u2 b3", [&](const GemvLaunch& c) { launch_lanesplit<Dot, 2, 2, 3>(c, stream); }, true});
            variants.push_back({"k r1 u2 b4", [&](const GemvLaunch& c) { launch_lanesplit<Dot, 1, 2, 4>(c, stream); }, true});
            variants.push_back({"s8 r1 u4 b3", [&](const GemvLaunch& c) { launch_stream<Dot, 8, 1, 4, 3>(c, stream); }, true});
            variants.push_back({"s8 r2 u2 b3", [&](const GemvLaunch& c) { launch_stream<Dot, 8, 2, 2, 3>(c, stream); }, true});
            variants.push_back({"s8 r1 u2 b4", [&](const GemvLaunch& c) { launch_stream<Dot, 8, 1, 2, 4>(c, stream); }, true});
            variants.push_back({"s4 r2 u2 b3", [&](const GemvLaunch& c) { launch_stream<Dot, 4, 2, 2, 3>(c, stream); }, true});
        }
        for (auto& v : variants) {
            GemvLaunch c{};
            c.in = in;
            c.out = out;
            c.row_bytes = row_bytes;
            c.act = act_dev;
            c.dst = y;
            c.weight = w[0];
            double worst = 0;
            bool same_bits = false;
            if (v.checked) {
                CK(cudaMemsetAsync(y, 0xFF, static_cast<size_t>(out) * 4, stream));
                v.launch(c);
                CK(cudaStreamSynchronize(stream));
                CK(cudaMemcpy(yh.data(), y, yh.size() * 4, cudaMemcpyDeviceToHost));
                if (v.name == "pack") pack_out = yh;
                same_bits = !pack_out.empty() && std::memcmp(pack_out.data(), yh.data(), yh.size() * 4) == 0;
                for (size_t i = 0; i < check_rows.size(); ++i) {
                    const double e = std::fabs(yh[static_cast<size_t>(check_rows[i])] - ref[i]) / (std::fabs(ref[i]) + 1e-3);
                    if (!(e <= worst)) worst = e;  // NaN stays NaN
                }
            }
            const int n = copies * std::max(1, 64 / copies);
            cudaGraph_t g;
            cudaGraphExec_t ge;
            CK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
            for (int i = 0; i < n; ++i) {
                c.weight = w[static_cast<size_t>(i % copies)];
                v.launch(c);
            }
            CK(cudaStreamEndCapture(stream, &g));
            CK(cudaGraphInstantiate(&ge, g, 0));
            CK(cudaGraphLaunch(ge, stream));
            CK(cudaStreamSynchronize(stream));
            cudaEvent_t e0, e1;
            CK(cudaEventCreate(&e0));
            CK(cudaEventCreate(&e1));
            float best = 1e30f;
            for (int rep = 0; rep < 5; ++rep) {
                CK(cudaEventRecord(e0, stream));
                CK(cudaGraphLaunch(ge, stream));
                CK(cudaEventRecord(e1, stream));
                CK(cudaEventSynchronize(e1));
                float ms;
                CK(cudaEventElapsedTime(&ms, e0, e1));
                best = std::min(best, ms);
            }
            const double us = best * 1000.0 / n;
            std::printf("%-7s %6lld x %-6lld %-13s %7.2f us %6.0f GB/s", f.name, static_cast<long long>(out),
                        static_cast<long long>(in), v.name.c_str(), us, static_cast<double>(w_bytes) / (us * 1e3));
            if (v.checked)
                std::printf("  max rel err %.1e%s%s", worst, worst < 1e-4 ? "" : "  MISMATCH",
                            same_bits ? "  (= pack, bit for bit)" : "");
            std::printf("\n");
            std::fflush(stdout);
            CK(cudaGraphExecDestroy(ge));
            CK(cudaGraphDestroy(g));
            CK(cudaEventDestroy(e0));
            CK(cudaEventDestroy(e1));
        }
        for (auto& ptr : w) CK(cudaFree(ptr));
        CK(cudaFree(act_dev));
        CK(cudaFree(y));
    }
}

int main(int argc, char** argv) {
    std::vector<std::string> want;
    for (int i = 1; i < argc; ++i) want.push_back(argv[i]);
    auto on = [&](const char* n) {
        if (want.empty()) return true;
        for (auto& w : want)
            if (w == n) return true;
        return false;
    };
    cudaStream_t stream;
    CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    // (in, out): ffn_gate/up, ffn_down, attn_qkv-like, Gated DeltaNet qkv
    const std::vector<std::pair<int64_t, int64_t>> shapes = {{5120, 17408}, {17408, 5120}, {5120, 10240}, {5120, 6144}};
    if (on("iq4_xs")) run_format<IQ4_XSDot>({"iq4_xs", 256, 136, {0}}, shapes, stream);
    if (on("iq4_xs_lookup")) {
        std::printf("-- iq4_xs with the lookup16 codes of session 18 (IQ4_XSLookupDot):\n");
        run_format<IQ4_XSLookupDot>({"iq4_xs", 256, 136, {0}}, shapes, stream);
    }
    if (on("q4_k")) run_format<Q4_KDot>({"q4_k", 256, 144, {0, 2}}, shapes, stream);
    if (on("q5_k")) run_format<Q5_KDot>({"q5_k", 256, 176, {0, 2}}, shapes, stream);
    // The ring formats of the seed-iq4 mix, at their 27B shapes: ssm_out / attn_output (6144 -> 5120)
    // and the FFN shapes.
    const std::vector<std::pair<int64_t, int64_t>> ring_shapes = {{6144, 5120}, {5120, 17408}, {17408, 5120}};
    if (on("q6_k")) run_format<Q6_KDot>({"q6_k", 256, 210, {208}}, ring_shapes, stream);
    if (on("q6_k_sub")) {
        std::printf("-- q6_k with the sub_bytes codes of session 18 (Q6_KSubBytesDot):\n");
        run_format<Q6_KSubBytesDot>({"q6_k", 256, 210, {208}}, ring_shapes, stream);
    }
    if (on("iq3_s")) run_format<IQ3_SDot>({"iq3_s", 256, 110, {0}}, ring_shapes, stream);
    if (on("iq3_xxs")) run_format<IQ3_XXSDot>({"iq3_xxs", 256, 98, {0}}, ring_shapes, stream);
    // Session 23: the other formats below 8-byte alignment, each GEMV far from the issue's 80 % of the
    // read ceiling in session 21's micro-bench (Q3_K 19-27 %, Q2_K 24-34, IQ2 14-23, IQ4_NL 33-45, Q8_0
    // 43-61), at the shapes where the seed-iq4 27B has them (FFN: IQ2_S / IQ2_XS gate and up, Q3_K all
    // three; attention: Q2_K / IQ4_NL attn_q 5120 -> 12288, Q8_0 attn_k / attn_v 5120 -> 1024) plus
    // the FFN shapes for all, the bar's shapes. Same variants as the ring formats above.
    const std::vector<std::pair<int64_t, int64_t>> ffn_shapes = {{5120, 17408}, {17408, 5120}};
    const std::vector<std::pair<int64_t, int64_t>> attn_q_shapes = {{5120, 12288}, {5120, 17408}, {17408, 5120}};
    const std::vector<std::pair<int64_t, int64_t>> kv_shapes = {{5120, 1024}, {5120, 17408}, {17408, 5120}};
    if (on("q3_k")) run_format<Q3_KDot>({"q3_k", 256, 110, {108}}, ffn_shapes, stream);
    if (on("q2_k")) run_format<Q2_KDot>({"q2_k", 256, 84, {80, 82}}, attn_q_shapes, stream);
    if (on("iq2_xs")) run_format<IQ2_XSDot>({"iq2_xs", 256, 74, {0}}, ffn_shapes, stream);
    if (on("iq2_s")) run_format<IQ2_SDot>({"iq2_s", 256, 82, {0}}, ffn_shapes, stream);
    if (on("iq4_nl")) run_format<IQ4_NLDot>({"iq4_nl", 32, 18, {0}}, attn_q_shapes, stream);
    if (on("q8_0")) run_format<Q8_0Dot>({"q8_0", 32, 34, {0}}, kv_shapes, stream);
    return 0;
}
