// The transposed copies of backward() (BackwardOptions::transpose_reused_weight_uses): a weight read by
// many forward products (an RNN weight, once per time step) is transposed once, and its products' input
// gradients dA = dC W^T read that copy as untransposed products. Same losses, gradients and SGD updates as
// products with W transposed, within float rounding; gradients that match finite differences. (The
// transpose and the products are ordinary ops split by their outputs: the op harness checks their bits
// across widths.) Graphs run inline (no StarPU), so this is a unit test.
#include <corun/error.hpp>
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

using codelets::OpKind;

// 2 layers of 7 steps: each layer's weight is read by 7 products.
models::LstmConfig tiny_lstm(int64_t min_uses) {
  models::LstmConfig c = models::lstm_config("small");
  c.layers = 2, c.batch = 3, c.seq = 7, c.hidden = 6, c.input = 6, c.classes = 4;
  c.optimizer.transpose_reused_weight_uses = min_uses;
  return c;
}

struct Reads {
  int transposes = 0;        // transpose nodes of the backward
  int through_copy = 0;      // gradient products reading a transposed copy, untransposed
  int b_transposed = 0;      // gradient products with B transposed
};

Reads reads(const Graph& g) {
  const auto& impl = g.impl();
  Reads r;
  for (const auto& n : impl.nodes) {
    if (!n.is_gradient) continue;
    if (n.call.kind == OpKind::transpose) ++r.transposes;
    if (n.call.kind != OpKind::matmul) continue;
    const std::string& b = impl.values[static_cast<size_t>(n.buffers[1])].name;
    if (n.call.i[1] != 0) ++r.b_transposed;
    if (n.call.i[1] == 0 && b.size() > 2 && b.compare(b.size() - 2, 2, ".T") == 0) ++r.through_copy;
  }
  return r;
}

TEST(TransposedReusedWeights, OneCopyPerWeightReadByEveryInputGradient) {
  models::Lstm on(tiny_lstm(7)), off(tiny_lstm(0)), fewer_uses(tiny_lstm(8));
  const Reads a = reads(on.graph), b = reads(off.graph), c = reads(fewer_uses.graph);
  EXPECT_EQ(a.transposes, 2) << "one per layer weight (w_out is read once)";
  // Every step but layer 0's first reads its weight for dxh (layer 0, step 0: x and h0 need no gradient).
  EXPECT_EQ(a.through_copy, 2 * 7 - 1);
  EXPECT_EQ(a.b_transposed, 1) << "w_out's input gradient: w_out is read once";
  EXPECT_EQ(b.transposes, 0);
  EXPECT_EQ(b.through_copy, 0);
  EXPECT_EQ(b.b_transposed, 2 * 7 - 1 + 1);
  EXPECT_EQ(c.transposes, 0) << "7 uses are fewer than 8";
  EXPECT_EQ(c.b_transposed, b.b_transposed);
}

TEST(TransposedReusedWeights, SameLossesGradientsAndUpdatesWithinRounding) {
  models::Lstm on(tiny_lstm(2)), off(tiny_lstm(0));
  test::expect_within_rounding(test::train_lstm_inline(on, 4, true), test::train_lstm_inline(off, 4, true), 1e-5);
}

TEST(TransposedReusedWeights, GradientsMatchFiniteDifferences) {
  const models::LstmConfig config = tiny_lstm(2);
  const models::SequenceTask task(config);
  // w0's and w1's gradients (w1's input gradients flow through the copy into layer 0).
  for (const std::string w : {"w0", "w1"}) {
    models::Lstm probe(config);
    test::lstm_loss_at(probe, task, w, 0, 0.0f);
    ASSERT_EQ(reads(probe.graph).transposes, 2);
    const Tensor dw = probe.graph.grad(probe.graph.find(w));
    for (int e : {0, 13, 41, 97}) {
      models::Lstm plus(config), minus(config);
      const double eps = 1e-2;
      const double fd = (test::lstm_loss_at(plus, task, w, e, eps) - test::lstm_loss_at(minus, task, w, e, -eps)) /
                        (2 * eps);
      EXPECT_NEAR(probe.graph.data(dw)[e], fd, 2e-3 + 1e-2 * std::fabs(fd)) << w << " element " << e;
    }
  }
}

TEST(TransposedReusedWeights, NegativeUsesAreRefused) {
  Graph g;
  const Tensor w = g.param("w", {2, 2});
  const Tensor loss = g.reduce_sum(g.matmul(g.input("x", {1, 2}), w));
  BackwardOptions o;
  o.transpose_reused_weight_uses = -1;
  try {
    g.backward(loss, o);
    ADD_FAILURE() << "no error for transpose_reused_weight_uses = -1";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("transpose_reused_weight_uses must be >= 0"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace corun
