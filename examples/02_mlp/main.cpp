// Example 02: a two-layer perceptron trained with SGD for a few steps on a synthetic classification task.
//
//   ./example_02_mlp [steps]        prints the loss of every step; exits 1 unless the loss fell
//
// The graph holds one training step (forward, backward, SGD update); each Engine::run is one step.
#include <corun/engine.hpp>
#include <corun/error.hpp>
#include <corun/graph.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

namespace {

constexpr int kBatch = 32, kIn = 16, kHidden = 32, kClasses = 4;

// Each class has a fixed random pattern; a sample is its class's pattern plus unit noise.
struct Data {
  std::vector<float> patterns;  // [kClasses, kIn]
  std::mt19937 rng{7};

  Data() {
    std::normal_distribution<float> n(0.0f, 1.0f);
    for (int i = 0; i < kClasses * kIn; ++i) patterns.push_back(n(rng));
  }
  void batch(std::vector<float>& x, std::vector<float>& onehot) {
    std::normal_distribution<float> n(0.0f, 1.0f);
    std::uniform_int_distribution<int> cls(0, kClasses - 1);
    x.assign(kBatch * kIn, 0.0f);
    onehot.assign(kBatch * kClasses, 0.0f);
    for (int r = 0; r < kBatch; ++r) {
      const int c = cls(rng);
      onehot[static_cast<size_t>(r * kClasses + c)] = 1.0f;
      for (int i = 0; i < kIn; ++i)
        x[static_cast<size_t>(r * kIn + i)] = patterns[static_cast<size_t>(c * kIn + i)] + n(rng);
    }
  }
};

void init_uniform(corun::Graph& g, corun::Tensor t, float scale, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-scale, scale);
  float* p = g.data(t);
  for (int64_t i = 0; i < t.shape().numel(); ++i) p[i] = u(rng);
}

}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 20;
  if (steps < 2) {
    std::fprintf(stderr, "usage: example_02_mlp [steps >= 2]\n");
    return 2;
  }
  try {
    corun::Graph g;
    corun::Tensor x = g.input("x", {kBatch, kIn});
    corun::Tensor t = g.input("t", {kBatch, kClasses});
    corun::Tensor w1 = g.param("w1", {kIn, kHidden});
    corun::Tensor b1 = g.param("b1", {kHidden});
    corun::Tensor w2 = g.param("w2", {kHidden, kClasses});
    corun::Tensor b2 = g.param("b2", {kClasses});
    corun::Tensor h = g.relu(g.add(g.matmul(x, w1), b1), "h");
    corun::Tensor loss = g.softmax_xent(g.add(g.matmul(h, w2), b2), t, "loss");
    corun::BackwardOptions opt;
    opt.learning_rate = 0.2f;
    g.backward(loss, opt);  // gradient nodes and one SGD update per parameter

    std::mt19937 rng(1);
    init_uniform(g, w1, 1.0f / std::sqrt(static_cast<float>(kIn)), rng);
    init_uniform(g, w2, 1.0f / std::sqrt(static_cast<float>(kHidden)), rng);

    corun::Engine engine;
    Data data;
    std::vector<float> xb, tb;
    double first = 0.0, last = 0.0;
    for (int s = 0; s < steps; ++s) {
      data.batch(xb, tb);
      engine.write(g, x, xb);  // the graph is bound to the engine from here on: write/read through it
      engine.write(g, t, tb);
      engine.run(g);
      last = engine.read(g, loss)[0];
      if (s == 0) first = last;
      std::printf("step %d loss %.6f\n", s, last);
    }
    std::printf("%d nodes per step, %d workers\n", g.num_nodes(), engine.info().workers);
    std::printf("first loss %.6f final loss %.6f\n", first, last);
    engine.release(g);
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
