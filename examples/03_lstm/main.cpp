// Example 03: corun's stacked LSTM (corun/models/lstm.hpp) trained for a few iterations on its synthetic
// sequence task, at a reduced size so it runs in a second.
//
//   ./example_03_lstm [iterations]   prints the loss per iteration; exits 1 unless the loss fell
#include <corun/engine.hpp>
#include <corun/error.hpp>
#include <corun/models/lstm.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  const int iters = argc > 1 ? std::atoi(argv[1]) : 10;
  if (iters < 2) {
    std::fprintf(stderr, "usage: example_03_lstm [iterations >= 2]\n");
    return 2;
  }
  try {
    corun::models::LstmConfig cfg = corun::models::lstm_config("small");
    cfg.layers = 2;
    cfg.seq = 6;
    cfg.hidden = cfg.input = 32;
    cfg.batch = 16;
    corun::models::Lstm model(cfg);            // forward, backward and SGD updates: one training step
    corun::models::SequenceTask task(cfg);     // batch k is the same for every run with the same seed
    model.init_params();                       // before the graph is bound to the engine

    corun::Engine engine;
    std::vector<std::vector<float>> xs;
    std::vector<float> targets;
    double first = 0.0, last = 0.0;
    for (int it = 0; it < iters; ++it) {
      task.make_batch(static_cast<uint64_t>(it), xs, targets);
      for (size_t s = 0; s < model.x.size(); ++s) engine.write(model.graph, model.x[s], xs[s]);
      engine.write(model.graph, model.targets, targets);
      const corun::RunStats st = engine.run(model.graph);
      last = engine.read(model.graph, model.loss)[0];
      if (it == 0) first = last;
      std::printf("iteration %d loss %.6f (%d tasks, %.2f ms)\n", it, last, st.tasks, st.wall_ms);
    }
    std::printf("policy %s, %d workers\n", engine.info().policy.c_str(), engine.info().workers);
    std::printf("first loss %.6f final loss %.6f\n", first, last);
    engine.release(model.graph);
    if (!std::isfinite(last) || !(last < first)) {
      std::printf("FAILED: the loss did not fall\n");
      return 1;
    }
    std::printf("OK\n");
    return 0;
  } catch (const corun::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
