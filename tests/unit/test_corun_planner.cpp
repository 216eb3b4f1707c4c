// Strategy 3 packing on hand-made cases: the paper's example, fallbacks, contiguity, determinism; then
// forbidden kind pairs, fixed placement and Strategy 4 on a synthetic SMT topology (4 cores x 2 threads).
#include "sched/planner/corun_planner.hpp"

#include <corun/error.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <utility>
#include <vector>

namespace corun::sched {
namespace {

// predicted[w-1] from {width, time} pairs; every other width unknown.
CorunTask task(uint64_t id, double level, int max_width, int stable, std::vector<std::pair<int, double>> times) {
  CorunTask t;
  t.id = id;
  t.level = level;
  t.max_width = max_width;
  t.stable_width = stable;
  t.predicted.assign(static_cast<size_t>(max_width), NAN);
  for (auto [w, p] : times) t.predicted[static_cast<size_t>(w - 1)] = p;
  return t;
}

std::vector<CorunAssignment> dispatch(CorunPlanner& p, double now) {
  std::vector<CorunAssignment> out;
  p.dispatch(now, out);
  return out;
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(CorunPlanner, PaperExampleTakesEighteenThreadsOfTwentyIdleCores) {
  // Section III-D: 68 cores, 48 run an op that needs 1.9 s more, 20 idle. Candidates: 18 threads 1.5 s,
  // 20 threads 1.3 s, 16 threads 2.1 s. 16 is slower than the ongoing op (2.1 > 1.9), 18 and 20 both fit
  // and finish before it; 18 wins because it leaves two cores for another op.
  CorunPlanner p(68);
  p.place(/*id=*/100, /*first=*/0, /*width=*/48, /*predicted=*/1.9, /*now=*/0.0);
  p.add_ready(task(1, 5.0, 68, 18, {{18, 1.5}, {20, 1.3}, {16, 2.1}}));
  auto a = dispatch(p, 0.0);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].id, 1u);
  EXPECT_EQ(a[0].width, 18);
  EXPECT_EQ(a[0].first_core, 48);
  EXPECT_DOUBLE_EQ(a[0].predicted, 1.5);
  EXPECT_TRUE(has(a[0].reason, "w20=1.3 ok")) << a[0].reason;
  EXPECT_TRUE(has(a[0].reason, "w18=1.5 ok")) << a[0].reason;
  EXPECT_TRUE(has(a[0].reason, "w16=2.1 slow")) << a[0].reason;
  EXPECT_TRUE(has(a[0].reason, "narrowest ok w18")) << a[0].reason;

  // The two released cores take another op.
  p.add_ready(task(2, 1.0, 2, 2, {{1, 1.0}, {2, 0.6}}));
  a = dispatch(p, 0.1);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].first_core, 66);
  EXPECT_EQ(a[0].width, 1);  // narrowest candidate within the 1.8 s left; still within 2 of stable 2
  EXPECT_EQ(p.idle_cores(), 1);
}

TEST(CorunPlanner, CandidatesAreTheThreeFastestKnownWidths) {
  const auto t = task(1, 0, 8, 4, {{1, 9}, {2, 5}, {4, 3}, {6, 3}, {8, 4}});
  EXPECT_EQ(CorunPlanner::candidates(t, 8), (std::vector<int>{4, 6, 8}));  // tie 4/6: narrower first
  EXPECT_EQ(CorunPlanner::candidates(t, 5), (std::vector<int>{4, 2, 1}));  // capped by the machine
}

TEST(CorunPlanner, ALowerLevelOpCoRunsWhenTheTopOneCannot) {
  CorunPlanner p(8);
  p.place(100, 0, 4, 2.0, 0.0);
  p.add_ready(task(1, 10, 4, 4, {{4, 3.0}}));  // slower than the 2.0 left
  p.add_ready(task(2, 5, 4, 2, {{2, 1.5}}));
  const auto a = dispatch(p, 0.0);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].id, 2u);  // co-runs within the limit
  EXPECT_EQ(a[0].first_core, 4);
  EXPECT_EQ(a[1].id, 1u);  // then nothing co-runs: the top level takes what is left (fallback)
  EXPECT_EQ(a[1].first_core, 6);
  EXPECT_EQ(a[1].width, 2);
  EXPECT_TRUE(has(a[1].reason, "fallback")) << a[1].reason;
  EXPECT_TRUE(has(a[1].reason, "no candidate fits, widest fit w2")) << a[1].reason;
}

TEST(CorunPlanner, NoFitFallsBackToTheHighestLevelAtItsLeastCoreTimeCandidateWhenOthersWait) {
  CorunPlanner p(8);
  p.place(100, 0, 4, 1.0, 0.0);
  p.add_ready(task(1, 5, 8, 3, {{2, 3.0}, {3, 2.5}, {4, 2.0}}));
  p.add_ready(task(2, 10, 8, 3, {{2, 3.0}, {3, 2.5}, {4, 2.0}}));
  const auto a = dispatch(p, 0.0);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].id, 2u);
  EXPECT_EQ(a[0].width, 2);  // core-times 6 < 7.5 < 8: task 1 is waiting, leave it cores
  EXPECT_EQ(a[0].first_core, 4);
  EXPECT_TRUE(has(a[0].reason, "least core-time fitting candidate w2")) << a[0].reason;
  EXPECT_EQ(a[1].id, 1u);    // and it co-runs: 3.0 at w2 is not above the 3.0 task 2 has left
  EXPECT_EQ(a[1].first_core, 6);
  EXPECT_TRUE(has(a[1].reason, "narrowest ok w2")) << a[1].reason;
  EXPECT_EQ(p.ready_count(), 0u);
}

TEST(CorunPlanner, EmptyMachineStartsALoneTaskAtItsFastestWidth) {
  CorunPlanner p(8);
  p.add_ready(task(1, 1, 8, 6, {{4, 4}, {5, 3}, {6, 2}, {7, 2.5}, {8, 5}}));
  const auto a = dispatch(p, 0.0);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].width, 6);  // fastest of the candidates 6, 7, 5
  EXPECT_EQ(a[0].first_core, 0);
  EXPECT_TRUE(has(a[0].reason, "fastest fitting candidate w6")) << a[0].reason;
}

TEST(CorunPlanner, AFixedWidthWithoutABlockRunsAtExactlyThatWidthAnywhere) {
  CorunPlanner p(4);
  p.place(100, 0, 1, 5.0, 0.0);
  CorunTask t = task(1, 10, 4, 1, {{1, 1.0}, {3, 9.0}});
  t.fixed_width = 3;  // calibration: measure width 3 although width 1 is faster
  p.add_ready(t);
  auto a = dispatch(p, 0.0);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].width, 3);
  EXPECT_EQ(a[0].first_core, 1);
  CorunPlanner q(4);
  q.place(100, 1, 1, 5.0, 0.0);  // no 3 contiguous idle cores: it waits rather than run narrower
  q.add_ready(t);
  EXPECT_TRUE(dispatch(q, 0.0).empty());
  q.finished(100);
  a = dispatch(q, 1.0);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].width, 3);
}

TEST(CorunPlanner, ThePreferredCoreGetsTheFirstPlacementWhenIdle) {
  CorunPlanner p(4);
  p.add_ready(task(1, 10, 1, 1, {{1, 1.0}}));
  p.add_ready(task(2, 5, 1, 1, {{1, 1.0}}));
  std::vector<CorunAssignment> a;
  p.dispatch(0.0, a, /*preferred_core=*/2);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].first_core, 2);  // the cache-warm core
  EXPECT_EQ(a[1].first_core, 0);  // then first fit again
  CorunPlanner q(4);
  q.place(100, 2, 1, 5.0, 0.0);   // a busy preferred core is ignored
  q.add_ready(task(1, 10, 1, 1, {{1, 1.0}}));
  std::vector<CorunAssignment> b;
  q.dispatch(0.0, b, 2);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].first_core, 0);
}

TEST(CorunPlanner, NoModelStartsAtTheStableWidth) {
  CorunPlanner p(8);
  CorunTask t;
  t.id = 1;
  t.max_width = 8;
  t.stable_width = 2;
  p.add_ready(t);
  const auto a = dispatch(p, 0.0);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].width, 2);  // widest fit 8 is more than 2 from stable 2
  EXPECT_TRUE(std::isnan(a[0].predicted));
  EXPECT_TRUE(has(a[0].reason, "-> stable")) << a[0].reason;
}

TEST(CorunPlanner, PackingWidthFarFromStableFallsBackToStable) {
  CorunPlanner p(12);
  p.place(100, 0, 4, 10.0, 0.0);
  p.add_ready(task(1, 1, 12, 8, {{2, 5.0}, {8, 4.0}, {6, 4.5}}));
  const auto a = dispatch(p, 0.0);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].width, 8);  // packing says 2, Strategy 2 says 8 and 8 cores are idle
  EXPECT_EQ(a[0].first_core, 4);
  EXPECT_DOUBLE_EQ(a[0].predicted, 4.0);
  EXPECT_TRUE(has(a[0].reason, "narrowest ok w2; >2 from stable w8 -> stable")) << a[0].reason;
}

TEST(CorunPlanner, StableWidthThatDoesNotFitMakesTheOpWait) {
  CorunPlanner p(12);
  p.place(100, 0, 4, 10.0, 0.0);
  p.add_ready(task(1, 1, 12, 12, {{2, 5.0}, {3, 4.0}, {4, 4.5}}));
  EXPECT_TRUE(dispatch(p, 0.0).empty());  // 4 is the widest fit, 12 does not fit: wait
  EXPECT_EQ(p.ready_count(), 1u);
  p.finished(100);
  const auto a = dispatch(p, 1.0);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].width, 12);
}

TEST(CorunPlanner, FirstFitTakesTheLowestContiguousIdleBlock) {
  CorunPlanner p(8);
  p.place(1, 0, 2, 5, 0);
  p.place(2, 2, 2, 5, 0);
  p.place(3, 4, 2, 5, 0);
  p.finished(1);
  p.finished(3);  // idle: 0-1 and 4-7
  EXPECT_EQ(p.first_fit(2), 0);
  EXPECT_EQ(p.first_fit(3), 4);
  EXPECT_EQ(p.first_fit(5), -1);  // 6 idle cores, but not contiguous
  p.add_ready(task(10, 2, 3, 3, {{3, 1.0}}));
  p.add_ready(task(11, 1, 2, 2, {{2, 1.0}}));
  const auto a = dispatch(p, 0.0);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].id, 10u);
  EXPECT_EQ(a[0].first_core, 4);  // 3 cores do not fit in 0-1
  EXPECT_EQ(a[1].id, 11u);
  EXPECT_EQ(a[1].first_core, 0);
  EXPECT_EQ(p.idle_cores(), 1);
  EXPECT_TRUE(p.idle(7));
}

TEST(CorunPlanner, EqualLevelsKeepArrivalOrderAndNanCountsAsZero) {
  CorunPlanner p(1);
  p.add_ready(task(1, 5, 1, 1, {{1, 1}}));
  p.add_ready(task(2, NAN, 1, 1, {{1, 1}}));
  p.add_ready(task(3, 5, 1, 1, {{1, 1}}));
  std::vector<uint64_t> order;
  for (int i = 0; i < 3; ++i) {
    const auto a = dispatch(p, i);
    ASSERT_EQ(a.size(), 1u);
    order.push_back(a[0].id);
    p.finished(a[0].id);
  }
  EXPECT_EQ(order, (std::vector<uint64_t>{1, 3, 2}));
}

TEST(CorunPlanner, SameCallsGiveTheSameAssignments) {
  auto run = [] {
    CorunPlanner p(16);
    std::vector<CorunAssignment> all;
    for (uint64_t i = 0; i < 12; ++i)
      p.add_ready(task(i, static_cast<double>((i * 7) % 5), 8, 1 + static_cast<int>(i % 4),
                       {{1, 8.0}, {2, 4.5}, {3, 3.5}, {4, 3.0 + 0.1 * static_cast<double>(i)}}));
    size_t oldest = 0;  // finish in start order, one task per round
    for (int round = 0; round < 12; ++round) {
      p.dispatch(round, all);
      if (oldest < all.size()) p.finished(all[oldest++].id);
    }
    return all;
  };
  const auto a = run(), b = run();
  ASSERT_EQ(a.size(), b.size());
  ASSERT_GT(a.size(), 4u);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].id, b[i].id);
    EXPECT_EQ(a[i].first_core, b[i].first_core);
    EXPECT_EQ(a[i].width, b[i].width);
    EXPECT_EQ(a[i].reason, b[i].reason);
  }
}

TEST(CorunPlanner, InvalidInputsThrow) {
  EXPECT_THROW(CorunPlanner(0), corun::Error);
  CorunPlanner p(4);
  EXPECT_THROW(p.finished(7), corun::Error);
  EXPECT_THROW(p.add_ready(task(1, 0, 0, 1, {})), corun::Error);
  EXPECT_THROW(p.add_ready(task(1, 0, 2, 0, {})), corun::Error);
  p.place(1, 0, 2, 1.0, 0.0);
  EXPECT_THROW(p.place(2, 1, 2, 1.0, 0.0), corun::Error);  // core 1 is busy
  EXPECT_THROW(p.place(2, 3, 2, 1.0, 0.0), corun::Error);  // past the last core
  EXPECT_THROW(p.add_ready(task(1, 0, 2, 1, {})), corun::Error);  // id 1 is running
  p.add_ready(task(2, 0, 2, 1, {}));
  EXPECT_THROW(p.add_ready(task(2, 0, 2, 1, {})), corun::Error);  // already ready
}

CorunTask with_kind(CorunTask t, int kind) {
  t.kind = kind;
  return t;
}

CorunTask fixed(CorunTask t, int first, int width) {
  t.fixed_first = first;
  t.fixed_width = width;
  return t;
}

TEST(CorunPlannerForbid, PairsAreSymmetricAndNegativeKindsNeverConflict) {
  CorunPlanner p(4);
  EXPECT_FALSE(p.forbidden(2, 5));
  p.forbid_corun(5, 2);
  EXPECT_TRUE(p.forbidden(2, 5));
  EXPECT_TRUE(p.forbidden(5, 2));
  EXPECT_FALSE(p.forbidden(2, 2));
  EXPECT_FALSE(p.forbidden(-1, 5));
  p.forbid_corun(3, 3);
  EXPECT_TRUE(p.forbidden(3, 3));
  EXPECT_THROW(p.forbid_corun(-1, 3), corun::Error);
  EXPECT_THROW(p.forbid_corun(3, -2), corun::Error);
}

TEST(CorunPlannerForbid, AForbiddenTaskLetsTheNextCoRun) {
  CorunPlanner p(8);
  p.add_ready(with_kind(task(1, 10, 4, 4, {{4, 5.0}}), 1));
  ASSERT_EQ(dispatch(p, 0.0).size(), 1u);  // kind 1 on [0, 4) until 5.0
  p.forbid_corun(1, 2);
  p.add_ready(with_kind(task(2, 5, 2, 2, {{2, 1.0}}), 2));  // would co-run first (higher level)
  p.add_ready(with_kind(task(3, 1, 2, 2, {{2, 1.0}}), 3));
  auto a = dispatch(p, 0.0);
  ASSERT_EQ(a.size(), 1u);  // task 2 is then the fallback task: it waits and ends the round
  EXPECT_EQ(a[0].id, 3u);
  EXPECT_EQ(a[0].first_core, 4);
  EXPECT_EQ(p.ready_count(), 1u);
  p.finished(1);
  a = dispatch(p, 1.0);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].id, 2u);
}

TEST(CorunPlannerForbid, AForbiddenFallbackTaskStopsTheRound) {
  CorunPlanner p(8);
  p.add_ready(with_kind(task(1, 10, 4, 4, {{4, 1.0}}), 1));
  ASSERT_EQ(dispatch(p, 0.0).size(), 1u);
  p.forbid_corun(2, 1);
  p.add_ready(with_kind(task(2, 10, 4, 4, {{4, 3.0}}), 2));  // slower than the 1.0 left: fallback only
  p.add_ready(with_kind(task(3, 1, 4, 4, {{4, 3.0}}), 3));   // would fall back if 2 did not stop the round
  EXPECT_TRUE(dispatch(p, 0.0).empty());
  EXPECT_EQ(p.ready_count(), 2u);
}

TEST(CorunPlannerForbid, ATaskStartedInTheSameRoundCounts) {
  CorunPlanner p(8);
  p.forbid_corun(1, 1);  // two instances of kind 1 slow each other down
  p.add_ready(with_kind(task(1, 2, 2, 2, {{2, 1.0}}), 1));
  p.add_ready(with_kind(task(2, 1, 2, 2, {{2, 1.0}}), 1));
  p.add_ready(with_kind(task(3, 0, 2, 2, {{2, 1.0}}), -1));  // no kind: never conflicts
  const auto a = dispatch(p, 0.0);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].id, 1u);
  EXPECT_EQ(a[1].id, 3u);
  EXPECT_EQ(p.ready_count(), 1u);
}

TEST(CorunPlannerFixed, AFixedTaskWaitsForItsWholeBlockWithoutStoppingTheRound) {
  CorunPlanner p(8);
  p.place(100, 2, 2, 5.0, 0.0);                             // cores 2-3 busy
  p.add_ready(fixed(task(1, 10, 2, 2, {{2, 1.0}}), 3, 2));  // [3, 5): core 3 busy
  p.add_ready(fixed(task(2, 5, 4, 4, {{4, 2.0}}), 4, 4));   // [4, 8): idle
  p.add_ready(task(3, 1, 1, 1, {{1, 1.0}}));
  auto a = dispatch(p, 0.0);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].id, 2u);
  EXPECT_EQ(a[0].first_core, 4);
  EXPECT_EQ(a[0].width, 4);
  EXPECT_DOUBLE_EQ(a[0].predicted, 2.0);
  EXPECT_EQ(a[0].reason, "fixed [4,8)");
  EXPECT_EQ(a[1].id, 3u);
  EXPECT_EQ(a[1].first_core, 0);
  p.finished(100);
  EXPECT_TRUE(dispatch(p, 1.0).empty());  // core 4 still busy
  p.finished(2);
  a = dispatch(p, 2.0);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].id, 1u);
  EXPECT_EQ(a[0].first_core, 3);
  EXPECT_EQ(a[0].reason, "fixed [3,5)");
}

TEST(CorunPlannerFixed, NoPackingRuleAppliesToAFixedTask) {
  CorunPlanner p(8);
  // Width 6 is far from stable 1 and above max width 1, the prediction is unknown: it still runs there.
  p.add_ready(fixed(task(1, 0, 1, 1, {}), 1, 6));
  const auto a = dispatch(p, 0.0);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].first_core, 1);
  EXPECT_EQ(a[0].width, 6);
  EXPECT_TRUE(std::isnan(a[0].predicted));
  EXPECT_EQ(a[0].thread, 0);
}

TEST(CorunPlannerFixed, ABlockedFixedTaskIsNeverTheFallback) {
  CorunPlanner p(4);
  p.place(100, 0, 1, 1.0, 0.0);
  p.add_ready(fixed(task(1, 10, 2, 2, {{2, 5.0}}), 0, 2));  // blocked by core 0
  p.add_ready(task(2, 1, 3, 3, {{3, 5.0}}));                // slower than the limit: fallback
  const auto a = dispatch(p, 0.0);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].id, 2u);
  EXPECT_EQ(a[0].first_core, 1);
  EXPECT_TRUE(has(a[0].reason, "fallback")) << a[0].reason;
}

TEST(CorunPlannerFixed, InvalidBlocksThrow) {
  CorunPlanner p(4);
  EXPECT_THROW(p.add_ready(fixed(task(1, 0, 1, 1, {}), 3, 2)), corun::Error);  // past the last core
  EXPECT_THROW(p.add_ready(fixed(task(1, 0, 1, 1, {}), 0, 0)), corun::Error);  // empty block
  EXPECT_THROW(p.add_ready(fixed(task(1, 0, 1, 1, {}), -2, 1)), corun::Error);
  EXPECT_EQ(p.ready_count(), 0u);
  p.add_ready(fixed(task(1, 0, 1, 1, {}), 2, 2));
  EXPECT_EQ(p.ready_count(), 1u);
}

// Strategy 4 on a synthetic 4-core x 2-thread topology: task 100 holds every core until 10.0.
CorunPlanner smt_with_full_width_task(int threads_per_core) {
  CorunPlanner p(4, threads_per_core);
  p.add_ready(with_kind(task(100, 10, 4, 4, {{4, 10.0}}), 7));
  std::vector<CorunAssignment> a;
  p.dispatch(0.0, a);
  EXPECT_EQ(a.size(), 1u);
  EXPECT_EQ(p.idle_cores(), 0);
  return p;
}

TEST(CorunPlannerSmt, SmallOpsRunOnSiblingThreadsOfAFullWidthOp) {
  CorunPlanner p = smt_with_full_width_task(2);
  p.add_ready(task(1, 5, 1, 1, {{1, 3.0}}));
  p.add_ready(task(2, 4, 1, 1, {{1, 12.0}}));           // outlives the big op (9.0 left)
  p.add_ready(task(3, 3, 2, 2, {{1, 1.0}, {2, 0.8}}));  // Strategy 2 width 2: not a small op
  p.add_ready(task(4, 2, 1, 1, {}));                    // no width-1 prediction
  p.add_ready(task(5, 1, 4, 1, {{1, 2.0}, {4, 0.5}}));  // stable 1 even though wider is faster
  auto a = dispatch(p, 1.0);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].id, 1u);
  EXPECT_EQ(a[0].first_core, 0);
  EXPECT_EQ(a[0].thread, 1);
  EXPECT_EQ(a[0].width, 1);
  EXPECT_DOUBLE_EQ(a[0].predicted, 3.0);
  EXPECT_TRUE(has(a[0].reason, "smt beside full-width task 100 remaining=9: w1=3 ok; core 0 thread 1"))
      << a[0].reason;
  EXPECT_EQ(a[1].id, 5u);
  EXPECT_EQ(a[1].first_core, 1);
  EXPECT_EQ(a[1].thread, 1);
  EXPECT_EQ(p.ready_count(), 3u);
  EXPECT_EQ(p.idle_cores(), 0);
}

TEST(CorunPlannerSmt, OneSmallOpPerSiblingSlotAndFinishedFreesIt) {
  CorunPlanner p = smt_with_full_width_task(3);  // 4 cores x 3 threads: 8 sibling slots
  for (uint64_t i = 1; i <= 9; ++i) p.add_ready(task(i, 0, 1, 1, {{1, 1.0}}));
  auto a = dispatch(p, 0.0);
  ASSERT_EQ(a.size(), 8u);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].first_core, static_cast<int>(i / 2));  // lowest core first, then lowest thread
    EXPECT_EQ(a[i].thread, 1 + static_cast<int>(i % 2));
  }
  EXPECT_EQ(p.ready_count(), 1u);
  p.finished(a[3].id);  // core 1 thread 2
  a = dispatch(p, 0.5);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].id, 9u);
  EXPECT_EQ(a[0].first_core, 1);
  EXPECT_EQ(a[0].thread, 2);
}

TEST(CorunPlannerSmt, SiblingTasksDoNotHoldPrimaryThreads) {
  CorunPlanner p = smt_with_full_width_task(2);
  p.add_ready(task(1, 0, 1, 1, {{1, 3.0}}));
  ASSERT_EQ(dispatch(p, 0.0).size(), 1u);
  p.finished(100);
  EXPECT_EQ(p.idle_cores(), 4);  // the sibling task runs on, its core's primary thread is free
  EXPECT_EQ(p.running_count(), 1u);
  p.finished(1);
  EXPECT_EQ(p.running_count(), 0u);
  EXPECT_THROW(p.finished(1), corun::Error);
}

TEST(CorunPlannerSmt, OffWithoutSmtBesideNarrowOpsAndForForbiddenKinds) {
  {
    CorunPlanner p = smt_with_full_width_task(1);
    p.add_ready(task(1, 0, 1, 1, {{1, 1.0}}));
    EXPECT_TRUE(dispatch(p, 0.0).empty());
  }
  {
    CorunPlanner p(4, 2);  // every core busy, but no single task holds them all: Strategy 3's business
    p.place(100, 0, 2, 10.0, 0.0);
    p.place(101, 2, 2, 10.0, 0.0);
    p.add_ready(task(1, 0, 1, 1, {{1, 1.0}}));
    EXPECT_TRUE(dispatch(p, 0.0).empty());
  }
  {
    CorunPlanner p = smt_with_full_width_task(2);
    p.forbid_corun(7, 8);
    p.add_ready(with_kind(task(1, 0, 1, 1, {{1, 1.0}}), 8));
    EXPECT_TRUE(dispatch(p, 0.0).empty());
    p.add_ready(with_kind(task(2, 0, 1, 1, {{1, 1.0}}), 9));
    EXPECT_EQ(dispatch(p, 0.0).size(), 1u);
  }
  EXPECT_THROW(CorunPlanner(4, 0), corun::Error);
}

}  // namespace
}  // namespace corun::sched
