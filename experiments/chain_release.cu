// Experiment (not part of the build), session 32: what does a kernel boundary cost in the chained
// token step, and how much of it is the programmatic dependency's release (the next grid's
// griddepcontrol.wait returns only after the whole previous grid has completed and flushed)?
//
// A chain of links "gemv, norm" x 32, captured as one graph, in three variants:
//   plain  ordinary launches (no programmatic dependency);
//   pdl    the pack's chained launches: griddepcontrol.wait, then launch_dependents (launch_chain.cuh);
//   fused  pdl, but the norm runs in the gemv grid's last block (no norm kernel: one link a pair);
//   flag   chained launches whose kernels do NOT call griddepcontrol.wait: each block of link n
//          publishes its writes (fence, then an arrival count); the last block to arrive stores
//          release word = n + 1; link n + 1 spins on that word (one thread, acquire) before touching
//          anything link n wrote, then calls launch_dependents. So the next link starts when the last
//          block's writes are visible, not when the previous grid has retired.
// Kernels (the shapes of the 27B step's residual GEMV and the norm after it):
//   gemv   640 blocks x 8 warps, warp r: y[r] += dot(W[r][0..1023], x[0..1023]) (20 MB of fp32
//          weights per link, a different copy per link: 32 x 20 MB > L2);
//   norm   1 block of 256 threads: x = y * rsqrt(mean(y^2) + eps) over 5120 floats.
// Also "gemv only" chains (32 gemv links) give the norm's marginal cost per variant.
// Checks: the three variants' final x agree bit for bit (same arithmetic, only the waits differ).
//
// Build: nvcc -O3 -std=c++20 -arch=sm_90 experiments/chain_release.cu -o experiments/chain_release_bin
// Run:   experiments/chain_release_bin        prints us per link pair for each variant.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

constexpr int kRows = 5120, kK = 1024, kPairs = 32;
constexpr int kGemvBlocks = kRows / 8;

enum Mode { kPlain = 0, kPdl = 1, kFlag = 2, kFused = 3 };

struct Sync {
    unsigned* count;    // [2] arrivals, ping-pong by link parity
    unsigned* release;  // link n's last block stores n + 1
};

__device__ __forceinline__ void pdl_wait() { asm volatile("griddepcontrol.wait;\n" ::: "memory"); }
__device__ __forceinline__ void pdl_launch() { asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory"); }

__device__ __forceinline__ unsigned ld_acquire(const unsigned* p) {
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void st_release(unsigned* p, unsigned v) {
    asm volatile("st.release.gpu.global.u32 [%0], %1;\n" ::"l"(p), "r"(v) : "memory");
}

// Before the link's first dependent access.
__device__ __forceinline__ void link_begin(int mode, Sync s, int link) {
    if (mode == kPdl) {
        pdl_wait();
        pdl_launch();
    } else if (mode == kFlag) {
        if (link > 0 && threadIdx.x == 0)
            while (ld_acquire(s.release) != static_cast<unsigned>(link)) __nanosleep(20);
        __syncthreads();
        pdl_launch();
    }
}

// After the block's last write.
__device__ __forceinline__ void link_end(int mode, Sync s, int link) {
    if (mode != kFlag) return;
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        unsigned* c = s.count + (link & 1);
        if (atomicAdd(c, 1u) == gridDim.x - 1) {  // the last block of this link
            *c = 0;  // link n + 2 arrives here next; it cannot start before this link's release
            __threadfence();
            st_release(s.release, static_cast<unsigned>(link + 1));
        }
    }
}

__global__ void __launch_bounds__(256) gemv_kernel(const float* w, const float* x, float* y, int mode, Sync s, int link) {
    link_begin(mode, s, link);
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int r = blockIdx.x * 8 + warp;
    const float4* wr = reinterpret_cast<const float4*>(w + static_cast<size_t>(r) * kK);
    const float4* xr = reinterpret_cast<const float4*>(x);
    float acc = 0.0f;
#pragma unroll
    for (int i = 0; i < kK / 128; ++i) {
        const float4 a = wr[lane + 32 * i], b = xr[lane + 32 * i];
        acc = fmaf(a.x, b.x, fmaf(a.y, b.y, fmaf(a.z, b.z, fmaf(a.w, b.w, acc))));
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xFFFFFFFFu, acc, o);
    if (lane == 0) y[r] = y[r] + acc * 1e-3f;
    link_end(mode, s, link);
}

__global__ void __launch_bounds__(256) norm_kernel(const float* y, float* x, int mode, Sync s, int link) {
    link_begin(mode, s, link);
    __shared__ float part[8];
    float v[kRows / 256];
    float ss = 0.0f;
#pragma unroll
    for (int i = 0; i < kRows / 256; ++i) {
        v[i] = y[threadIdx.x + 256 * i];
        ss = fmaf(v[i], v[i], ss);
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) ss += __shfl_xor_sync(0xFFFFFFFFu, ss, o);
    if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = ss;
    __syncthreads();
    float t = 0.0f;
#pragma unroll
    for (int i = 0; i < 8; ++i) t += part[i];
    const float scale = rsqrtf(t / kRows + 1e-6f);
#pragma unroll
    for (int i = 0; i < kRows / 256; ++i) x[threadIdx.x + 256 * i] = v[i] * scale;
    link_end(mode, s, link);
}

// gemv, then the norm in the grid's last block to finish (the "last block" pattern: every block
// fences its y rows and counts itself in; the one that counts last reads the whole y from L2 and
// writes x). The next link waits for this whole grid as usual (pdl).
__global__ void __launch_bounds__(256) gemv_norm_kernel(const float* w, const float* x_in, float* y, float* x_out,
                                                        unsigned* count) {
    pdl_wait();
    pdl_launch();
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int r = blockIdx.x * 8 + warp;
    const float4* wr = reinterpret_cast<const float4*>(w + static_cast<size_t>(r) * kK);
    const float4* xr = reinterpret_cast<const float4*>(x_in);
    float acc = 0.0f;
#pragma unroll
    for (int i = 0; i < kK / 128; ++i) {
        const float4 a = wr[lane + 32 * i], b = xr[lane + 32 * i];
        acc = fmaf(a.x, b.x, fmaf(a.y, b.y, fmaf(a.z, b.z, fmaf(a.w, b.w, acc))));
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xFFFFFFFFu, acc, o);
    if (lane == 0) y[r] = y[r] + acc * 1e-3f;
    __shared__ bool last;
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        last = atomicAdd(count, 1u) == gridDim.x - 1;
        if (last) {
            *count = 0;
            __threadfence();
        }
    }
    __syncthreads();
    if (!last) return;
    __shared__ float part[8];
    float v[kRows / 256];
    float ss = 0.0f;
#pragma unroll
    for (int i = 0; i < kRows / 256; ++i) {
        v[i] = __ldcg(y + threadIdx.x + 256 * i);
        ss = fmaf(v[i], v[i], ss);
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) ss += __shfl_xor_sync(0xFFFFFFFFu, ss, o);
    if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = ss;
    __syncthreads();
    float t = 0.0f;
#pragma unroll
    for (int i = 0; i < 8; ++i) t += part[i];
    const float scale = rsqrtf(t / kRows + 1e-6f);
#pragma unroll
    for (int i = 0; i < kRows / 256; ++i) x_out[threadIdx.x + 256 * i] = v[i] * scale;
}

#define CHECK(e)                                                                             \
    do {                                                                                     \
        cudaError_t err_ = (e);                                                              \
        if (err_ != cudaSuccess) {                                                           \
            std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #e, cudaGetErrorString(err_)); \
            std::exit(1);                                                                    \
        }                                                                                    \
    } while (0)

template <class... KArgs, class... Args>
void launch(int mode, void (*k)(KArgs...), int grid, cudaStream_t st, Args... args) {
    cudaLaunchConfig_t c{};
    c.gridDim = dim3(grid);
    c.blockDim = dim3(256);
    c.stream = st;
    cudaLaunchAttribute a[1];
    a[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    a[0].val.programmaticStreamSerializationAllowed = 1;
    c.attrs = a;
    c.numAttrs = mode == kPlain ? 0 : 1;
    CHECK(cudaLaunchKernelEx(&c, k, args...));
}

struct Buffers {
    float* w;  // kPairs copies of kRows x kK
    float* x;
    float* y;
    Sync s;
};

void reset(const Buffers& b, cudaStream_t st) {
    std::vector<float> h(kRows);
    for (int i = 0; i < kRows; ++i) h[i] = std::sin(0.37f * static_cast<float>(i)) + 0.5f;
    CHECK(cudaMemcpyAsync(b.y, h.data(), sizeof(float) * kRows, cudaMemcpyHostToDevice, st));
    CHECK(cudaMemcpyAsync(b.x, h.data(), sizeof(float) * kRows, cudaMemcpyHostToDevice, st));
    CHECK(cudaMemsetAsync(b.s.count, 0, 2 * sizeof(unsigned), st));
    CHECK(cudaMemsetAsync(b.s.release, 0, sizeof(unsigned), st));
    CHECK(cudaStreamSynchronize(st));
}

// us per link pair (with_norm) or per gemv link, best of 7 replays; the final x in `out`.
double run_chain(const Buffers& b, int mode, bool with_norm, cudaStream_t st, std::vector<float>& out) {
    cudaGraph_t g;
    CHECK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
    int link = 0;
    for (int p = 0; p < kPairs; ++p) {
        const float* wp = b.w + static_cast<size_t>(p) * kRows * kK;
        if (mode == kFused && with_norm) {
            launch(kPdl, gemv_norm_kernel, kGemvBlocks, st, wp, static_cast<const float*>(b.x), b.y, b.x, b.s.count);
            continue;
        }
        const int m = mode == kFused ? kPdl : mode;
        launch(m, gemv_kernel, kGemvBlocks, st, wp, static_cast<const float*>(b.x), b.y, m, b.s, link++);
        if (with_norm) launch(m, norm_kernel, 1, st, static_cast<const float*>(b.y), b.x, m, b.s, link++);
    }
    CHECK(cudaStreamEndCapture(st, &g));
    cudaGraphExec_t ge;
    CHECK(cudaGraphInstantiate(&ge, g, 0));
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    double best = 1e30;
    for (int r = 0; r < 8; ++r) {
        reset(b, st);  // the release word must not still say a later link's number
        CHECK(cudaEventRecord(e0, st));
        CHECK(cudaGraphLaunch(ge, st));
        CHECK(cudaEventRecord(e1, st));
        CHECK(cudaEventSynchronize(e1));
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, e0, e1));
        if (r > 0) best = std::min(best, static_cast<double>(ms));
    }
    out.resize(kRows);
    CHECK(cudaMemcpy(out.data(), with_norm ? b.x : b.y, sizeof(float) * kRows, cudaMemcpyDeviceToHost));
    CHECK(cudaGraphExecDestroy(ge));
    CHECK(cudaGraphDestroy(g));
    return best * 1e3 / kPairs;
}

}  // namespace

int main() {
    cudaStream_t st;
    CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    Buffers b{};
    const size_t wn = static_cast<size_t>(kPairs) * kRows * kK;
    CHECK(cudaMalloc(&b.w, wn * sizeof(float)));
    CHECK(cudaMalloc(&b.x, kRows * sizeof(float)));
    CHECK(cudaMalloc(&b.y, kRows * sizeof(float)));
    CHECK(cudaMalloc(&b.s.count, 2 * sizeof(unsigned)));
    CHECK(cudaMalloc(&b.s.release, sizeof(unsigned)));
    {
        std::vector<float> h(static_cast<size_t>(kRows) * kK);
        for (size_t i = 0; i < h.size(); ++i) h[i] = static_cast<float>(static_cast<int>((i * 2654435761u) >> 20) % 97 - 48) * 0.01f;
        for (int p = 0; p < kPairs; ++p)
            CHECK(cudaMemcpy(b.w + static_cast<size_t>(p) * kRows * kK, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice));
    }
    const char* names[4] = {"plain", "pdl", "flag", "fused"};
    std::vector<float> ref_pair, ref_gemv;
    std::printf("| variant | gemv+norm pair us | gemv only us | norm marginal us | final x == plain |\n|---|---:|---:|---:|---|\n");
    for (int round = 0; round < 2; ++round)
        for (int m = 0; m < 4; ++m) {
            std::vector<float> xp, xg;
            const double pair = run_chain(b, m, true, st, xp);
            const double gemv = run_chain(b, m, false, st, xg);
            if (m == 0) {
                ref_pair = xp;
                ref_gemv = xg;
            }
            const bool same = std::memcmp(xp.data(), ref_pair.data(), sizeof(float) * kRows) == 0 &&
                              std::memcmp(xg.data(), ref_gemv.data(), sizeof(float) * kRows) == 0;
            std::printf("| %s (round %d) | %.2f | %.2f | %.2f | %s |\n", names[m], round + 1, pair, gemv, pair - gemv,
                        same ? "yes" : "NO");
        }
    return 0;
}
