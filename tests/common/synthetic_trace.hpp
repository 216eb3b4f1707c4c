// tests/common/synthetic_trace.hpp — a realistic execution trace without running anything: the task graph
// of an LSTM training step (forward cells, backward cells, SGD updates) list-scheduled critical-path-first
// on `workers` simulated cores, with matmuls widened to 2-core teams when nothing else is ready, jittered
// durations and a little per-task overhead. For tests of the trace format and `corun plot-trace`, and for
// looking at a Gantt chart before the engine records real ones (tests/cli/synthetic_trace.cpp).
#pragma once

#include "trace/trace.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <queue>
#include <random>
#include <string>
#include <vector>

namespace corun::testing {

struct SyntheticTraceConfig {
  int layers = 2;
  int seq = 8;
  int workers = 2;
  int iterations = 1;
  uint64_t seed = 1;
};

struct SyntheticTrace {
  TraceMeta meta;
  std::vector<TraceTask> tasks;
};

namespace detail {

struct SynNode {
  std::string op, name;
  double us = 0;  // nominal single-core duration
  std::vector<int> succ;
  int preds = 0;
  double level = 0;
  bool critical = false;
};

class SynGraph {
 public:
  int add(const std::string& op, const std::string& name, double us, std::initializer_list<int> deps) {
    nodes.push_back(SynNode{op, name, us, {}, 0, 0, false});
    const int id = static_cast<int>(nodes.size()) - 1;
    for (int d : deps)
      if (d >= 0) dep(d, id);
    return id;
  }
  void dep(int from, int to) {
    nodes[static_cast<size_t>(from)].succ.push_back(to);
    ++nodes[static_cast<size_t>(to)].preds;
  }
  std::vector<SynNode> nodes;
};

// One LSTM training step: forward cell (l, t) needs h of (l-1, t) and h, c of (l, t-1); backward runs the
// cells in reverse; each layer's weight gradient is one in-place accumulation chain over t.
inline SynGraph lstm_step(int layers, int seq) {
  SynGraph g;
  auto nm = [](int l, int t, const char* what) {
    return "l" + std::to_string(l) + ".t" + std::to_string(t) + "." + what;
  };
  std::vector<std::vector<int>> h(static_cast<size_t>(layers), std::vector<int>(static_cast<size_t>(seq), -1));
  auto c = h;
  for (int t = 0; t < seq; ++t)
    for (int l = 0; l < layers; ++l) {
      const int below = l > 0 ? h[l - 1][t] : -1, prev_h = t > 0 ? h[l][t - 1] : -1, prev_c = t > 0 ? c[l][t - 1] : -1;
      const int xh = g.add("concat", nm(l, t, "xh"), 3, {below, prev_h});
      const int mm = g.add("matmul", nm(l, t, "gates"), 70, {xh});
      const int b = g.add("add", nm(l, t, "gates_b"), 5, {mm});
      const int sp = g.add("split", nm(l, t, "gates_split"), 4, {b});
      const int i = g.add("sigmoid", nm(l, t, "i"), 4, {sp});
      const int f = g.add("sigmoid", nm(l, t, "f"), 4, {sp});
      const int o = g.add("sigmoid", nm(l, t, "o"), 4, {sp});
      const int gg = g.add("tanh", nm(l, t, "g"), 5, {sp});
      const int fc = g.add("mul", nm(l, t, "fc"), 3, {f, prev_c});
      const int ig = g.add("mul", nm(l, t, "ig"), 3, {i, gg});
      c[l][t] = g.add("add", nm(l, t, "c"), 3, {fc, ig});
      const int tc = g.add("tanh", nm(l, t, "tanh_c"), 5, {c[l][t]});
      h[l][t] = g.add("mul", nm(l, t, "h"), 3, {o, tc});
    }
  const int top = layers - 1, last = seq - 1;
  const int logits = g.add("matmul", "out.logits", 25, {h[top][last]});
  const int lb = g.add("add", "out.logits_b", 3, {logits});
  const int xent = g.add("softmax_xent", "loss.xent", 12, {lb});
  const int loss = g.add("sum", "loss", 2, {xent});
  const int dlogits = g.add("softmax_xent_grad", "loss.xent.grad", 10, {loss});
  const int dwout = g.add("matmul", "out.w.grad", 20, {dlogits});
  const int dh_top = g.add("matmul", "out.h.grad", 20, {dlogits});
  g.add("sgd", "w_out.sgd", 6, {dwout});
  g.add("sgd", "b_out.sgd", 2, {dlogits});

  std::vector<std::vector<int>> dh(static_cast<size_t>(layers), std::vector<int>(static_cast<size_t>(seq), -1));
  auto dc = dh, dx = dh;
  std::vector<int> dw_chain(static_cast<size_t>(layers), -1), db_chain(static_cast<size_t>(layers), -1);
  dh[top][last] = dh_top;
  for (int t = last; t >= 0; --t)
    for (int l = top; l >= 0; --l) {
      const int from_above = l < top ? dx[l + 1][t] : -1, from_next = t < last ? dh[l][t + 1] : -1;
      const int dh_in = l == top && t == last ? dh_top : g.add("add", nm(l, t, "dh"), 3, {from_above, from_next});
      const int dtc = g.add("mul", nm(l, t, "dtanh_c"), 3, {dh_in});
      const int dout = g.add("sigmoid_grad", nm(l, t, "do"), 4, {dh_in});
      const int dcc = g.add("tanh_grad", nm(l, t, "dc"), 5, {dtc, t < last ? dc[l][t + 1] : -1});
      const int di = g.add("sigmoid_grad", nm(l, t, "di"), 4, {dcc});
      const int df = g.add("sigmoid_grad", nm(l, t, "df"), 4, {dcc});
      const int dg = g.add("tanh_grad", nm(l, t, "dg"), 5, {dcc});
      dc[l][t] = g.add("mul", nm(l, t, "dc_prev"), 3, {dcc});
      const int dgates = g.add("concat", nm(l, t, "dgates"), 4, {di, df, dg, dout});
      dw_chain[l] = g.add("matmul", nm(l, t, "dw"), 65, {dgates, dw_chain[l]});  // C += xh^T dgates
      db_chain[l] = g.add("sum", nm(l, t, "db"), 4, {dgates, db_chain[l]});
      const int dxh = g.add("matmul", nm(l, t, "dxh"), 60, {dgates});
      dx[l][t] = g.add("split", nm(l, t, "dxh_split"), 3, {dxh});
      dh[l][t] = dx[l][t];
    }
  for (int l = 0; l < layers; ++l) {
    g.add("sgd", "w" + std::to_string(l) + ".sgd", 12, {dw_chain[l]});
    g.add("sgd", "b" + std::to_string(l) + ".sgd", 2, {db_chain[l]});
  }
  return g;
}

// Level = longest nominal time from the node to a sink, itself included (Graphi's critical-path rank);
// nodes are in topological order, so one reverse sweep suffices. Then marks one critical path.
inline double levels_and_critical_path(SynGraph& g) {
  double cp = 0;
  for (size_t i = g.nodes.size(); i-- > 0;) {
    double best = 0;
    for (int s : g.nodes[i].succ) best = std::max(best, g.nodes[static_cast<size_t>(s)].level);
    g.nodes[i].level = g.nodes[i].us + best;
    cp = std::max(cp, g.nodes[i].level);
  }
  int cur = -1;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (g.nodes[i].preds == 0 && (cur < 0 || g.nodes[i].level > g.nodes[static_cast<size_t>(cur)].level))
      cur = static_cast<int>(i);
  while (cur >= 0) {
    SynNode& n = g.nodes[static_cast<size_t>(cur)];
    n.critical = true;
    int next = -1;
    for (int s : n.succ)
      if (next < 0 || g.nodes[static_cast<size_t>(s)].level > g.nodes[static_cast<size_t>(next)].level) next = s;
    cur = next;
  }
  return cp;
}

}  // namespace detail

inline SyntheticTrace synthetic_lstm_trace(const SyntheticTraceConfig& cfg) {
  detail::SynGraph g = detail::lstm_step(cfg.layers, cfg.seq);
  const double cp = detail::levels_and_critical_path(g);
  double work = 0;
  for (const auto& n : g.nodes) work += n.us;

  std::mt19937_64 rng(cfg.seed);
  std::lognormal_distribution<double> jitter(0.0, 0.12);
  std::uniform_real_distribution<double> overhead(0.8, 3.0);

  SyntheticTrace out;
  const int W = cfg.workers;
  double origin = 0;
  for (int it = 0; it < cfg.iterations; ++it) {
    std::vector<int> preds(g.nodes.size());
    for (size_t i = 0; i < g.nodes.size(); ++i) preds[i] = g.nodes[i].preds;
    auto by_level = [&](int a, int b) {
      return g.nodes[static_cast<size_t>(a)].level < g.nodes[static_cast<size_t>(b)].level;
    };
    std::priority_queue<int, std::vector<int>, decltype(by_level)> ready(by_level);
    for (size_t i = 0; i < g.nodes.size(); ++i)
      if (preds[i] == 0) ready.push(static_cast<int>(i));
    using Done = std::pair<double, int>;  // (end time, node)
    std::priority_queue<Done, std::vector<Done>, std::greater<Done>> running;
    std::vector<double> free_at(static_cast<size_t>(W), origin);
    double now = origin, iteration_end = origin;
    size_t finished = 0;
    while (finished < g.nodes.size()) {
      // Start whatever fits on the idle workers, highest level first.
      for (;;) {
        std::vector<int> idle;
        for (int w = 0; w < W; ++w)
          if (free_at[static_cast<size_t>(w)] <= now) idle.push_back(w);
        if (idle.empty() || ready.empty()) break;
        const int id = ready.top();
        ready.pop();
        const detail::SynNode& n = g.nodes[static_cast<size_t>(id)];
        // A matmul takes a 2-core team when two cores are idle and nothing else is ready to co-run.
        const int width = n.op == "matmul" && idle.size() >= 2 && ready.empty() ? 2 : 1;
        const double predicted = width == 1 ? n.us : n.us / 1.75;
        TraceTask t;
        t.op = n.op;
        t.node = n.name;
        t.width = width;
        t.cores.assign(idle.begin(), idle.begin() + width);
        t.executor = W >= 2 ? t.cores[0] : 0;
        t.start_us = now + overhead(rng);
        t.end_us = t.start_us + predicted * jitter(rng);
        t.predicted_us = predicted;
        t.level_us = n.level;
        t.critical = n.critical;
        t.iteration = it;
        for (int c : t.cores) free_at[static_cast<size_t>(c)] = t.end_us;
        running.push({t.end_us, id});
        out.tasks.push_back(std::move(t));
      }
      const auto [end, id] = running.top();
      running.pop();
      now = end;
      iteration_end = std::max(iteration_end, end);
      ++finished;
      for (int s : g.nodes[static_cast<size_t>(id)].succ)
        if (--preds[static_cast<size_t>(s)] == 0) ready.push(s);
    }
    origin = iteration_end + 20.0;  // Engine::run returns, the next run submits
  }

  double first = out.tasks.empty() ? 0 : out.tasks.front().start_us, last = 0;
  for (const auto& t : out.tasks) {
    first = std::min(first, t.start_us);
    last = std::max(last, t.end_us);
  }
  out.meta.policy = "cpf";
  out.meta.layout = std::to_string(W) + "x1";
  out.meta.machine = "synthetic (tests/common/synthetic_trace.hpp), " + std::to_string(W) + " cores";
  out.meta.workers = W;
  out.meta.makespan_us = last - std::min(first, 0.0);
  out.meta.critical_path_us = cp * cfg.iterations;
  out.meta.total_work_us = work * cfg.iterations;
  out.meta.lower_bound_us = std::max(cp, work / W) * cfg.iterations;
  return out;
}

}  // namespace corun::testing
