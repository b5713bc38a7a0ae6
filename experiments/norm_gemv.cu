// Experiment (not part of the build), session 28: what would the RMS norm cost if the GEMV after it
// computed it itself? Every GEMV list of the 27B step follows a norm (attn_norm -> q/k/v or the GDN
// list, post_attention_norm -> ffn_gate/up, the gated norm -> ssm_out): 129 + 48 single-block norm
// kernels a token, each one more dependent grid in the chain (its predecessor's completion and flush,
// its own block's load -> tree sum -> quantize -> store, then the GEMV's release). Fusing the norm
// into the pack ABI (a norm + GEMV-list op, cpu-ref oracle, graph fusion, a prologue in every GEMV
// kernel variant) is a session's work; this measures the gain first.
//
// Three chains of the same GEMV kernel (the pack's streamed layout: 8 strided K slices over a warp's
// lanes, 2 rows a task, 2 steps in flight, the pack's Dot code), each captured as a graph of
// chained (PDL) launches over weight copies larger than L2:
//   gemv      the GEMV alone, its Q8_32 activation in global memory (the lower bound);
//   norm+gemv the pack's RMS norm kernel (ops_norm.cu, with its Q8_32 copy), then the GEMV;
//   fused     the GEMV whose blocks each compute the norm of x and its Q8_32 copy into shared
//             memory first (every block reads x: 20-24 KB from L2), then read the activation there.
// fused - gemv is what the prologue costs; norm+gemv - fused is what fusing would save per norm.
// The fused prologue's sum of squares is not the norm kernel's order (3 octets a thread over 256
// threads instead of 1 over 640), so the outputs are compared within a tolerance, not bit for bit.
//
// Session 43 (`split`): the small node between two GEMVs done by the warps of the GEMV BEFORE it,
// in its epilogue, with no node and no prologue: the warp that finishes the last task of a 32-row
// group (an atomic count a group) quantizes that group. For the RMS norm the scale is left out of
// the Q8_32 codes (they do not depend on it) and the group's sum of squares is written beside them;
// the GEMV after it applies the scale to its outputs at the end. For SwiGLU nothing is deferred, so
// its quantized copy is the node's, bit for bit. Links: down -> norm -> gate+up and ssm_out -> norm
// -> qkv+gate (node / split / no norm), gate+up -> SwiGLU -> down (node / epilogue / no node).
//
// Build (here or on the GPU machine):
//   nvcc -O3 -std=c++20 -arch=sm_90 -DDENSE_CUDA_TARGET_CC=90 -Iplugins/cuda-common/src \
//        -Ibuild/plugins/generated experiments/norm_gemv.cu plugins/cuda-common/src/kernels/launch_chain.cu \
//        plugins/cuda-common/src/kernels/ops_norm.cu plugins/cuda-common/src/kernels/ops_elementwise.cu \
//        -o experiments/norm_gemv
// Run: experiments/norm_gemv [iq4_xs q5_k q6_k q6_k_wide split]   prints us per chain link for each shape.
#include "kernels/act_common.cuh"
#include "kernels/act_launchers.hpp"
#include "kernels/act_step_math.cuh"
#include "kernels/gemv_dot_iq4.cuh"
#include "kernels/gemv_dot_q4_k.cuh"
#include "kernels/gemv_dot_q5_k.cuh"
#include "kernels/gemv_dot_q6_k.cuh"
#include "kernels/gemv_kernel.cuh"
#include "kernels/q8_32_block.cuh"

#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

using namespace dense::cuda;
using namespace dense::cuda::gemv;
using namespace dense::cuda::act;

#define CK(x)                                                                                       \
    do {                                                                                            \
        cudaError_t e_ = (x);                                                                       \
        if (e_ != cudaSuccess) {                                                                    \
            std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            std::exit(1);                                                                           \
        }                                                                                           \
    } while (0)

namespace {

constexpr int kMaxIn = 6144;       // the prologue's shared Q8_32 copy: codes, then d, then s
constexpr int kOctetsPerThread = kMaxIn / 8 / 256;
constexpr int kRows = 2;           // rows a task (the pack's kStreamRows)
constexpr int kSlices = 8;

struct Args {
    const uint8_t* w;
    int64_t rows, row_bytes;
    int steps;
    int64_t tasks;
    ActView act;  // unfused: the activation in global memory
    float* dst;
    const float* x;   // fused: the norm's input and weight
    const float* nw;
    int n;
    float eps;
    // kQuantOut (session 43): the producer's epilogue. nw is then the NEXT norm's weight ({rows});
    // qout the Q8_32 copy of dst * nw (no norm scale) for the next GEMV, partial[g] the sum of
    // squares of dst's rows 32g..32g+31, counters[g] the tasks finished in that group (never reset:
    // a group is complete when a count reaches a multiple of its task count).
    uint8_t* qout;
    float* partial;
    unsigned* counters;
    // kLatePartials: the consumer's norm scale from `groups` partial sums of squares over `n` rows.
    const float* partial_in;
    int groups;
    // kSwigluOut: dst is [gate rows | up rows], `half` rows each; qout gets Q8_32(silu(gate) * up) and
    // counters[g] counts the tasks of gate group g and up group g (32 in all).
    int64_t half;
};

// kLateScale: the block's sum of squares from the per-warp partials the prologue left in scratch
// (written before its barrier), added in warp order by every warp itself.
__device__ __forceinline__ float late_total(float, const float* scratch) {
    float t = 0.0f;
#pragma unroll
    for (int w = 0; w < 8; ++w) t += scratch[w];
    return t;
}

// The activation pair of block b from a generic pointer (shared memory in the fused kernel).
__device__ __forceinline__ void load_act_pair_generic(const ActView& act, int64_t b, ActUnit& a) {
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
    const float2 s = *reinterpret_cast<const float2*>(act.s + b);
    a.d[0] = d.x;
    a.d[1] = d.y;
    a.s[0] = s.x;
    a.s[1] = s.y;
}

// Q6_K's unit as it was before session 28: ql and qh by 32-bit loads and funnel shifts (ld_words<2>).
// The pack's Q6_KDot now reads them with 8-byte loads (gemv_common.cuh, ld_words_by8): the same words,
// so the two must agree bit for bit.
struct Q6_KNarrowDot : Q6_KDot {
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
                q[i] = ((ql[8 * k + i] >> nib_shift) & 0x0F0F0F0Fu) | (((qh[i] >> hshift) & 0x03030303u) << 4);
            int32_t s0, s1;
            dot16x2(q, &a.q[8 * k], s0, s1);
            int32_t a0 = 0, a1 = 0;
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                a0 = sum4(a.q[8 * k + i], a0);
                a1 = sum4(a.q[8 * k + 4 + i], a1);
            }
            s0 -= 32 * a0;
            s1 -= 32 * a1;
            const auto sc0 = static_cast<int32_t>(static_cast<int8_t>(byte_of(scales, 2 * k)));
            const auto sc1 = static_cast<int32_t>(static_cast<int8_t>(byte_of(scales, 2 * k + 1)));
            term[k] = mul(mul(d, a.d[k]), to_f(sc0 * s0 + sc1 * s1));
        }
    }
};

// MODE: kFused (the norm in the prologue), kPrefetchTask (before the wait, ask L2 for the warp's
// whole first task, not two steps of a row), kLateScale (the prologue quantizes x * w without the
// norm's scale s, whose block sum runs after the task loop: y = s * W q(x * w), exact in real
// arithmetic because a Q8_32 block's codes do not depend on a common factor, only its d does).
// kQuantOut and kLatePartials (session 43) split the norm between the two GEMVs around it: the
// producer's warp that finishes the last task of a 32-row group quantizes that group (times the norm
// weight, without the scale) and writes its sum of squares; the consumer reads the Q8_32 copy as it
// reads any activation and multiplies its outputs by the scale from the partial sums at the end (their
// loads issued into shared memory before its task loop, so nothing waits for them up front).
constexpr int kFused = 1, kPrefetchTask = 2, kLateScale = 4, kQuantOut = 8, kLatePartials = 16, kSwigluOut = 32;
// kReleaseAtomic: the count as one acq_rel atomic of lane 0 (which then stores both rows) instead of
// a fence in every lane, the atomic, and a second fence in the group's last warp.
constexpr int kReleaseAtomic = 64;
constexpr int kMaxGroups = 192;  // kLatePartials: the partial sums a warp stages (IN <= 6144)

// The group count of one finished task (its rows stored): true in every lane of the warp that
// finished the group's last task, whose loads after this then see every row of the group.
template <bool kRelease>
__device__ __forceinline__ bool finish_task(unsigned* counter, unsigned tasks_per_group, int lane) {
    unsigned before = 0;
    if constexpr (kRelease) {
        if (lane == 0)
            asm volatile("atom.add.acq_rel.gpu.global.u32 %0, [%1], 1;" : "=r"(before) : "l"(counter) : "memory");
    } else {
        __threadfence();
        __syncwarp();
        if (lane == 0) before = atomicAdd(counter, 1u);
    }
    before = __shfl_sync(0xFFFFFFFFu, before, 0);
    const bool last = before % tasks_per_group == tasks_per_group - 1;
    if (last) {
        if constexpr (kRelease) __syncwarp();
        else __threadfence();
    }
    return last;
}

template <class Dot, int MODE>
__global__ void __launch_bounds__(256, 3) stream_gemv(const __grid_constant__ Args p) {
    constexpr bool FUSED = (MODE & kFused) != 0;
    constexpr int A = Dot::kAlign;
    __shared__ __align__(16) uint8_t table[kTableSmem<Dot>];
    __shared__ __align__(16) uint8_t act_smem[FUSED ? kMaxIn + kMaxIn / 4 : 16];
    __shared__ float scratch[33];
    __shared__ __align__(16) float late_smem[(MODE & kLatePartials) ? 8 * kMaxGroups : 4];
    const int warp = static_cast<int>(threadIdx.x >> 5);
    const int lane = static_cast<int>(threadIdx.x & 31);
    const int u = lane & 3;
    const int slice = lane >> 2;
    const int64_t n_warps = static_cast<int64_t>(gridDim.x) * 8;
    const int64_t first_task = static_cast<int64_t>(blockIdx.x) * 8 + warp;
    if (first_task < p.tasks) {  // the pack's prologue prefetch: two steps of the first row
        const int rows = (MODE & kPrefetchTask) ? kRows : 1;
        const int steps = (MODE & kPrefetchTask) ? p.steps : 2 * kSlices;
#pragma unroll 1
        for (int r = 0; r < rows; ++r) {
            const uint8_t* row = p.w + min(first_task * kRows + r, p.rows - 1) * p.row_bytes;
#pragma unroll 1
            for (int st = slice; st < p.steps && st < steps; st += kSlices)
                for (int off = 32 * u; off < Dot::kStepBytes; off += 128)
                    asm volatile("prefetch.global.L2 [%0];" ::"l"(row + static_cast<int64_t>(st) * Dot::kStepBytes + off));
        }
    }
    IqTables tables;
    stage_tables<Dot>(table, tables);
    __syncthreads();
    wait_for_producers();
    allow_consumers();

    ActView act = p.act;
    float late_ss = 0.0f;
    if constexpr ((MODE & kLatePartials) != 0) {
        // This warp's copy of the partial sums, 16 bytes a lane per copy, no registers held.
        float* mine = late_smem + kMaxGroups * warp;
        for (int c = lane; 4 * c < p.groups; c += 32) {
            const auto dst = static_cast<unsigned>(__cvta_generic_to_shared(mine + 4 * c));
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(p.partial_in + 4 * c) : "memory");
        }
        asm volatile("cp.async.commit_group;" ::: "memory");
    }
    if constexpr (FUSED) {
        // x's norm and its Q8_32 copy in shared memory: octets t, t + 256, t + 512 of each thread.
        // x is read twice (the second time from L1), so nothing but the sum lives across the
        // block reduction's barriers: the GEMV's 80 registers are the limit.
        const int t = static_cast<int>(threadIdx.x);
        float ss = 0.0f;
#pragma unroll
        for (int j = 0; j < kOctetsPerThread; ++j) {
            float v[8];
            load_octet(p.x, 8 * (t + 256 * j), p.n, true, v);
            ss += octet_sum_of_squares(v);
        }
        float scale = 1.0f;
        if constexpr ((MODE & kLateScale) == 0) {
            ss = block_sum(ss, scratch);
            scale = rms_scale(ss, static_cast<float>(p.n), p.eps);
        } else {
            late_ss = warp_sum(ss);  // each warp's partial, for late_total after the task loop
            if ((threadIdx.x & 31u) == 0) scratch[threadIdx.x >> 5] = late_ss;
        }
        const Q8_32Out out{act_smem, p.n};
#pragma unroll 1
        for (int j = 0; j < kOctetsPerThread; ++j) {
            const int64_t i0 = 8 * (t + 256 * j);
            float v[8], w[8];
            load_octet(p.x, i0, p.n, true, v);
            load_octet(p.nw, i0, p.n, true, w);
#pragma unroll
            for (int e = 0; e < 8; ++e) v[e] = v[e] * scale * w[e];
            quantize_q8_32_octets(v, i0 < p.n, i0 / 32, out);
        }
        __syncthreads();
        act.q = reinterpret_cast<const int8_t*>(act_smem);
        act.d = reinterpret_cast<const float*>(act_smem + p.n);
        act.s = act.d + p.n / 32;
    }

    for (int64_t task = first_task; task < p.tasks; task += n_warps) {
        const int64_t row0 = task * kRows;
        const uint8_t* base[kRows];
#pragma unroll
        for (int r = 0; r < kRows; ++r) base[r] = p.w + min(row0 + r, p.rows - 1) * p.row_bytes;
        float acc[kRows] = {};
#pragma unroll 2
        for (int st = slice; st < p.steps; st += kSlices) {
            ActUnit a;
            if constexpr (FUSED) load_act_pair_generic(act, st * 8 + 2 * u, a);
            else load_act_pair(act, st * 8 + 2 * u, a);
#pragma unroll
            for (int r = 0; r < kRows; ++r) {
                float term[2];
                Dot::template unit<A>(base[r] + static_cast<int64_t>(st) * Dot::kStepBytes, u, a, tables, term);
                acc[r] = add(add(acc[r], term[0]), term[1]);
            }
        }
#pragma unroll
        for (int r = 0; r < kRows; ++r)
#pragma unroll
            for (int m = 1; m < 32; m *= 2) acc[r] = add(acc[r], __shfl_xor_sync(0xFFFFFFFFu, acc[r], m));
        if constexpr ((MODE & kLateScale) != 0) {
            // The scale's block sum (its barriers need the whole block: every warp of the grid has
            // the same task count but for the last round, so this warp-level sum is the experiment's
            // stand-in: each warp sums the block's partials from shared memory written below).
            const float s = rms_scale(late_total(late_ss, scratch), static_cast<float>(p.n), p.eps);
            acc[0] *= s;
            acc[1] *= s;
        }
        if constexpr ((MODE & kLatePartials) != 0) {
            asm volatile("cp.async.wait_all;" ::: "memory");
            __syncwarp();
            const float* mine = late_smem + kMaxGroups * warp;
            float ss = 0.0f;
            for (int g = lane; g < p.groups; g += 32) ss += mine[g];
            const float s = rms_scale(warp_sum(ss), static_cast<float>(p.n), p.eps);
            acc[0] *= s;
            acc[1] *= s;
        }
        constexpr bool kRelease = (MODE & kReleaseAtomic) != 0;
        if (kRelease) {  // lane 0 stores both rows, so its own release orders them before its count
            if (lane == 0) {
                p.dst[row0] = acc[0];
                if (row0 + 1 < p.rows) p.dst[row0 + 1] = acc[1];
            }
        } else if (lane < kRows && row0 + lane < p.rows) {
            p.dst[row0 + lane] = lane == 0 ? acc[0] : acc[1];
        }
        if constexpr ((MODE & kQuantOut) != 0) {
            const int64_t g = row0 / 32;
            if (finish_task<kRelease>(p.counters + g, 32 / kRows, lane)) {  // the group's last task: quantize it
                const int64_t r = 32 * g + lane;
                const float v = __ldcg(p.dst + r) * p.nw[r];
                const float ss = warp_sum(v * v);
                quantize_q8_32_block(v, g, Q8_32Out{p.qout, p.rows});
                if (lane == 0) p.partial[g] = ss;
            }
        }
        if constexpr ((MODE & kSwigluOut) != 0) {  // the same, for SwiGLU's quantized copy (exact: no scale)
            const int64_t g = (row0 < p.half ? row0 : row0 - p.half) / 32;
            if (finish_task<kRelease>(p.counters + g, 2 * 32 / kRows, lane)) {
                const int64_t r = 32 * g + lane;
                const float v = silu_f(__ldcg(p.dst + r)) * __ldcg(p.dst + p.half + r);
                quantize_q8_32_block(v, g, Q8_32Out{p.qout, p.half});
            }
        }
    }
}

template <class Dot, int MODE>
void launch(const Args& p, cudaStream_t stream) {
    static int occ = 0;
    if (occ == 0) CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, stream_gemv<Dot, MODE>, 256, 0));
    const int64_t max_blocks = static_cast<int64_t>(sm_count()) * occ;
    const int64_t need = (p.tasks + 7) / 8;
    const int64_t per_block = (need + max_blocks - 1) / max_blocks;
    const int64_t blocks = (need + per_block - 1) / per_block;
    CK(launch_chained(stream_gemv<Dot, MODE>, static_cast<unsigned>(blocks), 256, 0, stream, p));
}

// µs per link of `links` links that enqueue(i) captures into one graph: the best of 7 replays after
// one untimed replay. (The second Q6_K chain below leaked its events; both now go through this.)
template <class Enqueue>
double time_graph(cudaStream_t stream, int links, Enqueue&& enqueue) {
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < links; ++i) enqueue(i);
    CK(cudaStreamEndCapture(stream, &graph));
    CK(cudaGraphInstantiate(&exec, graph, 0));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    CK(cudaGraphLaunch(exec, stream));
    double best = 1e30;
    for (int r = 0; r < 7; ++r) {
        CK(cudaEventRecord(e0, stream));
        CK(cudaGraphLaunch(exec, stream));
        CK(cudaEventRecord(e1, stream));
        CK(cudaEventSynchronize(e1));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        best = std::min(best, 1000.0 * ms / links);
    }
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    CK(cudaGraphExecDestroy(exec));
    CK(cudaGraphDestroy(graph));
    return best;
}

// Random blocks of a weight {in, out} (the fp16 fields at f16_offsets of each
// block set to small positive scales), uploaded as enough copies to rotate through more than L2.
// Returns the bytes of one copy.
int64_t upload_weight_copies(int64_t in, int64_t out, int block_elems, int block_bytes,
                             const std::vector<int>& f16_offsets, std::mt19937_64& rng, std::vector<uint8_t*>& copies,
                             int64_t& row_bytes) {
    std::uniform_real_distribution<float> sc(0.0005f, 0.004f);
    row_bytes = in / block_elems * block_bytes;
    const int64_t bytes = row_bytes * out;
    std::vector<uint8_t> host(static_cast<size_t>(bytes));
    for (auto& b : host) b = static_cast<uint8_t>(rng());
    for (int64_t b = 0; b < bytes / block_bytes; ++b)
        for (int off : f16_offsets) {
            const uint16_t h = __half_as_ushort(__float2half(sc(rng)));
            std::memcpy(&host[static_cast<size_t>(b * block_bytes + off)], &h, 2);
        }
    copies.resize(static_cast<size_t>(std::max<int64_t>(2, (256ll << 20) / bytes + 1)));
    for (auto& ptr : copies) {
        CK(cudaMalloc(&ptr, static_cast<size_t>(bytes + 256)));
        CK(cudaMemcpy(ptr, host.data(), static_cast<size_t>(bytes), cudaMemcpyHostToDevice));
    }
    return bytes;
}

// A random Q8_32 activation of n elements (codes, then d, then s): small positive d, and s = d * sum q
// as the rule says (only the K-quants' minimum terms read it).
std::vector<uint8_t> random_q8_32(int64_t n, std::mt19937_64& rng) {
    std::uniform_real_distribution<float> sc(0.004f, 0.032f);
    std::vector<uint8_t> buf(static_cast<size_t>(n + n / 4));
    std::vector<float> d(static_cast<size_t>(n / 32)), sum_d(static_cast<size_t>(n / 32));
    for (int64_t b = 0; b < n / 32; ++b) {
        int sum = 0;
        for (int i = 0; i < 32; ++i) {
            const int q = static_cast<int>(rng() % 255) - 127;
            buf[static_cast<size_t>(32 * b + i)] = static_cast<uint8_t>(static_cast<int8_t>(q));
            sum += q;
        }
        d[static_cast<size_t>(b)] = sc(rng);
        sum_d[static_cast<size_t>(b)] = d[static_cast<size_t>(b)] * static_cast<float>(sum);
    }
    std::memcpy(&buf[static_cast<size_t>(n)], d.data(), d.size() * 4);
    std::memcpy(&buf[static_cast<size_t>(n + n / 8)], sum_d.data(), sum_d.size() * 4);
    return buf;
}

struct Shape {
    const char* what;
    int64_t in, out;
};

template <class Dot>
void run(const char* fmt, std::vector<int> f16_offsets, const Shape& shape, cudaStream_t stream) {
    const int64_t in = shape.in, out = shape.out;
    std::mt19937_64 rng(42 + in + out);
    std::vector<uint8_t*> w;
    int64_t row_bytes = 0;
    const int64_t w_bytes =
        upload_weight_copies(in, out, Dot::kBlockElems, Dot::kBlockBytes, f16_offsets, rng, w, row_bytes);
    const int copies = static_cast<int>(w.size());
    std::vector<float> xh(static_cast<size_t>(in)), nwh(static_cast<size_t>(in));
    std::normal_distribution<float> nd(0.0f, 1.0f);
    for (auto& v : xh) v = nd(rng);
    for (auto& v : nwh) v = 1.0f + 0.1f * nd(rng);
    float *x, *nw, *y, *normed, *dst_a, *dst_b;
    uint8_t* act;
    CK(cudaMalloc(&x, in * 4));
    CK(cudaMalloc(&nw, in * 4));
    CK(cudaMalloc(&normed, in * 4));
    CK(cudaMalloc(&act, in + in / 4));
    CK(cudaMalloc(&y, out * 4 + 4096));
    CK(cudaMalloc(&dst_a, out * 4));
    CK(cudaMalloc(&dst_b, out * 4));
    CK(cudaMemcpy(x, xh.data(), in * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(nw, nwh.data(), in * 4, cudaMemcpyHostToDevice));

    Args base{};
    base.rows = out;
    base.row_bytes = row_bytes;
    base.steps = static_cast<int>(in / 256);
    base.tasks = (out + kRows - 1) / kRows;
    base.act = {reinterpret_cast<const int8_t*>(act), reinterpret_cast<const float*>(act + in),
                reinterpret_cast<const float*>(act + in + in / 8)};
    base.x = x;
    base.nw = nw;
    base.n = static_cast<int>(in);
    base.eps = 1e-6f;
    act::NormArgs na{};
    na.x = x;
    na.x_stride = in;
    na.w = nw;
    na.y = normed;
    na.y_stride = in;
    na.n = in;
    na.rows = 1;
    na.eps = 1e-6f;
    na.quantized = {act, in};

    // Check: the fused GEMV against norm + GEMV on copy 0.
    Args a = base;
    a.w = w[0];
    a.dst = dst_a;
    CK(act::launch_rms_norm(na, stream));
    launch<Dot, 0>(a, stream);
    a.dst = dst_b;
    launch<Dot, kFused>(a, stream);
    CK(cudaStreamSynchronize(stream));
    std::vector<float> ra(static_cast<size_t>(out)), rb(static_cast<size_t>(out));
    CK(cudaMemcpy(ra.data(), dst_a, out * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(rb.data(), dst_b, out * 4, cudaMemcpyDeviceToHost));
    double scale = 0, worst = 0;
    for (float v : ra) scale = std::max(scale, static_cast<double>(std::fabs(v)));
    for (int64_t r = 0; r < out; ++r) worst = std::max(worst, std::fabs(static_cast<double>(ra[r]) - rb[r]));
    a.dst = dst_b;
    launch<Dot, kFused | kLateScale>(a, stream);
    CK(cudaStreamSynchronize(stream));
    CK(cudaMemcpy(rb.data(), dst_b, out * 4, cudaMemcpyDeviceToHost));
    double worst_late = 0;
    for (int64_t r = 0; r < out; ++r) worst_late = std::max(worst_late, std::fabs(static_cast<double>(ra[r]) - rb[r]));
    std::printf("%-7s %-14s %5lld x %-6lld %6.1f MB | against norm+gemv, max |diff|: fused %.3g, late scale %.3g (max |y| %.3g)\n",
                fmt, shape.what, static_cast<long long>(in), static_cast<long long>(out), w_bytes / 1e6, worst, worst_late,
                scale);

    constexpr int kLinks = 32;
    auto time_chain = [&](int kind) {  // 0 gemv, 1 norm+gemv, 2 fused, 3 norm alone, 4-7 the variants below
        return time_graph(stream, kLinks, [&](int i) {
            Args l = base;
            l.w = w[static_cast<size_t>(i % copies)];
            l.dst = y;
            if (kind == 1 || kind == 3) CK(act::launch_rms_norm(na, stream));
            if (kind == 0 || kind == 1) launch<Dot, 0>(l, stream);
            if (kind == 2) launch<Dot, kFused>(l, stream);
            if (kind == 4) launch<Dot, kFused | kPrefetchTask>(l, stream);
            if (kind == 5) launch<Dot, kFused | kLateScale>(l, stream);
            if (kind == 6) launch<Dot, kFused | kLateScale | kPrefetchTask>(l, stream);
            if (kind == 7) {
                CK(act::launch_rms_norm(na, stream));
                launch<Dot, kPrefetchTask>(l, stream);
            }
        });
    };
    const double t_gemv = time_chain(0), t_pair = time_chain(1), t_fused = time_chain(2), t_norm = time_chain(3);
    const double t_fpf = time_chain(4), t_late = time_chain(5), t_late_pf = time_chain(6), t_pair_pf = time_chain(7);
    std::printf("        us a link: gemv %.2f | norm+gemv %.2f | fused %.2f | norm alone %.2f  ->  the norm costs %.2f in the "
                "chain, the prologue %.2f; fusing saves %.2f us (%.1f %%)\n",
                t_gemv, t_pair, t_fused, t_norm, t_pair - t_gemv, t_fused - t_gemv, t_pair - t_fused,
                100.0 * (t_pair - t_fused) / t_pair);
    std::printf("        us a link: fused + first task to L2 %.2f | fused, late scale %.2f | fused, late scale + first task "
                "%.2f | norm + gemv with the first task to L2 %.2f\n",
                t_fpf, t_late, t_late_pf, t_pair_pf);
    for (auto* ptr : w) CK(cudaFree(ptr));
    for (void* ptr : {static_cast<void*>(x), static_cast<void*>(nw), static_cast<void*>(normed), static_cast<void*>(act),
                      static_cast<void*>(y), static_cast<void*>(dst_a), static_cast<void*>(dst_b)})
        CK(cudaFree(ptr));
}

// Q6_KNarrowDot (32-bit loads) against the pack's Q6_KDot (8-byte loads): the same GEMV chain (no
// norm), bit for bit, and its time.
void compare_q6_k_wide(const Shape& shape, cudaStream_t stream) {
    const int64_t in = shape.in, out = shape.out;
    std::mt19937_64 rng(7 + in + out);
    std::vector<uint8_t*> w;
    int64_t row_bytes = 0;
    const int64_t w_bytes = upload_weight_copies(in, out, 256, 210, {208}, rng, w, row_bytes);
    const int copies = static_cast<int>(w.size());
    std::vector<uint8_t> acth(static_cast<size_t>(in + in / 4));
    for (int64_t i = 0; i < in; ++i) acth[static_cast<size_t>(i)] = static_cast<uint8_t>(rng() % 255);
    std::uniform_real_distribution<float> sc(0.0005f, 0.004f);
    for (int64_t b = 0; b < in / 16; ++b) {  // d then s: small positive floats
        const float v = sc(rng) * 4;
        std::memcpy(&acth[static_cast<size_t>(in + 4 * b)], &v, 4);
    }
    uint8_t* act;
    float *ya, *yb;
    CK(cudaMalloc(&act, acth.size()));
    CK(cudaMalloc(&ya, out * 4));
    CK(cudaMalloc(&yb, out * 4));
    CK(cudaMemcpy(act, acth.data(), acth.size(), cudaMemcpyHostToDevice));
    Args p{};
    p.rows = out;
    p.row_bytes = row_bytes;
    p.steps = static_cast<int>(in / 256);
    p.tasks = (out + kRows - 1) / kRows;
    p.act = {reinterpret_cast<const int8_t*>(act), reinterpret_cast<const float*>(act + in),
             reinterpret_cast<const float*>(act + in + in / 8)};
    p.w = w[0];
    p.dst = ya;
    launch<Q6_KNarrowDot, 0>(p, stream);
    p.dst = yb;
    launch<Q6_KDot, 0>(p, stream);
    CK(cudaStreamSynchronize(stream));
    std::vector<float> ra(static_cast<size_t>(out)), rb(static_cast<size_t>(out));
    CK(cudaMemcpy(ra.data(), ya, out * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(rb.data(), yb, out * 4, cudaMemcpyDeviceToHost));
    const bool same = std::memcmp(ra.data(), rb.data(), static_cast<size_t>(out) * 4) == 0;
    auto chain = [&](bool wide) {
        return time_graph(stream, 32, [&](int i) {
            Args l = p;
            l.w = w[static_cast<size_t>(i % copies)];
            if (wide) launch<Q6_KDot, 0>(l, stream);
            else launch<Q6_KNarrowDot, 0>(l, stream);
        });
    };
    const double t_old = chain(false), t_wide = chain(true), t_old2 = chain(false), t_wide2 = chain(true);
    std::printf("q6_k %-8s %5lld x %-6lld %6.1f MB | 8-byte loads bit for bit: %s | us a GEMV: 32-bit loads %.2f / %.2f, "
                "8-byte loads %.2f / %.2f (%.0f / %.0f GB/s)\n",
                shape.what, static_cast<long long>(in), static_cast<long long>(out), w_bytes / 1e6, same ? "yes" : "NO",
                t_old, t_old2, t_wide, t_wide2, w_bytes / 1e3 / std::min(t_old, t_old2), w_bytes / 1e3 / std::min(t_wide, t_wide2));
    for (auto* ptr : w) CK(cudaFree(ptr));
    CK(cudaFree(act));
    CK(cudaFree(ya));
    CK(cudaFree(yb));
}

// Session 43: the FFN's down -> norm -> gate/up links with the norm split between the two GEMVs
// (kQuantOut in the producer, kLatePartials in the consumer) against the pack's norm node between
// them, and against no norm at all (the floor). The down GEMV (5120 x IN_DOWN) writes the residual
// stream; the gate/up GEMV (OUT_UP x 5120) reads its normed Q8_32 copy.
template <class DownDot, class UpDot>
void run_split_norm(const char* what, std::vector<int> down_f16, std::vector<int> up_f16, int64_t in_down,
                    int64_t out_up, cudaStream_t stream) {
    constexpr int64_t kHidden = 5120;
    std::mt19937_64 rng(1234 + in_down + out_up);
    std::vector<uint8_t*> wd, wu;
    int64_t rb_down = 0, rb_up = 0;
    const int64_t bytes_down =
        upload_weight_copies(in_down, kHidden, DownDot::kBlockElems, DownDot::kBlockBytes, down_f16, rng, wd, rb_down);
    const int64_t bytes_up =
        upload_weight_copies(kHidden, out_up, UpDot::kBlockElems, UpDot::kBlockBytes, up_f16, rng, wu, rb_up);

    const std::vector<uint8_t> act_down_h = random_q8_32(in_down, rng);
    std::vector<float> nwh(static_cast<size_t>(kHidden));
    std::normal_distribution<float> nd(0.0f, 1.0f);
    for (auto& v : nwh) v = 1.0f + 0.1f * nd(rng);

    uint8_t *act_down, *act_up;
    float *resid, *nw, *y, *y_ref, *partial, *normed;
    unsigned* counters;
    CK(cudaMalloc(&act_down, act_down_h.size()));
    CK(cudaMalloc(&act_up, kHidden + kHidden / 4));
    CK(cudaMalloc(&resid, kHidden * 4));
    CK(cudaMalloc(&normed, kHidden * 4));
    CK(cudaMalloc(&nw, kHidden * 4));
    CK(cudaMalloc(&y, out_up * 4));
    CK(cudaMalloc(&y_ref, out_up * 4));
    CK(cudaMalloc(&partial, kMaxGroups * 4));
    CK(cudaMalloc(&counters, kHidden / 32 * 4));
    CK(cudaMemset(counters, 0, kHidden / 32 * 4));
    CK(cudaMemcpy(act_down, act_down_h.data(), act_down_h.size(), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(nw, nwh.data(), kHidden * 4, cudaMemcpyHostToDevice));

    Args down{};
    down.rows = kHidden;
    down.row_bytes = rb_down;
    down.steps = static_cast<int>(in_down / 256);
    down.tasks = kHidden / kRows;
    down.act = {reinterpret_cast<const int8_t*>(act_down), reinterpret_cast<const float*>(act_down + in_down),
                reinterpret_cast<const float*>(act_down + in_down + in_down / 8)};
    down.dst = resid;
    down.nw = nw;
    down.n = static_cast<int>(in_down);
    down.qout = act_up;
    down.partial = partial;
    down.counters = counters;
    Args up{};
    up.rows = out_up;
    up.row_bytes = rb_up;
    up.steps = static_cast<int>(kHidden / 256);
    up.tasks = (out_up + kRows - 1) / kRows;
    up.act = {reinterpret_cast<const int8_t*>(act_up), reinterpret_cast<const float*>(act_up + kHidden),
              reinterpret_cast<const float*>(act_up + kHidden + kHidden / 8)};
    up.n = static_cast<int>(kHidden);
    up.eps = 1e-6f;
    up.partial_in = partial;
    up.groups = static_cast<int>(kHidden / 32);
    act::NormArgs na{};
    na.x = resid;
    na.x_stride = kHidden;
    na.w = nw;
    na.y = normed;
    na.y_stride = kHidden;
    na.n = kHidden;
    na.rows = 1;
    na.eps = 1e-6f;
    na.quantized = {act_up, kHidden};

    // Check on copy 0: norm node path against the split path, same down output.
    Args d0 = down, u0 = up;
    d0.w = wd[0];
    u0.w = wu[0];
    launch<DownDot, 0>(d0, stream);
    CK(act::launch_rms_norm(na, stream));
    u0.dst = y_ref;
    launch<UpDot, 0>(u0, stream);
    launch<DownDot, kQuantOut>(d0, stream);
    u0.dst = y;
    launch<UpDot, kLatePartials>(u0, stream);
    CK(cudaStreamSynchronize(stream));
    std::vector<float> ra(static_cast<size_t>(out_up)), rb(static_cast<size_t>(out_up));
    CK(cudaMemcpy(ra.data(), y_ref, out_up * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(rb.data(), y, out_up * 4, cudaMemcpyDeviceToHost));
    double scale = 0, worst = 0;
    for (float v : ra) scale = std::max(scale, static_cast<double>(std::fabs(v)));
    for (int64_t r = 0; r < out_up; ++r) worst = std::max(worst, std::fabs(static_cast<double>(ra[r]) - rb[r]));
    // The release-atomic flavour must give the split's bits (same rows, same groups, same quantizer).
    CK(cudaMemsetAsync(act_up, 0, kHidden + kHidden / 4, stream));
    launch<DownDot, kQuantOut | kReleaseAtomic>(d0, stream);
    u0.dst = y_ref;
    launch<UpDot, kLatePartials>(u0, stream);
    CK(cudaStreamSynchronize(stream));
    CK(cudaMemcpy(ra.data(), y_ref, out_up * 4, cudaMemcpyDeviceToHost));
    const bool release_same = std::memcmp(ra.data(), rb.data(), static_cast<size_t>(out_up) * 4) == 0;

    constexpr int kLinks = 32;
    auto chain = [&](int kind) {  // 0 no norm (floor), 1 norm node between, 2 split norm
        return time_graph(stream, kLinks, [&](int i) {
            Args dl = down, ul = up;
            dl.w = wd[static_cast<size_t>(i % wd.size())];
            ul.w = wu[static_cast<size_t>(i % wu.size())];
            ul.dst = y;
            if (kind == 2) {
                launch<DownDot, kQuantOut>(dl, stream);
                launch<UpDot, kLatePartials>(ul, stream);
                return;
            }
            if (kind == 3) {
                launch<DownDot, kQuantOut | kReleaseAtomic>(dl, stream);
                launch<UpDot, kLatePartials>(ul, stream);
                return;
            }
            launch<DownDot, 0>(dl, stream);
            if (kind == 1) CK(act::launch_rms_norm(na, stream));
            launch<UpDot, 0>(ul, stream);
        });
    };
    double t[4][2];
    for (int r = 0; r < 2; ++r)
        for (int k = 0; k < 4; ++k) t[k][r] = chain(k);
    std::printf(
        "%-22s down %5lld x %-5lld %5.1f MB, up %5lld x %-5lld %5.1f MB | split against node, max |diff| %.3g "
        "(max |y| %.3g); release atomics against split: %s\n",
        what, static_cast<long long>(in_down), static_cast<long long>(kHidden), bytes_down / 1e6,
        static_cast<long long>(kHidden), static_cast<long long>(out_up), bytes_up / 1e6, worst, scale,
        release_same ? "bit for bit" : "DIFFERENT");
    std::printf(
        "        us a link (two runs): no norm %.2f / %.2f | norm node %.2f / %.2f | split norm %.2f / %.2f | split, "
        "release atomics %.2f / %.2f  ->  the node costs %.2f, the split %.2f / %.2f\n",
        t[0][0], t[0][1], t[1][0], t[1][1], t[2][0], t[2][1], t[3][0], t[3][1],
        std::min(t[1][0], t[1][1]) - std::min(t[0][0], t[0][1]),
        std::min(t[2][0], t[2][1]) - std::min(t[0][0], t[0][1]),
        std::min(t[3][0], t[3][1]) - std::min(t[0][0], t[0][1]));
    for (auto* ptr : wd) CK(cudaFree(ptr));
    for (auto* ptr : wu) CK(cudaFree(ptr));
    for (void* ptr : {static_cast<void*>(act_down), static_cast<void*>(act_up), static_cast<void*>(resid),
                      static_cast<void*>(normed), static_cast<void*>(nw), static_cast<void*>(y),
                      static_cast<void*>(y_ref), static_cast<void*>(partial), static_cast<void*>(counters)})
        CK(cudaFree(ptr));
}

// Session 43: gate+up -> SwiGLU -> down with SwiGLU's quantized copy made by the gate+up GEMV's
// warps (kSwigluOut) against the pack's SWIGLU node, and against no node (the floor). Both write the
// same Q8_32 bits (the same rule on the same floats), so the down GEMV's outputs must agree exactly.
template <class UpDot, class DownDot>
void run_split_swiglu(const char* what, std::vector<int> up_f16, std::vector<int> down_f16, cudaStream_t stream) {
    constexpr int64_t kHidden = 5120, kFfn = 17408;
    std::mt19937_64 rng(99);
    std::vector<uint8_t*> wu, wd;
    int64_t rb_up = 0, rb_down = 0;
    const int64_t bytes_up =
        upload_weight_copies(kHidden, 2 * kFfn, UpDot::kBlockElems, UpDot::kBlockBytes, up_f16, rng, wu, rb_up);
    const int64_t bytes_down =
        upload_weight_copies(kFfn, kHidden, DownDot::kBlockElems, DownDot::kBlockBytes, down_f16, rng, wd, rb_down);
    const std::vector<uint8_t> act_h = random_q8_32(kHidden, rng);
    uint8_t *act_up, *act_down;
    float *gu, *glu, *y, *y_ref;
    unsigned* counters;
    CK(cudaMalloc(&act_up, act_h.size()));
    CK(cudaMalloc(&act_down, kFfn + kFfn / 4));
    CK(cudaMalloc(&gu, 2 * kFfn * 4));
    CK(cudaMalloc(&glu, kFfn * 4));
    CK(cudaMalloc(&y, kHidden * 4));
    CK(cudaMalloc(&y_ref, kHidden * 4));
    CK(cudaMalloc(&counters, kFfn / 32 * 4));
    CK(cudaMemset(counters, 0, kFfn / 32 * 4));
    CK(cudaMemcpy(act_up, act_h.data(), act_h.size(), cudaMemcpyHostToDevice));
    Args up{};
    up.rows = 2 * kFfn;
    up.row_bytes = rb_up;
    up.steps = static_cast<int>(kHidden / 256);
    up.tasks = 2 * kFfn / kRows;
    up.act = {reinterpret_cast<const int8_t*>(act_up), reinterpret_cast<const float*>(act_up + kHidden),
              reinterpret_cast<const float*>(act_up + kHidden + kHidden / 8)};
    up.dst = gu;
    up.qout = act_down;
    up.counters = counters;
    up.half = kFfn;
    Args down{};
    down.rows = kHidden;
    down.row_bytes = rb_down;
    down.steps = static_cast<int>(kFfn / 256);
    down.tasks = kHidden / kRows;
    down.act = {reinterpret_cast<const int8_t*>(act_down), reinterpret_cast<const float*>(act_down + kFfn),
                reinterpret_cast<const float*>(act_down + kFfn + kFfn / 8)};
    const Q8_32Out glu_q{act_down, kFfn};

    Args u0 = up, d0 = down;
    u0.w = wu[0];
    d0.w = wd[0];
    launch<UpDot, 0>(u0, stream);
    CK(act::launch_swiglu(gu, gu + kFfn, glu, kFfn, glu_q, stream));
    d0.dst = y_ref;
    launch<DownDot, 0>(d0, stream);
    CK(cudaMemsetAsync(act_down, 0, kFfn + kFfn / 4, stream));
    launch<UpDot, kSwigluOut>(u0, stream);
    d0.dst = y;
    launch<DownDot, 0>(d0, stream);
    CK(cudaStreamSynchronize(stream));
    std::vector<float> ra(static_cast<size_t>(kHidden)), rb(static_cast<size_t>(kHidden));
    CK(cudaMemcpy(ra.data(), y_ref, kHidden * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(rb.data(), y, kHidden * 4, cudaMemcpyDeviceToHost));
    const bool same = std::memcmp(ra.data(), rb.data(), kHidden * 4) == 0;
    CK(cudaMemsetAsync(act_down, 0, kFfn + kFfn / 4, stream));
    launch<UpDot, kSwigluOut | kReleaseAtomic>(u0, stream);
    launch<DownDot, 0>(d0, stream);
    CK(cudaStreamSynchronize(stream));
    CK(cudaMemcpy(rb.data(), y, kHidden * 4, cudaMemcpyDeviceToHost));
    const bool release_same = std::memcmp(ra.data(), rb.data(), kHidden * 4) == 0;

    auto chain = [&](int kind) {  // 0 no node (floor), 1 the SWIGLU node between
        return time_graph(stream, 32, [&](int i) {
            Args ul = up, dl = down;
            ul.w = wu[static_cast<size_t>(i % wu.size())];
            dl.w = wd[static_cast<size_t>(i % wd.size())];
            dl.dst = y;
            launch<UpDot, 0>(ul, stream);
            if (kind == 1) CK(act::launch_swiglu(gu, gu + kFfn, glu, kFfn, glu_q, stream));
            launch<DownDot, 0>(dl, stream);
        });
    };
    auto chain_split = [&](bool release) {
        return time_graph(stream, 32, [&](int i) {
            Args ul = up, dl = down;
            ul.w = wu[static_cast<size_t>(i % wu.size())];
            dl.w = wd[static_cast<size_t>(i % wd.size())];
            dl.dst = y;
            if (release)
                launch<UpDot, kSwigluOut | kReleaseAtomic>(ul, stream);
            else
                launch<UpDot, kSwigluOut>(ul, stream);
            launch<DownDot, 0>(dl, stream);
        });
    };
    double t[4][2];
    for (int r = 0; r < 2; ++r) {
        t[0][r] = chain(0);
        t[1][r] = chain(1);
        t[2][r] = chain_split(false);
        t[3][r] = chain_split(true);
    }
    std::printf(
        "%-22s up %5lld x %-5lld %5.1f MB, down %5lld x %-5lld %5.1f MB | down output, epilogue against node: %s, "
        "release atomics: %s\n",
        what, static_cast<long long>(kHidden), static_cast<long long>(2 * kFfn), bytes_up / 1e6,
        static_cast<long long>(kFfn), static_cast<long long>(kHidden), bytes_down / 1e6,
        same ? "bit for bit" : "DIFFERENT", release_same ? "bit for bit" : "DIFFERENT");
    std::printf(
        "        us a link (two runs): no node %.2f / %.2f | swiglu node %.2f / %.2f | in the epilogue %.2f / %.2f | "
        "epilogue, release atomics %.2f / %.2f  ->  the node costs %.2f, the epilogue %.2f / %.2f\n",
        t[0][0], t[0][1], t[1][0], t[1][1], t[2][0], t[2][1], t[3][0], t[3][1],
        std::min(t[1][0], t[1][1]) - std::min(t[0][0], t[0][1]),
        std::min(t[2][0], t[2][1]) - std::min(t[0][0], t[0][1]),
        std::min(t[3][0], t[3][1]) - std::min(t[0][0], t[0][1]));
    for (auto* ptr : wu) CK(cudaFree(ptr));
    for (auto* ptr : wd) CK(cudaFree(ptr));
    for (void* ptr :
         {static_cast<void*>(act_up), static_cast<void*>(act_down), static_cast<void*>(gu), static_cast<void*>(glu),
          static_cast<void*>(y), static_cast<void*>(y_ref), static_cast<void*>(counters)})
        CK(cudaFree(ptr));
}

}  // namespace

int main(int argc, char** argv) {
    // Formats to run (iq4_xs q5_k q6_k; default all): e.g. one format under a profiler.
    auto wanted = [&](const char* f) {
        if (argc < 2) return true;
        for (int i = 1; i < argc; ++i)
            if (std::strcmp(argv[i], f) == 0) return true;
        return false;
    };
    cudaStream_t stream;
    CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    cudaDeviceProp prop{};
    CK(cudaGetDeviceProperties(&prop, 0));
    std::printf("%s, %d SMs\n", prop.name, prop.multiProcessorCount);
    // The 27B's norm-fed GEMVs: ffn_gate + ffn_up (IQ4_XS, as one 34816-row matrix), the GDN list's
    // big part (Q5_K attn_qkv + attn_gate, 16384 rows), ssm_out after the gated norm (Q6_K, K = 6144).
    if (wanted("iq4_xs")) run<IQ4_XSDot>("iq4_xs", {0}, {"ffn_gate+up", 5120, 34816}, stream);
    if (wanted("q5_k")) run<Q5_KDot>("q5_k", {0, 2}, {"qkv+gate", 5120, 16384}, stream);
    if (wanted("q6_k")) run<Q6_KDot>("q6_k", {208}, {"ssm_out", 6144, 5120}, stream);
    if (wanted("split")) {  // session 43: the norm split between the GEMVs around it
        run_split_norm<Q4_KDot, IQ4_XSDot>("ffn_down -> gate+up", {0, 2}, {0}, 17408, 34816, stream);
        run_split_norm<Q6_KDot, Q5_KDot>("ssm_out -> qkv+gate", {208}, {0, 2}, 6144, 16384, stream);
        run_split_swiglu<IQ4_XSDot, Q4_KDot>("gate+up -> down", {0}, {0, 2}, stream);
    }
    if (wanted("q6_k_wide")) {
        compare_q6_k_wide({"ssm_out", 6144, 5120}, stream);
        compare_q6_k_wide({"output", 5120, 32768}, stream);   // the LM head's K (rows only 8-byte aligned)
        compare_q6_k_wide({"ffn", 17408, 5120}, stream);
    }
    return 0;
}
