#include "exec/host_nodes.hpp"

#include "core/error.hpp"
#include "exec/cpu_relax.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <cstdlib>
#include <mutex>
#include <spdlog/spdlog.h>

namespace dense::exec {

namespace {

using Clock = std::chrono::steady_clock;


// Bytes a view spans from its first byte (views here are contiguous: the last stride times its count).
uint64_t view_bytes(const dense_tensor_view& v) {
    uint64_t bytes = 0;
    for (int d = 1; d < 4; ++d) bytes = std::max(bytes, static_cast<uint64_t>(v.nb[d]) * static_cast<uint64_t>(v.ne[d]));
    return bytes;
}

struct ByteRange {
    graph::BufferId buffer = 0;
    uint64_t first = 0, end = 0;
    bool overlaps(const ByteRange& o) const { return buffer == o.buffer && first < o.end && o.first < end; }
};

ByteRange range_of(const graph::ViewRef& r) { return {r.buffer, r.offset, r.offset + view_bytes(r.view)}; }

bool accumulates(const graph::Node& n) {
    if (n.params.size() < sizeof(dense_gemv_params)) return false;
    dense_gemv_params p;
    std::memcpy(&p, n.params.data(), sizeof p);
    return p.accumulate != 0;
}

}  // namespace

struct HostNodes::Job {
    HostNodes* owner = nullptr;
    std::string label;
    std::vector<dense_op_impl> chunk_impl;  // per chunk: a merged job's weights may differ in format
    // One call per chunk of rows; the views they point at live in the vectors beside them.
    std::vector<dense_op_call> chunks;
    std::vector<std::array<dense_tensor_view, 2>> chunk_src;
    std::vector<dense_tensor_view> chunk_dst;
    struct Copy {
        void* host;
        void* device;
        uint64_t bytes;
        void* mapped = nullptr;  // the device's address of `host` when the staging is mapped (kernel copies)
    };
    std::vector<Copy> in, out;
    std::vector<ByteRange> reads, writes;
    // Word hand-over: where the host and the device see this job's go and done words.
    uint32_t* go = nullptr;
    uint32_t* done_word = nullptr;
    const void* go_device = nullptr;
    const void* done_device = nullptr;

    // Per run (guarded by mutex): chunks not yet done, the first failure, timings.
    std::mutex mutex;
    std::condition_variable done;
    size_t remaining = 0;
    dense_status failed = DENSE_OK;
    Clock::time_point started;
    double cpu_ms = 0, thread_ms = 0, wait_ms = 0;
    uint64_t runs = 0;
};

int64_t row_chunk_count(unsigned workers, int64_t rows) {
    constexpr int64_t kChunksPerWorker = 16, kMinChunkRows = 16;
    return std::max<int64_t>(1, std::min<int64_t>(static_cast<int64_t>(workers) * kChunksPerWorker, rows / kMinChunkRows));
}

dense_tensor_view weight_row_chunk(const dense_tensor_view& w, int64_t first, int64_t end) {
    dense_tensor_view wc = w;
    wc.data = static_cast<std::byte*>(w.data) + static_cast<uint64_t>(w.nb[1]) * static_cast<uint64_t>(first);
    wc.ne[1] = end - first;
    wc.nb[2] = wc.nb[1] * wc.ne[1];
    wc.nb[3] = wc.nb[2] * wc.ne[2];
    return wc;
}

dense_tensor_view output_chunk(const dense_tensor_view& y, int64_t first, int64_t end) {
    dense_tensor_view yc = y;
    yc.data = static_cast<std::byte*>(y.data) + static_cast<uint64_t>(y.nb[0]) * static_cast<uint64_t>(first);
    yc.ne[0] = end - first;
    yc.nb[1] = yc.nb[0] * yc.ne[0];
    yc.nb[2] = yc.nb[1] * yc.ne[1];
    yc.nb[3] = yc.nb[2] * yc.ne[2];
    return yc;
}

void require_host_functions(const DeviceMemory& memory) {
    if (!memory.can_call_host())
        throw Error(ErrorKind::Device, memory.label() + " cannot run the CPU rows of a row split: its pack has no "
                                       "host functions (ABI 1.4); run with every weight on the GPU");
}

HostNodes::HostNodes(const graph::Graph& g, DeviceMemory& memory, CpuWorkers& workers, const KernelCopy* kernel_copy)
    : memory_(memory), workers_(workers), kernel_copy_(kernel_copy) {
    // Diagnostics: DENSE_ROW_SPLIT_JOIN=eager joins every job right after its
    // start (no overlap: isolates a missed dependency from a wrong CPU result); DENSE_ROW_SPLIT_TRACE=1
    // logs where each job starts and joins (at enqueue time, so once per capture).
    if (const char* v = std::getenv("DENSE_ROW_SPLIT_JOIN")) eager_join_ = std::string(v) == "eager";
    if (const char* v = std::getenv("DENSE_ROW_SPLIT_TRACE")) trace_ = std::string(v) == "1";
    // Kernel copies: every job's staging in one block of mapped host memory, each piece 256-byte
    // aligned (whole floats: the kernel copies F32 elements).
    constexpr uint64_t kAlign = 256;
    std::byte* mapped_host = nullptr;
    std::byte* mapped_device = nullptr;
    uint64_t mapped_used = 0;
    if (kernel_copy_ != nullptr) {
        uint64_t total = 0;
        for (const auto& n : g.nodes)
            if (n.split_cpu_part && n.src_views.size() == 2 && n.dst_views.size() == 1)
                for (const auto* v : {&n.src_views[1], &n.dst_views[0]}) total += (view_bytes(*v) + kAlign - 1) / kAlign * kAlign;
        if (total > 0) {
            const auto [h, d] = memory.alloc_host_mapped(total);
            mapped_host = static_cast<std::byte*>(h);
            mapped_device = static_cast<std::byte*>(d);
        }
    }
    if (const char* v = std::getenv("DENSE_ROW_SPLIT_MERGE")) merge_ = std::string(v) != "0";
    size_t last_node = SIZE_MAX;  // the previous CPU part
    for (size_t i = 0; i < g.nodes.size(); ++i) {
        const graph::Node& n = g.nodes[i];
        if (!n.split_cpu_part) continue;
        require_host_functions(memory);
        if (n.key.device != DENSE_DEVICE_CPU || n.key.op != DENSE_OP_GEMV_Q || n.src.size() != 2 || n.dst.size() != 1 || !n.src[0].external ||
            n.src[1].external || n.dst[0].external)
            throw Error(ErrorKind::Internal, "node '" + n.label + "' is marked as the CPU part of a row split but is "
                                             "not a GEMV on the CPU");
        auto job = std::make_unique<Job>();
        job->owner = this;
        job->label = n.label;

        // Host staging for the activation and the output slice; the CPU op sees only host memory.
        // Returns the host view and, for mapped staging, the device's address of the same bytes.
        const auto stage = [&](const dense_tensor_view& device_view) -> std::pair<dense_tensor_view, void*> {
            dense_tensor_view v = device_view;
            const uint64_t bytes = view_bytes(device_view);
            void* mapped = nullptr;
            if (mapped_host != nullptr && bytes % 4 == 0) {
                v.data = mapped_host + mapped_used;
                mapped = mapped_device + mapped_used;
                mapped_used += (bytes + kAlign - 1) / kAlign * kAlign;
            } else {
                v.data = memory.alloc_host(bytes);
            }
            v.device_kind = DENSE_DEVICE_CPU;
            v.device_index = 0;
            return {v, mapped};
        };
        const auto [x, x_mapped] = stage(n.src_views[1]);
        const auto [y, y_mapped] = stage(n.dst_views[0]);
        job->in.push_back({x.data, n.src_views[1].data, view_bytes(x), x_mapped});
        if (accumulates(n)) job->in.push_back({y.data, n.dst_views[0].data, view_bytes(y), y_mapped});
        job->out.push_back({y.data, n.dst_views[0].data, view_bytes(y), y_mapped});
        job->reads = {range_of(n.src[1]), range_of(n.dst[0])};
        job->writes = {range_of(n.dst[0])};

        // Chunks of whole rows (row_chunk_count).
        const dense_tensor_view& w = n.src_views[0];
        const int64_t rows = w.ne[1];
        const int64_t count = row_chunk_count(workers.size(), rows);
        job->chunk_src.resize(static_cast<size_t>(count));
        job->chunk_dst.resize(static_cast<size_t>(count));
        job->chunks.resize(static_cast<size_t>(count));
        for (int64_t c = 0; c < count; ++c) {
            const int64_t first = rows * c / count, end = rows * (c + 1) / count;
            const auto k = static_cast<size_t>(c);
            job->chunk_src[k] = {weight_row_chunk(w, first, end), x};
            job->chunk_dst[k] = output_chunk(y, first, end);
            dense_op_call call = n.call;
            call.src = job->chunk_src[k].data();
            call.dst = &job->chunk_dst[k];
            call.stream = nullptr;
            call.workspace = nullptr;
            call.workspace_bytes = 0;
            call.n_threads = 1;
            job->chunks[k] = call;
        }
        job->chunk_impl.assign(job->chunks.size(), n.op.impl);
        // The CPU part right before this one reads the same activation (ffn_gate and ffn_up, made
        // adjacent by graph/cpu_part_hoist.hpp): one job for both, so one copy out, one start, one
        // join per pair (fewer GPU->CPU->GPU round trips on the step's critical path).
        Job* prev = jobs_.empty() ? nullptr : jobs_.back().get();
        if (merge_ && prev != nullptr && last_node + 1 == i && !accumulates(n) && prev->in.size() == 1 &&
            prev->in[0].device == n.src_views[1].data && prev->in[0].bytes == view_bytes(n.src_views[1]) &&
            g.nodes[last_node].layer == n.layer && g.nodes[last_node].phase == n.phase) {
            const dense_tensor_view prev_x = prev->chunk_src.front()[1];
            for (size_t k = 0; k < job->chunks.size(); ++k) {
                prev->chunk_src.push_back({job->chunk_src[k][0], prev_x});
                prev->chunk_dst.push_back(job->chunk_dst[k]);
                prev->chunks.push_back(job->chunks[k]);
                prev->chunk_impl.push_back(job->chunk_impl[k]);
            }
            prev->out.insert(prev->out.end(), job->out.begin(), job->out.end());
            prev->reads.insert(prev->reads.end(), job->reads.begin(), job->reads.end());
            prev->writes.insert(prev->writes.end(), job->writes.begin(), job->writes.end());
            prev->label += " + " + job->label;
            by_node_[i] = prev;
            followers_.insert(i);
        } else {
            by_node_[i] = job.get();
            jobs_.push_back(std::move(job));
        }
        last_node = i;
    }
    // The chunk calls point into their job's view vectors, which merging may have moved.
    for (auto& job : jobs_)
        for (size_t k = 0; k < job->chunks.size(); ++k) {
            job->chunks[k].src = job->chunk_src[k].data();
            job->chunks[k].dst = &job->chunk_dst[k];
        }
    // Words wherever the device has them (measured faster on an H200, docs/perf-notes.md session 12);
    // DENSE_ROW_SPLIT_SYNC=hostfn keeps host functions, for A/B runs.
    const char* sync_env = std::getenv("DENSE_ROW_SPLIT_SYNC");
    const std::string sync = sync_env != nullptr ? sync_env : "";
    if (!sync.empty() && sync != "words" && sync != "hostfn")
        throw Error(ErrorKind::Usage, "DENSE_ROW_SPLIT_SYNC='" + sync + "': expected 'words' or 'hostfn'");
    by_words_ = !jobs_.empty() && memory.can_signal_host() && sync != "hostfn";
    if (by_words_) {
        constexpr uint64_t kLine = 64;  // one cache line per word: the poller and the writers do not share lines
        const auto [h, d] = memory.alloc_host_mapped(2 * kLine * jobs_.size());
        words_ = h;
        for (size_t j = 0; j < jobs_.size(); ++j) {
            Job& job = *jobs_[j];
            job.go = reinterpret_cast<uint32_t*>(static_cast<std::byte*>(h) + 2 * kLine * j);
            job.done_word = reinterpret_cast<uint32_t*>(static_cast<std::byte*>(h) + 2 * kLine * j + kLine);
            job.go_device = static_cast<const std::byte*>(d) + 2 * kLine * j;
            job.done_device = static_cast<const std::byte*>(d) + 2 * kLine * j + kLine;
            *job.go = 0;
            *job.done_word = 0;
        }
        dispatcher_ = std::thread([this] { dispatch_loop(); });
    }
}

// Polls every job's go word; a job whose word the stream set is started (the word cleared first:
// the stream sets it again only in a later step, after this job's join). Spins while steps run,
// then backs off to short sleeps: between tokens a few tens of microseconds of latency on the first
// job, and an idle session costs a wake-up per 0.5 ms, not a core.
void HostNodes::dispatch_loop() {
    auto last_start = Clock::now();
    while (!stop_.load(std::memory_order_relaxed)) {
        bool started = false;
        for (auto& job : jobs_) {
            std::atomic_ref<uint32_t> go(*job->go);
            if (go.load(std::memory_order_acquire) != 1) continue;
            go.store(0, std::memory_order_relaxed);
            start_job(job.get());
            started = true;
        }
        if (started) {
            last_start = Clock::now();
            continue;
        }
        const auto idle = Clock::now() - last_start;
        if (idle < std::chrono::milliseconds(5))
            cpu_relax();
        else if (idle < std::chrono::milliseconds(200))
            std::this_thread::sleep_for(std::chrono::microseconds(20));
        else
            std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
}

HostNodes::~HostNodes() {
    drain();
    if (dispatcher_.joinable()) {
        stop_.store(true, std::memory_order_relaxed);
        dispatcher_.join();
    }
}

void HostNodes::start_job(void* p) {
    auto& job = *static_cast<Job*>(p);
    {
        std::lock_guard lock(job.mutex);
        job.remaining = job.chunks.size();
        job.started = Clock::now();
    }
    job.owner->workers_.submit(&HostNodes::run_chunk, &job, job.chunks.size());
}

void HostNodes::run_chunk(void* p, size_t index) {
    auto& job = *static_cast<Job*>(p);
    const auto from = Clock::now();
    const dense_op_impl& impl = job.chunk_impl[index];
    const dense_status s = impl.run(impl.user, &job.chunks[index]);
    const auto to = Clock::now();
    std::lock_guard lock(job.mutex);
    job.thread_ms += std::chrono::duration<double, std::milli>(to - from).count();
    if (s != DENSE_OK && job.failed == DENSE_OK) job.failed = s;
    if (--job.remaining == 0) {
        job.cpu_ms += std::chrono::duration<double, std::milli>(Clock::now() - job.started).count();
        ++job.runs;
        job.done.notify_all();
        // The stream waits for this word: every chunk's results are written before it (they
        // happened before this decrement, under the mutex), and x86 keeps stores in order.
        if (job.done_word != nullptr) std::atomic_ref<uint32_t>(*job.done_word).store(1, std::memory_order_release);
    }
}

void HostNodes::wait_job(void* p) {
    auto& job = *static_cast<Job*>(p);
    const auto from = Clock::now();
    std::unique_lock lock(job.mutex);
    job.done.wait(lock, [&] { return job.remaining == 0; });
    job.wait_ms += std::chrono::duration<double, std::milli>(Clock::now() - from).count();
}

void HostNodes::start(size_t node) {
    if (followers_.count(node)) return;  // merged into the job of the CPU part before it, started there
    Job& job = *by_node_.at(node);
    for (const auto& c : job.in) {
        if (c.mapped != nullptr)
            kernel_copy_->copy(c.mapped, c.device, c.bytes);
        else
            memory_.to_host(c.host, c.device, c.bytes);
    }
    if (by_words_)
        memory_.write_word(job.go_device, 1);
    else
        memory_.call_host(&HostNodes::start_job, &job);
    if (trace_) spdlog::info("row split: start '{}' (node {})", job.label, node);
    if (eager_join_) {
        join(job);
        return;
    }
    pending_.push_back(&job);
}

void HostNodes::join(Job& job) {
    if (by_words_) {
        memory_.wait_word(job.done_device, 1);
        memory_.write_word(job.done_device, 0);  // ordered after the wait: ready for the next step
    } else {
        memory_.call_host(&HostNodes::wait_job, &job);
    }
    for (const auto& c : job.out) {
        if (c.mapped != nullptr)
            kernel_copy_->copy(c.device, c.mapped, c.bytes);
        else
            memory_.to_device(c.device, c.host, c.bytes);
    }
}

void HostNodes::join_before(const graph::Node& next) {
    const auto races = [&](const Job& job) {
        for (const auto& v : next.dst) {
            if (v.external) continue;
            const ByteRange r = range_of(v);
            for (const auto& x : job.reads)
                if (r.overlaps(x)) return true;
        }
        for (const auto& v : next.src) {
            if (v.external) continue;
            const ByteRange r = range_of(v);
            for (const auto& x : job.writes)
                if (r.overlaps(x)) return true;
        }
        return false;
    };
    for (auto it = pending_.begin(); it != pending_.end();) {
        if (races(**it)) {
            if (trace_) spdlog::info("row split: join '{}' before '{}'", (*it)->label, next.label);
            join(**it);
            it = pending_.erase(it);
        } else {
            ++it;
        }
    }
}

void HostNodes::join_all() {
    for (Job* job : pending_) {
        if (trace_) spdlog::info("row split: join '{}' at the end", job->label);
        join(*job);
    }
    pending_.clear();
}

void HostNodes::drain() noexcept {
    for (auto& job : jobs_) {
        std::unique_lock lock(job->mutex);
        job->done.wait(lock, [&] { return job->remaining == 0; });
    }
    pending_.clear();
}

void HostNodes::throw_if_failed(int64_t position) {
    for (auto& job : jobs_) {
        std::lock_guard lock(job->mutex);
        if (job->failed == DENSE_OK) continue;
        const dense_status s = job->failed;
        job->failed = DENSE_OK;
        throw Error(s == DENSE_E_NUMERIC ? ErrorKind::Numeric : ErrorKind::Pack,
                    "step at position " + std::to_string(position) + ": the CPU rows of node '" + job->label +
                        "' failed (status " + std::to_string(s) + "); the session state is unchanged");
    }
}

HostSplitStats HostNodes::stats() const {
    HostSplitStats s;
    s.threads = workers_.size();
    s.waits_timed = !by_words_;
    for (const auto& job : jobs_) {
        std::lock_guard lock(job->mutex);
        s.jobs += job->runs;
        s.cpu_ms += job->cpu_ms;
        s.thread_ms += job->thread_ms;
        s.wait_ms += job->wait_ms;
        for (const auto& c : job->in) s.bytes_to_host += c.bytes * job->runs;
        for (const auto& c : job->out) s.bytes_to_device += c.bytes * job->runs;
    }
    return s;
}

}  // namespace dense::exec
