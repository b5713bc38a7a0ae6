// bus_read_share auto's model (plan/bus_share.hpp): the share that balances the CPU's time on the
// step's critical path against the bus copies running beside it.
#include "plan/bus_share.hpp"

#include <gtest/gtest.h>

namespace dense::plan {
namespace {

// The H200 test machine's rates (docs/perf-notes.md, session 17) with the 27B's GPU bytes.
BusShareInputs h200(double host_gb) {
    BusShareInputs in;
    in.host_bytes = host_gb * 1e9;
    in.gpu_bytes = 15.1e9 - in.host_bytes;
    in.cpu_gbs = 46;
    in.bus_gbs = 48;
    in.gpu_gbs = 1800;
    return in;
}

TEST(BusShare, BalancesTheCpuOnTheCriticalPathAgainstTheCopiesBesideIt) {
    // Measured best on the H200: 0.8 at 0.98 GB, 0.6 at 3.7 GB, 0.5 at 7.9 GB (session 17).
    const BusShareChoice small = choose_bus_share(h200(0.98));
    const BusShareChoice medium = choose_bus_share(h200(3.7));
    const BusShareChoice large = choose_bus_share(h200(7.9));
    EXPECT_NEAR(small.share, 0.75, 0.05);
    EXPECT_NEAR(medium.share, 0.56, 0.04);
    EXPECT_NEAR(large.share, 0.52, 0.03);
    EXPECT_GT(small.share, medium.share);
    EXPECT_GT(medium.share, large.share);
    // At s*, the two sides of the step take the same time, and no other share predicts less.
    for (const auto& c : {small, medium, large}) {
        EXPECT_NEAR(c.gpu_ms + (1 - c.share) * c.cpu_ms, c.share * c.bus_ms, 1e-9);
        for (double s = 0; s <= 1.0; s += 0.05)
            EXPECT_LE(c.predicted_ms, std::max(c.gpu_ms + (1 - s) * c.cpu_ms, s * c.bus_ms) + 1e-9) << s;
    }
    EXPECT_NEAR(small.gpu_ms, 14.12e9 / 1.8e12 * 1e3 * kStepPerGemvTime, 1e-6);
}

// The rates `auto` probed on the H200 in session 17 (CPU ~66 GB/s alone, bus ~55, the GPU's formats
// 1.78 TB/s) and the CPU parts per step of those three splits (evenly spaced layers' gate + up at
// 0.98 GB; every layer's gate + up at 3.6 GB; gate + up and down at 7.9 GB). Without the hand-overs
// the model chose 0.75 / 0.53 / 0.46 there; the measured bests were 0.8 / 0.6 / 0.5.
TEST(BusShare, HandOversMoveTheShareToTheMeasuredBests) {
    struct Case {
        double host_gb, jobs, best, without;
    };
    for (const Case& k : {Case{0.98, 21, 0.8, 0.75}, Case{3.6, 64, 0.6, 0.53}, Case{7.9, 128, 0.5, 0.46}}) {
        SCOPED_TRACE(k.host_gb);
        BusShareInputs in;
        in.host_bytes = k.host_gb * 1e9;
        in.gpu_bytes = 15.1e9 - in.host_bytes;
        in.cpu_gbs = 66;
        in.bus_gbs = 55;
        in.gpu_gbs = 1780;
        EXPECT_NEAR(choose_bus_share(in).share, k.without, 0.02);
        in.cpu_jobs = k.jobs;
        const BusShareChoice c = choose_bus_share(in);
        EXPECT_NEAR(c.share, k.best, 0.03);
        EXPECT_NEAR(c.handover_ms, k.jobs * kHandOverMs, 1e-12);
        // At s* the CPU side, hand-overs included, meets the copies; no share predicts less.
        EXPECT_NEAR(c.gpu_ms + c.handover_ms + (1 - c.share) * c.cpu_ms, c.share * c.bus_ms, 1e-9);
        for (double s = 0; s < 1.0; s += 0.05)
            EXPECT_LE(c.predicted_ms, std::max(c.gpu_ms + c.handover_ms + (1 - s) * c.cpu_ms, s * c.bus_ms) + 1e-9) << s;
        EXPECT_LE(c.predicted_ms, std::max(c.gpu_ms, c.bus_ms) + 1e-9);
    }
}

// At share 1 no row is left to the CPU, so no hand-over either: the step is the GPU's time or the
// copies', whichever is longer, however many CPU parts the split would have had.
TEST(BusShare, AtShareOneNoCpuPartNoHandOver) {
    BusShareInputs in;
    in.host_bytes = 0.5e9;
    in.gpu_bytes = 14.6e9;
    in.cpu_gbs = 60;
    in.bus_gbs = 50;    // B = 10 ms
    in.gpu_gbs = 1500;  // G = 12.2 ms: the copies hide under it, the crossing is past 1
    in.cpu_jobs = 100;  // J = 10 ms, which share 1 does not pay
    const BusShareChoice c = choose_bus_share(in);
    EXPECT_EQ(c.share, 1.0);
    EXPECT_NEAR(c.handover_ms, 10.0, 1e-9);
    EXPECT_NEAR(c.predicted_ms, std::max(c.gpu_ms, c.bus_ms), 1e-9);
    EXPECT_NEAR(c.predicted_ms, c.gpu_ms, 1e-9);
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
    EXPECT_EQ(d.rfind("0.7", 0), 0u) << d;
    EXPECT_NE(d.find("0.98 GB of host rows"), std::string::npos) << d;
    EXPECT_NE(d.find("bus 48.0 GB/s, CPU 46.0 GB/s, GPU GEMV 1800 GB/s, 0 CPU parts"), std::string::npos) << d;
}

}  // namespace
}  // namespace dense::plan
