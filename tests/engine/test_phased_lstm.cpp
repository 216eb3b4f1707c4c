// The Phased LSTM on StarPU: it learns the synthetic sequence task, and a gate that stays closed (no
// leak) keeps the initial zero state, so the logits are exactly the output bias.
#include "engine_test_util.hpp"

#include <corun/engine.hpp>
#include <corun/models/lstm.hpp>

#include <gtest/gtest.h>

#include <numeric>

namespace corun {
namespace {

using test::test_config;

// One layer: deeper phased stacks learn too, but sit on a plateau for ~100+ steps first (docs/models.md).
models::LstmConfig tiny() {
  models::LstmConfig cfg = models::lstm_config("small");
  cfg.phased = true;
  cfg.layers = 1, cfg.batch = 16, cfg.seq = 6, cfg.hidden = cfg.input = 32;
  return cfg;
}

void feed(Engine& eng, models::Lstm& m, const models::SequenceTask& task, uint64_t k) {
  std::vector<std::vector<float>> xs, times;
  std::vector<float> targets;
  task.make_batch(k, xs, targets);
  task.make_times(k, times);
  for (size_t t = 0; t < m.x.size(); ++t) {
    eng.write(m.graph, m.x[t], xs[t]);
    eng.write(m.graph, m.times[t], times[t]);
  }
  eng.write(m.graph, m.targets, targets);
}

TEST(PhasedLstm, TrainingLowersTheLoss) {
  const models::LstmConfig cfg = tiny();
  models::Lstm m(cfg);
  m.init_params();
  ASSERT_EQ(m.times.size(), static_cast<size_t>(cfg.seq));
  const models::SequenceTask task(cfg);
  Engine eng(test_config());
  std::vector<float> losses;
  for (int it = 0; it < 80; ++it) {
    feed(eng, m, task, static_cast<uint64_t>(it));
    eng.run(m.graph);
    losses.push_back(eng.read(m.graph, m.loss)[0]);
  }
  eng.release(m.graph);
  const double first = std::accumulate(losses.begin(), losses.begin() + 5, 0.0) / 5;
  const double last = std::accumulate(losses.end() - 5, losses.end(), 0.0) / 5;
  std::printf("phased LSTM loss: first 5 steps %.4f, last 5 steps %.4f\n", first, last);
  EXPECT_LT(last, 0.6 * first);
}

TEST(PhasedLstm, ClosedGateWithoutLeakKeepsTheZeroState) {
  models::LstmConfig cfg = tiny();
  cfg.leak = 0.0f;
  models::Lstm m(cfg, /*training=*/false);
  m.init_params();
  for (int l = 0; l < cfg.layers; ++l) {  // period 1, shift 0: phase = frac(t) = 0.75 > r_on for every step
    std::fill_n(m.graph.data(m.graph.find("tau" + std::to_string(l))), cfg.hidden, 1.0f);
    std::fill_n(m.graph.data(m.graph.find("shift" + std::to_string(l))), cfg.hidden, 0.0f);
  }
  ASSERT_LT(cfg.r_on, 0.75f);
  const models::SequenceTask task(cfg);
  Engine eng(test_config());
  feed(eng, m, task, 0);
  for (int t = 0; t < cfg.seq; ++t)
    eng.write(m.graph, m.times[static_cast<size_t>(t)], std::vector<float>(static_cast<size_t>(cfg.batch), t + 0.75f));
  eng.run(m.graph);
  const std::vector<float> logits = eng.read(m.graph, m.logits);
  const std::vector<float> bias = eng.read(m.graph, m.graph.find("b_out"));
  eng.release(m.graph);
  for (size_t e = 0; e < logits.size(); ++e) ASSERT_EQ(logits[e], bias[e % bias.size()]) << "element " << e;
}

}  // namespace
}  // namespace corun
