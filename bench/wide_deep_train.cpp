// wide_deep_train — wide&deep training steps for bench/zoo_models.sh (batch 256 by default): the
// parallel-op pass by CORUN_PARALLEL_OPS as in `corun infer`, the policy from CORUN_SCHED.
//   wide_deep_train [ITERS [BATCH]]
// Prints one line: median ms/iter (first iteration excluded), tasks/iter, first and last loss.
#include <corun/engine.hpp>
#include <corun/models/wide_deep.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  const int iters = argc > 1 ? std::atoi(argv[1]) : 20;
  corun::models::WideDeepConfig cfg;
  if (argc > 2) cfg.batch = std::atoi(argv[2]);
  if (iters < 2 || cfg.batch < 1) {
    std::fprintf(stderr, "usage: wide_deep_train [ITERS >= 2 [BATCH >= 1]]\n");
    return 2;
  }
  try {
    corun::models::WideDeep m(cfg);
    m.init_params();
    const corun::models::TabularTask task(cfg);
    corun::Config config = corun::Config::from_env();
    config.parallel_ops_by_default = true;  // as `corun infer`: the engine's plan step groups at the first run
    corun::Engine eng(config);
    std::vector<float> cats, dense, labels;
    std::vector<double> ms;
    float first = 0.0f, last = 0.0f;
    int tasks = 0;
    for (int it = 0; it < iters; ++it) {
      task.make_batch(static_cast<uint64_t>(it), cats, dense, labels);
      eng.write(m.graph, m.categories, cats);
      eng.write(m.graph, m.dense, dense);
      eng.write(m.graph, m.labels, labels);
      const corun::RunStats s = eng.run(m.graph);
      if (it > 0) ms.push_back(s.wall_ms);
      tasks = s.tasks;
      last = eng.read(m.graph, m.loss)[0];
      if (it == 0) first = last;
    }
    eng.release(m.graph);
    std::sort(ms.begin(), ms.end());
    std::printf("%.3f %d %.4f %.4f\n", ms[ms.size() / 2], tasks, first, last);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
