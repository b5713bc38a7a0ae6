// The row split's worker pool: every submitted task runs exactly once, whether the workers were
// polling (spin) or asleep when it came, and queued work is finished before the pool goes away.
#include "exec/cpu_workers.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace dense::test {
namespace {

struct Counts {
    std::vector<std::atomic<int>> runs;
    explicit Counts(size_t n) : runs(n) {}
    static void task(void* p, size_t i) { static_cast<Counts*>(p)->runs[i].fetch_add(1); }
    int total() const {
        int t = 0;
        for (const auto& r : runs) t += r.load();
        return t;
    }
};

void wait_for(const Counts& c, int total) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (c.total() < total && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

void every_task_once(std::chrono::microseconds spin) {
    exec::CpuWorkers workers(3, spin);
    Counts c(64);
    workers.submit(&Counts::task, &c, 64);
    wait_for(c, 64);
    // Long enough for every worker to have given up polling and gone to sleep: they must wake.
    std::this_thread::sleep_for(spin + std::chrono::milliseconds(20));
    workers.submit(&Counts::task, &c, 64);
    wait_for(c, 128);
    for (size_t i = 0; i < c.runs.size(); ++i) EXPECT_EQ(c.runs[i].load(), 2) << "task " << i;
}

TEST(CpuWorkers, EveryTaskRunsOnceWhenWorkersSleepAtOnce) { every_task_once(std::chrono::microseconds(0)); }

TEST(CpuWorkers, EveryTaskRunsOnceWhenWorkersPollFirst) { every_task_once(std::chrono::microseconds(3000)); }

TEST(CpuWorkers, QueuedWorkIsFinishedBeforeThePoolGoes) {
    Counts c(200);
    {
        exec::CpuWorkers workers(2, std::chrono::microseconds(500));
        workers.submit(&Counts::task, &c, 200);
    }
    EXPECT_EQ(c.total(), 200);
}

}  // namespace
}  // namespace dense::test
