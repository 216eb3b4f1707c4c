// Issue 21 item 7, per-core avoidance on synthetic timings: CoreSpeed turns per-core measured/predicted
// ratios into slowdowns; CorunPlanner keeps tasks off a busy core unless they still finish first there.
#include "sched/planner/core_speed.hpp"
#include "sched/planner/corun_planner.hpp"

#include <corun/error.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace corun::sched {
namespace {

void feed(CoreSpeed& s, int core, double ratio, int n) {
  for (int i = 0; i < n; ++i) s.observe(core, 100.0, 100.0 * ratio);
}

TEST(CoreSpeed, ACoreSharedWithASpinnerReadsItsSlowdown) {
  CoreSpeed s(2);
  feed(s, 0, 2.5, CoreSpeed::kMinSamples);
  EXPECT_DOUBLE_EQ(s.slowdown(0), 1.0);  // nothing to compare with yet
  feed(s, 1, 1.25, CoreSpeed::kMinSamples);
  EXPECT_DOUBLE_EQ(s.slowdown(0), 2.0);
  EXPECT_DOUBLE_EQ(s.slowdown(1), 1.0);
  EXPECT_EQ(s.slowdowns(), (std::vector<double>{2.0, 1.0}));
}

TEST(CoreSpeed, NoiseAndAUniformLoadLeaveEveryCoreEqual) {
  CoreSpeed s(3);
  feed(s, 0, 3.0, 8);  // every core 3x its model: the whole machine is loaded, no core stands out
  feed(s, 1, 3.0, 8);
  feed(s, 2, 4.2, 8);  // 1.4x the others: under kBusyFactor
  EXPECT_EQ(s.slowdowns(), (std::vector<double>{1.0, 1.0, 1.0}));
}

TEST(CoreSpeed, ACoTenantThatLeavesIsForgottenWithinTheWindow) {
  CoreSpeed s(2);
  feed(s, 0, 2.0, CoreSpeed::kWindow);
  feed(s, 1, 1.0, CoreSpeed::kWindow);
  EXPECT_DOUBLE_EQ(s.slowdown(0), 2.0);
  feed(s, 0, 1.0, CoreSpeed::kWindow / 2 + 1);  // a majority of the window is quiet again
  EXPECT_DOUBLE_EQ(s.slowdown(0), 1.0);
}

TEST(CoreSpeed, UnusableObservationsAreIgnoredAndBadCoresThrow) {
  CoreSpeed s(2);
  for (int i = 0; i < 8; ++i) {
    s.observe(0, NAN, 5.0);
    s.observe(0, 0.0, 5.0);
    s.observe(0, 1.0, INFINITY);
    s.observe(5, 1.0, 9.0);  // out of range
  }
  feed(s, 1, 1.0, 8);
  EXPECT_DOUBLE_EQ(s.slowdown(0), 1.0);  // core 0 has no sample
  EXPECT_THROW(s.slowdown(2), corun::Error);
  EXPECT_THROW(CoreSpeed(0), corun::Error);
}

CorunTask task(uint64_t id, std::vector<double> predicted) {
  CorunTask t;
  t.id = id;
  t.level = 1.0;
  t.max_width = static_cast<int>(predicted.size());
  t.stable_width = 1;
  t.predicted = std::move(predicted);
  return t;
}

std::vector<CorunAssignment> dispatch(CorunPlanner& p, double now) {
  std::vector<CorunAssignment> out;
  p.dispatch(now, out);
  return out;
}

TEST(CorunPlannerBusyCores, AWidthOneTaskGoesToTheQuietCoreThoughFirstFitIsBusy) {
  CorunPlanner p(2);
  p.set_core_slowdowns({2.0, 1.0});
  p.add_ready(task(1, {10.0}));
  const auto a = dispatch(p, 0.0);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].first_core, 1);
  EXPECT_DOUBLE_EQ(a[0].predicted, 10.0);  // the model's time: what StarPU and the traces get
}

TEST(CorunPlannerBusyCores, ATaskWhoseOnlyIdleCoreIsBusyStartsThereAndSaysSo) {
  CorunPlanner p(2);
  p.set_core_slowdowns({2.0, 1.0});
  p.place(100, 1, 1, 15.0, 0.0);  // the quiet core is taken
  CorunTask t = task(1, {10.0});
  t.explain = true;
  p.add_ready(t);
  const auto a = dispatch(p, 0.0);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].first_core, 0);
  EXPECT_NE(a[0].reason.find("busy core(s) x2"), std::string::npos) << a[0].reason;
  // Its end counts at the busy core's pace: a later co-run candidate may take up to 2 x 10.
  EXPECT_DOUBLE_EQ(p.longest_remaining(0.0), 20.0);
}

TEST(CorunPlannerBusyCores, ATeamWithABusyMemberLosesToOneQuietCore) {
  // Alone: width 2 (6) is the fastest on a quiet machine; with core 0 2x slower the team takes 12 and one
  // quiet core 10.
  CorunPlanner quiet(2), busy(2);
  busy.set_core_slowdowns({2.0, 1.0});
  quiet.add_ready(task(1, {10.0, 6.0}));
  busy.add_ready(task(1, {10.0, 6.0}));
  const auto q = dispatch(quiet, 0.0), b = dispatch(busy, 0.0);
  ASSERT_EQ(q.size(), 1u);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(q[0].width, 2);
  EXPECT_EQ(b[0].width, 1);
  EXPECT_EQ(b[0].first_core, 1);
}

TEST(CorunPlannerBusyCores, FactorsOfOneChangeNothingAndBadFactorsThrow) {
  CorunPlanner plain(4), ones(4);
  ones.set_core_slowdowns({1.0, 1.0, 1.0, 1.0});
  for (uint64_t id = 1; id <= 5; ++id) {
    plain.add_ready(task(id, {10.0 * static_cast<double>(id), 6.0, 5.0}));
    ones.add_ready(task(id, {10.0 * static_cast<double>(id), 6.0, 5.0}));
  }
  const auto a = dispatch(plain, 0.0), b = dispatch(ones, 0.0);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].id, b[i].id);
    EXPECT_EQ(a[i].first_core, b[i].first_core);
    EXPECT_EQ(a[i].width, b[i].width);
  }
  EXPECT_THROW(ones.set_core_slowdowns({1.0, 1.0}), corun::Error);
  EXPECT_THROW(ones.set_core_slowdowns({1.0, 0.5, 1.0, 1.0}), corun::Error);
  EXPECT_THROW(ones.set_core_slowdowns({1.0, NAN, 1.0, 1.0}), corun::Error);
}

}  // namespace
}  // namespace corun::sched
