// The CPU rows of a row split (plan/row_split.hpp). For every split GEMV the graph holds a node on
// the CPU (marked split_cpu_part) that reads its weight rows from the file mapping and its activation
// from the session's buffers (device memory on a GPU). Each such node becomes a job on the stream:
//
//   start: copy its device inputs (the quantized activation, and the output slice when the GEMV
//          accumulates into it) to page-locked staging, then hand the job's row chunks to the CPU
//          workers without waiting for them;
//   ...    the device runs on: the GPU rows of the same GEMV (lowered right after it) and anything
//          else that does not touch the job's data;
//   join:  wait for the chunks, then copy the output slice back.
//
// The hand-over and the wait go one of two ways. On a device that has stream memory operations
// (ABI 1.7) and mapped host memory, the stream writes a "go" word in host memory that a dispatcher
// thread here polls, and waits on the stream for a "done" word that the job's last chunk writes: no
// host function on the step's path (each costs the CUDA callback thread's wake-ups, twice per job
// and two jobs per layer); on an H200 at 8 GiB this was 4-8 % faster (docs/perf-notes.md, session
// 12). Elsewhere, or with DENSE_ROW_SPLIT_SYNC=hostfn, host functions do both: one that starts the
// job and returns, one that blocks until it is done. Any other value of that variable is an error.
//
// A job is joined right before the first later node that reads or writes its output, or writes its
// inputs (byte ranges of graph buffers), and at the end of the step. Adjacent CPU parts that read
// the same activation (ffn_gate's and ffn_up's) are one job: one copy out, one start, one join. So the GPU prefix and the CPU
// suffix of a GEMV run at the same time and only activations cross the bus (a few KiB per split
// GEMV). Everything is enqueued on the session's one stream, so it is captured into the step's
// device graph like any kernel and replays with it.
#pragma once

#include "exec/cpu_workers.hpp"
#include "exec/device_memory.hpp"
#include "exec/kernel_copy.hpp"
#include "graph/graph.hpp"

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <thread>
#include <vector>

namespace dense::exec {

// Totals over every step since the session started.
struct HostSplitStats {
    uint64_t jobs = 0;            // CPU GEMV parts run
    double cpu_ms = 0;            // from each job's start to its last chunk's end, summed (jobs
                                  // queued behind each other count their waiting too)
    double thread_ms = 0;         // the chunks' own run times, summed over the workers
    double wait_ms = 0;           // how long the stream stood waiting in joins, summed (host functions
                                  // only: a stream's wait on a word is not seen from the host)
    bool waits_timed = true;      // false when the joins are stream waits on words (wait_ms is 0)
    unsigned threads = 0;         // workers
    uint64_t bytes_to_host = 0;   // activations copied to the host
    uint64_t bytes_to_device = 0; // results copied back
};

// Throws dense::Error(Device) when `memory` cannot run host functions (a GPU pack before ABI 1.4),
// which a row split needs: checked by a session before it uploads anything.
void require_host_functions(const DeviceMemory& memory);

// How many row chunks a split GEMV of `rows` CPU rows is cut into for `workers` threads: sixteen
// per worker (a job ends with its last chunk: while it runs, the workers that found nothing left to
// claim stand idle, so the chunks must be short; the workers claim them without a lock, see
// exec/cpu_workers.hpp), fewer for a short suffix (below 16 rows a chunk costs more to hand out
// than to compute), at least one.
int64_t row_chunk_count(unsigned workers, int64_t rows);

// Chunk [first, end) of a GEMV cut by rows: the weight's rows (ne[1]) and the output's elements
// (ne[0]) of that range, with the strides that follow from them. The CPU parts' chunks, and the
// bus_read_share probe's (exec/split_rates.hpp), which must run the same way.
dense_tensor_view weight_row_chunk(const dense_tensor_view& w, int64_t first, int64_t end);
dense_tensor_view output_chunk(const dense_tensor_view& y, int64_t first, int64_t end);

class HostNodes {
public:
    // Takes every node of `g` marked split_cpu_part (g is resolved: its views point at the session's
    // buffers; the host side gets its own staging from memory.alloc_host). Each job is cut into row
    // chunks for the workers. Throws dense::Error(Device) when the device cannot run host functions
    // (a pack before ABI 1.4) and Internal for a marked node that is not a GEMV on the CPU. On the
    // CPU itself (exec/device_memory.hpp) the "stream" runs everything at once, in order, so a CPU
    // session's split runs the same machinery, the other nodes going on while the workers compute.
    // With `kernel_copy` (exec/kernel_copy.hpp) the staging is mapped host memory and the activation
    // out and the results back are copied by a kernel, not a copy engine.
    HostNodes(const graph::Graph& g, DeviceMemory& memory, CpuWorkers& workers, const KernelCopy* kernel_copy = nullptr);
    ~HostNodes();
    HostNodes(const HostNodes&) = delete;
    HostNodes& operator=(const HostNodes&) = delete;

    bool is_host(size_t node) const { return by_node_.count(node) != 0; }
    void begin_step() { pending_.clear(); }
    // Enqueues node `node`'s copies in and its start.
    void start(size_t node);
    // Enqueues the joins of the pending jobs that `next` would race with.
    void join_before(const graph::Node& next);
    void join_all();
    // After a failed step, once the stream is idle: waits for chunks still running on the workers.
    void drain() noexcept;
    // After the stream synced: throws dense::Error(Pack) naming the node if a CPU part failed.
    void throw_if_failed(int64_t position);
    HostSplitStats stats() const;

private:
    struct Job;
    static void start_job(void* job);
    static void wait_job(void* job);
    static void run_chunk(void* job, size_t index);
    void join(Job& job);
    void dispatch_loop();  // the dispatcher thread's body (word hand-over only)

    DeviceMemory& memory_;
    CpuWorkers& workers_;
    const KernelCopy* kernel_copy_;
    std::vector<std::unique_ptr<Job>> jobs_;
    std::map<size_t, Job*> by_node_;
    std::vector<Job*> pending_;  // started, not yet joined (in this step's enqueue order)
    std::set<size_t> followers_;  // CPU parts merged into the job of the one before them
    bool eager_join_ = false, trace_ = false;
    bool merge_ = true;  // DENSE_ROW_SPLIT_MERGE=0: one job per CPU part (for measurements)
    bool by_words_ = false;  // start and join by words in mapped host memory (see the top)
    void* words_ = nullptr;  // their block: a go and a done word per job, each on its own cache line
    std::atomic<bool> stop_{false};
    std::thread dispatcher_;
};

}  // namespace dense::exec
