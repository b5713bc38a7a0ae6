// Timing device work from the host: enqueue, wait, read the clock. On a GPU the work is first
// captured into a device graph (when the pack can) so that launch gaps between the timed ops are
// the GPU's, not the host's; one untimed warm-up replay precedes the timed ones.
#pragma once

#include "exec/device_memory.hpp"

#include <functional>
#include <vector>

namespace dense::bench {

struct Timing {
    std::vector<double> seconds;  // one per repetition
    double best() const;
    double mean() const;
    double stddev() const;
};

// Runs `enqueue` (which enqueues the work once on memory.stream()) `reps` times after one warm-up,
// timing each repetition separately.
Timing time_device_work(exec::DeviceMemory& memory, const std::function<void()>& enqueue, int reps);

}  // namespace dense::bench
