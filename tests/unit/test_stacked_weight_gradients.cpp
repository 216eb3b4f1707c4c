// The weight-gradient stacking of backward() (BackwardOptions::stack_weight_gradient_rows): an RNN weight's
// per-step gradient products made as products over stacked steps give the same losses, gradients and SGD
// updates as one product per step within float rounding, and gradients that match finite differences.
// (The stacked product is a plain matmul, split by C at every width: the op harness checks its bits across
// widths.) Graphs run inline (no StarPU), so this is a unit test.
#include <corun/engine.hpp>
#include <corun/inline.hpp>
#include <corun/models/lstm.hpp>

#include "graphs/graph_impl.hpp"
#include "lstm_inline_training.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace corun {
namespace {

models::LstmConfig tiny_lstm(int64_t stack_rows) {
  models::LstmConfig c = models::lstm_config("small");
  c.layers = 2, c.batch = 3, c.seq = 7, c.hidden = 6, c.input = 6, c.classes = 4;
  c.optimizer.stack_weight_gradient_rows = stack_rows;  // batch 3: groups of 2 steps at 6 rows
  return c;
}

int count_nodes(const Graph& g, const std::string& prefix) {
  int n = 0;
  for (const auto& node : g.impl().nodes) n += node.name.rfind(prefix, 0) == 0 ? 1 : 0;
  return n;
}

TEST(StackedWeightGradients, SameLossesGradientsAndUpdatesWithinRounding) {
  models::Lstm off(tiny_lstm(0)), on(tiny_lstm(6));
  // Per layer 7 steps: groups of 2 steps (3 of them, each two concats) and a lone last step.
  EXPECT_EQ(count_nodes(on.graph, "grad_stack."), 2 * 3 * 2);
  EXPECT_EQ(count_nodes(off.graph, "grad_stack."), 0);
  EXPECT_EQ(count_nodes(off.graph, "grad_mm.w0.") - count_nodes(on.graph, "grad_mm.w0."), 3);
  // Losses, then each parameter after the steps (every update compared) and its last gradient.
  test::expect_within_rounding(test::train_lstm_inline(on, 4, true), test::train_lstm_inline(off, 4, true), 1e-5);
}

TEST(StackedWeightGradients, GradientsMatchFiniteDifferences) {
  const models::LstmConfig config = tiny_lstm(6);
  const models::SequenceTask task(config);
  models::Lstm probe(config);
  test::lstm_loss_at(probe, task, "w0", 0, 0.0f);
  ASSERT_GT(static_cast<int>(probe.graph.impl().nodes.size()), 0);
  const Tensor dw = probe.graph.grad(probe.graph.find("w0"));
  for (int e : {0, 13, 41, 97}) {
    models::Lstm plus(config), minus(config);
    const double eps = 1e-2;
    const double fd = (test::lstm_loss_at(plus, task, "w0", e, eps) - test::lstm_loss_at(minus, task, "w0", e, -eps)) /
                      (2 * eps);
    EXPECT_NEAR(probe.graph.data(dw)[e], fd, 2e-3 + 1e-2 * std::fabs(fd)) << "w0 element " << e;
  }
}

}  // namespace
}  // namespace corun
