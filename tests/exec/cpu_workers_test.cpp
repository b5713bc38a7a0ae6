// The row split's worker pool: every submitted task runs exactly once, whether the workers were
// polling (spin) or asleep when it came, batches submitted from several threads at once included;
// batches are claimed in submit order; queued work is finished before the pool goes away.
#include "exec/cpu_workers.hpp"

#include <gtest/gtest.h>

#include <memory>

#include <atomic>
#include <chrono>
#include <mutex>
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

TEST(CpuWorkers, BatchesFromSeveralThreadsEachRunOnce) {
    exec::CpuWorkers workers(3);
    constexpr int kSubmitters = 4, kBatches = 50;
    std::vector<std::unique_ptr<Counts>> counts;
    for (int b = 0; b < kSubmitters * kBatches; ++b) counts.push_back(std::make_unique<Counts>(static_cast<size_t>(b % 7)));
    std::vector<std::thread> submitters;
    for (int t = 0; t < kSubmitters; ++t)
        submitters.emplace_back([&, t] {
            for (int b = t; b < kSubmitters * kBatches; b += kSubmitters) workers.submit(&Counts::task, counts[b].get(), counts[b]->runs.size());
        });
    for (auto& s : submitters) s.join();
    for (auto& c : counts) wait_for(*c, static_cast<int>(c->runs.size()));
    for (size_t b = 0; b < counts.size(); ++b)
        for (size_t i = 0; i < counts[b]->runs.size(); ++i) EXPECT_EQ(counts[b]->runs[i].load(), 1) << "batch " << b << " task " << i;
}

// With one worker nothing overlaps, so the order it runs tasks in is the claim order: every index of
// a batch before any of the next one (the split's jobs rely on it: a GEMV started first ends first).
TEST(CpuWorkers, OneWorkerRunsBatchesInSubmitOrder) {
    struct Log {
        std::mutex mutex;
        std::vector<std::pair<int, size_t>> order;
        int batch = 0;
    };
    struct Tag {
        Log* log;
        int batch;
        static void task(void* p, size_t i) {
            auto* t = static_cast<Tag*>(p);
            std::lock_guard lock(t->log->mutex);
            t->log->order.emplace_back(t->batch, i);
        }
    };
    Log log;
    std::vector<Tag> tags{{&log, 0}, {&log, 1}, {&log, 2}};
    {
        exec::CpuWorkers workers(1);
        workers.submit(&Tag::task, &tags[0], 5);
        workers.submit(&Tag::task, &tags[1], 3);
        workers.submit(&Tag::task, &tags[2], 4);
    }
    std::vector<std::pair<int, size_t>> want;
    for (int b = 0; b < 3; ++b)
        for (size_t i = 0; i < std::vector<size_t>{5, 3, 4}[static_cast<size_t>(b)]; ++i) want.emplace_back(b, i);
    EXPECT_EQ(log.order, want);
}

}  // namespace
}  // namespace dense::test
