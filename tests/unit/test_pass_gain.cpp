// The plan step's grouping decision (engine/pass_gain.hpp, issue 18: "no pass that slows a run"): the cost
// model alone, then the plan step fed synthetic per-width models (a gain: the group is made; a loss: it is
// not; no models: the documented default), and the numbers bitwise the same whichever way it decided (the
// training steps run inline, so no StarPU is started here).
#include <corun/engine.hpp>
#include <corun/inline.hpp>
#include <corun/models/wide_deep.hpp>

#include "codelets/op.hpp"
#include "engine/pass_gain.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

namespace corun {
namespace {

using engine::decide_group;
using engine::TeamShape;

std::vector<std::vector<double>> members(int m, double us_at_1, double speedup_at_2) {
  return std::vector<std::vector<double>>(static_cast<size_t>(m), {us_at_1, us_at_1 / speedup_at_2});
}

const TeamShape kOneCoreTasks{2, {1}};    // lws, eager, dmdas on 2 cores
const TeamShape kTwoCoreTeam{2, {2}};     // cpf or fifo with CORUN_EXECUTORS=1x2
const TeamShape kAnyWidth{2, {1, 2}};     // corun, pheft

TEST(PassGain, SmallOpsGroupWhereTheTaskCostDominates) {
  // 6 x 1 µs: separately 3 x (1 + 7) per core = 24 µs; grouped on one core 6 + 7 = 13 µs.
  const auto d = decide_group(members(6, 1.0, 1.0), kOneCoreTasks, 7.0, false);
  EXPECT_TRUE(d.known);
  EXPECT_TRUE(d.apply) << d.reason;
  EXPECT_DOUBLE_EQ(d.separate_us, 24.0);
  EXPECT_DOUBLE_EQ(d.grouped_us, 13.0);
}

TEST(PassGain, LargeOpsStaySeparateWithoutTeams) {
  // PathNet's case: six 1 ms convolutions on one worker take twice as long as three per core.
  const auto d = decide_group(members(6, 1000.0, 1.8), kOneCoreTasks, 7.0, true);
  EXPECT_FALSE(d.apply) << d.reason;
  EXPECT_DOUBLE_EQ(d.separate_us, 3021.0);
  EXPECT_DOUBLE_EQ(d.grouped_us, 6007.0);
  EXPECT_NE(d.reason.find("not grouped"), std::string::npos);
}

TEST(PassGain, LargeOpsGroupOnAFullWidthTeamThatScalesPoorly) {
  // Every task on the 2-core team: separately 6 x (1000 / 1.25 + 7); grouped 3 + 3 members in one task.
  const auto d = decide_group(members(6, 1000.0, 1.25), kTwoCoreTeam, 7.0, false);
  EXPECT_TRUE(d.apply) << d.reason;
  EXPECT_EQ(d.grouped_width, 2);
  EXPECT_DOUBLE_EQ(d.grouped_us, 3007.0);
  EXPECT_DOUBLE_EQ(d.separate_us, 6.0 * 807.0);
}

TEST(PassGain, AGainUnderTheMarginIsNoGain) {
  // Any width: separately 3 x (1000 + 7) at width 1; grouped 3000 + 7 at width 2: 0.4% is within noise.
  const auto d = decide_group(members(6, 1000.0, 1.9), kAnyWidth, 7.0, true);
  EXPECT_FALSE(d.apply) << d.reason;
  EXPECT_LT(d.grouped_us, d.separate_us);
}

TEST(PassGain, UnbalancedSharesCount) {
  // Three members on a 2-wide team split 2 + 1: the slower half decides.
  const std::vector<std::vector<double>> t{{100.0, 60.0}, {100.0, 60.0}, {100.0, 60.0}};
  const auto d = decide_group(t, kTwoCoreTeam, 0.0, false);
  EXPECT_DOUBLE_EQ(d.grouped_us, 200.0);
  EXPECT_DOUBLE_EQ(d.separate_us, 180.0);
  EXPECT_FALSE(d.apply);
}

TEST(PassGain, UnknownMembersGetTheDefault) {
  auto t = members(4, 1.0, 1.0);
  t[2] = {NAN, NAN};
  for (bool dflt : {false, true}) {
    const auto d = decide_group(t, kOneCoreTasks, 7.0, dflt);
    EXPECT_FALSE(d.known);
    EXPECT_EQ(d.apply, dflt);
    EXPECT_NE(d.reason.find("default"), std::string::npos);
  }
  // Known at width 1 only, under a policy that runs every task at width 2: no prediction there either.
  const auto d = decide_group({{5.0, NAN}, {5.0, NAN}}, kTwoCoreTeam, 7.0, false);
  EXPECT_FALSE(d.known);
  EXPECT_FALSE(d.apply);
}

// Synthetic per-width models: every op takes `us` at width 1 and us / 1.5 at width 2.
class FixedTimes : public engine::OpTimes {
 public:
  explicit FixedTimes(double us) : us_(us) {}
  std::vector<double> predict(const codelets::OpCall&, int max_width) override {
    std::vector<double> t{us_};
    if (max_width >= 2) t.push_back(us_ / 1.5);
    return t;
  }

 private:
  double us_;
};

models::WideDeepConfig small() {
  models::WideDeepConfig cfg;
  cfg.batch = 8;
  cfg.vocab = 200;
  return cfg;
}

Config auto_config(bool default_when_unknown) {
  Config c;
  c.parallel_ops_auto = true;
  c.parallel_ops_by_default = default_when_unknown;
  return c;
}

TEST(PassGain, PlanStepFollowsTheModels) {
  FixedTimes cheap(0.5), dear(5000.0);
  const engine::PassModels gain{&cheap, kOneCoreTasks, 7.0}, loss{&dear, kOneCoreTasks, 7.0};
  models::WideDeep a(small(), false), b(small(), false), c(small(), false), d(small(), false);
  const GraphPassReport ra = engine::apply_graph_passes(a.graph, auto_config(false), &gain);
  EXPECT_TRUE(ra.grouping.by_models);
  ASSERT_EQ(ra.groups.size(), 1u);
  EXPECT_EQ(ra.groups[0].members, 26);
  EXPECT_EQ(ra.nodes_after, 13);
  const GraphPassReport rb = engine::apply_graph_passes(b.graph, auto_config(true), &loss);
  EXPECT_TRUE(rb.groups.empty());
  EXPECT_GE(rb.declined, 1);
  EXPECT_EQ(rb.nodes_after, rb.nodes_before);
  // No models (no Engine): the caller's default.
  EXPECT_TRUE(engine::apply_graph_passes(c.graph, auto_config(false), nullptr).groups.empty());
  EXPECT_EQ(engine::apply_graph_passes(d.graph, auto_config(true), nullptr).groups.size(), 1u);
  // CORUN_PARALLEL_OPS=on makes every group whatever the models say.
  models::WideDeep e(small(), false);
  Config on;
  on.parallel_ops = true;
  EXPECT_EQ(engine::apply_graph_passes(e.graph, on, &loss).groups.size(), 1u);
}

std::vector<std::vector<float>> train_inline(models::WideDeep& m, int steps) {
  const models::TabularTask task(m.config);
  InlineRunner runner(m.graph);
  std::vector<std::vector<float>> out;
  std::vector<float> cats, dense, labels;
  for (int s = 0; s < steps; ++s) {
    task.make_batch(static_cast<uint64_t>(s), cats, dense, labels);
    std::copy(cats.begin(), cats.end(), m.graph.data(m.categories));
    std::copy(dense.begin(), dense.end(), m.graph.data(m.dense));
    std::copy(labels.begin(), labels.end(), m.graph.data(m.labels));
    runner.run();
    out.emplace_back(m.graph.data(m.loss), m.graph.data(m.loss) + 1);
  }
  for (Tensor p : m.graph.params()) out.emplace_back(m.graph.data(p), m.graph.data(p) + p.shape().numel());
  return out;
}

TEST(PassGain, SameBitsWhicheverWayItDecides) {
  FixedTimes cheap(0.5), dear(5000.0);
  const engine::PassModels gain{&cheap, kOneCoreTasks, 7.0}, loss{&dear, kOneCoreTasks, 7.0};
  models::WideDeep grouped(small()), separate(small());
  grouped.init_params();
  separate.init_params();
  EXPECT_FALSE(engine::apply_graph_passes(grouped.graph, auto_config(false), &gain).groups.empty());
  EXPECT_TRUE(engine::apply_graph_passes(separate.graph, auto_config(false), &loss).groups.empty());
  EXPECT_LT(grouped.graph.num_nodes(), separate.graph.num_nodes());
  const auto a = train_inline(grouped, 3), b = train_inline(separate, 3);
  ASSERT_EQ(a.size(), b.size());
  for (size_t k = 0; k < a.size(); ++k) {
    ASSERT_EQ(a[k].size(), b[k].size());
    EXPECT_EQ(std::memcmp(a[k].data(), b[k].data(), a[k].size() * sizeof(float)), 0) << "result " << k << " differs";
  }
}

}  // namespace
}  // namespace corun
