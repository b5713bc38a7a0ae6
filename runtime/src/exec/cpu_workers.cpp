#include "exec/cpu_workers.hpp"

#include <algorithm>

namespace dense::exec {

CpuWorkers::CpuWorkers(unsigned threads) {
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
    {
        std::lock_guard lock(mutex_);
        for (size_t i = 0; i < count; ++i) queue_.push_back({task, context, i});
    }
    ready_.notify_all();
}

void CpuWorkers::work() {
    for (;;) {
        Item item{};
        {
            std::unique_lock lock(mutex_);
            ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
            // Work already queued is finished before stopping: a stream may be waiting on it.
            if (queue_.empty()) return;
            item = queue_.front();
            queue_.pop_front();
        }
        item.task(item.context, item.index);
    }
}

}  // namespace dense::exec
