#include "bench/timing.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

namespace dense::bench {

double Timing::best() const { return seconds.empty() ? 0.0 : *std::min_element(seconds.begin(), seconds.end()); }

double Timing::mean() const {
    return seconds.empty() ? 0.0 : std::accumulate(seconds.begin(), seconds.end(), 0.0) / static_cast<double>(seconds.size());
}

double Timing::stddev() const {
    if (seconds.size() < 2) return 0.0;
    const double m = mean();
    double ss = 0;
    for (double s : seconds) ss += (s - m) * (s - m);
    return std::sqrt(ss / static_cast<double>(seconds.size() - 1));
}

Timing time_device_work(exec::DeviceMemory& memory, const std::function<void()>& enqueue, int reps) {
    void* graph = nullptr;
    if (memory.can_capture()) {
        memory.begin_capture();
        try {
            enqueue();
        } catch (...) {
            try {
                memory.release_graph(memory.end_capture());
            } catch (...) {
            }
            throw;
        }
        graph = memory.end_capture();
    }
    auto once = [&] {
        if (graph != nullptr)
            memory.launch(graph);
        else
            enqueue();
        memory.sync();
    };
    Timing t;
    try {
        once();  // warm-up: first-touch, instruction caches, clocks
        for (int r = 0; r < reps; ++r) {
            const auto start = std::chrono::steady_clock::now();
            once();
            t.seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        }
    } catch (...) {
        if (graph != nullptr) memory.release_graph(graph);
        throw;
    }
    if (graph != nullptr) memory.release_graph(graph);
    return t;
}

}  // namespace dense::bench
