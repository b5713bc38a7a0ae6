#include "bench/cpu_rows_bench.hpp"

#include "bench/op_call.hpp"
#include "core/error.hpp"
#include "core/type_table.hpp"
#include "exec/cpu_workers.hpp"
#include "exec/host_nodes.hpp"
#include "gguf/mapped_file.hpp"
#include "synth/block_fill.hpp"

#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>

namespace dense::bench {
namespace {

constexpr int64_t kIn = 5120, kOut = 17408;  // the 27B's ffn_gate / ffn_up: the rows a split moves first

// Anonymous memory on 2 MiB boundaries, with the advice that lets the kernel back it by huge pages.
struct AnonBuffer {
    std::byte* data = nullptr;
    size_t bytes = 0;
    explicit AnonBuffer(size_t n) : bytes(n) {
        void* p = ::mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) throw Error(ErrorKind::Io, "bench: cannot map " + std::to_string(n) + " bytes of memory");
        (void)::madvise(p, n, MADV_HUGEPAGE);
        data = static_cast<std::byte*>(p);
    }
    ~AnonBuffer() { ::munmap(data, bytes); }
    AnonBuffer(const AnonBuffer&) = delete;
    AnonBuffer& operator=(const AnonBuffer&) = delete;
};

struct Faults {
    long minor = 0, major = 0;
    static Faults now() {
        rusage u{};
        ::getrusage(RUSAGE_SELF, &u);
        return {u.ru_minflt, u.ru_majflt};
    }
};

// One GEMV's (or one read segment's) chunks handed to the pool; wait() returns when all ran.
class Batch {
public:
    using Fn = void (*)(void* context, size_t index);
    Batch(exec::CpuWorkers& workers, Fn fn, void* context) : workers_(workers), fn_(fn), context_(context) {}
    void run(size_t count) {
        {
            std::lock_guard lock(mutex_);
            remaining_ = count;
        }
        workers_.submit(&Batch::task, this, count);
        std::unique_lock lock(mutex_);
        done_.wait(lock, [&] { return remaining_ == 0; });
    }

private:
    static void task(void* p, size_t index) {
        auto& b = *static_cast<Batch*>(p);
        b.fn_(b.context_, index);
        std::lock_guard lock(b.mutex_);
        if (--b.remaining_ == 0) b.done_.notify_all();
    }
    exec::CpuWorkers& workers_;
    Fn fn_;
    void* context_;
    std::mutex mutex_;
    std::condition_variable done_;
    size_t remaining_ = 0;
};

// The best of `reps` timed passes after one warm-up; the faults of that pass.
template <typename Pass>
void time_passes(int reps, Pass pass, CpuRowsResult& r) {
    pass();
    r.seconds = 0;
    for (int i = 0; i < reps; ++i) {
        const Faults f0 = Faults::now();
        const auto t0 = std::chrono::steady_clock::now();
        pass();
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const Faults f1 = Faults::now();
        if (r.seconds == 0 || s < r.seconds) {
            r.seconds = s;
            r.minor_faults = static_cast<double>(f1.minor - f0.minor);
            r.major_faults = static_cast<double>(f1.major - f0.major);
        }
    }
    r.gbs = static_cast<double>(r.bytes) / r.seconds / 1e9;
}

// Every matrix of `base` (count back to back) as row-chunk GEMV calls for `threads` workers.
struct GemvJobs {
    std::vector<std::vector<std::unique_ptr<OpCall>>> per_matrix;
    std::string impl;
    static void run_chunk(void* p, size_t i) { static_cast<const std::vector<std::unique_ptr<OpCall>>*>(p)->at(i)->run(); }
};

GemvJobs make_jobs(const packs::PackManager& packs, dense_type_id type, const std::byte* base, int matrices,
                   uint64_t w_bytes, void* x, float* y, unsigned threads) {
    const auto& dev = packs.devices().at(0);
    const int64_t chunks = exec::row_chunk_count(threads, kOut);
    const uint64_t row_bytes = w_bytes / kOut;
    GemvJobs jobs;
    for (int m = 0; m < matrices; ++m) {
        auto& calls = jobs.per_matrix.emplace_back();
        for (int64_t c = 0; c < chunks; ++c) {
            const int64_t first = kOut * c / chunks, end = kOut * (c + 1) / chunks;
            auto* w = const_cast<std::byte*>(base + static_cast<uint64_t>(m) * w_bytes + row_bytes * static_cast<uint64_t>(first));
            calls.push_back(std::make_unique<OpCall>(
                packs, 0, packs::OpKey{DENSE_OP_GEMV_Q, type, DENSE_TYPE_Q8_32, DENSE_DEVICE_CPU},
                std::vector<dense_tensor_view>{contiguous_view(w, type, dev, {kIn, end - first, 1, 1}),
                                               contiguous_view(x, DENSE_TYPE_Q8_32, dev, {kIn, 1, 1, 1})},
                std::vector<dense_tensor_view>{contiguous_view(y + first, DENSE_TYPE_F32, dev, {end - first, 1, 1, 1})},
                nullptr, nullptr));
        }
    }
    jobs.impl = jobs.per_matrix.front().front()->impl_name();
    return jobs;
}

// Sums 64-bit words of a segment: a pure read, the ceiling the kernels' rates are set against. Each
// cache line's words are summed while the line 8 KiB ahead is prefetched, as the cpu-avx2 kernels
// prefetch the run they read next: with the hardware prefetchers alone one core kept too few misses in
// flight, and the kernels outran this probe (docs/perf-notes.md, session 46).
struct ReadJob {
    static constexpr size_t kLineWords = 8, kAheadWords = 1024;
    const uint64_t* words = nullptr;
    size_t n = 0, chunks = 1;
    std::atomic<uint64_t> sink{0};
    static void run_chunk(void* p, size_t i) {
        auto& j = *static_cast<ReadJob*>(p);
        const size_t first = j.n * i / j.chunks, end = j.n * (i + 1) / j.chunks;
        uint64_t s = 0;
        size_t k = first;
        for (; k + kLineWords <= end; k += kLineWords) {
            if (k + kAheadWords < end) __builtin_prefetch(j.words + k + kAheadWords);
            for (size_t w = 0; w < kLineWords; ++w) s += j.words[k + w];
        }
        for (; k < end; ++k) s += j.words[k];
        j.sink.fetch_add(s, std::memory_order_relaxed);
    }
};

std::filesystem::path write_temp_file(const std::filesystem::path& dir, const std::byte* data, uint64_t bytes) {
    const auto path = dir / ("dense-rt-cpu-rows-" + std::to_string(::getpid()) + ".bin");
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(bytes));
    f.close();
    if (!f) {
        std::error_code ec;
        std::filesystem::remove(path, ec);
        throw Error(ErrorKind::Io, "bench: cannot write " + std::to_string(bytes) + " bytes to " + path.string());
    }
    return path;
}

}  // namespace

std::vector<CpuRowsResult> bench_cpu_rows(const packs::PackManager& packs, const CpuRowsOptions& o) {
    std::vector<CpuRowsResult> out;
    const auto& dev = packs.devices().at(0);
    // The activation: random floats quantized to Q8_32 on the CPU (bytes as a GPU would send them).
    synth::Rng rng(0xC9D5u);
    std::vector<float> xf(static_cast<size_t>(kIn));
    for (auto& v : xf) v = static_cast<float>(rng.uniform(-1.0, 1.0));
    std::vector<std::byte> xq(tensor_bytes(DENSE_TYPE_Q8_32, {kIn, 1, 1, 1}));
    OpCall(packs, 0, {DENSE_OP_QUANTIZE_ACT, DENSE_TYPE_NONE, DENSE_TYPE_Q8_32, DENSE_DEVICE_CPU},
           {contiguous_view(xf.data(), DENSE_TYPE_F32, dev, {kIn, 1, 1, 1})},
           {contiguous_view(xq.data(), DENSE_TYPE_Q8_32, dev, {kIn, 1, 1, 1})}, nullptr, nullptr)
        .run();
    std::vector<float> y(static_cast<size_t>(kOut));

    for (dense_type_id type : o.formats) {
        const TypeInfo& t = *global_type_table().find(type);
        const uint64_t w_bytes = tensor_bytes(type, {kIn, kOut, 1, 1});
        const int matrices = static_cast<int>(std::max<uint64_t>(1, o.bytes / w_bytes));
        const uint64_t total = w_bytes * static_cast<uint64_t>(matrices);
        AnonBuffer anon(total);
        synth::fill_blocks(synth::make_recipe(type, 1.0 / std::sqrt(static_cast<double>(kIn))), rng, anon.data,
                           w_bytes / t.block_bytes);
        for (int m = 1; m < matrices; ++m) std::memcpy(anon.data + static_cast<uint64_t>(m) * w_bytes, anon.data, w_bytes);
        const auto path = write_temp_file(o.file_dir, anon.data, total);
        struct Remove {
            std::filesystem::path p;
            ~Remove() {
                std::error_code ec;
                std::filesystem::remove(p, ec);
            }
        } remove{path};
        const gguf::MappedFile file(path);

        for (unsigned threads : o.threads) {
            exec::CpuWorkers workers(threads);
            for (const auto& [source, base] : {std::pair<const char*, const std::byte*>{"anon", anon.data},
                                               std::pair<const char*, const std::byte*>{"file", file.bytes().data()}}) {
                GemvJobs jobs = make_jobs(packs, type, base, matrices, w_bytes, xq.data(), y.data(), threads);
                CpuRowsResult r;
                r.format = t.name;
                r.source = source;
                r.impl = jobs.impl;
                r.threads = threads;
                r.bytes = total;
                time_passes(o.reps, [&] {
                    for (auto& calls : jobs.per_matrix) {
                        Batch batch(workers, &GemvJobs::run_chunk, &calls);
                        batch.run(calls.size());
                    }
                }, r);
                out.push_back(r);
            }
            if (type == o.formats.front()) {  // the read ceiling once per thread count
                CpuRowsResult r;
                r.format = "read";
                r.source = "anon";
                r.impl = "sum of 64-bit words, prefetched 8 KiB ahead";
                r.threads = threads;
                r.bytes = total;
                time_passes(o.reps, [&] {
                    for (int m = 0; m < matrices; ++m) {
                        ReadJob job;
                        job.words = reinterpret_cast<const uint64_t*>(anon.data + static_cast<uint64_t>(m) * w_bytes);
                        job.n = w_bytes / 8;
                        job.chunks = static_cast<size_t>(exec::row_chunk_count(threads, kOut));
                        Batch batch(workers, &ReadJob::run_chunk, &job);
                        batch.run(job.chunks);
                    }
                }, r);
                out.push_back(r);
            }
        }
    }
    return out;
}

std::string cpu_rows_markdown(const std::vector<CpuRowsResult>& results) {
    std::ostringstream o;
    o << "\n| CPU rows | source | threads | GB/s | GB/s per thread | ms per pass | minor faults | major faults | impl |\n";
    o << "|---|---|---:|---:|---:|---:|---:|---:|---|\n";
    char buf[256];
    for (const auto& r : results) {
        std::snprintf(buf, sizeof buf, "| %s | %s | %u | %.2f | %.2f | %.1f | %.0f | %.0f | %s |\n", r.format.c_str(),
                      r.source.c_str(), r.threads, r.gbs, r.gbs / r.threads, r.seconds * 1e3, r.minor_faults,
                      r.major_faults, r.impl.c_str());
        o << buf;
    }
    return o.str();
}

}  // namespace dense::bench
