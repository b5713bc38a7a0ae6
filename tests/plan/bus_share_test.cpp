// bus_read_share auto's model (plan/bus_share.hpp): the share that balances the CPU's time on the
// step's critical path against the bus copies running beside it, which share the host's DRAM with
// the CPU rows.
#include "plan/bus_share.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace dense::plan {
namespace {

// H200-test-machine-like probed rates (docs/perf-notes.md, session 17) with the 27B's GPU bytes.
BusShareInputs h200(double host_gb, double dram_gbs = 82) {
    BusShareInputs in;
    in.host_bytes = host_gb * 1e9;
    in.gpu_bytes = 15.1e9 - in.host_bytes;
    in.cpu_gbs = 65;
    in.bus_gbs = 55;
    in.gpu_gbs = 1780;
    in.dram_gbs = dram_gbs;
    return in;
}

TEST(BusShare, SmallSplitsGoOverTheBusLargeOnesShareItWithTheCpu) {
    // Measured best on the H200: 0.8 at 0.98 GB, 0.5-0.6 at 3.6 GB, 0.5 at 7.9 GB (session 17).
    const BusShareChoice small = choose_bus_share(h200(0.98));
    const BusShareChoice medium = choose_bus_share(h200(3.6));
    const BusShareChoice large = choose_bus_share(h200(7.9));
    EXPECT_NEAR(small.share, 0.78, 0.02);
    EXPECT_NEAR(medium.share, 0.57, 0.02);
    EXPECT_NEAR(large.share, 0.53, 0.02);
    EXPECT_GT(small.share, medium.share);
    EXPECT_GT(medium.share, large.share);
    for (const auto& [c, gb] : {std::pair{small, 0.98}, {medium, 3.6}, {large, 7.9}}) {
        // The chosen share predicts the shortest step of all, and clearly shorter than 0.5 for a small split.
        EXPECT_DOUBLE_EQ(c.predicted_ms, predicted_step_ms(h200(gb), c.share));
        for (int k = 0; k <= 100; ++k) EXPECT_LE(c.predicted_ms, predicted_step_ms(h200(gb), k / 100.0)) << k;
    }
    EXPECT_LT(small.predicted_ms, 0.75 * predicted_step_ms(h200(0.98), 0.5));
    EXPECT_NEAR(small.gpu_ms, 14.12e9 / 1.78e12 * 1e3 * kStepPerGemvTime, 1e-6);
    EXPECT_NEAR(small.cpu_ms, 0.98e9 / (65e9 * kCpuStepEfficiency) * 1e3, 1e-6);
}

TEST(BusShare, TheCopiesGetWhatTheCpuLeavesOfTheDram) {
    // Without the DRAM's rate nothing is shared: a large split then leans further onto the bus.
    const double unshared = choose_bus_share(h200(7.9, 0)).share;
    const double shared = choose_bus_share(h200(7.9, 82)).share;
    EXPECT_GT(unshared, shared + 0.03);
    // All on the bus: no CPU phase, so the DRAM takes nothing from the copies.
    const BusShareInputs in = h200(0.98);
    EXPECT_NEAR(predicted_step_ms(in, 1.0), std::max(0.98e9 / 55e6, 14.12e9 / 1.78e12 * 1e3 * kStepPerGemvTime), 1e-6);
    // A DRAM the CPU saturates leaves the copies nothing while the CPU runs: they run after it.
    BusShareInputs starved = h200(2, 65 * kCpuStepEfficiency);
    const double cpu_phase = 0.5 * 2e9 / (65e6 * kCpuStepEfficiency);
    EXPECT_NEAR(predicted_step_ms(starved, 0.5), cpu_phase + 1e9 / 55e6, 1e-6);
}

TEST(BusShare, ASlowGpuAgainstAFastBusTakesEverythingOverTheBus) {
    // A consumer card: GEMVs at ~300 GB/s, PCIe 5 x8 ~25 GB/s, a desktop CPU ~30 GB/s, 1 GB moved.
    BusShareInputs in;
    in.host_bytes = 1e9;
    in.gpu_bytes = 14e9;
    in.cpu_gbs = 30;
    in.bus_gbs = 25;
    in.gpu_gbs = 300;
    in.dram_gbs = 60;
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
    EXPECT_EQ(d.rfind("0.78", 0), 0u) << d;
    EXPECT_NE(d.find("0.98 GB of host rows"), std::string::npos) << d;
    EXPECT_NE(d.find("bus 55.0 GB/s, CPU 65.0 GB/s alone, DRAM 82.0 GB/s, GPU GEMV 1780 GB/s"), std::string::npos) << d;
}

}  // namespace
}  // namespace dense::plan
