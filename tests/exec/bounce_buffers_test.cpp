// Copies from pageable memory through page-locked bounce buffers (exec/bounce_buffers.hpp), against
// a fake device whose copies run later, on a thread of their own, reading the bounce buffer only
// when they run (as a copy engine does): a buffer refilled before its copy ran would deliver the
// next chunk's bytes, so every destination holding its own chunk proves the host waited.
#include "exec/bounce_buffers.hpp"
#include "exec/cpu_workers.hpp"
#include "exec/device_memory.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

namespace dense::test {
namespace {

class SlowCopyEngine final : public exec::DeviceMemory {
public:
    explicit SlowCopyEngine(std::chrono::microseconds per_copy) : per_copy_(per_copy) {
        engine_ = std::thread([this] { run(); });
    }
    ~SlowCopyEngine() override {
        {
            std::lock_guard lock(mutex_);
            stop_ = true;
        }
        ready_.notify_all();
        engine_.join();
    }
    dense_device_kind kind() const noexcept override { return DENSE_DEVICE_CUDA; }
    std::string label() const override { return "slow copy engine"; }
    void* alloc(uint64_t, const std::string&) override { return nullptr; }
    void zero(void*, uint64_t) override {}
    void to_device(void*, const void*, uint64_t) override {}
    void to_host(void*, const void*, uint64_t) override {}
    void sync() override {
        std::unique_lock lock(mutex_);
        idle_.wait(lock, [this] { return queue_.empty() && !busy_; });
    }
    void* stream() const noexcept override { return nullptr; }
    uint64_t allocated_bytes() const noexcept override { return 0; }
    // Copies enqueued and not yet started, at most: above 1, copy() returned before its copy ran.
    size_t max_pending_copies() {
        std::lock_guard lock(mutex_);
        return max_pending_copies_;
    }
    void copy(void*, const void*, uint64_t) override {}
    bool can_signal_host_from_side() const noexcept override { return true; }
    std::pair<void*, void*> alloc_host_mapped(uint64_t bytes) override {
        words_.emplace_back(bytes / 4 + 1, 0u);
        return {words_.back().data(), words_.back().data()};
    }
    void* alloc_host_locked(uint64_t bytes) override {
        host_.emplace_back(bytes);
        return host_.back().data();
    }
    // Enqueued: run later, in order, by the engine thread.
    void to_device_on(void*, void* dst, const void* src, uint64_t bytes) override {
        push({dst, src, bytes, nullptr, 0});
    }
    void write_word_on(void*, const void* word, uint32_t value) override {
        push({nullptr, nullptr, 0, static_cast<uint32_t*>(const_cast<void*>(word)), value});
    }

private:
    struct Work {
        void* dst;
        const void* src;
        uint64_t bytes;
        uint32_t* word;
        uint32_t value;
    };
    void push(Work w) {
        {
            std::lock_guard lock(mutex_);
            queue_.push_back(w);
            if (w.word == nullptr) {
                size_t copies = 0;
                for (const Work& q : queue_) copies += q.word == nullptr ? 1 : 0;
                max_pending_copies_ = std::max(max_pending_copies_, copies);
            }
        }
        ready_.notify_all();
    }
    void run() {
        std::unique_lock lock(mutex_);
        for (;;) {
            ready_.wait(lock, [this] { return stop_ || !queue_.empty(); });
            if (queue_.empty()) return;
            Work w = queue_.front();
            queue_.pop_front();
            busy_ = true;
            lock.unlock();
            if (w.word != nullptr) {
                std::atomic_ref<uint32_t>(*w.word).store(w.value, std::memory_order_release);
            } else {
                std::this_thread::sleep_for(per_copy_);
                std::memcpy(w.dst, w.src, w.bytes);
            }
            lock.lock();
            busy_ = false;
            if (queue_.empty()) idle_.notify_all();
        }
    }

    std::chrono::microseconds per_copy_;
    std::mutex mutex_;
    std::condition_variable ready_, idle_;
    std::deque<Work> queue_;
    bool busy_ = false;
    bool stop_ = false;
    size_t max_pending_copies_ = 0;
    std::deque<std::vector<uint32_t>> words_;
    std::deque<std::vector<std::byte>> host_;
    std::thread engine_;
};

TEST(BounceBuffers, EveryDestinationGetsItsOwnChunkThoughTheCopiesRunLate) {
    constexpr uint64_t kBuffer = 300 * 1024;  // not a multiple of the workers' fill pieces
    constexpr int kChunks = 24;               // six uses of each of the four buffers
    std::mt19937 rng(20261203);
    std::vector<std::vector<std::byte>> source(kChunks), dest(kChunks);
    for (int i = 0; i < kChunks; ++i) {
        const uint64_t bytes = kBuffer - static_cast<uint64_t>(i % 3) * 4096;  // some copies short of a buffer
        source[i].resize(bytes);
        for (auto& b : source[i]) b = static_cast<std::byte>(rng());
        dest[i].assign(bytes, std::byte{0});
    }
    SlowCopyEngine engine(std::chrono::microseconds(2000));
    exec::CpuWorkers workers(3);
    exec::BounceBuffers bounce(engine, workers, kBuffer, 4);
    for (int i = 0; i < kChunks; ++i) bounce.copy(nullptr, dest[i].data(), source[i].data(), source[i].size());
    engine.sync();
    for (int i = 0; i < kChunks; ++i) EXPECT_TRUE(dest[i] == source[i]) << "chunk " << i << " arrived wrong";
    // The copies ran behind the fills (up to the other three buffers' worth): the host did not wait
    // for each copy before the next fill, only for a buffer's previous one.
    EXPECT_GE(engine.max_pending_copies(), 2u);
    EXPECT_LE(engine.max_pending_copies(), 4u);
    uint64_t total = 0;
    for (const auto& s : source) total += s.size();
    EXPECT_EQ(bounce.bytes_copied(), total);
}

TEST(BounceBuffers, RefusesACopyLargerThanABuffer) {
    SlowCopyEngine engine(std::chrono::microseconds(0));
    exec::CpuWorkers workers(1);
    exec::BounceBuffers bounce(engine, workers, 4096, 2);
    std::vector<std::byte> big(8192), dst(8192);
    try {
        bounce.copy(nullptr, dst.data(), big.data(), big.size());
        FAIL() << "a copy larger than a buffer was accepted";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Internal) << e.what();
    }
    EXPECT_EQ(bounce.bytes_copied(), 0u);
}

}  // namespace
}  // namespace dense::test
