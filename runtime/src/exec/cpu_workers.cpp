#include "exec/cpu_workers.hpp"

#include "exec/cpu_relax.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>

namespace dense::exec {

std::chrono::microseconds CpuWorkers::default_spin() {
    if (const char* v = std::getenv("DENSE_CPU_SPIN_US")) {
        try {
            return std::chrono::microseconds(std::max(0L, std::stol(v)));
        } catch (...) {
        }
    }
    return std::chrono::microseconds(0);
}

CpuWorkers::CpuWorkers(unsigned threads, std::chrono::microseconds spin) : spin_(spin) {
    if (threads == 0) threads = std::max(2u, std::thread::hardware_concurrency()) - 1;
    threads_.reserve(threads);
    for (unsigned i = 0; i < threads; ++i) threads_.emplace_back([this] { work(); });
}

CpuWorkers::~CpuWorkers() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    ready_.notify_all();
    for (auto& t : threads_) t.join();
}

void CpuWorkers::submit(Task task, void* context, size_t count) {
    if (count == 0) return;
    auto batch = std::make_shared<Batch>();
    batch->task = task;
    batch->context = context;
    batch->count = count;
    bool wake = false;
    {
        std::lock_guard lock(mutex_);
        queue_.push_back(std::move(batch));
        queued_.fetch_add(1, std::memory_order_release);
        wake = sleeping_ > 0;
    }
    if (wake) ready_.notify_all();
}

void CpuWorkers::work() {
    using Clock = std::chrono::steady_clock;
    std::unique_lock lock(mutex_);
    for (;;) {
        if (queue_.empty() && !stopping_ && spin_.count() > 0) {
            // Poll without the lock for a while: the next chunks are usually microseconds away.
            lock.unlock();
            const auto until = Clock::now() + spin_;
            while (queued_.load(std::memory_order_acquire) == 0 && Clock::now() < until) cpu_relax();
            lock.lock();
        }
        if (queue_.empty() && !stopping_) {
            ++sleeping_;
            ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
            --sleeping_;
        }
        // Work already queued is finished before stopping: a stream may be waiting on it.
        if (queue_.empty()) return;
        const std::shared_ptr<Batch> batch = queue_.front();
        lock.unlock();
        for (size_t i; (i = batch->next.fetch_add(1, std::memory_order_relaxed)) < batch->count;)
            batch->task(batch->context, i);
        lock.lock();
        // Every index is claimed (some may still run on other workers): the batch leaves the queue.
        if (!queue_.empty() && queue_.front() == batch) {
            queue_.pop_front();
            queued_.fetch_sub(1, std::memory_order_relaxed);
        }
    }
}

}  // namespace dense::exec
