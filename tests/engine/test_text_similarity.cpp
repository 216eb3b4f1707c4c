// DeepCPU's text similarity model (corun/models/text_similarity.hpp) on a small configuration: the graph's
// shape (one bidirectional GRU per sentence, one fused cell per step and direction), a sentence compared
// with itself has cosine 1 whatever its padding partner, the graph's cosine is a.b / sqrt(a.a b.b), and the
// encodings match a plain host GRU (PyTorch's equations, double) computed from the same parameters.
#include "engine_test_util.hpp"

#include <corun/engine.hpp>
#include <corun/models/text_similarity.hpp>

#include "graphs/graph_impl.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace corun {
namespace {

models::TextSimilarityConfig small() {
  models::TextSimilarityConfig c;
  c.vocab = 50, c.embed = 8, c.hidden = 6, c.source_len = 5, c.target_len = 4, c.batch = 3;
  return c;
}

std::vector<float> random_ids(std::mt19937_64& rng, int64_t n, int64_t vocab) {
  std::uniform_int_distribution<int64_t> u(0, vocab - 1);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = static_cast<float>(u(rng));
  return v;
}

// h of one GRU direction over ids [len, batch] for batch entry b (ONNX layout: W [2, 3H, E], gates z, r, h).
std::vector<double> host_gru(const models::TextSimilarityConfig& c, const Graph& g, const std::vector<float>& ids,
                             int64_t len, int64_t b, int dir) {
  const int64_t H = c.hidden, E = c.embed, B = c.batch;
  const float* table = g.data(g.find("embedding"));
  const float* W = g.data(g.find("gru.W")) + dir * 3 * H * E;
  const float* R = g.data(g.find("gru.R")) + dir * 3 * H * H;
  const float* Bi = g.data(g.find("gru.B")) + dir * 6 * H;
  std::vector<double> h(static_cast<size_t>(H), 0.0);
  for (int64_t k = 0; k < len; ++k) {
    const int64_t t = dir == 0 ? k : len - 1 - k;
    const float* x = table + static_cast<int64_t>(ids[static_cast<size_t>(t * B + b)]) * E;
    std::vector<double> xp(static_cast<size_t>(3 * H)), hp(static_cast<size_t>(3 * H)), hn(static_cast<size_t>(H));
    for (int64_t j = 0; j < 3 * H; ++j) {
      double sx = Bi[j], sh = Bi[3 * H + j];
      for (int64_t e = 0; e < E; ++e) sx += static_cast<double>(W[j * E + e]) * x[e];
      for (int64_t u = 0; u < H; ++u) sh += static_cast<double>(R[j * H + u]) * h[static_cast<size_t>(u)];
      xp[static_cast<size_t>(j)] = sx, hp[static_cast<size_t>(j)] = sh;
    }
    for (int64_t u = 0; u < H; ++u) {
      const auto s = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
      const size_t z = static_cast<size_t>(u), r = static_cast<size_t>(H + u), n = static_cast<size_t>(2 * H + u);
      const double zg = s(xp[z] + hp[z]), rg = s(xp[r] + hp[r]), ng = std::tanh(xp[n] + rg * hp[n]);
      hn[static_cast<size_t>(u)] = (1.0 - zg) * ng + zg * h[static_cast<size_t>(u)];
    }
    h = hn;
  }
  return h;
}

TEST(TextSimilarity, GraphShape) {
  const models::TextSimilarity m(small());
  int cells = 0;
  for (const auto& node : m.graph.impl().nodes) cells += node.call.kind == codelets::OpKind::gru_cell;
  EXPECT_EQ(cells, 2 * (5 + 4));  // two directions per sentence, one cell per step
  EXPECT_EQ(m.source_code.shape(), (Shape{3, 12}));
  EXPECT_EQ(m.dot.shape(), (Shape{3}));
  EXPECT_EQ(m.similarity.shape(), (Shape{3}));
}

TEST(TextSimilarity, MatchesAHostGruAndASentenceIsSimilarToItself) {
  models::TextSimilarityConfig c = small();
  c.target_len = c.source_len;  // so a target can repeat its source
  models::TextSimilarity m(c);
  m.init_params();
  std::mt19937_64 rng(11);
  const std::vector<float> src = random_ids(rng, c.source_len * c.batch, c.vocab);
  std::vector<float> tgt = random_ids(rng, c.target_len * c.batch, c.vocab);
  for (int64_t t = 0; t < c.target_len; ++t) tgt[static_cast<size_t>(t * c.batch + 1)] = src[static_cast<size_t>(t * c.batch + 1)];
  Engine eng(test::test_config());
  eng.write(m.graph, m.source_ids, src);
  eng.write(m.graph, m.target_ids, tgt);
  eng.run(m.graph);
  const std::vector<float> cos = eng.read(m.graph, m.similarity);
  const std::vector<float> dot = eng.read(m.graph, m.dot), n2a = eng.read(m.graph, m.source_norm2),
                           n2b = eng.read(m.graph, m.target_norm2);
  const std::vector<float> code = eng.read(m.graph, m.source_code);
  eng.release(m.graph);
  EXPECT_NEAR(cos[1], 1.0f, 1e-5f);  // entry 1: the same sentence twice
  EXPECT_LT(std::abs(cos[0]), 0.9999f);
  for (size_t b = 0; b < cos.size(); ++b)  // the graph's cosine is the sums' a.b / sqrt(a.a b.b)
    EXPECT_NEAR(cos[b], dot[b] / std::sqrt(static_cast<double>(n2a[b]) * n2b[b]), 1e-6) << "entry " << b;
  for (int64_t b = 0; b < c.batch; ++b)
    for (int dir = 0; dir < 2; ++dir) {
      const auto h = host_gru(c, m.graph, src, c.source_len, b, dir);
      for (int64_t u = 0; u < c.hidden; ++u)
        EXPECT_NEAR(code[static_cast<size_t>(b * 2 * c.hidden + dir * c.hidden + u)], h[static_cast<size_t>(u)], 1e-5)
            << "entry " << b << " direction " << dir << " unit " << u;
    }
}

}  // namespace
}  // namespace corun
