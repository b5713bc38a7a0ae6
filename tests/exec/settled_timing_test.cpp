// SettledBest (exec/settled_timing.hpp): the stopping rule of the load-time rate probes.
#include "exec/settled_timing.hpp"

#include <gtest/gtest.h>

namespace dense::test {
namespace {

TEST(SettledBest, StableRoundsStopAtTheMinimum) {
    exec::SettledBest best;
    EXPECT_FALSE(best.add(10.0));
    EXPECT_TRUE(best.add(9.8));  // 2 % faster: within the 5 % tolerance
    EXPECT_DOUBLE_EQ(best.best_ms(), 9.8);
    EXPECT_EQ(best.rounds(), 2);
}

TEST(SettledBest, AWakingDeviceKeepsGoingUntilItsRateHolds) {
    // A GPU coming out of idle: each round ~2x faster, then flat.
    exec::SettledBest best;
    EXPECT_FALSE(best.add(40.0));
    EXPECT_FALSE(best.add(20.0));
    EXPECT_FALSE(best.add(10.0));
    EXPECT_TRUE(best.add(10.1));  // slower than the best: settled, and the best stays
    EXPECT_DOUBLE_EQ(best.best_ms(), 10.0);
    EXPECT_EQ(best.rounds(), 4);
}

TEST(SettledBest, ATimingThatNeverSettlesStopsAtMaxRounds) {
    exec::SettledBest best(exec::SettleRule{2, 5, 0.05});
    double ms = 100;
    int rounds = 0;
    bool done = false;
    while (!done) {
        done = best.add(ms);
        ms *= 0.5;
        ++rounds;
    }
    EXPECT_EQ(rounds, 5);
    EXPECT_DOUBLE_EQ(best.best_ms(), 100.0 / 16);
}

TEST(SettledBest, OneSlowOutlierDoesNotRaiseTheBest) {
    exec::SettledBest best;
    EXPECT_FALSE(best.add(5.0));
    EXPECT_TRUE(best.add(50.0));  // a disturbed round: not an improvement, so settled at 5
    EXPECT_DOUBLE_EQ(best.best_ms(), 5.0);
}

TEST(SettledBest, SettledBestMsRunsRoundsUntilTheyStopImproving) {
    const double rounds[] = {40.0, 20.0, 10.0, 10.1, 1.0};  // the last is never asked for
    int asked = 0;
    EXPECT_DOUBLE_EQ(exec::settled_best_ms([&] { return rounds[asked++]; }), 10.0);
    EXPECT_EQ(asked, 4);
}

TEST(SettledBest, SettledBestMsStopsAtARoundThatCannotBeTimed) {
    int asked = 0;
    EXPECT_DOUBLE_EQ(exec::settled_best_ms([&] { return ++asked == 1 ? 5.0 : 0.0; }), 5.0);
    EXPECT_EQ(asked, 2);
    asked = 0;
    EXPECT_DOUBLE_EQ(exec::settled_best_ms([&] {
                        ++asked;
                        return 0.0;
                    }), 0.0);
    EXPECT_EQ(asked, 1);
}

}  // namespace
}  // namespace dense::test
