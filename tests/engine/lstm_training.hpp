// tests/engine/lstm_training.hpp — one LSTM training run under a given engine configuration, for the
// tests that compare policies (include after engine_test_util.hpp).
#pragma once

#include <corun/engine.hpp>
#include <corun/models/lstm.hpp>

#include <vector>

namespace corun::test {

struct LstmRun {
  std::vector<float> losses;               ///< per step
  std::vector<std::vector<float>> params;  ///< in Graph::params() order, after the last step
  EngineInfo info;
  RunStats last;                           ///< the last step's statistics
  std::vector<RunStats> steps;             ///< every step's statistics
  std::vector<TraceTask> trace;            ///< the last step's timeline when `trace_last`
};

/// `iters` training steps of a fresh model on batches 0..iters-1 under `conf`. The configuration names
/// the policy explicitly, so a STARPU_SCHED from the caller's environment (which would conflict) is
/// removed for the run.
inline LstmRun train_lstm(const Config& conf, const models::LstmConfig& cfg, int iters, bool trace_last = false) {
  ScopedEnv no_starpu_sched("STARPU_SCHED", nullptr);
  models::Lstm m(cfg, /*training=*/true);
  m.init_params();
  const models::SequenceTask task(cfg);
  Engine eng(conf);
  LstmRun r;
  std::vector<std::vector<float>> xs;
  std::vector<float> targets;
  for (int it = 0; it < iters; ++it) {
    if (trace_last && it == iters - 1) eng.set_tracing(true);
    task.make_batch(static_cast<uint64_t>(it), xs, targets);
    for (int t = 0; t < cfg.seq; ++t) eng.write(m.graph, m.x[static_cast<size_t>(t)], xs[static_cast<size_t>(t)]);
    eng.write(m.graph, m.targets, targets);
    r.last = eng.run(m.graph);
    r.steps.push_back(r.last);
    r.losses.push_back(eng.read(m.graph, m.loss)[0]);
  }
  for (Tensor p : m.graph.params()) r.params.push_back(eng.read(m.graph, p));
  r.trace = eng.trace();
  r.info = eng.info();
  eng.release(m.graph);
  return r;
}

}  // namespace corun::test
