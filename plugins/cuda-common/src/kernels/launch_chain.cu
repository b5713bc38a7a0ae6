#include "kernels/launch_chain.cuh"
#include "kernels/env_switch.hpp"
#include "kernels/launch_chain_break.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <vector>

namespace dense::cuda {

bool chained_launches_enabled() {
    static const bool enabled = env_switch_on("DENSE_CUDA_CHAIN");
    return enabled;
}

namespace {

// Streams marked by break_launch_chain and not launched on since. A handful at most (one stream per
// session); `marked` lets every launch skip the lock while no stream is marked.
struct ChainBreaks {
    std::mutex mutex;
    std::vector<void*> streams;
    std::atomic<int> marked{0};
};
ChainBreaks& chain_breaks() {
    static auto* b = new ChainBreaks;  // leaked on purpose: launches may come during static destruction
    return *b;
}

}  // namespace

void break_launch_chain(void* stream) noexcept {
    auto& b = chain_breaks();
    const std::lock_guard<std::mutex> lock(b.mutex);
    if (std::find(b.streams.begin(), b.streams.end(), stream) != b.streams.end()) return;
    try {
        b.streams.push_back(stream);
        b.marked.fetch_add(1);
    } catch (...) {
    }
}

bool take_launch_chain_break(void* stream) noexcept {
    auto& b = chain_breaks();
    if (b.marked.load() == 0) return false;
    const std::lock_guard<std::mutex> lock(b.mutex);
    const auto it = std::find(b.streams.begin(), b.streams.end(), stream);
    if (it == b.streams.end()) return false;
    b.streams.erase(it);
    b.marked.fetch_sub(1);
    return true;
}

}  // namespace dense::cuda
