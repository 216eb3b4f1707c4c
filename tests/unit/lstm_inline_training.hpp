// tests/unit/lstm_inline_training.hpp — LSTM training steps run inline (no StarPU) on the model's own
// SequenceTask batches, for the unit tests that compare two graphs of one model (input projections,
// stacked weight gradients, transposed weights) and check a graph's gradients by finite differences.
#pragma once

#include <corun/inline.hpp>
#include <corun/models/lstm.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace corun::test {

/// Writes batch `step` of `task` into the model's inputs and targets.
inline void feed_lstm_batch(models::Lstm& m, const models::SequenceTask& task, uint64_t step) {
  std::vector<std::vector<float>> xs;
  std::vector<float> targets;
  task.make_batch(step, xs, targets);
  for (size_t t = 0; t < xs.size(); ++t) std::copy(xs[t].begin(), xs[t].end(), m.graph.data(m.x[t]));
  std::copy(targets.begin(), targets.end(), m.graph.data(m.targets));
}

/// From freshly initialised parameters, `steps` training steps on batches 0..steps-1: each step's loss
/// (one tensor of one value each), then every parameter after the last step (Graph::params() order), each
/// followed by its last gradient when `with_grads`.
inline std::vector<std::vector<float>> train_lstm_inline(models::Lstm& m, int steps, bool with_grads = false) {
  const models::SequenceTask task(m.config);
  m.init_params();
  InlineRunner runner(m.graph);
  std::vector<std::vector<float>> out;
  for (int s = 0; s < steps; ++s) {
    feed_lstm_batch(m, task, static_cast<uint64_t>(s));
    runner.run();
    out.push_back({m.graph.data(m.loss)[0]});
  }
  for (Tensor p : m.graph.params()) {
    out.emplace_back(m.graph.data(p), m.graph.data(p) + p.shape().numel());
    if (!with_grads) continue;
    const Tensor gp = m.graph.grad(p);
    out.emplace_back(m.graph.data(gp), m.graph.data(gp) + gp.shape().numel());
  }
  return out;
}

/// Expects every value of `a` within rel (1 + |b|) of the same value of `b` (two train_lstm_inline results).
inline void expect_within_rounding(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b,
                                   double rel) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].size(), b[i].size());
    for (size_t e = 0; e < a[i].size(); ++e)
      EXPECT_NEAR(a[i][e], b[i][e], rel * (1.0 + std::fabs(b[i][e]))) << "tensor " << i << " element " << e;
  }
}

/// The loss of one forward+backward on batch 0 of `task` at freshly initialised parameters, element `e` of
/// parameter `w` moved by `delta`. The graph's SGD update comes after the loss, so it is the loss at those
/// parameters (a finite-difference probe; the run also leaves the gradients at them in the graph).
inline double lstm_loss_at(models::Lstm& m, const models::SequenceTask& task, const std::string& w, int e,
                           float delta) {
  m.init_params();
  m.graph.data(m.graph.find(w))[e] += delta;
  feed_lstm_batch(m, task, 0);
  InlineRunner(m.graph).run();
  return static_cast<double>(m.graph.data(m.loss)[0]);
}

}  // namespace corun::test
