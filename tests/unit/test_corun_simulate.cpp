// simulate_corun (event-driven replay of CorunPlanner over a graph) and the co-run counts over time.
#include "sched/planner/corun_simulate.hpp"

#include <corun/error.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <utility>
#include <vector>

namespace corun::sched {
namespace {

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

SimNode node(double level, int max_width, int stable, std::vector<std::pair<int, double>> times,
             std::vector<int> successors = {}) {
  SimNode n;
  n.task.id = 12345;  // ignored: the node index is the id
  n.task.level = level;
  n.task.max_width = max_width;
  n.task.stable_width = stable;
  n.task.predicted.assign(static_cast<size_t>(max_width), NAN);
  for (auto [w, p] : times) n.task.predicted[static_cast<size_t>(w - 1)] = p;
  n.successors = std::move(successors);
  return n;
}

void expect_placed(const SimPlacement& p, int first, int width, double start, double end) {
  EXPECT_EQ(p.first_core, first);
  EXPECT_EQ(p.width, width);
  EXPECT_DOUBLE_EQ(p.start, start);
  EXPECT_DOUBLE_EQ(p.end, end);
}

TEST(CorunSimulate, AChainRunsOneAfterTheOther) {
  const std::vector<SimNode> g = {node(3, 4, 4, {{4, 1.0}}, {1}), node(2, 4, 2, {{2, 2.0}}, {2}),
                                  node(1, 4, 4, {{4, 0.5}})};
  const SimResult r = simulate_corun(g, 4);
  ASSERT_EQ(r.placements.size(), 3u);
  expect_placed(r.placements[0], 0, 4, 0.0, 1.0);
  expect_placed(r.placements[1], 0, 2, 1.0, 3.0);
  expect_placed(r.placements[2], 0, 4, 3.0, 3.5);
  EXPECT_DOUBLE_EQ(r.makespan, 3.5);
  EXPECT_TRUE(has(r.placements[1].reason, "fallback")) << r.placements[1].reason;
}

TEST(CorunSimulate, ADiamondCoRunsItsMiddle) {
  const std::vector<SimNode> g = {node(4, 4, 4, {{4, 1.0}}, {1, 2}), node(3, 4, 2, {{2, 2.0}}, {3}),
                                  node(2, 4, 2, {{2, 2.0}}, {3}), node(1, 4, 4, {{4, 1.0}})};
  const SimResult r = simulate_corun(g, 4);
  expect_placed(r.placements[0], 0, 4, 0.0, 1.0);
  expect_placed(r.placements[1], 0, 2, 1.0, 3.0);  // fallback: the higher level
  expect_placed(r.placements[2], 2, 2, 1.0, 3.0);  // co-runs: 2.0 <= the 2.0 left
  expect_placed(r.placements[3], 0, 4, 3.0, 4.0);  // after both
  EXPECT_TRUE(has(r.placements[2].reason, "co-run")) << r.placements[2].reason;
  EXPECT_DOUBLE_EQ(r.makespan, 4.0);
}

TEST(CorunSimulate, PaperExampleInsideAGraph) {
  // Section III-D on 68 cores: A holds 48 cores for 1.9 s; B picks 18 of the 20 idle cores (1.5 s, not 20
  // at 1.3 s, not 16 at 2.1 s); D takes one of the two B left; C joins A and B.
  const std::vector<SimNode> g = {
      node(10, 48, 48, {{48, 1.9}}, {2}),                       // A
      node(5, 68, 18, {{18, 1.5}, {20, 1.3}, {16, 2.1}}, {2}),  // B
      node(1, 68, 68, {{68, 1.0}}),                             // C
      node(0.5, 2, 2, {{1, 1.0}, {2, 0.6}}),                    // D
  };
  const SimResult r = simulate_corun(g, 68);
  expect_placed(r.placements[0], 0, 48, 0.0, 1.9);
  expect_placed(r.placements[1], 48, 18, 0.0, 1.5);
  EXPECT_TRUE(has(r.placements[1].reason, "narrowest ok w18")) << r.placements[1].reason;
  expect_placed(r.placements[3], 66, 1, 0.0, 1.0);
  expect_placed(r.placements[2], 0, 68, 1.9, 2.9);
  EXPECT_DOUBLE_EQ(r.makespan, 2.9);
}

TEST(CorunSimulate, FixedBlocksAndUnknownTimes) {
  std::vector<SimNode> g = {node(1, 2, 2, {{2, 1.0}}), node(2, 2, 2, {{2, 3.0}}), node(0, 2, 2, {})};
  for (SimNode& n : g) n.task.fixed_first = 1, n.task.fixed_width = 2;  // all on cores 1-2 of 4
  const SimResult r = simulate_corun(g, 4);
  expect_placed(r.placements[1], 1, 2, 0.0, 3.0);  // higher level first
  expect_placed(r.placements[0], 1, 2, 3.0, 4.0);
  expect_placed(r.placements[2], 1, 2, 4.0, 4.0);  // NaN prediction: ends at once
  EXPECT_EQ(r.placements[2].reason, "fixed [1,3)");
  EXPECT_DOUBLE_EQ(r.makespan, 4.0);
}

TEST(CorunSimulate, EqualEndsFinishLowestNodeFirst) {
  // A (node 0, core 1) and B (node 1, core 2) end together; core 0 is idle. The successor of whichever
  // finishes first takes core 0: A's, because ties go to the lower node index.
  std::vector<SimNode> g = {node(2, 1, 1, {{1, 1.0}}, {2}), node(2, 1, 1, {{1, 1.0}}, {3}),
                            node(1, 1, 1, {{1, 1.0}}), node(1, 1, 1, {{1, 1.0}})};
  g[0].task.fixed_first = 1, g[0].task.fixed_width = 1;
  g[1].task.fixed_first = 2, g[1].task.fixed_width = 1;
  const SimResult r = simulate_corun(g, 3);
  expect_placed(r.placements[2], 0, 1, 1.0, 2.0);
  expect_placed(r.placements[3], 1, 1, 1.0, 2.0);
}

TEST(CorunSimulate, SmallOpsUseSiblingThreadsBesideAFullWidthOp) {
  // 4 cores x 2 threads: the big op holds every core; three small ones share cores 0-2 with it.
  std::vector<SimNode> g = {node(10, 4, 4, {{4, 5.0}})};
  for (int i = 0; i < 3; ++i) g.push_back(node(1, 1, 1, {{1, 2.0}}));
  SimResult r = simulate_corun(g, 4, 2);
  expect_placed(r.placements[0], 0, 4, 0.0, 5.0);
  for (int i = 1; i <= 3; ++i) {
    expect_placed(r.placements[static_cast<size_t>(i)], i - 1, 1, 0.0, 2.0);
    EXPECT_EQ(r.placements[static_cast<size_t>(i)].thread, 1);
  }
  EXPECT_DOUBLE_EQ(r.makespan, 5.0);
  r = simulate_corun(g, 4, 1);  // no SMT: the small ones wait for the big one
  EXPECT_EQ(r.placements[1].thread, 0);
  EXPECT_DOUBLE_EQ(r.placements[1].start, 5.0);
}

// A layered graph from a fixed linear congruential generator: wide enough to co-run.
std::vector<SimNode> generated_graph() {
  uint64_t x = 42;
  auto next = [&](int n) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int>((x >> 33) % static_cast<uint64_t>(n));
  };
  std::vector<SimNode> g;
  const int layers = 6, per_layer = 5;
  for (int l = 0; l < layers; ++l)
    for (int k = 0; k < per_layer; ++k) {
      const int stable = 1 + next(4);
      std::vector<std::pair<int, double>> times;
      for (int w = 1; w <= 8; ++w) times.emplace_back(w, (1.0 + next(10)) / w + 0.2 * w);
      SimNode n = node(layers - l, 8, stable, times);
      n.task.kind = next(3);
      if (l + 1 < layers)
        for (int s = 0; s < 2; ++s) n.successors.push_back((l + 1) * per_layer + next(per_layer));
      g.push_back(n);
    }
  return g;
}

TEST(CorunSimulate, TheSameInputGivesTheSameSchedule) {
  const auto g = generated_graph();
  for (int threads : {1, 2}) {
    const SimResult a = simulate_corun(g, 8, threads), b = simulate_corun(g, 8, threads);
    ASSERT_EQ(a.placements.size(), g.size());
    ASSERT_EQ(b.placements.size(), g.size());
    std::vector<std::pair<double, double>> intervals;
    for (size_t i = 0; i < g.size(); ++i) {
      const SimPlacement &p = a.placements[i], &q = b.placements[i];
      EXPECT_GE(p.first_core, 0) << i;
      EXPECT_EQ(p.first_core, q.first_core) << i;
      EXPECT_EQ(p.width, q.width) << i;
      EXPECT_EQ(p.thread, q.thread) << i;
      EXPECT_EQ(p.start, q.start) << i;
      EXPECT_EQ(p.end, q.end) << i;
      EXPECT_EQ(p.reason, q.reason) << i;
      for (int s : g[i].successors) EXPECT_GE(a.placements[static_cast<size_t>(s)].start, p.end) << i << "->" << s;
      intervals.emplace_back(p.start, p.end);
    }
    EXPECT_EQ(a.makespan, b.makespan);
    EXPECT_GT(mean_concurrency(intervals), 1.0);  // the graph does co-run: the comparison is not vacuous
  }
}

TEST(CorunSimulate, EmptyGraph) {
  const SimResult r = simulate_corun({}, 4);
  EXPECT_TRUE(r.placements.empty());
  EXPECT_EQ(r.makespan, 0.0);
}

TEST(CorunSimulate, BadGraphsThrow) {
  EXPECT_THROW(simulate_corun({node(1, 1, 1, {{1, 1}}, {1}), node(1, 1, 1, {{1, 1}}, {0})}, 2), corun::Error);
  EXPECT_THROW(simulate_corun({node(1, 1, 1, {{1, 1}}, {0})}, 2), corun::Error);  // self loop
  EXPECT_THROW(simulate_corun({node(1, 1, 1, {{1, 1}}, {2}), node(1, 1, 1, {{1, 1}})}, 2), corun::Error);
  EXPECT_THROW(simulate_corun({node(1, 1, 1, {{1, 1}}, {-1})}, 2), corun::Error);
  EXPECT_THROW(simulate_corun({node(1, 1, 0, {{1, 1}})}, 2), corun::Error);  // stable width 0
  EXPECT_THROW(simulate_corun({node(1, 1, 1, {{1, 1}})}, 0), corun::Error);
  EXPECT_THROW(simulate_corun({node(1, 1, 1, {{1, 1}})}, 2, 0), corun::Error);
  EXPECT_NO_THROW(simulate_corun({node(1, 1, 1, {{1, 1}}, {1, 1}), node(1, 1, 1, {{1, 1}})}, 2));
}

using Profile = std::vector<std::pair<double, int>>;

TEST(ConcurrencyProfile, StepFunctionWithMergedTimes) {
  EXPECT_EQ(concurrency_profile({{2, 4}, {0, 2}, {1, 3}}), (Profile{{0, 1}, {1, 2}, {2, 2}, {3, 1}, {4, 0}}));
  EXPECT_EQ(concurrency_profile({{0, 1}, {0, 1}, {5, 5}}), (Profile{{0, 2}, {1, 0}, {5, 0}}));
  EXPECT_TRUE(concurrency_profile({}).empty());
}

TEST(ConcurrencyProfile, MeanIsTimeWeightedOverTheWholeSpan) {
  EXPECT_DOUBLE_EQ(mean_concurrency({{0, 2}, {1, 3}}), 4.0 / 3.0);
  EXPECT_DOUBLE_EQ(mean_concurrency({{0, 1}, {2, 3}}), 2.0 / 3.0);     // the idle gap counts
  EXPECT_DOUBLE_EQ(mean_concurrency({{0, 10}, {0, 1}, {0, 1}}), 1.2);  // not 2: brief bursts weigh little
  EXPECT_EQ(mean_concurrency({}), 0.0);
  EXPECT_EQ(mean_concurrency({{3, 3}}), 0.0);
}

TEST(ConcurrencyProfile, InvalidIntervalsThrow) {
  EXPECT_THROW(concurrency_profile({{2, 1}}), corun::Error);
  EXPECT_THROW(concurrency_profile({{NAN, 1}}), corun::Error);
  EXPECT_THROW(concurrency_profile({{0, INFINITY}}), corun::Error);
  EXPECT_THROW(mean_concurrency({{0, 1}, {1, 0.5}}), corun::Error);
}

}  // namespace
}  // namespace corun::sched
