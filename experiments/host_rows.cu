// Placement experiment (not part of the build): can the GPU itself read weight rows that stay in
// host memory (pinned, mapped into the device's address space) fast enough to share the split's
// CPU rows, and does that slow the CPU workers down? On the H200 host one core reads only ~5.5 GB/s
// and 16 reach ~68 GB/s (perf-notes, session 7): the limit is the cores, not the DRAM, so a
// PCIe reader beside them may add bandwidth instead of sharing it.
//
// Measures, on one machine in one run:
//   1. cudaMemcpy from pinned host memory (the bus's copy rate, for reference);
//   2. a read kernel over mapped pinned memory (zero-copy), several grid sizes;
//   3. the pack's own GEMV launch (launch_gemv<Dot>) with the weight pointer in mapped pinned
//      memory, checked against the host build of the same Dot code;
//   4. N CPU threads reading an anonymous buffer, alone and while the GPU runs (2) or (3);
//   5. whether a read-only FILE mapping can be registered (cudaHostRegisterReadOnly), so rows need
//      no copy, and the read kernel's rate on it.
//
// Build (here; carry the binary):
//   nvcc -O3 -std=c++20 -arch=sm_90 -DDENSE_CUDA_TARGET_CC=90 -Iplugins/cuda-common/src \
//        -Ibuild/plugins/generated -Xcompiler -mavx2,-pthread experiments/host_rows.cu \
//        experiments/gemv_ab_host.cpp plugins/cuda-common/src/kernels/launch_chain.cu -o experiments/host_rows
// Run: experiments/host_rows [GiB of pinned rows, default 2] [cpu threads, default "8,15"]
#include "kernels/gemv_dot_iq4.cuh"
#include "kernels/gemv_dot_q4_k.cuh"
#include "kernels/gemv_dot_q6_k.cuh"
#include "kernels/gemv_kernel.cuh"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace dense::cuda;
using namespace dense::cuda::gemv;

#define CK(x)                                                                                          \
    do {                                                                                               \
        cudaError_t e_ = (x);                                                                          \
        if (e_ != cudaSuccess) {                                                                       \
            std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            std::exit(1);                                                                              \
        }                                                                                              \
    } while (0)

double host_row(const char* fmt, const uint8_t* row, int64_t in, const int8_t* q, const float* d, const float* s);

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

__global__ void read_kernel(const uint4* p, int64_t n16, unsigned long long* sink) {
    uint32_t acc = 0;
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n16;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
        const uint4 v = p[i];
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x12345678u) atomicAdd(sink, 1ull);  // keeps the loads alive
}

// GB/s of `reps` passes of the read kernel over [p, p + bytes).
double time_read(const void* p, size_t bytes, int blocks, int reps, cudaStream_t s, unsigned long long* sink) {
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    read_kernel<<<blocks, 256, 0, s>>>(static_cast<const uint4*>(p), static_cast<int64_t>(bytes / 16), sink);
    CK(cudaEventRecord(e0, s));
    for (int r = 0; r < reps; ++r)
        read_kernel<<<blocks, 256, 0, s>>>(static_cast<const uint4*>(p), static_cast<int64_t>(bytes / 16), sink);
    CK(cudaEventRecord(e1, s));
    CK(cudaEventSynchronize(e1));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    return static_cast<double>(bytes) * reps / (ms * 1e6);
}

// CPU readers: `threads` threads sum disjoint slices of `buf` until `stop`; returns GB/s.
struct CpuReaders {
    std::vector<std::thread> pool;
    std::atomic<bool> stop{false};
    std::atomic<uint64_t> bytes{0};
    Clock::time_point t0;
    void start(const uint8_t* buf, size_t size, int threads) {
        t0 = Clock::now();
        for (int t = 0; t < threads; ++t)
            pool.emplace_back([this, buf, size, t, threads] {
                const size_t slice = size / threads / 64 * 64;
                const auto* w = reinterpret_cast<const uint64_t*>(buf + slice * t);
                uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
                while (!stop.load(std::memory_order_relaxed)) {
                    for (size_t i = 0; i < slice / 8; i += 4) {
                        a0 += w[i];
                        a1 += w[i + 1];
                        a2 += w[i + 2];
                        a3 += w[i + 3];
                    }
                    bytes.fetch_add(slice, std::memory_order_relaxed);
                }
                if ((a0 ^ a1 ^ a2 ^ a3) == 0x1234567) std::printf(" ");
            });
    }
    double finish() {
        stop = true;
        for (auto& th : pool) th.join();
        return static_cast<double>(bytes.load()) / (seconds_since(t0) * 1e9);
    }
};

struct Fmt {
    const char* name;
    int block_bytes;
    std::vector<int> f16;
};

// Fills `w` with random blocks whose fp16 scales are small and finite.
void fill_blocks(uint8_t* w, size_t bytes, const Fmt& f, uint64_t seed) {
    std::mt19937_64 rng(seed);
    for (size_t i = 0; i + 8 <= bytes; i += 8) {
        const uint64_t v = rng();
        std::memcpy(w + i, &v, 8);
    }
    std::uniform_real_distribution<float> sc(0.0005f, 0.004f);
    for (size_t b = 0; b + f.block_bytes <= bytes; b += f.block_bytes)
        for (int off : f.f16) {
            const uint16_t h = __half_as_ushort(__float2half(sc(rng)));
            std::memcpy(w + b + off, &h, 2);
        }
}

template <class Dot>
void gemv_over_host(const Fmt& f, uint8_t* pinned, size_t pinned_bytes, int64_t in, int64_t out, cudaStream_t s,
                    const std::vector<int>& cpu_threads, const uint8_t* anon, size_t anon_bytes) {
    const int64_t row_bytes = in / 256 * f.block_bytes;
    const int64_t w_bytes = row_bytes * out;
    const int copies = static_cast<int>(pinned_bytes / static_cast<size_t>(w_bytes));
    fill_blocks(pinned, static_cast<size_t>(w_bytes) * copies, f, 99);
    std::mt19937_64 rng(7);
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
    float* y;
    CK(cudaMalloc(&act_dev, act.size()));
    CK(cudaMemcpy(act_dev, act.data(), act.size(), cudaMemcpyHostToDevice));
    CK(cudaMalloc(&y, static_cast<size_t>(out) * 4));
    GemvLaunch c;
    c.in = in;
    c.out = out;
    c.row_bytes = row_bytes;
    c.act = act_dev;
    c.dst = y;
    c.weight = pinned;  // UVA: a mapped pinned pointer is valid on the device as is
    CK(launch_gemv<Dot>(c, s));
    CK(cudaStreamSynchronize(s));
    std::vector<float> yh(static_cast<size_t>(out));
    CK(cudaMemcpy(yh.data(), y, yh.size() * 4, cudaMemcpyDeviceToHost));
    double worst = 0;
    for (int64_t r : {int64_t{0}, int64_t{1}, int64_t{2}, out / 2, out - 1}) {
        const double ref = host_row(f.name, pinned + r * row_bytes, in, aq.data(), ad.data(), as.data());
        const double e = std::fabs(yh[static_cast<size_t>(r)] - ref) / (std::fabs(ref) + 1e-3);
        worst = std::isnan(e) ? e : std::max(worst, e);
    }
    auto timed = [&](int passes) {
        cudaEvent_t e0, e1;
        CK(cudaEventCreate(&e0));
        CK(cudaEventCreate(&e1));
        CK(cudaEventRecord(e0, s));
        for (int i = 0; i < passes; ++i) {
            c.weight = pinned + static_cast<size_t>(i % copies) * static_cast<size_t>(w_bytes);
            CK(launch_gemv<Dot>(c, s));
        }
        CK(cudaEventRecord(e1, s));
        CK(cudaEventSynchronize(e1));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        return static_cast<double>(w_bytes) * passes / (ms * 1e6);
    };
    const int passes = copies * 3;
    std::printf("gemv %-7s %lld x %lld rows in mapped pinned memory: %6.1f GB/s alone, max rel err %.1e\n", f.name,
                static_cast<long long>(out), static_cast<long long>(in), timed(passes), worst);
    for (int t : cpu_threads) {
        CpuReaders cpu;
        cpu.start(anon, anon_bytes, t);
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        const double gpu = timed(passes);
        const double host = cpu.finish();
        std::printf("gemv %-7s with %2d CPU readers: GPU %6.1f GB/s, CPU %6.1f GB/s, sum %6.1f\n", f.name, t, gpu, host,
                    gpu + host);
    }
    CK(cudaFree(act_dev));
    CK(cudaFree(y));
}

std::vector<int> parse_list(const char* s) {
    std::vector<int> v;
    for (const char* p = s; *p;) {
        v.push_back(std::atoi(p));
        while (*p && *p != ',') ++p;
        if (*p == ',') ++p;
    }
    return v;
}

// Registers a read-only mapping of a fresh `fbytes` file (MAP_SHARED or MAP_PRIVATE, as the runtime
// maps a GGUF), times it and the read kernel over it.
void register_file_mapping(size_t fbytes, int map_flags, int sms, cudaStream_t s, unsigned long long* sink) {
    char path[] = "/tmp/host_rows_XXXXXX";
    const int fd = mkstemp(path);
    std::vector<uint8_t> block(1 << 20, 0x42);
    for (size_t off = 0; off < fbytes; off += block.size())
        if (write(fd, block.data(), block.size()) != static_cast<ssize_t>(block.size())) std::exit(2);
    void* map = mmap(nullptr, fbytes, PROT_READ, map_flags, fd, 0);
    int ro = 0;
    CK(cudaDeviceGetAttribute(&ro, cudaDevAttrHostRegisterReadOnlySupported, 0));
    const auto t1 = Clock::now();
    const cudaError_t e = cudaHostRegister(map, fbytes, cudaHostRegisterMapped | cudaHostRegisterPortable | (ro ? cudaHostRegisterReadOnly : 0u));
    std::printf("cudaHostRegister(read-only %s file mapping, %.2f GiB, read-only flag %s): %s in %.3f s\n",
                map_flags == MAP_PRIVATE ? "MAP_PRIVATE" : "MAP_SHARED", fbytes / 1073741824.0, ro ? "supported" : "NOT supported",
                cudaGetErrorString(e), seconds_since(t1));
    std::fflush(stdout);
    if (e == cudaSuccess) {
        void* dptr = nullptr;
        CK(cudaHostGetDevicePointer(&dptr, map, 0));
        std::printf("read kernel over the registered file mapping: %6.1f GB/s\n", time_read(dptr, fbytes, sms * 4, 4, s, sink));
        const auto t2 = Clock::now();
        CK(cudaHostUnregister(map));
        std::printf("cudaHostUnregister: %.3f s\n", seconds_since(t2));
    } else {
        (void)cudaGetLastError();
    }
    munmap(map, fbytes);
    close(fd);
    unlink(path);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc > 1 && std::string(argv[1]) == "register") {  // only the file-mapping registrations
        cudaStream_t s;
        CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        int sms = 0;
        CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
        unsigned long long* sink;
        CK(cudaMalloc(&sink, 8));
        const size_t gib = argc > 2 ? static_cast<size_t>(std::atof(argv[2]) * 1073741824.0) / 4096 * 4096 : (1ull << 30);
        register_file_mapping(gib, MAP_SHARED, sms, s, sink);
        register_file_mapping(gib, MAP_PRIVATE, sms, s, sink);
        return 0;
    }
    const double gib = argc > 1 ? std::atof(argv[1]) : 2.0;
    const std::vector<int> cpu_threads = parse_list(argc > 2 ? argv[2] : "8,15");
    const size_t bytes = static_cast<size_t>(gib * (1ull << 30)) / 4096 * 4096;
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    unsigned long long* sink;
    CK(cudaMalloc(&sink, 8));

    auto t0 = Clock::now();
    uint8_t* pinned = nullptr;
    CK(cudaHostAlloc(reinterpret_cast<void**>(&pinned), bytes, cudaHostAllocMapped | cudaHostAllocPortable));
    std::memset(pinned, 0x5A, bytes);
    std::printf("pinned %.2f GiB allocated and touched in %.2f s\n", bytes / 1073741824.0, seconds_since(t0));
    std::vector<uint8_t> anon(bytes, 0x33);

    // 1. the bus's copy rate
    void* dev;
    const size_t chunk = 256ull << 20;
    CK(cudaMalloc(&dev, chunk));
    {
        cudaEvent_t e0, e1;
        CK(cudaEventCreate(&e0));
        CK(cudaEventCreate(&e1));
        CK(cudaEventRecord(e0, s));
        for (size_t off = 0; off + chunk <= bytes; off += chunk) CK(cudaMemcpyAsync(dev, pinned + off, chunk, cudaMemcpyHostToDevice, s));
        CK(cudaEventRecord(e1, s));
        CK(cudaEventSynchronize(e1));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        std::printf("cudaMemcpy pinned -> device: %.1f GB/s\n", static_cast<double>(bytes / chunk * chunk) / (ms * 1e6));
    }
    // 2. zero-copy read kernel
    for (int per_sm : {1, 2, 4, 8, 16})
        std::printf("read kernel over mapped pinned memory, %4d blocks: %6.1f GB/s\n", sms * per_sm,
                    time_read(pinned, bytes, sms * per_sm, 2, s, sink));
    // 4a. CPU readers alone and beside the read kernel
    for (int t : cpu_threads) {
        CpuReaders alone;
        alone.start(anon.data(), bytes, t);
        std::this_thread::sleep_for(std::chrono::milliseconds(1500));
        const double a = alone.finish();
        CpuReaders beside;
        beside.start(anon.data(), bytes, t);
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        const double gpu = time_read(pinned, bytes, sms * 4, 3, s, sink);
        const double b = beside.finish();
        std::printf("%2d CPU readers: alone %6.1f GB/s; beside the GPU's zero-copy read: CPU %6.1f + GPU %6.1f = %6.1f GB/s\n",
                    t, a, b, gpu, b + gpu);
    }
    // 3 + 4b. the pack's GEMV with weights in pinned host memory
    gemv_over_host<Q4_KDot>({"q4_k", 144, {0, 2}}, pinned, bytes, 5120, 17408, s, cpu_threads, anon.data(), bytes);
    gemv_over_host<IQ4_XSDot>({"iq4_xs", 136, {0}}, pinned, bytes, 5120, 17408, s, cpu_threads, anon.data(), bytes);
    gemv_over_host<Q6_KDot>({"q6_k", 210, {208}}, pinned, bytes, 17408, 5120, s, cpu_threads, anon.data(), bytes);
    gemv_over_host<Q4_KDot>({"q4_k", 144, {0, 2}}, pinned, bytes, 17408, 5120, s, cpu_threads, anon.data(), bytes);

    // 5. register a read-only file mapping
    register_file_mapping(512ull << 20, MAP_SHARED, sms, s, sink);
    CK(cudaFreeHost(pinned));
    return 0;
}
