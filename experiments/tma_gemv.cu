// Experiment (not part of the build), session 30: does feeding the streamed GEMV's weights through
// Hopper bulk async copies (cp.async.bulk + mbarrier, "TMA" in its 1-D form) get the latency-bound
// formats closer to the read ceiling?
//
// Why: session 29's ncu put Q4_K, Q5_K, IQ4_XS, IQ4_NL, Q6_K and Q2_K (~90 % of the 27B's weight bytes)
// at 47-72 % of DRAM peak with "long scoreboard" the top stall: each lane's loads are in flight only
// while the lane is not decoding, and at 80 registers a lane holds 2 steps x 2 rows. A bulk copy
// needs no registers: one lane of a warp keeps D stages of the warp's next weights in flight in
// shared memory while all 32 decode the current one, from shared memory.
//
// What runs, per format and shape, as chains of 32 chained (PDL) launches captured in a graph over
// weight copies larger than L2 (experiments/norm_gemv.cu's method):
//   stream   the pack's gemv_stream_kernel itself (launch_stream<Dot, 1>);
//   tma D/B  this file's kernel: the same lanes, the same units, the same summation order (so the
//            outputs must be the same bits, which is checked), but a warp's stage (its 2 rows x
//            8 steps of one loop iteration) arrives by two bulk copies into the warp's ring of D
//            stages; B = the __launch_bounds__ minimum of blocks an SM.
// A stage's copy starts at the 16-byte boundary at or below its first byte (bulk copies move
// 16-byte-aligned pieces) and ends at most 15 bytes past its last: the pack's buffers have read
// slack (device_api.cpp kReadSlack), the copies here 256 bytes. The step keeps its alignment mod 16
// in shared memory, so Dot::unit's aligned loads stay legal.
//
// Build (here or on the GPU machine):
// (--fmad=false as the packs build: the same device code as the pack's kernels)
//   nvcc -O3 -std=c++20 --fmad=false -arch=sm_90 -DDENSE_CUDA_TARGET_CC=90 -Iplugins/cuda-common/src \
//        -Ibuild-gpu/plugins/generated experiments/tma_gemv.cu plugins/cuda-common/src/kernels/launch_chain.cu \
//        -o experiments/tma_gemv_bin
// Run: experiments/tma_gemv_bin [format ...]     (default: every format), µs and GB/s a GEMV.
#include "kernels/gemv_dot_iq2.cuh"
#include "kernels/gemv_dot_iq3.cuh"
#include "kernels/gemv_dot_iq4.cuh"
#include "kernels/gemv_dot_q2_k.cuh"
#include "kernels/gemv_dot_q3_k.cuh"
#include "kernels/gemv_dot_q4_k.cuh"
#include "kernels/gemv_dot_q5_k.cuh"
#include "kernels/gemv_dot_q6_k.cuh"
#include "kernels/gemv_dot_q8_0.cuh"
#include "kernels/bulk_copy.cuh"
#include "kernels/gemv_kernel.cuh"

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

#define CK(...)                                                                                     \
    do {                                                                                            \
        cudaError_t e_ = (__VA_ARGS__);                                                                       \
        if (e_ != cudaSuccess) {                                                                    \
            std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #__VA_ARGS__, cudaGetErrorString(e_)); \
            std::exit(1);                                                                           \
        }                                                                                           \
    } while (0)

namespace {

constexpr int kSlices = 8;  // kStreamSlices: 8 slices x 4 lanes = one row group a warp
constexpr int kRows = 2;    // kStreamRows
static_assert(kStreamGroupsPerWarp == 1 && kStreamRows == kRows, "the pack's streamed shape");

// A warp's ring: D stages of kRows row pieces, each piece room for 8 steps plus the 16-byte
// alignment head and tail.
template <class Dot>
inline constexpr int kRowPieceBytes = (kSlices * Dot::kStepBytes + 31 + 15) / 16 * 16;
template <class Dot>
inline constexpr int kStageBytes = kRows * kRowPieceBytes<Dot>;
template <class Dot, int D>
inline constexpr int kTmaSmemBytes = kWarps * D * kStageBytes<Dot>;

struct WarpWalk {  // a warp's stages: its tasks first_task + k n_warps, each in `chunks` stages
    int64_t first_task, n_warps;
    int chunks;
    int64_t stages;
};

template <class Dot>
__device__ __forceinline__ void issue_stage(const GemvKernelArgs& p, const WarpWalk& ww, int64_t g, uint8_t* stage,
                                            uint64_t* bar) {
    const int64_t k = g / ww.chunks;
    const int c = static_cast<int>(g - k * ww.chunks);
    const int64_t row0 = (ww.first_task + k * ww.n_warps) * kRows;
    const GemvMatrix& mat = p.mats[0];
    const int steps = min(kSlices, p.steps - kSlices * c);
    uint32_t bytes[kRows];
    const uint8_t* from[kRows];
    uint32_t total = 0;
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
        const uint8_t* src = mat.w + min(row0 + r, mat.rows - 1) * p.row_bytes +
                             static_cast<int64_t>(kSlices * c) * Dot::kStepBytes;
        const uint32_t head = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(src) & 15u);
        from[r] = src - head;
        bytes[r] = (head + static_cast<uint32_t>(steps * Dot::kStepBytes) + 15u) & ~15u;
        total += bytes[r];
    }
    bulk_barrier_expect(bar, total);
#pragma unroll
    for (int r = 0; r < kRows; ++r) bulk_copy_to_shared(stage + r * kRowPieceBytes<Dot>, from[r], bytes[r], bar);
}

template <class Dot, int D, int B>
__global__ void __launch_bounds__(kThreads, B) tma_stream_kernel(const __grid_constant__ GemvKernelArgs p) {
    constexpr int A = step_align(Dot::kStepBytes);
    constexpr IqTable kTable = StreamTableOf<Dot>::value;
    __shared__ __align__(16) uint8_t table[table_smem(kTable)];
    __shared__ uint64_t bars[kWarps][D];
    extern __shared__ __align__(128) uint8_t ring_all[];
    const int warp = static_cast<int>(threadIdx.x >> 5);
    const int lane = static_cast<int>(threadIdx.x & 31);
    const int u = lane & 3;
    const int slice = (lane >> 2) & (kSlices - 1);
    uint8_t* ring = ring_all + warp * D * kStageBytes<Dot>;
    uint64_t* bar = bars[warp];
    WarpWalk ww;
    ww.n_warps = static_cast<int64_t>(gridDim.x) * kWarps;
    ww.first_task = static_cast<int64_t>(blockIdx.x) * kWarps + warp;
    ww.chunks = (p.steps + kSlices - 1) / kSlices;
    const int64_t my_tasks = ww.first_task < p.n_block_tiles ? (p.n_block_tiles - 1 - ww.first_task) / ww.n_warps + 1 : 0;
    ww.stages = my_tasks * ww.chunks;
    // Weights are immutable: the ring fills before the wait for the kernel ahead (launch_chain.cuh).
    if (lane == 0) {
#pragma unroll
        for (int i = 0; i < D; ++i) bulk_barrier_init(&bar[i]);
        bulk_barrier_init_fence();
        for (int64_t g = 0; g < D && g < ww.stages; ++g) issue_stage<Dot>(p, ww, g, ring + g * kStageBytes<Dot>, &bar[g]);
    }
    __syncwarp();
    IqTables tables;
    stage_table<kTable>(table, tables);
    __syncthreads();
    wait_for_producers();
    allow_consumers();

    const GemvMatrix& mat = p.mats[0];
    float acc[kRows];
    int64_t row0 = 0;
    uint32_t head[kRows];
    for (int64_t g = 0; g < ww.stages; ++g) {  // warp-uniform
        const int64_t k = g / ww.chunks;
        const int c = static_cast<int>(g - k * ww.chunks);
        if (c == 0) {
            row0 = (ww.first_task + k * ww.n_warps) * kRows;
#pragma unroll
            for (int r = 0; r < kRows; ++r) {
                acc[r] = 0.0f;
                // The heads of every stage of this task's rows: each row's stages start at multiples
                // of 8 steps from its first byte, and 8 steps keep the row's alignment mod 16 only if
                // 8 * kStepBytes % 16 == 0 (true for every format: 8 * step is a multiple of 16).
                head[r] = static_cast<uint32_t>(
                    reinterpret_cast<uintptr_t>(mat.w + min(row0 + r, mat.rows - 1) * p.row_bytes) & 15u);
            }
        }
        const int slot = static_cast<int>(g % D);
        const int st = kSlices * c + slice;
        ActUnit a;
        if (st < p.steps) load_act_pair(p.act, st * 8 + 2 * u, a);
        bulk_barrier_wait(&bar[slot], static_cast<uint32_t>((g / D) & 1));
        const uint8_t* stage = ring + slot * kStageBytes<Dot>;
        if (st < p.steps) {
#pragma unroll
            for (int r = 0; r < kRows; ++r) {
                float term[2];
                stream_unit<Dot, A>(stage + r * kRowPieceBytes<Dot> + head[r] + slice * Dot::kStepBytes, u, a, tables,
                                    term);
                acc[r] = add(add(acc[r], term[0]), term[1]);
            }
        }
        __syncwarp();  // every lane's reads of this slot are done before the copy that refills it
        if (lane == 0 && g + D < ww.stages) issue_stage<Dot>(p, ww, g + D, ring + slot * kStageBytes<Dot>, &bar[slot]);
        if (c == ww.chunks - 1) {
#pragma unroll
            for (int r = 0; r < kRows; ++r)
#pragma unroll
                for (int m = 1; m < 32; m *= 2) acc[r] = add(acc[r], __shfl_xor_sync(0xFFFFFFFFu, acc[r], m));
            if (lane < kRows) {
                const float v = lane == 0 ? acc[0] : acc[1];
                const int64_t row = row0 + lane;
                if (row < mat.rows) mat.dst[row] = v;
            }
        }
    }
}

template <class Dot, int D, int B>
void launch_tma(GemvKernelArgs p, cudaStream_t stream) {
    constexpr int smem = kTmaSmemBytes<Dot, D>;
    static int occ = [] {
        CK(cudaFuncSetAttribute(tma_stream_kernel<Dot, D, B>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
        int b = 0;
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, tma_stream_kernel<Dot, D, B>, kThreads, smem));
        return b;
    }();
    if (occ == 0) {
        std::fprintf(stderr, "tma D=%d B=%d: no block fits (%d bytes of shared memory)\n", D, B, smem);
        std::exit(1);
    }
    const int64_t tasks = number_stream_tasks(p);
    const int64_t units = (tasks + kWarps - 1) / kWarps;
    const int64_t max_blocks = static_cast<int64_t>(sm_count()) * occ;
    const int64_t per_block = (units + max_blocks - 1) / max_blocks;
    const int64_t blocks = (units + per_block - 1) / per_block;
    CK(launch_chained(tma_stream_kernel<Dot, D, B>, static_cast<unsigned>(blocks), kThreads, smem, stream, p));
}

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

__global__ void read_probe(const int4* p, int64_t n, int* out) {  // the read ceiling: sum of every word
    int s = 0;
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n; i += gridDim.x * static_cast<int64_t>(blockDim.x)) {
        const int4 v = __ldcs(p + i);
        s ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (s == 0x7fffffff) *out = s;
}

double read_ceiling_gbs(cudaStream_t stream) {
    const int64_t bytes = 1ll << 30;
    int4* buf;
    int* out;
    CK(cudaMalloc(&buf, bytes));
    CK(cudaMalloc(&out, 4));
    CK(cudaMemset(buf, 1, bytes));
    double best = 1e30;
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (int r = 0; r < 8; ++r) {
        CK(cudaEventRecord(e0, stream));
        read_probe<<<sm_count() * 8, 512, 0, stream>>>(buf, bytes / 16, out);
        CK(cudaEventRecord(e1, stream));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        best = std::min(best, static_cast<double>(ms));
    }
    CK(cudaFree(buf));
    CK(cudaFree(out));
    return bytes / 1e6 / best;
}

struct Shape {
    const char* what;
    int64_t in, out;
};

template <class Dot>
void run(const char* fmt, std::vector<int> f16_offsets, const Shape& shape, double ceiling, cudaStream_t stream) {
    const int64_t in = shape.in, out = shape.out;
    const int64_t row_bytes = in / Dot::kBlockElems * Dot::kBlockBytes;
    const int64_t w_bytes = row_bytes * out;
    const int copies = static_cast<int>(std::max<int64_t>(2, (256ll << 20) / w_bytes + 1));
    std::mt19937_64 rng(42 + in + out);
    std::vector<uint8_t> host(static_cast<size_t>(w_bytes));
    for (auto& b : host) b = static_cast<uint8_t>(rng());
    std::uniform_real_distribution<float> sc(0.0005f, 0.004f);
    for (int64_t b = 0; b < w_bytes / Dot::kBlockBytes; ++b)
        for (int off : f16_offsets) {
            const uint16_t h = __half_as_ushort(__float2half(sc(rng)));
            std::memcpy(&host[static_cast<size_t>(b * Dot::kBlockBytes + off)], &h, 2);
        }
    std::vector<uint8_t*> w(static_cast<size_t>(copies));
    for (auto& ptr : w) {
        CK(cudaMalloc(&ptr, static_cast<size_t>(w_bytes + 256)));
        CK(cudaMemcpy(ptr, host.data(), static_cast<size_t>(w_bytes), cudaMemcpyHostToDevice));
    }
    // A Q8_32 activation: random codes, small positive d, s = d * sum of the block's codes.
    std::vector<uint8_t> acth(static_cast<size_t>(in + in / 4));
    for (int64_t i = 0; i < in; ++i) acth[static_cast<size_t>(i)] = static_cast<uint8_t>(rng() % 255);
    for (int64_t b = 0; b < in / 32; ++b) {
        const float d = sc(rng) * 4;
        int sum = 0;
        for (int i = 0; i < 32; ++i) sum += static_cast<int8_t>(acth[static_cast<size_t>(32 * b + i)]);
        const float s = d * static_cast<float>(sum);
        std::memcpy(&acth[static_cast<size_t>(in + 4 * b)], &d, 4);
        std::memcpy(&acth[static_cast<size_t>(in + in / 8 + 4 * b)], &s, 4);
    }
    uint8_t* act;
    float *ya, *yb;
    CK(cudaMalloc(&act, acth.size()));
    CK(cudaMalloc(&ya, out * 4));
    CK(cudaMalloc(&yb, out * 4));
    CK(cudaMemcpy(act, acth.data(), acth.size(), cudaMemcpyHostToDevice));
    GemvKernelArgs p{};
    p.n_mats = 1;
    p.row_bytes = row_bytes;
    p.steps = static_cast<int>(in / 256);
    p.act_blocks = static_cast<int>(in / 32);
    p.last_step_bytes = Dot::kStepBytes;
    p.ks = 8;
    p.strided = 1;
    p.act = {reinterpret_cast<const int8_t*>(act), reinterpret_cast<const float*>(act + in),
             reinterpret_cast<const float*>(act + in + in / 8)};
    auto args_for = [&](int copy, float* dst) {
        GemvKernelArgs a = p;
        a.mats[0].w = w[static_cast<size_t>(copy)];
        a.mats[0].w_begin = reinterpret_cast<uintptr_t>(a.mats[0].w);
        a.mats[0].w_end = a.mats[0].w_begin + static_cast<uintptr_t>(w_bytes);
        a.mats[0].rows = out;
        a.mats[0].dst = dst;
        return a;
    };
    std::vector<float> ra(static_cast<size_t>(out)), rb(static_cast<size_t>(out));
    CK(launch_stream<Dot, 1>(args_for(0, ya), stream));
    CK(cudaStreamSynchronize(stream));
    CK(cudaMemcpy(ra.data(), ya, out * 4, cudaMemcpyDeviceToHost));
    auto same_as_stream = [&](auto launch) {
        CK(cudaMemset(yb, 0xFF, out * 4));
        launch(args_for(0, yb));
        CK(cudaStreamSynchronize(stream));
        CK(cudaMemcpy(rb.data(), yb, out * 4, cudaMemcpyDeviceToHost));
        return std::memcmp(ra.data(), rb.data(), static_cast<size_t>(out) * 4) == 0;
    };
    auto chain = [&](auto launch) {
        return time_graph(stream, 32, [&](int i) { launch(args_for(i % copies, yb)); });
    };
    auto stream_launch = [&](const GemvKernelArgs& a) { CK(launch_stream<Dot, 1>(a, stream)); };
    auto tma2_3 = [&](const GemvKernelArgs& a) { launch_tma<Dot, 2, 3>(a, stream); };
    auto tma3_2 = [&](const GemvKernelArgs& a) { launch_tma<Dot, 3, 2>(a, stream); };
    auto tma3_3 = [&](const GemvKernelArgs& a) { launch_tma<Dot, 3, 3>(a, stream); };
    auto tma4_3 = [&](const GemvKernelArgs& a) { launch_tma<Dot, 4, 3>(a, stream); };
    const bool ok = same_as_stream(tma2_3) && same_as_stream(tma3_2) && same_as_stream(tma3_3) && same_as_stream(tma4_3);
    double t[2][5];
    for (int round = 0; round < 2; ++round) {
        t[round][0] = chain(stream_launch);
        t[round][1] = chain(tma2_3);
        t[round][2] = chain(tma3_2);
        t[round][3] = chain(tma3_3);
        t[round][4] = chain(tma4_3);
    }
    std::printf("| %-7s | %-9s | %5lld x %-6lld | %6.1f | %s |", fmt, shape.what, static_cast<long long>(in),
                static_cast<long long>(out), w_bytes / 1e6, ok ? "yes" : "**NO**");
    for (int v = 0; v < 5; ++v) {
        const double best = std::min(t[0][v], t[1][v]);
        std::printf(" %.2f / %.2f (%.0f %%) |", t[0][v], t[1][v], 100.0 * w_bytes / 1e3 / best / ceiling);
    }
    std::printf("\n");
    std::fflush(stdout);
    for (auto* ptr : w) CK(cudaFree(ptr));
    CK(cudaFree(act));
    CK(cudaFree(ya));
    CK(cudaFree(yb));
}

template <class Dot>
void run_shapes(const char* fmt, std::vector<int> f16_offsets, double ceiling, cudaStream_t stream) {
    for (const Shape& s : {Shape{"ffn_gate", 5120, 17408}, Shape{"ffn_down", 17408, 5120}, Shape{"ssm_out", 6144, 5120},
                           Shape{"qkv", 5120, 10240}})
        run<Dot>(fmt, f16_offsets, s, ceiling, stream);
}

}  // namespace

int main(int argc, char** argv) {
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
    const double ceiling = read_ceiling_gbs(stream);
    std::printf("%s, %d SMs; read ceiling %.0f GB/s (1 GiB, best of 8)\n\n", prop.name, prop.multiProcessorCount, ceiling);
    std::printf("us a GEMV, round 1 / round 2 (best of the two as %% of the read ceiling); 'same bits': every tma variant "
                "against the pack's streamed kernel\n\n");
    std::printf("| format | shape | in x out | MB | same bits | stream (pack) | tma D2 B3 | tma D3 B2 | tma D3 B3 | tma D4 B3 |\n");
    std::printf("|---|---|---|---:|---|---:|---:|---:|---:|---:|\n");
    if (wanted("q4_k")) run_shapes<Q4_KDot>("q4_k", {0, 2}, ceiling, stream);
    if (wanted("iq4_xs")) run_shapes<IQ4_XSDot>("iq4_xs", {0}, ceiling, stream);
    if (wanted("q5_k")) run_shapes<Q5_KDot>("q5_k", {0, 2}, ceiling, stream);
    if (wanted("q6_k")) run_shapes<Q6_KDot>("q6_k", {208}, ceiling, stream);
    if (wanted("q8_0")) run_shapes<Q8_0Dot>("q8_0", {0}, ceiling, stream);
    if (wanted("iq4_nl")) run_shapes<IQ4_NLDot>("iq4_nl", {0}, ceiling, stream);
    if (wanted("q2_k")) run_shapes<Q2_KDot>("q2_k", {80, 82}, ceiling, stream);
    if (wanted("q3_k")) run_shapes<Q3_KDot>("q3_k", {108}, ceiling, stream);
    if (wanted("iq3_s")) run_shapes<IQ3_SDot>("iq3_s", {0}, ceiling, stream);
    if (wanted("iq3_xxs")) run_shapes<IQ3_XXSDot>("iq3_xxs", {0}, ceiling, stream);
    if (wanted("iq2_s")) run_shapes<IQ2_SDot>("iq2_s", {0}, ceiling, stream);
    if (wanted("iq2_xs")) run_shapes<IQ2_XSDot>("iq2_xs", {0}, ceiling, stream);
    return 0;
}
