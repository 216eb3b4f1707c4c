// tests/unit/lstm_inline_training.hpp — LSTM training steps run inline (no StarPU) on the model's own
// SequenceTask batches, for the unit tests that compare two graphs of one model (input projections,
// stacked weight gradients).
#pragma once

#include <corun/inline.hpp>
#include <corun/models/lstm.hpp>

#include <algorithm>
#include <cstdint>
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

}  // namespace corun::test
