// Experiment (not part of the build), session 35: what a small dependent node costs between two
// GEMV-sized kernels in the chained (PDL) graph, and where that cost comes from.
//
// Session 34's probe priced the 27B step's small nodes in place (H100): an RMS norm 4.2 µs (2.6 after
// session 35 spread it over five blocks), the one-warp gated norm 3.1, SwiGLU 2.3, but the quantize
// before attn_output only 0.6. Session 32's chain_release.cu found a bare one-block norm (no quantized
// copy) hidden completely by the PDL chain. So is the rest the body (the quantized copy, the block
// reduction, L2 round trips) or the GEMV's prologue (the pack's GEMVs prefetch their first weights into
// L2 before griddepcontrol.wait, so their DRAM traffic overlaps the small node that precedes them)?
//
// Chains of 32 links "gemv, small node", captured as one graph, best of 7 replays, µs a link, for each
// small node and with the gemv's pre-wait L2 prefetch on or off; "none" is the gemv-only chain, so
// "marginal" = link - none. The small nodes:
//   empty      one block that only waits and releases;
//   quantize   the pack's QUANTIZE_ACT launcher on the 5120 floats (launch_quantize_q8_32);
//   norm1      the session-34 norm: ONE block of 640 threads, 8 elements each, block_sum, scale, store,
//              quantized copy (the pack's device helpers, the old kernel's structure);
//   spread     the pack's RMS_NORM launcher (launch_rms_norm) with a quantized copy: five blocks;
//   spread-nq  the same without the quantized copy;
//   gated      the pack's GATED_RMS_NORM launcher at the GDN shape ({128, 48}: one warp a head) with a
//              quantized copy (session 34: 3.1 µs in place);
//   swiglu     the pack's SWIGLU launcher at 17408 with a quantized copy (its gemv writes 2 x 17408
//              rows with K = 256, so the gemv-only baseline is its own).
// gemv: one warp a row, y[r] = dot(W[r][0..K), x) with fp32 weights (a copy per link: > L2); with the
// prologue each warp first asks L2 for the first 1 KB of its row (prefetch.global.L2), then waits.
// The pack's kernels are linked in (their launchers chain with PDL as in the pack); timings only.
//
// Second table (session 36): tail prefetch. At its end each gemv block asks L2 (prefetch.global.L2) for
// its share of the NEXT link's first `ahead` MB, so DRAM keeps streaming through the gemv's tail and the
// small node; µs a link with ahead = 0, 2, 4, 8, 16 MB (of a link's 20 MB), with no node and the spread
// norm. A large drop says the gaps between the step's GEMVs can be filled with the next weights.
// Third table (session 36): the same small nodes after a pack-like gemv (a balanced grid of 3 blocks an
// SM holding 72 KB of shared memory and 77 registers a thread, striding over the rows), where the next
// kernel's blocks fit only as the gemv's leave, as in the pack's step; plus two empty nodes that release
// the next kernel before they wait, one small enough to be resident beside the gemv's blocks and one not.
// Fourth table (session 37): the norm between two fat gemvs as a node (norm1, the spread launcher),
// as norm1 releasing the next gemv before it waits, and folded into the next gemv (each block
// normalizes the raw 5120-float input into its shared memory after its wait; no node at all); then
// (prepared, not yet run) the fat gemv and the folded one with each warp's first row of weights loaded
// into registers before the wait, so the first DRAM round trip overlaps the norm's pass.
//
// Build (repository root, CUDA 12.4+):
//   nvcc -O3 -std=c++20 -arch=sm_90 -fmad=false -DDENSE_CUDA_TARGET_CC=90 -Iplugins/cuda-common/src \
//     experiments/small_node_cost.cu plugins/cuda-common/src/kernels/ops_norm.cu \
//     plugins/cuda-common/src/kernels/ops_elementwise.cu plugins/cuda-common/src/kernels/quantize_act.cu \
//     plugins/cuda-common/src/kernels/launch_chain.cu -o experiments/small_node_cost_bin
// Run:   experiments/small_node_cost_bin      prints the four markdown tables (two rounds each);
//        experiments/small_node_cost_bin fat  only the fat-gemv ones (third and fourth).
#include "kernels/act_common.cuh"
#include "kernels/act_launchers.hpp"
#include "kernels/act_step_math.cuh"
#include "kernels/gemv_launchers.hpp"
#include "kernels/launch_chain.cuh"
#include "kernels/q8_32_block.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

namespace {

using namespace dense::cuda;

constexpr int kLinks = 32;
constexpr int kHidden = 5120, kFfn = 17408;

#define CHECK(e)                                                                                     \
    do {                                                                                             \
        cudaError_t err_ = (e);                                                                      \
        if (err_ != cudaSuccess) {                                                                   \
            std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #e, cudaGetErrorString(err_)); \
            std::exit(1);                                                                            \
        }                                                                                            \
    } while (0)

// One warp's y[r] = 1e-2 * dot(W[r], x) + 0.5 (lane 0 stores): float4 loads, then a butterfly sum.
// kUnroll8: all 8 steps of a 1024-long row issued together; otherwise the compiler's choice (the code
// session 36's first two tables measured).
__device__ __forceinline__ float step_fma(const float* wr, const float* x, int i, float acc) {
    const float4 a = *reinterpret_cast<const float4*>(wr + i), b = *reinterpret_cast<const float4*>(x + i);
    return fmaf(a.x, b.x, fmaf(a.y, b.y, fmaf(a.z, b.z, fmaf(a.w, b.w, acc))));
}
template <bool kUnroll8>
__device__ __forceinline__ void warp_row_dot(const float* wr, const float* x, int k, int lane, float* yr) {
    float acc = 0.0f;
    if constexpr (kUnroll8) {
#pragma unroll 8
        for (int i = lane * 4; i < k; i += 128) acc = step_fma(wr, x, i, acc);
    } else {
        for (int i = lane * 4; i < k; i += 128) acc = step_fma(wr, x, i, acc);
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xFFFFFFFFu, acc, o);
    if (lane == 0) *yr = acc * 1e-2f + 0.5f;
}

__global__ void __launch_bounds__(256) gemv_kernel(const float* w, const float* x, float* y, int rows, int k,
                                                   bool prologue, const char* next, long long next_bytes) {
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int r = blockIdx.x * 8 + warp;
    const float* wr = w + static_cast<size_t>(r) * k;
    if (prologue && r < rows && lane < 8)  // 8 lines of 128 bytes: the row's first 1 KB
        asm volatile("prefetch.global.L2 [%0];\n" ::"l"(wr + 32 * lane));
    wait_for_producers();
    allow_consumers();
    if (r >= rows) return;
    warp_row_dot<false>(wr, x, k, lane, y + r);
    // Tail prefetch (session 36's question): this block asks L2 for its share of the NEXT link's first
    // next_bytes, so DRAM keeps streaming through this kernel's tail and the small node after it.
    if (next_bytes > 0) {
        const long long share = (next_bytes / gridDim.x + 127) / 128 * 128;
        const char* p = next + share * blockIdx.x;
        for (long long off = 128LL * threadIdx.x; off < share; off += 128LL * blockDim.x)
            if (share * blockIdx.x + off < next_bytes) asm volatile("prefetch.global.L2 [%0];\n" ::"l"(p + off));
    }
}

// The pack-like gemv (third table): a balanced grid of 3 blocks an SM that strides over the rows, each
// block holding kFatSmem bytes of dynamic shared memory and 77 registers a thread (allocated as 80: the
// pack's streamed GEMVs, 3 blocks of 256 threads at <= 80 registers, fill the register file the same
// way), so the next kernel's blocks become resident only as its blocks leave.
constexpr int kFatBlocksPerSm = 3;
constexpr int kFatSmem = 72 * 1024;

// kPreload (session 37's last question): a warp loads its first row's 1,024 weights into registers
// BEFORE griddepcontrol.wait (weights are immutable, so that is within the chain's contract), so its
// first DRAM round trip overlaps whatever the kernel does between the wait and the first dot product.
constexpr int kPreloadK = 1024;  // the fat gemv's K: 8 float4 a lane
struct RowRegs {
    float4 w[kPreloadK / 128];
};
__device__ __forceinline__ void load_row_regs(const float* wr, int lane, RowRegs& r) {
#pragma unroll
    for (int s = 0; s < kPreloadK / 128; ++s) r.w[s] = *reinterpret_cast<const float4*>(wr + 128 * s + 4 * lane);
}
__device__ __forceinline__ void dot_row_regs(const RowRegs& r, const float* x, int lane, float* yr) {
    float acc = 0.0f;
#pragma unroll
    for (int s = 0; s < kPreloadK / 128; ++s) {
        const float4 a = r.w[s], b = *reinterpret_cast<const float4*>(x + 128 * s + 4 * lane);
        acc = fmaf(a.x, b.x, fmaf(a.y, b.y, fmaf(a.z, b.z, fmaf(a.w, b.w, acc))));
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xFFFFFFFFu, acc, o);
    if (lane == 0) *yr = acc * 1e-2f + 0.5f;
}

// Before the wait: the first row's L2 prefetch (1 KB), or with kPreload the whole row into registers.
template <bool kPreload>
__device__ __forceinline__ void fat_gemv_prologue(const float* w, int r0, int rows, int k, int lane, RowRegs& first) {
    if (r0 >= rows) return;
    if constexpr (kPreload) {
        load_row_regs(w + static_cast<size_t>(r0) * k, lane, first);
    } else {
        if (lane < 8) asm volatile("prefetch.global.L2 [%0];\n" ::"l"(w + static_cast<size_t>(r0) * k + 32 * lane));
    }
}

// A warp's start: its first row r0 (returned), that row's prologue, then the chain's wait and release.
template <bool kPreload>
__device__ __forceinline__ int fat_gemv_start(const float* w, int rows, int k, RowRegs& first) {
    const int r0 = blockIdx.x * 8 + static_cast<int>(threadIdx.x >> 5);
    fat_gemv_prologue<kPreload>(w, r0, rows, k, threadIdx.x & 31, first);
    wait_for_producers();
    allow_consumers();
    return r0;
}

// The rows of a warp: r0, r0 + 8 x grid, ...; the first from registers with kPreload.
template <bool kPreload>
__device__ __forceinline__ void fat_gemv_rows(const float* w, const float* x, float* y, int r0, int rows, int k, int lane,
                                              const RowRegs& first) {
    int r = r0;
    if constexpr (kPreload) {
        if (r < rows) dot_row_regs(first, x, lane, y + r);
        r += gridDim.x * 8;
    }
    // All 8 steps of a 1024-long row in flight: ~64 registers, like the pack's streamed GEMVs.
    for (; r < rows; r += gridDim.x * 8) warp_row_dot<true>(w + static_cast<size_t>(r) * k, x, k, lane, y + r);
}

template <bool kPreload>
__global__ void __launch_bounds__(256, kFatBlocksPerSm) fat_gemv_kernel(const float* w, const float* x, float* y, int rows,
                                                                        int k) {
    extern __shared__ float hold[];  // occupancy only
    RowRegs first;
    const int r0 = fat_gemv_start<kPreload>(w, rows, k, first);
    if (threadIdx.x == 0) hold[0] = 0.0f;
    fat_gemv_rows<kPreload>(w, x, y, r0, rows, k, threadIdx.x & 31, first);
}

// Releases the next kernel before waiting for its own producer (session 34's early release). One block of
// 32 threads fits beside three fat-gemv blocks on an SM (3 x 256 threads x 80 registers leave 4,096 of
// 65,536); one of 1,024 threads does not, so it becomes resident (and releases) only when a gemv block
// leaves.
__global__ void early_empty_kernel() {
    allow_consumers();
    wait_for_producers();
}

__global__ void empty_kernel() {
    wait_for_producers();
    allow_consumers();
}

// Session 34's RMS norm of one 5120 row: one block, thread t holds elements [8 t, 8 t + 8). kEarly
// (fourth table): it releases the next kernel before it waits.
template <bool kEarly>
__global__ void norm_one_block_kernel(const float* x, const float* w, float* y, Q8_32Out q, int n) {
    __shared__ float scratch[33];
    const int64_t i0 = static_cast<int64_t>(threadIdx.x) * 8;
    float wv[8], v[8], o[8];
    act::load_octet(w, i0, n, true, wv);
    if constexpr (kEarly) allow_consumers();
    wait_for_producers();
    if constexpr (!kEarly) allow_consumers();
    act::load_octet(x, i0, n, true, v);
    const float ss = act::block_sum(act::octet_sum_of_squares(v), scratch);
    const float scale = act::rms_scale(ss, static_cast<float>(n), 1e-6f);
#pragma unroll
    for (int j = 0; j < 8; ++j) o[j] = v[j] * scale * wv[j];
    act::store_octet(y, i0, n, true, o);
    quantize_q8_32_octets(o, i0 < n, i0 / 32, q);
}

// The fat gemv with the RMS norm of its input folded in (fourth table): after its wait every block
// reads the previous gemv's raw n-float output, forms the sum of squares, and keeps the normalized
// vector in its shared memory, from which its rows' dot products read x. No node between the gemvs.
template <bool kPreload>
__global__ void __launch_bounds__(256, kFatBlocksPerSm) fat_gemv_norm_kernel(const float* w, const float* xr,
                                                                             const float* nw, float* y, int rows,
                                                                             int k, int n) {
    extern __shared__ float xs[];  // n floats (20 KB of the 72 KB the fat gemv holds anyway)
    __shared__ float scratch[33];
    RowRegs first;
    const int r0 = fat_gemv_start<kPreload>(w, rows, k, first);
    float ss = 0.0f;
    for (int i = threadIdx.x * 4; i < n; i += 1024) {
        const float4 v = *reinterpret_cast<const float4*>(xr + i);
        ss += v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
        *reinterpret_cast<float4*>(xs + i) = v;
    }
    const float scale = act::rms_scale(act::block_sum(ss, scratch), static_cast<float>(n), 1e-6f);
    for (int i = threadIdx.x; i < n; i += 256) xs[i] *= scale * nw[i];
    __syncthreads();
    fat_gemv_rows<kPreload>(w, xs, y, r0, rows, k, threadIdx.x & 31, first);
}

enum class Node { None, Empty, Quantize, Norm1, Spread, SpreadNoQ, Gated, Swiglu, EarlySmall, EarlyWide, EarlyNorm1 };
const char* name(Node n) {
    switch (n) {
        case Node::None: return "none";
        case Node::Empty: return "empty";
        case Node::EarlySmall: return "early-release empty, 1 x 32 threads";
        case Node::EarlyWide: return "early-release empty, 1 x 1024 threads";
        case Node::Quantize: return "quantize";
        case Node::Norm1: return "norm1";
        case Node::EarlyNorm1: return "norm1, early release";
        case Node::Spread: return "spread";
        case Node::SpreadNoQ: return "spread-nq";
        case Node::Gated: return "gated";
        case Node::Swiglu: return "swiglu";
    }
    return "?";
}

struct Buffers {
    float* w;   // kLinks copies of the largest gemv's weights
    float* x;   // gemv input / norm output, kFfn * 2 floats
    float* y;   // gemv output
    float* y2;  // the fused-norm chain's second output buffer
    float* nw;  // norm weight
    float* out;
    uint8_t* q;  // quantized copy (40 bytes a block of 32)
};

template <class Kernel, class... Args>
void launch_pdl_shared(Kernel k, dim3 grid, dim3 block, size_t shared, cudaStream_t st, Args... args) {
    (void)launch_chained(k, grid, block, shared, st, args...);
    CHECK(cudaGetLastError());
}
template <class Kernel, class... Args>
void launch_pdl(Kernel k, dim3 grid, dim3 block, cudaStream_t st, Args... args) {
    launch_pdl_shared(k, grid, block, 0, st, args...);
}

void small_node(Node n, const Buffers& b, cudaStream_t st) {
    switch (n) {
        case Node::None: return;
        case Node::Empty: launch_pdl(empty_kernel, 1, 32, st); return;
        case Node::EarlySmall: launch_pdl(early_empty_kernel, 1, 32, st); return;
        case Node::EarlyWide: launch_pdl(early_empty_kernel, 1, 1024, st); return;
        case Node::Quantize: CHECK(launch_quantize_q8_32(b.y, b.q, kHidden, st)); return;
        case Node::Norm1:
            launch_pdl(norm_one_block_kernel<false>, 1, kHidden / 8, st, static_cast<const float*>(b.y),
                       static_cast<const float*>(b.nw), b.x, Q8_32Out{b.q, kHidden}, kHidden);
            return;
        case Node::EarlyNorm1:
            launch_pdl(norm_one_block_kernel<true>, 1, kHidden / 8, st, static_cast<const float*>(b.y),
                       static_cast<const float*>(b.nw), b.x, Q8_32Out{b.q, kHidden}, kHidden);
            return;
        case Node::Spread:
        case Node::SpreadNoQ: {
            act::NormArgs a;
            a.x = b.y;
            a.w = b.nw;
            a.y = b.x;
            a.n = kHidden;
            a.rows = 1;
            a.eps = 1e-6f;
            if (n == Node::Spread) a.quantized = Q8_32Out{b.q, kHidden};
            CHECK(act::launch_rms_norm(a, st));
            return;
        }
        case Node::Gated: {
            act::NormArgs a;  // 48 heads of 128: x and z are the gemv's output (6144 of its floats)
            a.x = b.y;
            a.z = b.y + kFfn;
            a.z_stride = 128;
            a.w = b.nw;
            a.y = b.out;
            a.n = 128;
            a.x_stride = a.y_stride = 128;
            a.rows = 48;
            a.eps = 1e-6f;
            a.quantized = Q8_32Out{b.q, 128 * 48};
            CHECK(act::launch_gated_rms_norm(a, st));
            return;
        }
        case Node::Swiglu: CHECK(act::launch_swiglu(b.y, b.y + kFfn, b.out, kFfn, Q8_32Out{b.q, kFfn}, st)); return;
    }
}

// The gemv of a link: the 5120-row one (K = 1024); the one SwiGLU follows (2 x 17408 rows, K = 256); or
// the pack-like fat_gemv_kernel at the 5120-row shape.
enum class Gemv { Hidden, Wide, Fat, FatNorm, FatPreload, FatNormPreload };

// µs a link, best of 7 replays after one warm-up. prologue and ahead (tail prefetch bytes) are the thin
// gemv's options; the fat one always has its prologue.
double run_chain(const Buffers& b, Node n, Gemv gemv, bool prologue, cudaStream_t st, long long ahead = 0) {
    const bool wide = gemv == Gemv::Wide;
    const int rows = wide ? 2 * kFfn : kHidden, k = wide ? 256 : 1024;
    cudaGraph_t g;
    CHECK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
    for (int l = 0; l < kLinks; ++l) {
        const float* wl = b.w + static_cast<size_t>(l) * rows * k;
        if (gemv == Gemv::FatNorm || gemv == Gemv::FatNormPreload) {  // reads the other y buffer: no block
            float* yl = l % 2 == 0 ? b.y : b.y2;                          // overwrites what another still reads
            const float* xl = l % 2 == 0 ? b.y2 : b.y;
            const auto kernel = gemv == Gemv::FatNorm ? fat_gemv_norm_kernel<false> : fat_gemv_norm_kernel<true>;
            launch_pdl_shared(kernel, 132 * kFatBlocksPerSm, 256, kFatSmem, st, wl, xl, static_cast<const float*>(b.nw),
                              yl, rows, k, kHidden);
        } else if (gemv == Gemv::Fat || gemv == Gemv::FatPreload) {
            const auto kernel = gemv == Gemv::Fat ? fat_gemv_kernel<false> : fat_gemv_kernel<true>;
            launch_pdl_shared(kernel, 132 * kFatBlocksPerSm, 256, kFatSmem, st, wl, static_cast<const float*>(b.x), b.y,
                              rows, k);
        } else {
            const char* next = reinterpret_cast<const char*>(b.w + static_cast<size_t>((l + 1) % kLinks) * rows * k);
            const long long bytes = std::min<long long>(ahead, static_cast<long long>(rows) * k * 4);
            launch_pdl(gemv_kernel, (rows + 7) / 8, 256, st, wl, static_cast<const float*>(b.x), b.y, rows, k, prologue,
                       next, bytes);
        }
        small_node(n, b, st);
    }
    CHECK(cudaStreamEndCapture(st, &g));
    cudaGraphExec_t ge;
    CHECK(cudaGraphInstantiate(&ge, g, 0));
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    double best = 1e30;
    for (int r = 0; r < 8; ++r) {
        CHECK(cudaEventRecord(e0, st));
        CHECK(cudaGraphLaunch(ge, st));
        CHECK(cudaEventRecord(e1, st));
        CHECK(cudaEventSynchronize(e1));
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, e0, e1));
        if (r > 0) best = std::min(best, static_cast<double>(ms));
    }
    CHECK(cudaGraphExecDestroy(ge));
    CHECK(cudaGraphDestroy(g));
    CHECK(cudaEventDestroy(e0));
    CHECK(cudaEventDestroy(e1));
    return best * 1e3 / kLinks;
}

}  // namespace

int main(int argc, char** argv) {
    const bool fat_only = argc > 1 && std::string_view(argv[1]) == "fat";
    cudaStream_t st;
    CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    Buffers b{};
    const size_t per_link = static_cast<size_t>(2) * kFfn * 256 > static_cast<size_t>(kHidden) * 1024
                                ? static_cast<size_t>(2) * kFfn * 256
                                : static_cast<size_t>(kHidden) * 1024;
    CHECK(cudaMalloc(&b.w, per_link * kLinks * sizeof(float)));
    CHECK(cudaMalloc(&b.x, 2 * kFfn * sizeof(float)));
    CHECK(cudaMalloc(&b.y, 2 * kFfn * sizeof(float)));
    CHECK(cudaMalloc(&b.y2, 2 * kFfn * sizeof(float)));
    CHECK(cudaMalloc(&b.nw, kHidden * sizeof(float)));
    CHECK(cudaMalloc(&b.out, kFfn * sizeof(float)));
    CHECK(cudaMalloc(&b.q, kFfn / 32 * 40));
    {
        std::vector<float> h(per_link);
        for (size_t i = 0; i < h.size(); ++i)
            h[i] = static_cast<float>(static_cast<int>((i * 2654435761u) >> 20) % 97 - 48) * 0.01f;
        for (int l = 0; l < kLinks; ++l)
            CHECK(cudaMemcpy(b.w + l * per_link, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice));
        std::vector<float> v(2 * kFfn);
        for (int i = 0; i < 2 * kFfn; ++i) v[static_cast<size_t>(i)] = std::sin(0.37f * static_cast<float>(i)) + 0.5f;
        CHECK(cudaMemcpy(b.x, v.data(), v.size() * sizeof(float), cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(b.y, v.data(), v.size() * sizeof(float), cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(b.y2, v.data(), v.size() * sizeof(float), cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(b.nw, v.data(), kHidden * sizeof(float), cudaMemcpyHostToDevice));
    }
    const Node nodes[] = {Node::None, Node::Empty, Node::Quantize, Node::Norm1, Node::Spread, Node::SpreadNoQ, Node::Gated};
    if (!fat_only) std::printf("| round | prologue | node | µs a link | marginal µs |\n|---|---|---|---:|---:|\n");
    for (int round = 1; round <= (fat_only ? 0 : 2); ++round)
        for (const bool prologue : {false, true}) {
            const double none = run_chain(b, Node::None, Gemv::Hidden, prologue, st);
            for (const Node n : nodes) {
                const double t = n == Node::None ? none : run_chain(b, n, Gemv::Hidden, prologue, st);
                std::printf("| %d | %s | %s | %.2f | %.2f |\n", round, prologue ? "on" : "off", name(n), t, t - none);
            }
            const double wide_none = run_chain(b, Node::None, Gemv::Wide, prologue, st);
            const double swiglu = run_chain(b, Node::Swiglu, Gemv::Wide, prologue, st);
            std::printf("| %d | %s | none (wide gemv) | %.2f | 0.00 |\n", round, prologue ? "on" : "off", wide_none);
            std::printf("| %d | %s | swiglu (wide gemv) | %.2f | %.2f |\n", round, prologue ? "on" : "off", swiglu,
                        swiglu - wide_none);
        }
    // The pack-like gemv: 3 blocks an SM with 72 KB of shared memory each, striding over the rows.
    for (const auto kernel : {fat_gemv_kernel<false>, fat_gemv_kernel<true>})
        CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kFatSmem));
    std::printf("\n| round | node (fat gemv) | µs a link | marginal µs |\n|---|---|---:|---:|\n");
    for (int round = 1; round <= 2; ++round) {
        const double none = run_chain(b, Node::None, Gemv::Fat, true, st);
        for (const Node n : {Node::None, Node::Empty, Node::EarlySmall, Node::EarlyWide, Node::Quantize, Node::Norm1,
                             Node::Spread, Node::SpreadNoQ, Node::Gated}) {
            const double t = n == Node::None ? none : run_chain(b, n, Gemv::Fat, true, st);
            std::printf("| %d | %s | %.2f | %.2f |\n", round, name(n), t, t - none);
        }
    }

    // Fourth table (session 37): the norm between two fat gemvs as a node (norm1, spread), as a node that
    // releases early, and folded into the next gemv (no node).
    for (const auto kernel : {fat_gemv_norm_kernel<false>, fat_gemv_norm_kernel<true>})
        CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kFatSmem));
    std::printf("\n| round | norm between fat gemvs | µs a link | marginal µs |\n|---|---|---:|---:|\n");
    for (int round = 1; round <= 2; ++round) {
        const double none = run_chain(b, Node::None, Gemv::Fat, true, st);
        std::printf("| %d | none | %.2f | 0.00 |\n", round, none);
        for (const Node n : {Node::Norm1, Node::EarlyNorm1, Node::Spread}) {
            const double t = run_chain(b, n, Gemv::Fat, true, st);
            std::printf("| %d | %s | %.2f | %.2f |\n", round, name(n), t, t - none);
        }
        const double fused = run_chain(b, Node::None, Gemv::FatNorm, true, st);
        std::printf("| %d | folded into the gemv | %.2f | %.2f |\n", round, fused, fused - none);
        // Fifth and sixth rows (session 37, not yet run): the first row's weights in registers before the
        // wait, without a norm (its own baseline) and with the norm folded in.
        const double pre = run_chain(b, Node::None, Gemv::FatPreload, true, st);
        std::printf("| %d | none, first row in registers before the wait | %.2f | %.2f |\n", round, pre, pre - none);
        const double pre_fused = run_chain(b, Node::None, Gemv::FatNormPreload, true, st);
        std::printf("| %d | folded, first row in registers before the wait | %.2f | %.2f (%.2f over its baseline) |\n",
                    round, pre_fused, pre_fused - none, pre_fused - pre);
    }

    // Tail prefetch of the next link's weights (bytes ahead), prologue on, with no node and the spread norm.
    if (fat_only) return 0;
    std::printf("\n| round | node | ahead MB | µs a link |\n|---|---|---:|---:|\n");
    for (int round = 1; round <= 2; ++round)
        for (const Node n : {Node::None, Node::Spread})
            for (const int mb : {0, 2, 4, 8, 16}) {
                const double t = run_chain(b, n, Gemv::Hidden, true, st, static_cast<long long>(mb) << 20);
                std::printf("| %d | %s | %d | %.2f |\n", round, name(n), mb, t);
            }
    return 0;
}
