// The LSTM model on StarPU against a plain single-threaded reference in double precision: forward loss,
// every parameter gradient (BPTT written out by hand from the equations in corun/models/lstm.hpp) and the
// SGD update the training graph applies; with the fused lstm_cell and with the unfused ops, and the two
// against each other.
#include "engine_test_util.hpp"

#include <corun/engine.hpp>
#include <corun/models/lstm.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace corun {
namespace {

using models::LstmConfig;
using Vec = std::vector<double>;

double sigm(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// Everything the reference needs, in double, row-major like the graph.
struct RefInputs {
  LstmConfig cfg;
  std::vector<Vec> x;             // seq x [B, I]
  Vec targets;                    // [B, C]
  std::vector<Vec> h0, c0;        // layers x [B, H]
  std::vector<Vec> w, b;          // layers x [(in + H), 4H], [4H]
  Vec w_out, b_out;               // [H, C], [C]
};

struct RefOutputs {
  double loss = 0.0;
  std::map<std::string, Vec> grads;  // by parameter name
};

// Forward and backward through time, plain loops.
RefOutputs reference(const RefInputs& in) {
  const LstmConfig& c = in.cfg;
  const int B = c.batch, H = c.hidden, T = c.seq, L = c.layers, C = c.classes, G = 4 * c.hidden;
  // Per layer and step: the cell inputs [x_t, h_{t-1}], activated gates (i, f, g, o), cell and hidden state.
  struct Step {
    Vec xh, i, f, g, o, c, h;
  };
  std::vector<std::vector<Step>> st(static_cast<size_t>(L), std::vector<Step>(static_cast<size_t>(T)));
  auto idx = [](int r, int col, int n) { return static_cast<size_t>(r) * static_cast<size_t>(n) + static_cast<size_t>(col); };

  for (int l = 0; l < L; ++l) {
    const int I = l == 0 ? c.input : H, K = I + H;
    const Vec& W = in.w[static_cast<size_t>(l)];
    const Vec& bias = in.b[static_cast<size_t>(l)];
    for (int t = 0; t < T; ++t) {
      Step& s = st[static_cast<size_t>(l)][static_cast<size_t>(t)];
      const Vec& below = l == 0 ? in.x[static_cast<size_t>(t)] : st[static_cast<size_t>(l - 1)][static_cast<size_t>(t)].h;
      const Vec& hprev = t == 0 ? in.h0[static_cast<size_t>(l)] : st[static_cast<size_t>(l)][static_cast<size_t>(t - 1)].h;
      const Vec& cprev = t == 0 ? in.c0[static_cast<size_t>(l)] : st[static_cast<size_t>(l)][static_cast<size_t>(t - 1)].c;
      s.xh.assign(static_cast<size_t>(B * K), 0.0);
      for (int r = 0; r < B; ++r) {
        for (int k = 0; k < I; ++k) s.xh[idx(r, k, K)] = below[idx(r, k, I)];
        for (int k = 0; k < H; ++k) s.xh[idx(r, I + k, K)] = hprev[idx(r, k, H)];
      }
      for (Vec* v : {&s.i, &s.f, &s.g, &s.o, &s.c, &s.h}) v->assign(static_cast<size_t>(B * H), 0.0);
      for (int r = 0; r < B; ++r) {
        for (int j = 0; j < G; ++j) {
          double z = bias[static_cast<size_t>(j)];
          for (int k = 0; k < K; ++k) z += s.xh[idx(r, k, K)] * W[idx(k, j, G)];
          const int gate = j / H, u = j % H;
          const size_t e = idx(r, u, H);
          if (gate == 0) s.i[e] = sigm(z);
          if (gate == 1) s.f[e] = sigm(z);
          if (gate == 2) s.g[e] = std::tanh(z);
          if (gate == 3) s.o[e] = sigm(z);
        }
        for (int u = 0; u < H; ++u) {
          const size_t e = idx(r, u, H);
          s.c[e] = s.f[e] * cprev[e] + s.i[e] * s.g[e];
          s.h[e] = s.o[e] * std::tanh(s.c[e]);
        }
      }
    }
  }

  RefOutputs out;
  const Vec& htop = st[static_cast<size_t>(L - 1)][static_cast<size_t>(T - 1)].h;
  Vec dlogits(static_cast<size_t>(B * C));
  for (int r = 0; r < B; ++r) {
    Vec z(static_cast<size_t>(C));
    double mx = -1e300;
    for (int k = 0; k < C; ++k) {
      double v = in.b_out[static_cast<size_t>(k)];
      for (int u = 0; u < H; ++u) v += htop[idx(r, u, H)] * in.w_out[idx(u, k, C)];
      z[static_cast<size_t>(k)] = v;
      mx = std::max(mx, v);
    }
    double se = 0.0;
    for (int k = 0; k < C; ++k) se += std::exp(z[static_cast<size_t>(k)] - mx);
    for (int k = 0; k < C; ++k) {
      const double logp = z[static_cast<size_t>(k)] - mx - std::log(se);
      const double tk = in.targets[idx(r, k, C)];
      out.loss -= tk * logp / B;
      dlogits[idx(r, k, C)] = (std::exp(logp) - tk) / B;
    }
  }

  Vec& dw_out = out.grads["w_out"];
  Vec& db_out = out.grads["b_out"];
  dw_out.assign(static_cast<size_t>(H * C), 0.0);
  db_out.assign(static_cast<size_t>(C), 0.0);
  // Gradient arriving at each step's h from the layer above (or, for the top layer, from the logits).
  std::vector<Vec> dh_above(static_cast<size_t>(T), Vec(static_cast<size_t>(B * H), 0.0));
  for (int r = 0; r < B; ++r)
    for (int k = 0; k < C; ++k) {
      const double d = dlogits[idx(r, k, C)];
      db_out[static_cast<size_t>(k)] += d;
      for (int u = 0; u < H; ++u) {
        dw_out[idx(u, k, C)] += htop[idx(r, u, H)] * d;
        dh_above[static_cast<size_t>(T - 1)][idx(r, u, H)] += d * in.w_out[idx(u, k, C)];
      }
    }

  for (int l = L - 1; l >= 0; --l) {
    const int I = l == 0 ? c.input : H, K = I + H;
    const Vec& W = in.w[static_cast<size_t>(l)];
    Vec& dW = out.grads["w" + std::to_string(l)];
    Vec& db = out.grads["b" + std::to_string(l)];
    dW.assign(static_cast<size_t>(K * G), 0.0);
    db.assign(static_cast<size_t>(G), 0.0);
    std::vector<Vec> dbelow(static_cast<size_t>(T), Vec(static_cast<size_t>(B * I), 0.0));
    Vec dh_next(static_cast<size_t>(B * H), 0.0), dc_next(static_cast<size_t>(B * H), 0.0);
    Vec dz(static_cast<size_t>(B * G));
    for (int t = T - 1; t >= 0; --t) {
      const Step& s = st[static_cast<size_t>(l)][static_cast<size_t>(t)];
      const Vec& cprev = t == 0 ? in.c0[static_cast<size_t>(l)] : st[static_cast<size_t>(l)][static_cast<size_t>(t - 1)].c;
      for (int r = 0; r < B; ++r)
        for (int u = 0; u < H; ++u) {
          const size_t e = idx(r, u, H);
          const double dh = dh_above[static_cast<size_t>(t)][e] + dh_next[e];
          const double tc = std::tanh(s.c[e]);
          const double dc = dc_next[e] + dh * s.o[e] * (1.0 - tc * tc);
          const double di = dc * s.g[e], df = dc * cprev[e], dg = dc * s.i[e], do_ = dh * tc;
          dc_next[e] = dc * s.f[e];
          dz[idx(r, 0 * H + u, G)] = di * s.i[e] * (1.0 - s.i[e]);
          dz[idx(r, 1 * H + u, G)] = df * s.f[e] * (1.0 - s.f[e]);
          dz[idx(r, 2 * H + u, G)] = dg * (1.0 - s.g[e] * s.g[e]);
          dz[idx(r, 3 * H + u, G)] = do_ * s.o[e] * (1.0 - s.o[e]);
        }
      for (int r = 0; r < B; ++r)
        for (int j = 0; j < G; ++j) {
          const double d = dz[idx(r, j, G)];
          db[static_cast<size_t>(j)] += d;
          for (int k = 0; k < K; ++k) dW[idx(k, j, G)] += s.xh[idx(r, k, K)] * d;
        }
      for (int r = 0; r < B; ++r)
        for (int k = 0; k < K; ++k) {
          double dxh = 0.0;
          for (int j = 0; j < G; ++j) dxh += dz[idx(r, j, G)] * W[idx(k, j, G)];
          if (k < I) {
            dbelow[static_cast<size_t>(t)][idx(r, k, I)] = dxh;
          } else {
            dh_next[idx(r, k - I, H)] = dxh;
          }
        }
    }
    dh_above = std::move(dbelow);
  }
  return out;
}

Vec to_double(const std::vector<float>& v) { return Vec(v.begin(), v.end()); }

// Builds the training graph, fills parameters (init_params plus small random biases), data and initial
// states, runs one step and compares loss, gradients and updated parameters with the reference.
void check_against_reference(const LstmConfig& cfg, bool random_initial_state) {
  models::Lstm m(cfg, /*training=*/true);
  Graph& g = m.graph;
  m.init_params();
  std::mt19937_64 rng(cfg.seed + 7);
  for (Tensor p : g.params())
    if (p.shape().rank == 1) {  // biases: zero (forget gate one) after init; make them all different
      float* d = g.data(p);
      for (float v : test::uniform(rng, p.shape().numel(), -0.2f, 0.2f)) *d++ += v;
    }

  RefInputs in;
  in.cfg = cfg;
  std::vector<std::vector<float>> xs;
  std::vector<float> targets;
  models::SequenceTask(cfg).make_batch(3, xs, targets);
  ASSERT_EQ(xs.size(), static_cast<size_t>(cfg.seq));
  for (int t = 0; t < cfg.seq; ++t) {
    std::copy(xs[static_cast<size_t>(t)].begin(), xs[static_cast<size_t>(t)].end(), g.data(m.x[static_cast<size_t>(t)]));
    in.x.push_back(to_double(xs[static_cast<size_t>(t)]));
  }
  std::copy(targets.begin(), targets.end(), g.data(m.targets));
  in.targets = to_double(targets);
  for (int l = 0; l < cfg.layers; ++l) {
    const std::string L = "_l" + std::to_string(l);
    const Tensor h0 = g.find("h0" + L), c0 = g.find("c0" + L);
    ASSERT_EQ(h0.shape(), (Shape{cfg.batch, cfg.hidden}));
    if (random_initial_state) {
      test::fill_uniform(g, h0, rng, -0.5f, 0.5f);
      test::fill_uniform(g, c0, rng, -0.5f, 0.5f);
    }
    in.h0.push_back(to_double(test::host_copy(g, h0)));
    in.c0.push_back(to_double(test::host_copy(g, c0)));
  }
  // Parameters as they are before the step (the run updates them in place).
  std::map<std::string, std::vector<float>> before;
  for (Tensor p : g.params()) before[p.name()] = test::host_copy(g, p);
  for (int l = 0; l < cfg.layers; ++l) {
    const std::vector<float>& w = before.at("w" + std::to_string(l));
    ASSERT_EQ(w.size(), static_cast<size_t>((l == 0 ? cfg.input : cfg.hidden) + cfg.hidden) * 4 * cfg.hidden);
    in.w.push_back(to_double(w));
    in.b.push_back(to_double(before.at("b" + std::to_string(l))));
  }
  in.w_out = to_double(before.at("w_out"));
  in.b_out = to_double(before.at("b_out"));
  const RefOutputs ref = reference(in);

  Engine eng(test::test_config());
  eng.run(g);
  const double loss = eng.read(g, m.loss)[0];
  EXPECT_NEAR(loss, ref.loss, 1e-4 * std::max(1.0, std::abs(ref.loss))) << "forward loss";
  if (std::getenv("CORUN_TEST_VERBOSE")) std::printf("  loss %.8f, reference %.8f\n", loss, ref.loss);
  ASSERT_EQ(g.params().size(), ref.grads.size());
  for (Tensor p : g.params()) {
    SCOPED_TRACE("parameter " + p.name());
    const Tensor gp = g.grad(p);
    ASSERT_TRUE(gp.valid());
    const std::vector<float> grad = eng.read(g, gp);
    const Vec& rg = ref.grads.at(p.name());
    ASSERT_EQ(grad.size(), rg.size());
    const double err = test::rel_error(grad, rg);
    EXPECT_LE(err, 1e-4) << "gradient";
    if (std::getenv("CORUN_TEST_VERBOSE")) std::printf("  %-6s relative error %.2e\n", p.name().c_str(), err);
    // The step applied p -= lr * grad (one f32 multiply-subtract: allow a couple of ulps).
    const std::vector<float> after = eng.read(g, p);
    const std::vector<float>& old = before.at(p.name());
    for (size_t e = 0; e < old.size(); ++e) {
      const float expect = old[e] - cfg.learning_rate * grad[e];
      const float scale = std::max(1.0f, std::abs(old[e]) + std::abs(cfg.learning_rate * grad[e]));
      ASSERT_NEAR(after[e], expect, 4e-7f * scale) << "SGD update of element " << e;
    }
  }
  eng.release(g);
}

// Every reference check runs with the fused cell (the default) and with the unfused ops.
class LstmReference : public ::testing::TestWithParam<bool> {
 protected:
  LstmConfig with_cell(LstmConfig cfg) const {
    cfg.fused_cell = GetParam();
    return cfg;
  }
};

TEST_P(LstmReference, TwoLayersInputNotHidden) {
  LstmConfig cfg;
  cfg.layers = 2, cfg.batch = 4, cfg.seq = 5, cfg.hidden = 8, cfg.input = 6, cfg.classes = 10;
  cfg.learning_rate = 0.5f, cfg.seed = 11;
  check_against_reference(with_cell(cfg), /*random_initial_state=*/false);
}

TEST_P(LstmReference, TwoLayersRandomInitialState) {
  LstmConfig cfg;
  cfg.layers = 2, cfg.batch = 4, cfg.seq = 5, cfg.hidden = 8, cfg.input = 8, cfg.classes = 10;
  cfg.learning_rate = 0.3f, cfg.seed = 5;
  check_against_reference(with_cell(cfg), /*random_initial_state=*/true);
}

TEST_P(LstmReference, SmallStructureReduced) {  // the "small" model's depth and length, narrower
  LstmConfig cfg = models::lstm_config("small");
  cfg.seq = 20, cfg.hidden = 16, cfg.input = 16, cfg.batch = 8;
  ASSERT_EQ(cfg.layers, 4);
  check_against_reference(with_cell(cfg), /*random_initial_state=*/false);
}

INSTANTIATE_TEST_SUITE_P(Cell, LstmReference, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& p) { return p.param ? "Fused" : "Unfused"; });

// The fused cell against the unfused ops on the same parameters and data: loss, every gradient and the
// updated parameters over two training steps, within 1e-5 (relative to max(1, |value|)). With the fast
// kernels they agree to the last bit (the fused kernels evaluate the same float operations in the same
// order); with CORUN_KERNELS=ref the fused reference works in double where the unfused ops round after
// each op, hence a tolerance.
TEST(LstmFusedCell, MatchesUnfusedOps) {
  LstmConfig cfg;
  cfg.layers = 2, cfg.batch = 4, cfg.seq = 6, cfg.hidden = 8, cfg.input = 5, cfg.classes = 10;
  cfg.learning_rate = 0.5f, cfg.seed = 3;
  LstmConfig unfused_cfg = cfg;
  unfused_cfg.fused_cell = false;
  ASSERT_TRUE(cfg.fused_cell) << "the fused cell is the default";
  models::Lstm fused(cfg), unfused(unfused_cfg);
  EXPECT_LT(fused.graph.num_nodes(), unfused.graph.num_nodes());
  std::mt19937_64 rng(99);
  for (models::Lstm* m : {&fused, &unfused}) m->init_params();
  for (Tensor p : fused.graph.params()) {  // random biases and initial states, the same in both models
    if (p.shape().rank != 1) continue;
    const auto v = test::uniform(rng, p.shape().numel(), -0.3f, 0.3f);
    std::copy(v.begin(), v.end(), fused.graph.data(p));
    std::copy(v.begin(), v.end(), unfused.graph.data(unfused.graph.find(p.name())));
  }
  for (int l = 0; l < cfg.layers; ++l)
    for (const char* s : {"h0_l", "c0_l"}) {
      const std::string name = s + std::to_string(l);
      const auto v = test::uniform(rng, int64_t{cfg.batch} * cfg.hidden, -0.5f, 0.5f);
      std::copy(v.begin(), v.end(), fused.graph.data(fused.graph.find(name)));
      std::copy(v.begin(), v.end(), unfused.graph.data(unfused.graph.find(name)));
    }

  Engine eng(test::test_config());
  std::vector<std::vector<float>> xs;
  std::vector<float> targets;
  double worst = 0.0;
  auto compare = [&](const std::vector<float>& a, const std::vector<float>& b, const std::string& what) {
    ASSERT_EQ(a.size(), b.size()) << what;
    for (size_t e = 0; e < a.size(); ++e) {
      const double err = std::abs(static_cast<double>(a[e]) - b[e]) / std::max(1.0, std::abs(static_cast<double>(b[e])));
      worst = std::max(worst, err);
      ASSERT_LE(err, 1e-5) << what << "[" << e << "]: fused " << a[e] << ", unfused " << b[e];
    }
  };
  for (int it = 0; it < 2; ++it) {
    SCOPED_TRACE("iteration " + std::to_string(it));
    models::SequenceTask(cfg).make_batch(static_cast<uint64_t>(it), xs, targets);
    for (models::Lstm* m : {&fused, &unfused}) {
      for (int t = 0; t < cfg.seq; ++t) eng.write(m->graph, m->x[static_cast<size_t>(t)], xs[static_cast<size_t>(t)]);
      eng.write(m->graph, m->targets, targets);
      eng.run(m->graph);
    }
    compare(eng.read(fused.graph, fused.loss), eng.read(unfused.graph, unfused.loss), "loss");
    for (Tensor p : fused.graph.params()) {
      const Tensor q = unfused.graph.find(p.name());
      compare(eng.read(fused.graph, fused.graph.grad(p)), eng.read(unfused.graph, unfused.graph.grad(q)), "d" + p.name());
      compare(eng.read(fused.graph, p), eng.read(unfused.graph, q), p.name() + " after the step");
    }
  }
  if (std::getenv("CORUN_TEST_VERBOSE")) std::printf("  worst relative difference fused vs unfused: %.3g\n", worst);
  eng.release(fused.graph);
  eng.release(unfused.graph);
}

}  // namespace
}  // namespace corun
