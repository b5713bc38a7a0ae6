// GEMV design experiment (not part of the build): the pack's own launch (`launch_gemv<Dot>`, which
// picks the ring kernel or, for Q4_K/Q5_K/IQ4_XS, the direct kernel) against variants of a "direct"
// kernel that reads the weight words straight from global memory into registers: U steps unrolled
// (their loads in flight together), the register budget via __launch_bounds__ min blocks per SM, and
// an optional L1 prefetch PF steps ahead; K split as the pack's choose_ks. Every variant is checked
// against the host build of the same per-format Dot code (double sums). Session 5 used it first with
// every format and ks in {1, 2, 4, 8} (perf-notes), then in this form for Q4_K, IQ4_XS and Q5_K.
//
// Build (here or on the GPU machine):
//   nvcc -O3 -std=c++20 -arch=sm_90 -DDENSE_CUDA_TARGET_CC=90 -Iplugins/cuda-common/src \
//        -Ibuild/plugins/generated experiments/gemv_ab.cu experiments/gemv_ab_host.cpp \
//        plugins/cuda-common/src/kernels/launch_chain.cu -o experiments/gemv_ab
// Run: experiments/gemv_ab [formats...]   prints GB/s per format x shape x variant.
#include "kernels/gemv_dot_iq2.cuh"
#include "kernels/gemv_dot_iq3.cuh"
#include "kernels/gemv_dot_iq4.cuh"
#include "kernels/gemv_dot_q2_k.cuh"
#include "kernels/gemv_dot_q3_k.cuh"
#include "kernels/gemv_dot_q4_k.cuh"
#include "kernels/gemv_dot_q5_k.cuh"
#include "kernels/gemv_dot_q6_k.cuh"
#include "kernels/gemv_dot_q8_0.cuh"
#include "kernels/gemv_kernel.cuh"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <algorithm>
#include <random>
#include <string>
#include <vector>

using namespace dense::cuda;
using namespace dense::cuda::gemv;

#define CK(x)                                                                              \
    do {                                                                                   \
        cudaError_t e_ = (x);                                                              \
        if (e_ != cudaSuccess) {                                                           \
            std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            std::exit(1);                                                                  \
        }                                                                                  \
    } while (0)

// ---- the direct variant -------------------------------------------------------------------------
template <class Dot, int A, int U, int MINB = 4, int PF = 0>
__global__ void __launch_bounds__(256, MINB) gemv_direct_kernel(const GemvKernelArgs p) {
    __shared__ __align__(16) uint8_t table[Dot::kTable == IqTable::None || Dot::kTable == IqTable::Iq4Values ? 16 : table_bytes(Dot::kTable)];
    __shared__ float red[2][kWarps][kRowsPerWarp];
    const int warp = static_cast<int>(threadIdx.x >> 5);
    const int lane = static_cast<int>(threadIdx.x & 31);
    const int r8 = lane >> 2, u = lane & 3;
    const int ks = p.ks, kw = warp % ks, rw = warp / ks, rws = kWarps / ks;
    IqTables tables;
    stage_tables<Dot>(table, tables);
    __syncthreads();
    wait_for_producers();
    allow_consumers();
    const int s_begin = static_cast<int>(static_cast<int64_t>(p.steps) * kw / ks);
    const int s_end = static_cast<int>(static_cast<int64_t>(p.steps) * (kw + 1) / ks);
    int parity = 0;
    for (int64_t bt = blockIdx.x; bt < p.n_block_tiles; bt += gridDim.x, parity ^= 1) {
        const int64_t row0 = (bt * rws + rw) * kRowsPerWarp;
        const int64_t row = row0 + r8;
        const uint8_t* base = p.w + min(row, p.rows - 1) * p.row_bytes;
        float acc = 0.0f;
        if (row0 < p.rows) {
            int s = s_begin;
            for (; s + U <= s_end; s += U) {
                if constexpr (PF > 0) {  // ask L1 for this lane's bytes PF steps ahead
                    if (s + PF < s_end)
                        asm volatile("prefetch.global.L1 [%0];" ::"l"(base + static_cast<int64_t>(s + PF) * Dot::kStepBytes + 32 * u));
                }
#pragma unroll
                for (int j = 0; j < U; ++j) {
                    ActUnit a;
                    load_act_pair(p.act, (s + j) * 8 + 2 * u, a);
                    float t[2];
                    Dot::template unit<A>(base + static_cast<int64_t>(s + j) * Dot::kStepBytes, u, a, tables, t);
                    acc = add(add(acc, t[0]), t[1]);
                }
            }
            for (; s < s_end; ++s) {
                ActUnit a;
                load_act_pair(p.act, s * 8 + 2 * u, a);
                float t[2];
                Dot::template unit<A>(base + static_cast<int64_t>(s) * Dot::kStepBytes, u, a, tables, t);
                acc = add(add(acc, t[0]), t[1]);
            }
        }
        acc = add(acc, __shfl_xor_sync(0xFFFFFFFFu, acc, 1));
        acc = add(acc, __shfl_xor_sync(0xFFFFFFFFu, acc, 2));
        if (ks == 1) {
            if (u == 0 && row < p.rows) p.dst[row] = acc;
        } else {
            if (u == 0) red[parity][warp][r8] = acc;
            __syncthreads();
            if (kw == 0 && lane < kRowsPerWarp) {
                float sum = red[parity][rw * ks][lane];
                for (int j = 1; j < ks; ++j) sum = add(sum, red[parity][rw * ks + j][lane]);
                if (row0 + lane < p.rows) p.dst[row0 + lane] = sum;
            }
        }
    }
}

template <class Dot, int U, int MINB = 4, int PF = 0>
void launch_direct(const GemvLaunch& c, int ks, int blocks_per_sm_cap, cudaStream_t stream) {
    GemvKernelArgs p{};
    p.w = static_cast<const uint8_t*>(c.weight);
    p.rows = c.out;
    p.row_bytes = c.row_bytes;
    p.steps = static_cast<int>(c.in / 256);
    p.act_blocks = static_cast<int>(c.in / 32);
    p.ks = ks;
    const int64_t row_tiles = (c.out + 7) / 8;
    p.n_block_tiles = (row_tiles + (8 / ks) - 1) / (8 / ks);
    const auto* base = static_cast<const int8_t*>(c.act);
    p.act.q = base;
    p.act.d = reinterpret_cast<const float*>(base + c.in);
    p.act.s = reinterpret_cast<const float*>(base + c.in + c.in / 8);
    p.dst = c.dst;
    constexpr int A = Dot::kAlign;
    int occ = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, gemv_direct_kernel<Dot, A, U, MINB, PF>, 256, 0));
    if (blocks_per_sm_cap > 0 && occ > blocks_per_sm_cap) occ = blocks_per_sm_cap;
    const int64_t max_blocks = static_cast<int64_t>(sm_count()) * occ;
    const int64_t per_block = (p.n_block_tiles + max_blocks - 1) / max_blocks;
    const int64_t blocks = (p.n_block_tiles + per_block - 1) / per_block;
    CK(launch_chained(gemv_direct_kernel<Dot, A, U, MINB, PF>, static_cast<unsigned>(blocks), 256, 0, stream, p));
}

// ---- data -----------------------------------------------------------------------------------------
struct Fmt {
    const char* name;
    int block_elems, block_bytes;
    std::vector<int> f16;  // offsets of fp16 scale fields in a block (kept finite and small)
};

// The host build of the same Dot code (gemv_ab_host.cpp, compiled by g++).
double host_row(const char* fmt, const uint8_t* row, int64_t in, const int8_t* q, const float* d, const float* s);

struct Case {
    const char* fmt;
    int64_t in, out;
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
        // Q8_32 activation: codes, d, s
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
        CK(cudaMalloc(&y, static_cast<size_t>(out) * 4));
        std::vector<float> yh(static_cast<size_t>(out));
        // reference: first 64 rows and last 8
        std::vector<int64_t> check_rows;
        for (int64_t r = 0; r < std::min<int64_t>(64, out); ++r) check_rows.push_back(r);
        for (int64_t r = std::max<int64_t>(64, out - 8); r < out; ++r) check_rows.push_back(r);
        std::vector<double> ref;
        for (int64_t r : check_rows)
            ref.push_back(host_row(f.name, host.data() + r * row_bytes, in, aq.data(), ad.data(), as.data()));

        struct Variant {
            std::string name;
            std::function<void(const GemvLaunch&)> launch;
        };
        std::vector<Variant> variants;
        variants.push_back({"staged", [&](const GemvLaunch& c) { CK(launch_gemv<Dot>(c, stream)); }});
        const int ks = choose_ks((out + 7) / 8, static_cast<int>(in / 256));
        if constexpr (Dot::kAlign >= 8) {
            variants.push_back({"direct U2 mb4", [&, ks](const GemvLaunch& c) { launch_direct<Dot, 2, 4, 0>(c, ks, 0, stream); }});
            variants.push_back({"direct U4 mb3", [&, ks](const GemvLaunch& c) { launch_direct<Dot, 4, 3, 0>(c, ks, 0, stream); }});
            variants.push_back({"direct U8 mb2", [&, ks](const GemvLaunch& c) { launch_direct<Dot, 8, 2, 0>(c, ks, 0, stream); }});
            variants.push_back({"direct U2 mb4 pf4", [&, ks](const GemvLaunch& c) { launch_direct<Dot, 2, 4, 4>(c, ks, 0, stream); }});
            variants.push_back({"direct U4 mb3 pf4", [&, ks](const GemvLaunch& c) { launch_direct<Dot, 4, 3, 4>(c, ks, 0, stream); }});
            variants.push_back({"direct U2 mb4 pf8", [&, ks](const GemvLaunch& c) { launch_direct<Dot, 2, 4, 8>(c, ks, 0, stream); }});
        }
        for (auto& v : variants) {
            GemvLaunch c;
            c.in = in;
            c.out = out;
            c.row_bytes = row_bytes;
            c.act = act_dev;
            c.dst = y;
            c.weight = w[0];
            CK(cudaMemsetAsync(y, 0xFF, static_cast<size_t>(out) * 4, stream));
            v.launch(c);
            CK(cudaStreamSynchronize(stream));
            CK(cudaMemcpy(yh.data(), y, yh.size() * 4, cudaMemcpyDeviceToHost));
            double worst = 0;
            for (size_t i = 0; i < check_rows.size(); ++i) {
                const double e = std::fabs(yh[static_cast<size_t>(check_rows[i])] - ref[i]) / (std::fabs(ref[i]) + 1e-3);
                if (!(e <= worst)) worst = e;  // NaN -> stays NaN
                if (std::isnan(e)) worst = e;
            }
            // timing: a graph of `copies * reps` launches rotating over the copies
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
            std::printf("%-8s %6lld x %-6lld %-16s %8.2f us  %7.0f GB/s  max rel err %.2e\n", f.name,
                        static_cast<long long>(out), static_cast<long long>(in), v.name.c_str(), us,
                        static_cast<double>(w_bytes) / (us * 1e3), worst);
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
    const std::vector<std::pair<int64_t, int64_t>> shapes = {{5120, 17408}, {17408, 5120}, {5120, 10240}};
    if (on("q4_k")) run_format<Q4_KDot>({"q4_k", 256, 144, {0, 2}}, shapes, stream);
    if (on("iq4_xs")) run_format<IQ4_XSDot>({"iq4_xs", 256, 136, {0}}, shapes, stream);
    if (on("q5_k")) run_format<Q5_KDot>({"q5_k", 256, 176, {0, 2}}, shapes, stream);
    return 0;
}
