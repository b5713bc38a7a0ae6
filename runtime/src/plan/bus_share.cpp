#include "plan/bus_share.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>

namespace dense::plan {

double predicted_step_ms(const BusShareInputs& in, double share) {
    constexpr double inf = std::numeric_limits<double>::infinity();
    const double gpu_ms = in.gpu_gbs > 0 ? in.gpu_bytes / (in.gpu_gbs * 1e6) * kStepPerGemvTime : 0;
    const double bus_bytes = share * in.host_bytes;
    // Bytes per ms. With copies in the step the CPU rows run beside them (where that was measured).
    const double cpu = (bus_bytes > 0 && in.cpu_beside_bus_gbs > 0 ? in.cpu_beside_bus_gbs : in.cpu_gbs) * 1e6;
    const double bus = in.bus_gbs * 1e6;
    const double bus_beside = (in.bus_beside_cpu_gbs > 0 ? in.bus_beside_cpu_gbs : in.bus_gbs) * 1e6;
    const double cpu_phase = share < 1 ? (cpu > 0 ? (1 - share) * in.host_bytes / cpu : inf) : 0;
    double bus_side = 0;
    if (bus_bytes > 0) {
        if (bus <= 0) return inf;
        const double during = bus_beside * cpu_phase;  // copied while the CPU rows run
        bus_side = bus_bytes <= during ? bus_bytes / bus_beside : cpu_phase + (bus_bytes - during) / bus;
    }
    return std::max(gpu_ms + cpu_phase, bus_side);
}

BusShareChoice choose_bus_share(const BusShareInputs& in) {
    BusShareChoice c;
    c.gpu_ms = in.gpu_gbs > 0 ? in.gpu_bytes / (in.gpu_gbs * 1e6) * kStepPerGemvTime : 0;
    c.cpu_ms = in.cpu_gbs > 0 ? in.host_bytes / (in.cpu_gbs * 1e6) : 0;
    c.bus_ms = in.bus_gbs > 0 ? in.host_bytes / (in.bus_gbs * 1e6) : 0;
    c.predicted_ms = predicted_step_ms(in, 0);
    if (in.host_bytes <= 0) return c;
    // The first share (in steps of 0.01) that predicts the shortest step: where a range of shares
    // predicts the same (the DRAM bounds both sides), the smallest, which pins the least host memory.
    for (int k = 1; k <= 100; ++k) {
        const double s = k / 100.0;
        const double ms = predicted_step_ms(in, s);
        if (ms < c.predicted_ms * (1 - 1e-9)) {
            c.share = s;
            c.predicted_ms = ms;
        }
    }
    return c;
}

std::string describe(const BusShareChoice& c, const BusShareInputs& in) {
    char buf[320];
    std::snprintf(buf, sizeof buf,
                  "%.2f (%.2f GB of host rows; bus %.1f GB/s alone, %.1f beside the CPU; CPU %.1f GB/s alone, %.1f "
                  "beside the bus; GPU GEMV %.0f GB/s: step ~%.1f ms, ~%.1f ms at 0.5)",
                  c.share, in.host_bytes / 1e9, in.bus_gbs, in.bus_beside_cpu_gbs, in.cpu_gbs, in.cpu_beside_bus_gbs,
                  in.gpu_gbs, c.predicted_ms, predicted_step_ms(in, 0.5));
    return buf;
}

}  // namespace dense::plan
