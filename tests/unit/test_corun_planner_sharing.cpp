// Core sharing (issue 17 item 6): at many cores the corun planner splits the idle cores among the ready
// tasks instead of giving each op the whole machine; and cpf's default executor layout at many cores.
#include "sched/layout.hpp"
#include "sched/planner/corun_planner.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace corun::sched {
namespace {

// An op whose time falls with every core (Amdahl, 5% serial): what every op looks like to a law-scaled or
// well-parallelised model at 64 cores, so its three fastest widths are 62-64 and its stable width 64.
CorunTask amdahl_task(uint64_t id, double level, int cores, double t1 = 1000.0) {
  CorunTask t;
  t.id = id;
  t.level = level;
  t.max_width = cores;
  t.stable_width = cores;
  for (int w = 1; w <= cores; ++w) t.predicted.push_back(t1 * (0.05 + 0.95 / w));
  return t;
}

std::vector<CorunAssignment> dispatch(CorunPlanner& p, double now) {
  std::vector<CorunAssignment> out;
  p.dispatch(now, out);
  return out;
}

TEST(CorunPlannerSharing, OnFromSixteenCores) {
  EXPECT_FALSE(CorunPlanner(8).core_sharing());
  EXPECT_FALSE(CorunPlanner(CorunPlanner::kShareFromCores - 1).core_sharing());
  EXPECT_TRUE(CorunPlanner(CorunPlanner::kShareFromCores).core_sharing());
  EXPECT_TRUE(CorunPlanner(64).core_sharing());
}

TEST(CorunPlannerSharing, FourReadyOpsSplitSixtyFourCoresIntoFourTeams) {
  CorunPlanner p(64);
  for (uint64_t i = 0; i < 4; ++i) p.add_ready(amdahl_task(i, 10.0 - static_cast<double>(i), 64));
  const auto a = dispatch(p, 0.0);
  ASSERT_EQ(a.size(), 4u);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].id, i) << "highest level first";
    EXPECT_EQ(a[i].width, 16) << a[i].reason;
    EXPECT_EQ(a[i].first_core, 16 * static_cast<int>(i));
  }
  EXPECT_NE(a[0].reason.find("share=16"), std::string::npos) << a[0].reason;
  EXPECT_EQ(p.idle_cores(), 0);
}

TEST(CorunPlannerSharing, ALoneOpTakesEveryIdleCore) {
  CorunPlanner p(64);
  p.add_ready(amdahl_task(1, 1.0, 64));
  const auto a = dispatch(p, 0.0);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].width, 64) << a[0].reason;
}

TEST(CorunPlannerSharing, WithoutSharingOneOpHoldsTheMachineAndTheOthersWait) {
  // The paper's rules on the same four ops: the first takes 62-64 cores, the others find no candidate
  // that fits and their stable width (64) does not fit either, so they wait: the graph runs serially.
  CorunPlanner p(64);
  p.set_core_sharing(false);
  for (uint64_t i = 0; i < 4; ++i) p.add_ready(amdahl_task(i, 10.0 - static_cast<double>(i), 64));
  const auto a = dispatch(p, 0.0);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_GE(a[0].width, 62) << a[0].reason;
}

TEST(CorunPlannerSharing, AFixedWidthIsNotCutToTheShare) {
  CorunPlanner p(64);
  CorunTask fixed = amdahl_task(1, 5.0, 64);
  fixed.fixed_width = 48;  // calibration or CORUN_FIXED_WIDTH: exactly this width, on any block
  p.add_ready(fixed);
  p.add_ready(amdahl_task(2, 1.0, 64));
  const auto a = dispatch(p, 0.0);
  ASSERT_GE(a.size(), 1u);
  EXPECT_EQ(a[0].id, 1u);
  EXPECT_EQ(a[0].width, 48) << a[0].reason;
}

TEST(CorunPlannerSharing, ALongOpWaitsForCoresRatherThanStartingNarrow) {
  // 62 of 64 cores run a task that ends at t=10; a 1000 µs op becomes ready. Now it fits on 2 cores
  // (~525 µs); at t=10 it can take all 64 (~65 µs): it waits. When the cores come back only at t=1000, it
  // starts at once on the cores that are idle.
  CorunPlanner p(64);
  p.place(100, 0, 62, 10.0, 0.0);
  p.add_ready(amdahl_task(1, 5.0, 64));
  auto a = dispatch(p, 0.0);
  EXPECT_TRUE(a.empty()) << "started at width " << (a.empty() ? 0 : a[0].width) << ": " << (a.empty() ? "" : a[0].reason);
  p.finished(100);
  a = dispatch(p, 10.0);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].width, 64) << a[0].reason;

  CorunPlanner q(64);
  q.place(100, 0, 62, 1000.0, 0.0);  // the cores come back too late to help
  q.add_ready(amdahl_task(1, 5.0, 64));
  a = dispatch(q, 0.0);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_LE(a[0].width, 2) << a[0].reason;  // the narrowest that ends before the running task (Strategy 3)
}

TEST(DefaultExecutorWidth, OneExecutorPerCoreUpToEightCoresThenSquareIsh) {
  EXPECT_EQ(default_executor_width(1), 1);
  EXPECT_EQ(default_executor_width(2), 1);
  EXPECT_EQ(default_executor_width(8), 1);
  EXPECT_EQ(default_executor_width(16), 4);
  EXPECT_EQ(default_executor_width(32), 4);
  EXPECT_EQ(default_executor_width(64), 8);
  EXPECT_EQ(default_executor_width(128), 8);
  EXPECT_EQ(default_executor_width(256), 16);
}

}  // namespace
}  // namespace corun::sched
