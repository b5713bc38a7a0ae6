// bus_read_share auto's model (plan/bus_share.hpp): the share that balances the CPU's time on the
// step's critical path against the bus copies running beside it.
#include "plan/bus_share.hpp"

#include <gtest/gtest.h>

namespace dense::plan {
namespace {

// The H200 test machine's probed rates (docs/perf-notes.md, session 17) with the 27B's GPU bytes.
BusShareInputs h200(double host_gb) {
    BusShareInputs in;
    in.host_bytes = host_gb * 1e9;
    in.gpu_bytes = 15.1e9 - in.host_bytes;
    in.cpu_gbs = 69;
    in.bus_gbs = 55;
    in.gpu_gbs = 1780;
    return in;
}

TEST(BusShare, BalancesTheCpuOnTheCriticalPathAgainstTheCopiesBesideIt) {
    // Measured best on the H200: 0.8 at 0.98 GB, 0.6 at 3.6 GB, 0.46-0.6 alike at 7.9 GB (session 17).
    const BusShareChoice small = choose_bus_share(h200(0.98));
    const BusShareChoice medium = choose_bus_share(h200(3.6));
    const BusShareChoice large = choose_bus_share(h200(7.9));
    EXPECT_NEAR(small.share, 0.8, 0.03);
    EXPECT_NEAR(medium.share, 0.62, 0.03);
    EXPECT_NEAR(large.share, 0.58, 0.03);
    EXPECT_GT(small.share, medium.share);
    EXPECT_GT(medium.share, large.share);
    // At s*, the two sides of the step take the same time, and no other share predicts less.
    for (const auto& c : {small, medium, large}) {
        EXPECT_NEAR(c.gpu_ms + (1 - c.share) * c.cpu_ms, c.share * c.bus_ms, 1e-9);
        for (double s = 0; s <= 1.0; s += 0.05)
            EXPECT_LE(c.predicted_ms, std::max(c.gpu_ms + (1 - s) * c.cpu_ms, s * c.bus_ms) + 1e-9) << s;
    }
    EXPECT_NEAR(small.gpu_ms, 14.12e9 / 1.78e12 * 1e3 * kStepPerGemvTime, 1e-6);
    EXPECT_NEAR(small.cpu_ms, 0.98e9 / (69e9 * kCpuStepEfficiency) * 1e3, 1e-6);
}

TEST(BusShare, ASlowGpuAgainstAFastBusTakesEverythingOverTheBus) {
    // A consumer card: GEMVs at ~300 GB/s, PCIe 5 x8 ~25 GB/s, a desktop CPU ~30 GB/s, 1 GB moved.
    BusShareInputs in;
    in.host_bytes = 1e9;
    in.gpu_bytes = 14e9;
    in.cpu_gbs = 30;
    in.bus_gbs = 25;
    in.gpu_gbs = 300;
    const BusShareChoice c = choose_bus_share(in);
    EXPECT_EQ(c.share, 1.0);
    EXPECT_NEAR(c.predicted_ms, c.gpu_ms, 1e-9);  // the copies hide under the GPU's own time
}

TEST(BusShare, MissingRatesAndNothingToMove) {
    BusShareInputs in = h200(2);
    in.bus_gbs = 0;  // no bus: the CPU reads it all
    EXPECT_EQ(choose_bus_share(in).share, 0.0);
    in = h200(2);
    in.cpu_gbs = 0;  // no CPU rate: everything over the bus
    EXPECT_EQ(choose_bus_share(in).share, 1.0);
    in = h200(0);
    EXPECT_EQ(choose_bus_share(in).share, 0.0);
    EXPECT_TRUE(is_auto_bus_share(kAutoBusShare));
    EXPECT_FALSE(is_auto_bus_share(0.0));
}

TEST(BusShare, DescribeSaysWhatItChoseFrom) {
    const BusShareInputs in = h200(0.98);
    const std::string d = describe(choose_bus_share(in), in);
    EXPECT_EQ(d.rfind("0.8", 0), 0u) << d;
    EXPECT_NE(d.find("0.98 GB of host rows"), std::string::npos) << d;
    EXPECT_NE(d.find("bus 55.0 GB/s, CPU 69.0 GB/s alone, GPU GEMV 1780 GB/s"), std::string::npos) << d;
}

}  // namespace
}  // namespace dense::plan
