// Issue 21 item 7: the corun width search on a shared machine. When the co-tenancy governor runs a tuning
// run's tasks narrower than the width under test, each such signature ends its climb at its best width so
// far instead of tuning again. Issue 48 item 3: a climb whose widths StarPU's history already holds
// (calibrated, not interpolated) is not measured again, nor one an earlier process measured (the climb
// memory). Synthetic traces and models: no StarPU runtime.
#include "sched/corun/corun_tuning.hpp"

#include "codelets/op.hpp"
#include "common/temp_dir_test.hpp"
#include "engine/planning.hpp"

#include <corun/graph.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace corun::engine {
namespace {

struct TinyGraph {
  Graph g;
  TinyGraph() {
    const Tensor x = g.input("x", {64, 64});
    const Tensor w = g.param("w", {64, 64});
    g.relu(g.matmul(x, w, false, false, "mm"), "act");
  }
};

// The plan the engine hands the tuner: one hint per node, no dependencies (the tests never freeze).
struct PlanFor {
  explicit PlanFor(const Graph& g) : nodes(g.impl().nodes.size()), hints(nodes), successors(nodes) {}
  PlanFor(const PlanFor&) = delete;
  operator sched::TunerPlan&() { return view; }
  size_t nodes;
  std::vector<sched::TaskHint> hints;
  std::vector<std::vector<int32_t>> successors;
  sched::TunerPlan view{hints, successors};
};

// The corun tuner of `g` on 2 cores, width step 1, no fixed width, deterministic only when asked, remembering
// its climbs in `memory` when given.
sched::CorunTuning tuner_for(const Graph& g, bool deterministic = false, const std::string& memory = {}) {
  sched::TunerSettings s;
  s.cores = 2;
  s.deterministic = deterministic;
  s.op_kinds = static_cast<int>(codelets::OpKind::count_);
  s.climb_memory_file = memory;
  s.op_kinds_tag = 42;
  return sched::CorunTuning(tuner_nodes(g.impl()), s);
}

// What the engine's planner hands the tuner for 2 cores: `calibrated` per width (NaN: the history entry has
// too few samples) for every node, and as predictions the same row with the NaNs between known widths
// interpolated and the rest `predicted_fill` (another source's guess, as an interpolation would be).
struct Models {
  Models(PlanFor& plan, std::vector<double> calibrated, double predicted_fill) {
    rows.assign(plan.nodes * 2, NAN);
    predicted.assign(plan.nodes * 2, NAN);
    for (size_t i = 0; i < plan.nodes; ++i)
      for (size_t w = 0; w < 2; ++w) {
        rows[i * 2 + w] = calibrated[w];
        predicted[i * 2 + w] = std::isnan(calibrated[w]) ? predicted_fill : calibrated[w];
      }
    for (size_t i = 0; i < plan.nodes; ++i) {
      plan.hints[i].predicted_us = &predicted[i * 2];
      plan.hints[i].npredicted = 2;
      plan.hints[i].max_width = 2;
    }
    plan.view.calibrated = rows.data();
    plan.view.calibrated_stride = 2;
  }
  std::vector<double> rows, predicted;
};

// One tuning run's trace: every node at `width`, 100 µs at width 1 and 60 µs wider.
std::vector<TraceTask> run_at(size_t nodes, int width) {
  std::vector<TraceTask> t(nodes);
  for (TraceTask& task : t) {
    task.width = width;
    task.end_us = width == 1 ? 100.0 : 60.0;
  }
  return t;
}

// The warm-up run: every task at its signature's widest width on [0, w), and nothing recorded.
void warm_up(sched::CorunTuning& tuning, PlanFor& plan) {
  ASSERT_TRUE(tuning.tuning());
  tuning.apply(plan);
  for (const sched::TaskHint& h : plan.hints) {
    EXPECT_TRUE(h.width_search);
    EXPECT_EQ(h.fixed_first, 0);
    EXPECT_EQ(h.fixed_width, 2);
  }
  tuning.record(run_at(plan.nodes, 2));
  ASSERT_TRUE(tuning.tuning()) << "the warm-up run measures nothing";
}

TEST(CorunTuningWarmUp, TheFirstRunWarmsEveryCoreAndIsNotMeasured) {
  TinyGraph tg;
  sched::CorunTuning tuning = tuner_for(tg.g);
  PlanFor plan(tg.g);
  warm_up(tuning, plan);
  // A cold first run looks slow at width 2 (first calls on core 1); had it counted, width 1 would win.
  tuning.apply(plan);
  EXPECT_EQ(plan.hints[0].fixed_width, 1);
  tuning.record(run_at(plan.nodes, 1));
  tuning.apply(plan);
  EXPECT_EQ(plan.hints[0].fixed_width, 2);
  tuning.record(run_at(plan.nodes, 2));
  EXPECT_FALSE(tuning.tuning());
  EXPECT_EQ(tuning.stable_width_of(0), 2);
}

TEST(CorunTuningCapped, ACappedTuningRunEndsTheSearchAtTheBestWidthSoFar) {
  TinyGraph tg;
  sched::CorunTuning tuning = tuner_for(tg.g);
  PlanFor plan(tg.g);
  const size_t n = plan.nodes;
  warm_up(tuning, plan);
  tuning.apply(plan);
  for (const sched::TaskHint& h : plan.hints) {
    EXPECT_TRUE(h.width_search);  // the governor's cap applies to it (corun_policy.cpp)
    EXPECT_EQ(h.fixed_width, 1);
  }
  tuning.record(run_at(n, 1));
  ASSERT_TRUE(tuning.tuning());  // width 2 is next
  tuning.apply(plan);
  EXPECT_EQ(plan.hints[0].fixed_width, 2);
  tuning.record(run_at(n, 1));  // the governor capped every team of the run at width 1
  EXPECT_FALSE(tuning.tuning()) << "no third tuning run";
  for (size_t i = 0; i < n; ++i) EXPECT_EQ(tuning.stable_width_of(i), 1);
  tuning.apply(plan);
  for (const sched::TaskHint& h : plan.hints) {
    EXPECT_FALSE(h.width_search);
    EXPECT_EQ(h.fixed_first, -1);
  }
}

TEST(CorunTuningCapped, AnUncappedRunStillMeasuresTheWiderWidth) {
  TinyGraph tg;
  sched::CorunTuning tuning = tuner_for(tg.g);
  PlanFor plan(tg.g);
  warm_up(tuning, plan);
  tuning.apply(plan);
  tuning.record(run_at(plan.nodes, 1));
  tuning.apply(plan);
  tuning.record(run_at(plan.nodes, 2));  // 60 µs at width 2 beats 100 at width 1
  EXPECT_FALSE(tuning.tuning());
  EXPECT_EQ(tuning.stable_width_of(0), 2);
}

TEST(CorunTuningHistory, CalibratedWidthsReplaceTheClimbFromTheFirstRun) {
  TinyGraph tg;
  sched::CorunTuning tuning = tuner_for(tg.g);
  PlanFor plan(tg.g);
  Models models(plan, {100.0, 60.0}, NAN);
  ASSERT_TRUE(tuning.tuning()) << "nothing is known before the first plan";
  tuning.apply(plan);
  EXPECT_FALSE(tuning.tuning()) << "no warm-up and no tuning run: the history holds widths 1 and 2";
  EXPECT_TRUE(plan.view.stale) << "the climbs' curves fill predictions: the engine replans";
  for (size_t i = 0; i < plan.nodes; ++i) {
    EXPECT_FALSE(plan.hints[i].width_search);
    EXPECT_EQ(plan.hints[i].fixed_first, -1) << "packed, not serialised on [0, w)";
    EXPECT_EQ(tuning.stable_width_of(i), 2);
  }
}

TEST(CorunTuningHistory, TheReplayedClimbStopsAtTheFirstRiseAsAMeasuredOne) {
  TinyGraph tg;
  sched::CorunTuning tuning = tuner_for(tg.g);
  PlanFor plan(tg.g);
  Models models(plan, {50.0, 60.0}, NAN);
  tuning.apply(plan);
  EXPECT_FALSE(tuning.tuning());
  EXPECT_EQ(tuning.stable_width_of(0), 1);
}

TEST(CorunTuningHistory, AWidthWithoutEnoughSamplesIsMeasuredEvenWhenPredicted) {
  // Width 2 is predicted (interpolated or filled in by another source) but not calibrated: the climb runs.
  TinyGraph tg;
  sched::CorunTuning tuning = tuner_for(tg.g);
  PlanFor plan(tg.g);
  Models models(plan, {100.0, NAN}, 60.0);
  warm_up(tuning, plan);
  tuning.apply(plan);
  EXPECT_TRUE(plan.hints[0].width_search);
  EXPECT_EQ(plan.hints[0].fixed_width, 1) << "the climb measures width 1 itself, from its own warm cores";
}

TEST(CorunTuningHistory, ASearchThatHistoryCompletesMidwayEndsWithoutItsNextRun) {
  // The models calibrate while the climb runs (tuning runs record samples too): the next plan finishes it.
  TinyGraph tg;
  sched::CorunTuning tuning = tuner_for(tg.g);
  PlanFor plan(tg.g);
  warm_up(tuning, plan);
  tuning.apply(plan);
  tuning.record(run_at(plan.nodes, 1));
  ASSERT_TRUE(tuning.tuning()) << "width 2 is next";
  Models models(plan, {100.0, 60.0}, NAN);
  tuning.apply(plan);
  EXPECT_FALSE(tuning.tuning());
  EXPECT_EQ(tuning.stable_width_of(0), 2);
  EXPECT_FALSE(plan.hints[0].width_search);
}

TEST(CorunTuningHistory, DeterministicModeFreezesAtTheFirstRunWhenTheHistoryHoldsTheClimbs) {
  TinyGraph tg;
  sched::CorunTuning tuning = tuner_for(tg.g, /*deterministic=*/true);
  PlanFor plan(tg.g);
  Models models(plan, {100.0, 60.0}, NAN);
  tuning.apply(plan);
  ASSERT_TRUE(tuning.frozen()) << "the search is over before the first run, so the schedule freezes there";
  EXPECT_FALSE(tuning.tuning());
  for (const sched::TaskHint& h : plan.hints) {  // each pinned to its simulated block of the 2 cores
    EXPECT_GE(h.fixed_first, 0);
    EXPECT_GE(h.fixed_width, 1);
    EXPECT_LE(h.fixed_first + h.fixed_width, 2);
  }
}

class CorunTuningMemory : public testing::TempDirTest {
 protected:
  CorunTuningMemory() : TempDirTest("climb_memory") {}

  // A first process's tuner: the warm-up run, then width 1 (100 µs) and width 2 (`width2_trace` µs at the
  // width the tasks really ran at).
  void search(const std::string& memory, int width2_ran_at) {
    TinyGraph tg;
    sched::CorunTuning tuning = tuner_for(tg.g, false, memory);
    PlanFor plan(tg.g);
    warm_up(tuning, plan);
    tuning.apply(plan);
    tuning.record(run_at(plan.nodes, 1));
    tuning.apply(plan);
    tuning.record(run_at(plan.nodes, width2_ran_at));
    ASSERT_FALSE(tuning.tuning());
  }
};

TEST_F(CorunTuningMemory, ALaterProcessReplaysTheMeasuredClimbWithoutATuningRun) {
  const std::string memory = path("sampling/corun/climbs.key.json");  // its folders do not exist yet
  search(memory, 2);
  ASSERT_TRUE(std::filesystem::exists(memory)) << "the finished climbs are written for later processes";
  TinyGraph tg;
  sched::CorunTuning later = tuner_for(tg.g, false, memory);
  PlanFor plan(tg.g);
  ASSERT_TRUE(later.tuning()) << "nothing is replayed before the first plan";
  later.apply(plan);
  EXPECT_FALSE(later.tuning()) << "no warm-up and no tuning run: the memory holds widths 1 and 2";
  EXPECT_TRUE(plan.view.stale);
  for (size_t i = 0; i < plan.nodes; ++i) {
    EXPECT_FALSE(plan.hints[i].width_search);
    EXPECT_EQ(later.stable_width_of(i), 2) << "the same stable width as the process that measured it";
  }
  // Its curve fills the predictions as a measured one does.
  double row[2] = {NAN, NAN};
  later.fill(0, row, 2);
  EXPECT_EQ(row[0], 100.0);
  EXPECT_EQ(row[1], 60.0);
}

TEST_F(CorunTuningMemory, CalibratedHistoryWinsOverTheMemory) {
  const std::string memory = path("climbs.json");
  search(memory, 2);  // remembered: width 2 is faster
  TinyGraph tg;
  sched::CorunTuning later = tuner_for(tg.g, false, memory);
  PlanFor plan(tg.g);
  Models models(plan, {50.0, 60.0}, NAN);  // `corun profile` calibrated both widths since: width 1 is faster
  later.apply(plan);
  EXPECT_FALSE(later.tuning());
  EXPECT_EQ(later.stable_width_of(0), 1);
}

TEST_F(CorunTuningMemory, AClimbIsReplayedFromOneSourceNeverAMixOfTwo) {
  const std::string memory = path("climbs.json");
  search(memory, 2);  // remembered: 100 µs at width 1, 60 at width 2
  TinyGraph tg;
  sched::CorunTuning later = tuner_for(tg.g, false, memory);
  PlanFor plan(tg.g);
  Models models(plan, {50.0, NAN}, NAN);  // the history has calibrated width 1 since, not width 2
  later.apply(plan);
  EXPECT_FALSE(later.tuning());
  // Mixed, 50 µs (history) against 60 (memory) would have stopped the climb at width 1, a comparison of two
  // different measurements; the memory's own climb says width 2.
  EXPECT_EQ(later.stable_width_of(0), 2);
}

TEST_F(CorunTuningMemory, AClimbTheGovernorCutShortIsNotRemembered) {
  const std::string memory = path("climbs.json");
  search(memory, 1);  // the width-2 run's teams were capped at width 1: its climb stopped unmeasured
  TinyGraph tg;
  sched::CorunTuning later = tuner_for(tg.g, false, memory);
  PlanFor plan(tg.g);
  later.apply(plan);
  EXPECT_TRUE(later.tuning()) << "a later process on a quieter machine measures the climb itself";
}

TEST_F(CorunTuningMemory, OffOrAnotherOpListMeasuresAgain) {
  const std::string memory = path("climbs.json");
  search(memory, 2);
  TinyGraph tg;
  for (const bool other_ops : {false, true}) {
    sched::TunerSettings s;
    s.cores = 2;
    s.op_kinds = static_cast<int>(codelets::OpKind::count_);
    s.climb_memory_file = other_ops ? memory : std::string();  // off: no file
    s.op_kinds_tag = 43;  // another build's op numbering
    sched::CorunTuning later(tuner_nodes(tg.g.impl()), s);
    PlanFor plan(tg.g);
    later.apply(plan);
    EXPECT_TRUE(later.tuning()) << (other_ops ? "another op list" : "no memory file");
  }
}

TEST_F(CorunTuningMemory, ADamagedFileIsIgnoredWithAWarningAndRewritten) {
  const std::string memory = path("climbs.json");
  std::ofstream(memory) << "{\"format\": \"corun-climbs\", \"version\": 1, \"kinds\": ";  // cut short
  ::testing::internal::CaptureStderr();
  search(memory, 2);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("ignoring the remembered width climbs"), std::string::npos) << err;
  TinyGraph tg;
  sched::CorunTuning later = tuner_for(tg.g, false, memory);
  PlanFor plan(tg.g);
  later.apply(plan);
  EXPECT_FALSE(later.tuning()) << "the search's results replaced the damaged file";
}

}  // namespace
}  // namespace corun::engine
