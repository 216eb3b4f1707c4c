// TeamWidthGovernor (issue 21 item 7): synthetic team timings in, width caps out. No StarPU, no real load.
#include "sched/planner/co_tenancy.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace corun::sched {
namespace {

using G = TeamWidthGovernor;

// A team task of `width` that waited `wait_us` for its last member and ran `run_us` against `predicted_us`.
TeamMeasure team(int width, double wait_us, double run_us = 400, double predicted_us = 400) {
  return TeamMeasure{width, wait_us, run_us, predicted_us};
}

// Feeds `n` tasks; returns how many of them changed the cap.
int feed(G& g, int n, const TeamMeasure& m) {
  int changes = 0;
  for (int i = 0; i < n; ++i) changes += g.observe(m) ? 1 : 0;
  return changes;
}

// Calls next_cap() `n` times; returns how many calls allowed at least `width`.
int allowed(G& g, int n, int width) {
  int k = 0;
  for (int i = 0; i < n; ++i) k += g.next_cap() >= width ? 1 : 0;
  return k;
}

TEST(TeamWidthGovernor, WhatCountsAsAStall) {
  EXPECT_FALSE(G::stalled(team(2, 80)));                 // wake-up latency on an idle machine
  EXPECT_FALSE(G::stalled(team(2, 450, 400, 400)));      // under the 500 µs floor
  EXPECT_TRUE(G::stalled(team(2, 3000, 400, 400)));      // a member's core was busy for 3 ms
  EXPECT_FALSE(G::stalled(team(2, 3000, 9000, 10000)));  // small against a 10 ms task
  EXPECT_TRUE(G::stalled(team(2, 6000, 9000, 10000)));   // half the task's time or more
  EXPECT_TRUE(G::stalled(team(2, 0, 4000, 1000)));       // 4x its model: preempted inside the kernel
  EXPECT_FALSE(G::stalled(team(2, 0, 350, 100)));        // 3.5x, but only 250 µs more: timer noise
  EXPECT_FALSE(G::stalled(team(2, 0, 1e6, NAN)));        // no model: only the wait counts
}

TEST(TeamWidthGovernor, AQuietMachineKeepsEveryWidth) {
  G g;
  // Occasional stalls (5 of 16: a neighbour's build step) that cost less than the teams' work stay under both
  // thresholds: 5 x 1 ms of waiting against 16 x 400 µs of predicted work.
  for (int round = 0; round < 20; ++round) {
    EXPECT_EQ(feed(g, 11, team(4, 50)), 0);
    EXPECT_EQ(feed(g, 5, team(4, 1000)), 0);
  }
  // One long stall now and then (a 5 ms hiccup) is one stall: never two in a window of 16.
  for (int round = 0; round < 20; ++round) {
    EXPECT_EQ(feed(g, 15, team(4, 50)), 0);
    EXPECT_EQ(feed(g, 1, team(4, 5000)), 0);
  }
  EXPECT_EQ(g.cap(), G::kNoCap);
  EXPECT_EQ(allowed(g, 100, 1 << 20), 100);
}

TEST(TeamWidthGovernor, RareStallsThatCostMoreThanTheTeamsWorkNarrow) {
  // Beside a spin loop pinned to one core, a team whose member is on that core waits for the loop's time
  // slice (about 5 ms) now and then: 2 of 8 team tasks of 100-400 µs are too few for kDegradeBad, but their
  // 10 ms of waiting is more than the 8 tasks' predicted work.
  G g;
  EXPECT_EQ(feed(g, 3, team(2, 50, 100, 100)), 0);
  EXPECT_EQ(feed(g, 1, team(2, 5000, 400, 400)), 0);
  EXPECT_EQ(feed(g, 3, team(2, 50, 400, 400)), 0);
  EXPECT_TRUE(g.observe(team(2, 5000, 100, 100)));  // the 8th task: 10 ms waited > 1.5 ms of work
  EXPECT_EQ(g.cap(), 1);
  EXPECT_NE(g.last_change().cause.find("2 of the last 8 team tasks of width up to 2 waited on a busy core (10.00 ms in all"),
            std::string::npos)
      << g.last_change().cause;
  // Under the window's minimum size, or without a model to weigh the waits against, it does not apply.
  G h;
  EXPECT_EQ(feed(h, 2, team(2, 5000)), 0);
  EXPECT_EQ(feed(h, 4, team(2, 50)), 0);
  EXPECT_EQ(h.cap(), G::kNoCap);
  G unknown;
  EXPECT_EQ(feed(unknown, 2, team(2, 5000, 400, NAN)), 0);
  EXPECT_EQ(feed(unknown, 14, team(2, 50, 400, NAN)), 0);
  EXPECT_EQ(unknown.cap(), G::kNoCap);
}

TEST(TeamWidthGovernor, NarrowsByHalvesThenWidth1) {
  G g;
  EXPECT_EQ(feed(g, G::kDegradeBad - 1, team(8, 4000)), 0);
  EXPECT_TRUE(g.observe(team(8, 4000)));
  EXPECT_EQ(g.cap(), 4);
  EXPECT_EQ(g.last_change().from, G::kNoCap);
  EXPECT_EQ(g.last_change().to, 4);
  EXPECT_NE(g.last_change().cause.find("6 of the last 6 team tasks of width up to 8"), std::string::npos)
      << g.last_change().cause;
  EXPECT_NE(g.last_change().cause.find("4.00 ms"), std::string::npos) << g.last_change().cause;
  EXPECT_EQ(feed(g, G::kDegradeBad, team(4, 4000)), 1);
  EXPECT_EQ(g.cap(), 2);
  EXPECT_EQ(feed(g, G::kDegradeBad, team(2, 4000)), 1);
  EXPECT_EQ(g.cap(), 1);
}

TEST(TeamWidthGovernor, WhileCappedOneTaskInKProbeEveryMayUseThePreviousCap) {
  G g;
  feed(g, G::kDegradeBad, team(2, 4000));
  ASSERT_EQ(g.cap(), 1);
  EXPECT_EQ(allowed(g, 10 * G::kProbeEvery, 2), 10);  // the probes, at the previous cap (none)
  feed(g, G::kProbeWindow, team(1 << 10, 4000));      // a probe window of stalls...
  EXPECT_EQ(g.cap(), 1);                              // ...keeps it capped
}

TEST(TeamWidthGovernor, WidensAgainWhenTheProbesRunClean) {
  G g;
  feed(g, G::kDegradeBad, team(4, 4000));
  feed(g, G::kDegradeBad, team(2, 4000));
  ASSERT_EQ(g.cap(), 1);
  // Probes at width 2 while the co-tenant is gone: a full window, at most one stalled.
  EXPECT_EQ(feed(g, G::kProbeWindow - 2, team(2, 60)), 0);
  EXPECT_EQ(feed(g, 1, team(2, 9000)), 0);
  EXPECT_TRUE(g.observe(team(2, 60)));
  EXPECT_EQ(g.cap(), 2);
  EXPECT_EQ(g.last_change().from, 1);
  EXPECT_EQ(g.last_change().to, 2);
  EXPECT_EQ(feed(g, G::kProbeWindow, team(4, 60)), 1);
  EXPECT_EQ(g.cap(), G::kNoCap);
}

TEST(TeamWidthGovernor, FailedProbesMakeProbesRarerUntilTheCapWidens) {
  G g;
  feed(g, G::kDegradeBad, team(2, 4000));
  ASSERT_EQ(g.cap(), 1);
  EXPECT_EQ(allowed(g, 4 * G::kProbeEvery, 2), 4);
  feed(g, 2, team(2, 4000));  // two stalled probes: this window cannot widen
  EXPECT_EQ(allowed(g, 8 * G::kProbeEvery, 2), 4);  // every 64th now
  for (int i = 0; i < 20; ++i) feed(g, 2, team(2, 4000));
  EXPECT_EQ(allowed(g, 10 * G::kMaxProbeEvery, 2), 10);  // never rarer than this
  EXPECT_EQ(feed(g, G::kProbeWindow, team(2, 60)), 1);   // the co-tenant left: clean probes widen
  EXPECT_EQ(g.cap(), G::kNoCap);
  feed(g, G::kDegradeBad, team(2, 4000));
  EXPECT_EQ(allowed(g, 4 * G::kProbeEvery, 2), 4);  // a new narrowing probes at the first rate again
}

TEST(TeamWidthGovernor, HysteresisProbesWithSomeStallsDoNotWiden) {
  G g;
  feed(g, G::kDegradeBad, team(2, 4000));
  ASSERT_EQ(g.cap(), 1);
  // 2 of every 8 probes stalled: not clean enough to widen (needs 7 of 8), though far below the 6 of 16
  // that narrowed it, so the cap does not flip back and forth on a machine near the limit.
  for (int round = 0; round < 10; ++round) {
    EXPECT_EQ(feed(g, 6, team(2, 60)), 0);
    EXPECT_EQ(feed(g, 2, team(2, 4000)), 0);
  }
  EXPECT_EQ(g.cap(), 1);
}

TEST(TeamWidthGovernor, OffNeverCaps) {
  G g(false);
  EXPECT_EQ(feed(g, 100, team(2, 1e6)), 0);
  EXPECT_EQ(g.cap(), G::kNoCap);
  EXPECT_EQ(g.next_cap(), G::kNoCap);
}

TEST(TeamWidthGovernor, Width1TasksAreNotTeams) {
  G g;
  EXPECT_EQ(feed(g, 100, team(1, 1e6)), 0);
  EXPECT_EQ(g.cap(), G::kNoCap);
}

}  // namespace
}  // namespace corun::sched
