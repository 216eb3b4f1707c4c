// engine/simulated_models.hpp (issue 52 item 5a): the check a simulated run makes before its first task, so that
// an op without a model is refused with its name, footprint and shapes instead of StarPU's SimGrid assertion.
// Here with a fake prediction function (no StarPU started); the SimGrid build runs it on StarPU's models
// (tests/simgrid/test_unmodelled_ops.cpp).
#include "codelets/op.hpp"
#include "codelets/starpu/codelets.hpp"
#include "engine/simulated_models.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace corun {
namespace {

using codelets::OpCall;
using codelets::OpKind;
using engine::UnmodelledOp;
using sched::TeamWidths;

OpCall call(OpKind kind, std::vector<Shape> shapes) {
  OpCall c;
  c.kind = kind;
  c.shapes = std::move(shapes);
  c.modes.assign(c.shapes.size(), codelets::Access::read);
  return c;
}

detail::Node node(const std::string& name, OpCall c) {
  detail::Node n;
  n.name = name;
  n.call = std::move(c);
  return n;
}

// Models by (kind, footprint, width); anything else predicts 0, as StarPU does under SimGrid.
struct FakeModels {
  std::map<std::tuple<int, uint32_t, int>, double> us;
  void add(const OpCall& c, std::vector<int> widths) {
    for (int w : widths) us[{static_cast<int>(c.kind), codelets::footprint(c), w}] = 100.0 / w;
  }
  engine::PredictUs predict() const {
    return [this](const OpCall& c, int w) {
      auto it = us.find({static_cast<int>(c.kind), codelets::footprint(c), w});
      return it == us.end() ? 0.0 : it->second;
    };
  }
};

const OpCall kModelled = call(OpKind::matmul, {{64, 32}, {32, 16}, {64, 16}});
const OpCall kWidthOneOnly = call(OpKind::matmul, {{64, 48}, {48, 16}, {64, 16}});
const OpCall kNever = call(OpKind::add, {{64, 16}, {16}, {64, 16}});

FakeModels models_of_the_graph() {
  FakeModels m;
  m.add(kModelled, {1, 2, 3, 4});
  m.add(kWidthOneOnly, {1});
  return m;
}

std::vector<detail::Node> graph() {
  return {node("mm0", kModelled), node("mm1", kWidthOneOnly), node("bias0", kNever), node("bias1", kNever)};
}

TEST(SimulatedModels, WidthsAPolicyMayGive) {
  EXPECT_EQ(engine::widths_to_model(TeamWidths::one, 64, 16), std::vector<int>{1});
  EXPECT_EQ(engine::widths_to_model(TeamWidths::any, 64, 4), (std::vector<int>{1, 2, 3, 4}));
  EXPECT_EQ(engine::widths_to_model(TeamWidths::layout, 2, 16), (std::vector<int>{1, 2}));
  EXPECT_EQ(engine::widths_to_model(TeamWidths::any, 1, 16), std::vector<int>{1});
}

TEST(SimulatedModels, SingleWorkerPoliciesNeedWidthOneOnly) {
  const FakeModels m = models_of_the_graph();
  const std::vector<UnmodelledOp> missing = engine::unmodelled_ops(graph(), TeamWidths::one, 4, m.predict());
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(missing[0].op, "add");
  EXPECT_EQ(missing[0].footprint, codelets::footprint(kNever));
  EXPECT_EQ(missing[0].shapes, "[64, 16] [16] [64, 16]");
  EXPECT_EQ(missing[0].widths, std::vector<int>{1});
  EXPECT_EQ(missing[0].node, "bias0");
  EXPECT_EQ(missing[0].nodes, 2) << "two nodes share the footprint: reported once";
}

TEST(SimulatedModels, TeamPoliciesNeedEveryWidth) {
  const FakeModels m = models_of_the_graph();
  const std::vector<UnmodelledOp> missing = engine::unmodelled_ops(graph(), TeamWidths::any, 4, m.predict());
  ASSERT_EQ(missing.size(), 2u);
  EXPECT_EQ(missing[0].node, "mm1");
  EXPECT_EQ(missing[0].widths, (std::vector<int>{2, 3, 4}));
  EXPECT_EQ(missing[1].node, "bias0");
  EXPECT_EQ(missing[1].widths, (std::vector<int>{1, 2, 3, 4}));
}

TEST(SimulatedModels, NothingMissingNothingReported) {
  FakeModels m = models_of_the_graph();
  m.add(kWidthOneOnly, {2, 3, 4});
  m.add(kNever, {1, 2, 3, 4});
  EXPECT_TRUE(engine::unmodelled_ops(graph(), TeamWidths::any, 4, m.predict()).empty());
  // NaN (a native build's answer for a missing entry) counts as missing too.
  const engine::PredictUs nan = [](const OpCall&, int) { return std::nan(""); };
  EXPECT_EQ(engine::unmodelled_ops(graph(), TeamWidths::one, 4, nan).size(), 3u);
}

// Under SimGrid a group is timed from its members' width-1 models (codelets.cpp, group_cost): those are checked.
TEST(SimulatedModels, AGroupNeedsItsMembersAtWidthOne) {
  OpCall group = call(OpKind::group, {{64, 16}, {64, 16}});
  group.members = {kWidthOneOnly, kNever};
  const FakeModels m = models_of_the_graph();
  const std::vector<UnmodelledOp> missing =
      engine::unmodelled_ops({node("group0", group)}, TeamWidths::any, 4, m.predict());
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(missing[0].op, "add");
  EXPECT_EQ(missing[0].widths, std::vector<int>{1});
  EXPECT_EQ(missing[0].node, "group0");
}

TEST(SimulatedModels, WidthsReadAsRanges) {
  EXPECT_EQ(engine::describe_widths({1}), "1");
  EXPECT_EQ(engine::describe_widths({1, 2, 3, 5, 7, 8}), "1-3, 5, 7-8");
}

TEST(SimulatedModels, TheMessageNamesOpFootprintShapesAndTheCalibration) {
  const FakeModels m = models_of_the_graph();
  const std::vector<UnmodelledOp> missing = engine::unmodelled_ops(graph(), TeamWidths::any, 4, m.predict());
  const std::string msg = engine::unmodelled_ops_message(missing, "corun", "/models", "corun-sim-16c-1numa-optimistic");
  char fp[16];
  std::snprintf(fp, sizeof fp, "%08x", codelets::footprint(kNever));
  for (const std::string& want :
       {std::string("2 op footprint(s)"), std::string("the corun policy"),
        "add (model corun_add) footprint " + std::string(fp) + ", shapes [64, 16] [16] [64, 16]: no model at width 1-4",
        std::string("(node 'bias0' and 1 more)"), std::string("matmul (model corun_matmul)"),
        std::string("no model at width 2-4 (node 'mm1')"), std::string("/models"),
        std::string("corun-sim-16c-1numa-optimistic"), std::string("STARPU_CALIBRATE=1"),
        std::string("at least 12 iterations"), std::string("docs/simulation.md")})
    EXPECT_NE(msg.find(want), std::string::npos) << "missing '" << want << "' in:\n" << msg;
}

TEST(SimulatedModels, ALongListIsCut) {
  std::vector<detail::Node> nodes;
  for (int i = 0; i < static_cast<int>(engine::kListed) + 3; ++i)
    nodes.push_back(node("n" + std::to_string(i), call(OpKind::add, {{i + 1, 4}, {4}, {i + 1, 4}})));
  const FakeModels none;
  const std::vector<UnmodelledOp> missing = engine::unmodelled_ops(nodes, TeamWidths::one, 2, none.predict());
  ASSERT_EQ(missing.size(), engine::kListed + 3);
  const std::string msg = engine::unmodelled_ops_message(missing, "lws", "", "");
  EXPECT_NE(msg.find("... and 3 more"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("node 'n" + std::to_string(engine::kListed) + "'"), std::string::npos) << msg;
}

}  // namespace
}  // namespace corun
