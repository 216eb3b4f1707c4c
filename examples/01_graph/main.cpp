// Example 01: a graph of three ops, y = relu(x w + b), run once and checked against a plain loop.
//
//   cmake -S examples/01_graph -B build-ex01 -DCMAKE_PREFIX_PATH=<corun prefix> && cmake --build build-ex01
//   ./build-ex01/example_01_graph
#include <corun/engine.hpp>
#include <corun/error.hpp>
#include <corun/graph.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

int main() {
  try {
    corun::Graph g;
    corun::Tensor x = g.input("x", {2, 3});
    corun::Tensor w = g.param("w", {3, 2});
    corun::Tensor b = g.param("b", {2});
    corun::Tensor y = g.relu(g.add(g.matmul(x, w), b), "y");  // matmul, bias add, relu: three tasks

    const std::vector<float> xs = {1, 2, 3, -1, 0, 1};
    const std::vector<float> ws = {0.5f, -1, 0.25f, 0, -0.5f, 1};
    const std::vector<float> bs = {0.1f, -0.2f};
    // Before the graph is bound to an engine, its buffers are written directly.
    std::copy(xs.begin(), xs.end(), g.data(x));
    std::copy(ws.begin(), ws.end(), g.data(w));
    std::copy(bs.begin(), bs.end(), g.data(b));

    corun::Engine engine;  // reads CORUN_SCHED etc. and prints the resolved configuration on stderr
    const corun::RunStats stats = engine.run(g);
    const std::vector<float> out = engine.read(g, y);

    double max_err = 0.0;
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j) {
        float ref = bs[static_cast<size_t>(j)];
        for (int k = 0; k < 3; ++k) ref += xs[static_cast<size_t>(i * 3 + k)] * ws[static_cast<size_t>(k * 2 + j)];
        ref = std::max(ref, 0.0f);
        const float got = out[static_cast<size_t>(i * 2 + j)];
        std::printf("y[%d][%d] = %g (expected %g)\n", i, j, static_cast<double>(got), static_cast<double>(ref));
        max_err = std::max(max_err, static_cast<double>(std::fabs(got - ref)));
      }
    std::printf("%d tasks, %d workers, max error %g\n", stats.tasks, engine.info().workers, max_err);
    engine.release(g);
    if (max_err > 1e-5) {
      std::printf("FAILED\n");
      return 1;
    }
    std::printf("OK\n");
    return 0;
  } catch (const corun::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
