// synthetic_trace OUT.json [layers seq workers iterations seed] — writes the LSTM-like trace of
// tests/common/synthetic_trace.hpp, for looking at `corun plot-trace` output before the engine records
// real traces. Not a test; built with the CLI tests.
#include "common/synthetic_trace.hpp"

#include <corun/error.hpp>

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  if (argc < 2 || argc > 7) {
    std::fprintf(stderr, "usage: synthetic_trace OUT.json [layers seq workers iterations seed]  (default 2 8 2 1 1)\n");
    return 2;
  }
  corun::testing::SyntheticTraceConfig cfg;
  int* fields[] = {&cfg.layers, &cfg.seq, &cfg.workers, &cfg.iterations};
  for (int a = 2; a < argc && a < 6; ++a) {
    *fields[a - 2] = std::atoi(argv[a]);
    if (*fields[a - 2] <= 0) {
      std::fprintf(stderr, "synthetic_trace: argument %d must be a positive integer, got '%s'\n", a - 1, argv[a]);
      return 2;
    }
  }
  if (argc == 7) cfg.seed = std::strtoull(argv[6], nullptr, 10);
  try {
    const auto t = corun::testing::synthetic_lstm_trace(cfg);
    corun::write_chrome_trace(argv[1], t.meta, t.tasks);
    std::printf("wrote %s: %zu tasks on %d workers, makespan %.3f ms\n", argv[1], t.tasks.size(), t.meta.workers,
                t.meta.makespan_us / 1000);
  } catch (const corun::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
