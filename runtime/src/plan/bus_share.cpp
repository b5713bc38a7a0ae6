#include "plan/bus_share.hpp"

#include <algorithm>
#include <cstdio>

namespace dense::plan {

namespace {

double step_ms(const BusShareChoice& c, double s) {
    if (s >= 1) return std::max(c.gpu_ms, c.bus_ms);  // no CPU part, no hand-over
    return std::max(c.gpu_ms + c.handover_ms + (1 - s) * c.cpu_ms, s * c.bus_ms);
}

}  // namespace

BusShareChoice choose_bus_share(const BusShareInputs& in) {
    BusShareChoice c;
    c.gpu_ms = in.gpu_gbs > 0 ? in.gpu_bytes / (in.gpu_gbs * 1e6) * kStepPerGemvTime : 0;
    c.handover_ms = std::max(in.cpu_jobs, 0.0) * kHandOverMs;
    if (in.host_bytes <= 0 || in.bus_gbs <= 0) {  // nothing to move, or no bus: the CPU reads it all
        c.cpu_ms = in.cpu_gbs > 0 ? in.host_bytes / (in.cpu_gbs * 1e6) : 0;
        c.predicted_ms = step_ms(c, 0);
        return c;
    }
    c.bus_ms = in.host_bytes / (in.bus_gbs * 1e6);
    if (in.cpu_gbs <= 0) {  // no CPU rate: everything over the bus
        c.share = 1;
        c.predicted_ms = step_ms(c, 1);
        return c;
    }
    c.cpu_ms = in.host_bytes / (in.cpu_gbs * 1e6);
    // The crossing of the two sides (below 1 it beats 1 too: s* B < B <= step(1)).
    c.share = std::clamp((c.gpu_ms + c.handover_ms + c.cpu_ms) / (c.cpu_ms + c.bus_ms), 0.0, 1.0);
    c.predicted_ms = step_ms(c, c.share);
    return c;
}

std::string describe(const BusShareChoice& c, const BusShareInputs& in) {
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "%.2f (%.2f GB of host rows; bus %.1f GB/s, CPU %.1f GB/s, GPU GEMV %.0f GB/s, %.0f CPU parts: step "
                  "~%.1f ms, ~%.1f ms at 0.5)",
                  c.share, in.host_bytes / 1e9, in.bus_gbs, in.cpu_gbs, in.gpu_gbs, in.cpu_jobs, c.predicted_ms,
                  step_ms(c, 0.5));
    return buf;
}

}  // namespace dense::plan
