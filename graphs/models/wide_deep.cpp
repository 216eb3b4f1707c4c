#include <corun/models/wide_deep.hpp>

#include "base/check.hpp"

#include <cmath>
#include <random>
#include <string>

namespace corun::models {

WideDeep::WideDeep(const WideDeepConfig& cfg, bool training) : config(cfg) {
  CORUN_CHECK(cfg.batch > 0 && cfg.categorical > 0 && cfg.vocab > 0 && cfg.embed_dim > 0 && cfg.dense > 0,
              Status::invalid_argument,
              "wide&deep: batch, categorical, vocab, embed_dim and dense must be positive (got batch="
                  << cfg.batch << " categorical=" << cfg.categorical << " vocab=" << cfg.vocab
                  << " embed_dim=" << cfg.embed_dim << " dense=" << cfg.dense << ")");
  Graph& g = graph;
  const int64_t B = cfg.batch, F = cfg.categorical;
  categories = g.input("categories", {B, F});
  dense = g.input("dense", {B, cfg.dense});
  if (training) labels = g.input("labels", {B, 1});

  std::vector<Tensor> tables;
  for (int f = 0; f < cfg.categorical; ++f)
    tables.push_back(g.param("emb" + std::to_string(f), {cfg.vocab, cfg.embed_dim}));
  std::vector<Tensor> w, b;
  int64_t in = F * cfg.embed_dim;
  std::vector<int> widths = cfg.hidden;
  widths.push_back(1);
  for (size_t l = 0; l < widths.size(); ++l) {
    w.push_back(g.param("w" + std::to_string(l), {in, widths[l]}));
    b.push_back(g.param("b" + std::to_string(l), {widths[l]}));
    in = widths[l];
  }
  const Tensor w_wide = g.param("w_wide", {cfg.dense, 1});

  // Deep part: one column of ids per feature, one lookup per table, all independent of each other.
  const auto columns = g.split(categories, 1, std::vector<int64_t>(static_cast<size_t>(F), 1), "ids");
  std::vector<Tensor> embedded;
  for (int f = 0; f < cfg.categorical; ++f)
    embedded.push_back(g.embedding(tables[static_cast<size_t>(f)], columns[static_cast<size_t>(f)],
                                   "embed" + std::to_string(f)));
  Tensor h = g.concat(embedded, 1, "embedded");
  for (size_t l = 0; l < widths.size(); ++l) {
    const std::string L = std::to_string(l);
    h = g.add(g.matmul(h, w[l], false, false, "mm" + L), b[l], "fc" + L);
    if (l + 1 < widths.size()) h = g.relu(h, "relu" + L);
  }
  // Wide part: a linear model of the dense features, added at the logit.
  logits = g.add(h, g.matmul(dense, w_wide, false, false, "wide"), "logits");
  g.keep(logits);
  if (!training) return;  // inference: the logits are the output, no labels and no loss
  loss = g.logistic_xent(logits, labels, "loss");
  g.keep(loss);
  BackwardOptions o = cfg.optimizer;
  o.learning_rate = cfg.learning_rate;
  o.momentum = cfg.momentum;
  g.backward(loss, o);
}

void WideDeep::init_params() {
  std::mt19937_64 rng(config.seed);
  for (Tensor p : graph.params()) {
    float* d = graph.data(p);
    const Shape& s = p.shape();
    const bool table = p.name().rfind("emb", 0) == 0;
    const float k = table ? 0.05f : 1.0f / std::sqrt(static_cast<float>(s[0]));
    std::uniform_real_distribution<float> u(-k, k);
    for (int64_t e = 0; e < s.numel(); ++e) d[e] = s.rank == 1 ? 0.0f : u(rng);
  }
}

namespace {

// The hidden +1/-1 score of id `id` of feature `f`: a fixed hash (splitmix64), independent of the seed's
// random stream so that it is the same rule for every batch.
float hidden_score(uint64_t seed, int f, int64_t id) {
  uint64_t z = seed * 0x9e3779b97f4a7c15ULL + static_cast<uint64_t>(f) * 0xbf58476d1ce4e5b9ULL +
               static_cast<uint64_t>(id) * 0x94d049bb133111ebULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return (z & 1) ? 1.0f : -1.0f;
}

}  // namespace

TabularTask::TabularTask(const WideDeepConfig& config) : config_(config) {
  std::mt19937_64 rng(config.seed ^ 0x7ab1e5ULL);
  std::normal_distribution<float> n01(0.0f, 1.0f);
  dense_weight_.resize(static_cast<size_t>(config.dense));
  for (float& v : dense_weight_) v = n01(rng);
}

void TabularTask::make_batch(uint64_t k, std::vector<float>& cats, std::vector<float>& dense,
                             std::vector<float>& labels) const {
  const int B = config_.batch, F = config_.categorical, D = config_.dense;
  std::mt19937_64 rng(config_.seed * 1000003ULL + k);
  std::uniform_real_distribution<double> u01(0.0, 1.0);
  std::normal_distribution<float> n01(0.0f, 1.0f);
  cats.assign(static_cast<size_t>(B) * F, 0.0f);
  dense.assign(static_cast<size_t>(B) * D, 0.0f);
  labels.assign(static_cast<size_t>(B), 0.0f);
  for (int b = 0; b < B; ++b) {
    double score = 0.0;
    for (int f = 0; f < F; ++f) {
      const double u = u01(rng);
      const auto id = static_cast<int64_t>(std::floor(config_.vocab * std::pow(u, 8.0)));
      cats[static_cast<size_t>(b) * F + f] = static_cast<float>(id);
      score += hidden_score(config_.seed, f, id);
    }
    for (int j = 0; j < D; ++j) {
      const float x = n01(rng);
      dense[static_cast<size_t>(b) * D + j] = x;
      score += x * dense_weight_[static_cast<size_t>(j)];
    }
    labels[static_cast<size_t>(b)] = score > 0.0 ? 1.0f : 0.0f;
  }
}

}  // namespace corun::models
