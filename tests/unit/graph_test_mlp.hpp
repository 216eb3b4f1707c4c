// tests/unit/graph_test_mlp.hpp — a small two-layer graph shared by the graph unit tests.
#pragma once

#include <corun/graph.hpp>

namespace corun::test {

// loss = mean xent(relu(x W + b) V + c, t): two layers, four parameters.
struct Mlp {
  corun::Graph g;
  corun::Tensor x, t, w, b, v, c, h, logits, loss;
  Mlp() {
    x = g.input("x", {8, 5});
    t = g.input("t", {8, 3});
    w = g.param("w", {5, 6});
    b = g.param("b", {6});
    v = g.param("v", {6, 3});
    c = g.param("c", {3});
    h = g.relu(g.add(g.matmul(x, w, false, false, "xw"), b, "xwb"), "h");
    logits = g.add(g.matmul(h, v, false, false, "hv"), c, "logits");
    loss = g.softmax_xent(logits, t, "loss");
  }
};

}  // namespace corun::test
