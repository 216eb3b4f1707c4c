// The cpf planner on hand-made cases: which task goes where, at which width, in which order.
#include "sched/planner/cpf_planner.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace corun::sched {
namespace {

PlannerTask task(uint64_t id, double level, int max_width = 1, std::vector<double> predicted = {}) {
  PlannerTask t;
  t.id = id;
  t.level = level;
  t.max_width = max_width;
  t.predicted = std::move(predicted);
  return t;
}

std::vector<Assignment> dispatch(CpfPlanner& p, int preferred = -1) {
  std::vector<Assignment> out;
  p.dispatch(out, preferred);
  return out;
}

TEST(CpfPlanner, TeamWidthsArePowersOfTwoAndTheExecutorWidth) {
  EXPECT_EQ(CpfPlanner({1, 1}, ReadyOrder::level, true).team_widths(), (std::vector<int>{1}));
  EXPECT_EQ(CpfPlanner({1, 4}, ReadyOrder::level, true).team_widths(), (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(CpfPlanner({2, 6}, ReadyOrder::level, true).team_widths(), (std::vector<int>{1, 2, 4, 6}));
}

TEST(CpfPlanner, HighestLevelGoesFirstToTheLowestIdleExecutor) {
  CpfPlanner p({2, 1}, ReadyOrder::level, true);
  p.add_ready(task(1, 10));
  p.add_ready(task(2, 30));
  p.add_ready(task(3, 20));
  const auto a = dispatch(p);
  ASSERT_EQ(a.size(), 2u);  // two executors, one task each
  EXPECT_EQ(a[0].id, 2u);
  EXPECT_EQ(a[0].executor, 0);
  EXPECT_EQ(a[1].id, 3u);
  EXPECT_EQ(a[1].executor, 1);
  EXPECT_EQ(p.ready_count(), 1u);
  EXPECT_EQ(p.idle_executors(), 0);
  EXPECT_TRUE(dispatch(p).empty());  // nothing idle

  p.finished(1);
  const auto b = dispatch(p);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].id, 1u);
  EXPECT_EQ(b[0].executor, 1);
}

TEST(CpfPlanner, ThePreferredIdleExecutorGetsTheTopTask) {
  CpfPlanner p({3, 1}, ReadyOrder::level, true);
  p.add_ready(task(1, 10));
  p.add_ready(task(2, 30));
  const auto a = dispatch(p, 2);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].id, 2u);  // the highest level, on the executor that made it ready
  EXPECT_EQ(a[0].executor, 2);
  EXPECT_EQ(a[1].id, 1u);  // the rest as usual: the lowest idle executor
  EXPECT_EQ(a[1].executor, 0);
  p.add_ready(task(3, 50));
  const auto b = dispatch(p, 2);  // preferred is busy: the lowest idle one
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].executor, 1);
}

TEST(CpfPlanner, DispatchToOneExecutor) {
  CpfPlanner p({2, 1}, ReadyOrder::level, true);
  Assignment a;
  EXPECT_FALSE(p.dispatch_to(1, a));  // nothing ready
  p.add_ready(task(1, 10));
  p.add_ready(task(2, 20));
  ASSERT_TRUE(p.dispatch_to(1, a));
  EXPECT_EQ(a.id, 2u);
  EXPECT_EQ(a.executor, 1);
  EXPECT_EQ(a.first_core, 1);
  EXPECT_FALSE(p.dispatch_to(1, a));  // busy now
  EXPECT_EQ(p.ready_count(), 1u);
  EXPECT_TRUE(p.idle(0));
}

TEST(CpfPlanner, EqualLevelsKeepArrivalOrderAndNanCountsAsZero) {
  CpfPlanner p({1, 1}, ReadyOrder::level, true);
  p.add_ready(task(1, 5));
  p.add_ready(task(2, NAN));
  p.add_ready(task(3, 5));
  std::vector<uint64_t> order;
  for (int i = 0; i < 3; ++i) {
    auto a = dispatch(p);
    ASSERT_EQ(a.size(), 1u);
    order.push_back(a[0].id);
    p.finished(0);
  }
  EXPECT_EQ(order, (std::vector<uint64_t>{1, 3, 2}));
}

TEST(CpfPlanner, FifoIgnoresLevels) {
  CpfPlanner p({1, 1}, ReadyOrder::arrival, true);
  p.add_ready(task(1, 1));
  p.add_ready(task(2, 100));
  EXPECT_EQ(dispatch(p)[0].id, 1u);
  p.finished(0);
  EXPECT_EQ(dispatch(p)[0].id, 2u);
}

TEST(CpfPlanner, WideTaskGetsTheExecutorsFirstCores) {
  CpfPlanner p({2, 4}, ReadyOrder::level, true);
  p.add_ready(task(7, 1, /*max_width=*/8));
  p.add_ready(task(8, 0, /*max_width=*/3));
  const auto a = dispatch(p);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].id, 7u);
  EXPECT_EQ(a[0].first_core, 0);
  EXPECT_EQ(a[0].width, 4);  // capped by the executor
  EXPECT_EQ(a[1].id, 8u);
  EXPECT_EQ(a[1].executor, 1);
  EXPECT_EQ(a[1].first_core, 4);
  EXPECT_EQ(a[1].width, 2);  // the widest team width not above max_width 3
}

TEST(CpfPlanner, NarrowerTeamOnlyWhenThePredictionIsStrictlyFaster) {
  CpfPlanner p({1, 4}, ReadyOrder::level, true);  // team widths 1, 2, 4
  double pred = 0;
  EXPECT_EQ(p.choose_width(task(1, 0, 4, {100, 60, 70}), &pred), 2);
  EXPECT_DOUBLE_EQ(pred, 60);
  EXPECT_EQ(p.choose_width(task(1, 0, 4, {100, 60, 60}), &pred), 4);  // tie keeps the wide team
  EXPECT_EQ(p.choose_width(task(1, 0, 4, {10, NAN, NAN}), &pred), 4);  // no model at full width: keep it
  EXPECT_TRUE(std::isnan(pred));
  EXPECT_EQ(p.choose_width(task(1, 0, 4, {}), &pred), 4);  // no model at all

  CpfPlanner wide({1, 4}, ReadyOrder::level, /*narrow_when_faster=*/false);
  EXPECT_EQ(wide.choose_width(task(1, 0, 4, {100, 60, 70})), 4);
}

TEST(CpfPlanner, FixedWidthWinsOverTheModelAndIsClamped) {
  CpfPlanner p({1, 4}, ReadyOrder::level, true);
  PlannerTask t = task(1, 0, 4, {10, 20, 30});
  t.fixed_width = 4;
  EXPECT_EQ(p.choose_width(t), 4);
  t.fixed_width = 3;
  EXPECT_EQ(p.choose_width(t), 2);  // no team of 3 in a 4-wide executor: the widest below
  t.fixed_width = 2;
  t.max_width = 1;
  EXPECT_EQ(p.choose_width(t), 1);  // the op cannot run wider than max_width
}

TEST(CpfPlanner, SameCallsGiveTheSameAssignments) {
  auto run = [] {
    CpfPlanner p({3, 2}, ReadyOrder::level, true);
    std::vector<Assignment> all;
    for (uint64_t i = 0; i < 20; ++i) p.add_ready(task(i, static_cast<double>((i * 7) % 5), 2, {5, 3}));
    for (int round = 0; round < 10; ++round) {
      p.dispatch(all);
      p.finished(round % 3);
    }
    return all;
  };
  const auto a = run(), b = run();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].id, b[i].id);
    EXPECT_EQ(a[i].executor, b[i].executor);
    EXPECT_EQ(a[i].width, b[i].width);
  }
}

// A lone ready task on an idle machine (merge_when_alone): teams that span 2, 4, ... executors from executor 0.
TEST(CpfPlannerMerge, MergedWidthsSpanPowersOfTwoOfExecutorsAndAllOfThem) {
  const auto merged = [](ExecutorLayout l) { return CpfPlanner(l, ReadyOrder::level, true, true).merged_widths(); };
  EXPECT_EQ(merged({2, 1}), (std::vector<int>{2}));
  EXPECT_EQ(merged({4, 1}), (std::vector<int>{2, 4}));
  EXPECT_EQ(merged({3, 1}), (std::vector<int>{2, 3}));
  EXPECT_EQ(merged({4, 4}), (std::vector<int>{8, 16}));
  EXPECT_TRUE(merged({1, 4}).empty());
  EXPECT_TRUE(CpfPlanner({4, 1}, ReadyOrder::level, true, false).merged_widths().empty());
}

TEST(CpfPlannerMerge, ALoneTaskOnAnIdleMachineGetsEveryCore) {
  CpfPlanner p({2, 1}, ReadyOrder::level, true, true);
  p.add_ready(task(7, 10, /*max_width=*/4, {500.0}));  // not measured merged, long: merged (calibrates it)
  const auto a = dispatch(p);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].id, 7u);
  EXPECT_EQ(a[0].executor, 0);
  EXPECT_EQ(a[0].first_core, 0);
  EXPECT_EQ(a[0].width, 2);
  EXPECT_EQ(p.idle_executors(), 0);
  p.add_ready(task(8, 5, 4, {500.0}));  // became ready meanwhile (a source task): waits, nothing is idle
  EXPECT_TRUE(dispatch(p).empty());
  p.finished(1);  // each executor frees itself when its member is done
  const auto b = dispatch(p);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].width, 1) << "executor 0 is still busy: not an idle machine";
  EXPECT_EQ(b[0].executor, 1);
}

TEST(CpfPlannerMerge, OnlyALoneTaskOnAWhollyIdleMachineThatCanUseTheCores) {
  auto first_width = [](CpfPlanner& p) {
    const auto a = dispatch(p);
    return a.empty() ? 0 : a[0].width;
  };
  {  // two ready tasks: one executor each
    CpfPlanner p({2, 1}, ReadyOrder::level, true, true);
    p.add_ready(task(1, 10, 2, {500.0}));
    p.add_ready(task(2, 5, 2, {500.0}));
    const auto a = dispatch(p);
    ASSERT_EQ(a.size(), 2u);
    EXPECT_EQ(a[0].width, 1);
    EXPECT_EQ(a[1].width, 1);
  }
  {  // a task that cannot use two cores
    CpfPlanner p({2, 1}, ReadyOrder::level, true, true);
    p.add_ready(task(1, 10, 1, {500.0}));
    EXPECT_EQ(first_width(p), 1);
  }
  {  // not measured merged: short at its executor's width, or not measured at all
    CpfPlanner p({2, 1}, ReadyOrder::level, true, true);
    p.add_ready(task(1, 10, 2, {kTryMergedFromUs / 2}));
    EXPECT_EQ(first_width(p), 1);
    CpfPlanner q({2, 1}, ReadyOrder::level, true, true);
    q.add_ready(task(1, 10, 2));
    EXPECT_EQ(first_width(q), 1);
  }
  {  // a fixed width (calibration, a frozen schedule) is kept
    CpfPlanner p({2, 1}, ReadyOrder::level, true, true);
    PlannerTask t = task(1, 10, 2, {500.0});
    t.fixed_width = 1;
    p.add_ready(t);
    EXPECT_EQ(first_width(p), 1);
  }
  {  // the model predicts the merged team slower: its executor alone
    CpfPlanner p({2, 1}, ReadyOrder::level, true, true);
    PlannerTask t = task(1, 10, 2, {100.0});
    t.predicted_merged = {120.0};
    p.add_ready(t);
    EXPECT_EQ(first_width(p), 1);
  }
  {  // ... and faster: merged
    CpfPlanner p({2, 1}, ReadyOrder::level, true, true);
    PlannerTask t = task(1, 10, 2, {100.0});
    t.predicted_merged = {60.0};
    p.add_ready(t);
    EXPECT_EQ(first_width(p), 2);
  }
  {  // without merge_when_alone (fifo, CORUN_CPF_MERGE=off): never
    CpfPlanner p({2, 1}, ReadyOrder::level, true, false);
    p.add_ready(task(1, 10, 2, {500.0}));
    EXPECT_EQ(first_width(p), 1);
  }
}

TEST(CpfPlannerMerge, TheWidestMergedTeamTheTaskAllowsAndTheRestStayIdle) {
  CpfPlanner p({4, 1}, ReadyOrder::level, true, true);
  p.add_ready(task(1, 10, /*max_width=*/3, {500.0}));
  const auto a = dispatch(p);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].width, 2);  // merged widths 2 and 4: 4 is above the task's maximum
  EXPECT_EQ(p.idle_executors(), 2);
  p.add_ready(task(2, 5, 3, {500.0}));
  const auto b = dispatch(p);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].executor, 2) << "executors 0 and 1 hold the merged team";
  EXPECT_EQ(b[0].width, 1);
}

}  // namespace
}  // namespace corun::sched
