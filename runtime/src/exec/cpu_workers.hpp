// A fixed set of host threads that run indexed tasks: the CPU rows of a row split are cut into row
// chunks (exec/host_nodes.hpp), and the chunks of every pending GEMV queue up here in the order they
// were started. submit() returns at once (it is called from a device stream's host function, which
// must not block the stream longer than it takes to hand the work over).
//
// A submit() is one batch in the queue, not `count` items: the workers share the batch at the front
// and claim its indices with an atomic counter, taking the queue's lock only to move on to the next
// batch. With a lock per index, the split's ~50,000 chunks per token of a 27B at 8 GiB would queue
// up on one mutex; with claiming, chunks can be small enough that a GEMV's tail (the last chunks,
// with most workers already idle) stays short.
//
// An idle worker may poll the queue's size for a while before it sleeps on the condition variable
// ($DENSE_CPU_SPIN_US). Off by default: on the H200 host, polling for 2 ms changed the split decode
// by no more than its run-to-run noise (27B at 8 GiB: 4.89 and 4.62 tok/s polling, 5.05 sleeping;
// docs/perf-notes.md, session 7), and it costs a core per idle worker.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace dense::exec {

class CpuWorkers {
public:
    using Task = void (*)(void* context, size_t index);

    // How long an idle worker polls before it sleeps: $DENSE_CPU_SPIN_US microseconds if set, else 0
    // (sleep at once).
    static std::chrono::microseconds default_spin();

    // `threads` workers; 0 = one per hardware thread but one: while a step runs, the host thread
    // waiting on the device's stream spins on a core of its own.
    explicit CpuWorkers(unsigned threads, std::chrono::microseconds spin = default_spin());
    ~CpuWorkers();
    CpuWorkers(const CpuWorkers&) = delete;
    CpuWorkers& operator=(const CpuWorkers&) = delete;

    unsigned size() const noexcept { return static_cast<unsigned>(threads_.size()); }
    // Runs task(context, i) for i in [0, count) on the workers; returns before they run.
    void submit(Task task, void* context, size_t count);

private:
    struct Batch {
        Task task;
        void* context;
        size_t count;
        std::atomic<size_t> next{0};  // the next index to claim; >= count once all are claimed
    };
    void work();

    std::mutex mutex_;
    std::condition_variable ready_;
    // Batches not yet exhausted, in submit order; a worker holds its own reference while it claims,
    // so the first worker to find the front exhausted may pop it.
    std::deque<std::shared_ptr<Batch>> queue_;
    std::atomic<size_t> queued_{0};  // queue_.size(), for the workers that poll without the lock
    unsigned sleeping_ = 0;          // workers waiting on ready_ (guarded by mutex_)
    bool stopping_ = false;
    std::chrono::microseconds spin_;
    std::vector<std::thread> threads_;
};

}  // namespace dense::exec
