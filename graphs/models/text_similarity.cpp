#include <corun/models/text_similarity.hpp>
#include <corun/rnn.hpp>

#include "base/check.hpp"

#include <cmath>
#include <random>
#include <string>

namespace corun::models {
namespace {

// The encoding [batch, 2H] of one sentence: the embedding, the bidirectional GRU, both last states.
Tensor encode(Graph& g, const TextSimilarityConfig& c, Tensor table, Tensor ids, Tensor w, Tensor r, Tensor b,
              const std::string& name) {
  const int64_t len = ids.shape()[0], B = c.batch, H = c.hidden;
  const Tensor x = g.reshape(g.embedding(table, ids, name + ".embed"), Shape{len, B, c.embed}, name + ".x");
  rnn::RnnOptions opt;
  opt.direction = rnn::Direction::bidirectional;
  opt.name = name + ".gru";
  const rnn::RnnOutputs out = rnn::gru(g, x, w, r, b, Tensor{}, opt);
  const Tensor fw = g.reshape(g.slice(out.y_h, 0, 0, 1, name + ".fw"), Shape{B, H}, name + ".fw2d");
  const Tensor bw = g.reshape(g.slice(out.y_h, 0, 1, 1, name + ".bw"), Shape{B, H}, name + ".bw2d");
  return g.concat({fw, bw}, 1, name + ".code");
}

}  // namespace

TextSimilarity::TextSimilarity(const TextSimilarityConfig& cfg) : config(cfg) {
  CORUN_CHECK(cfg.vocab > 0 && cfg.embed > 0 && cfg.hidden > 0 && cfg.source_len > 0 && cfg.target_len > 0 &&
                  cfg.batch > 0,
              Status::invalid_argument,
              "text similarity: vocab, embed, hidden, source_len, target_len and batch must be positive (got vocab="
                  << cfg.vocab << " embed=" << cfg.embed << " hidden=" << cfg.hidden << " source_len=" << cfg.source_len
                  << " target_len=" << cfg.target_len << " batch=" << cfg.batch << ")");
  Graph& g = graph;
  const int64_t H = cfg.hidden;
  source_ids = g.input("source_ids", {cfg.source_len, cfg.batch});
  target_ids = g.input("target_ids", {cfg.target_len, cfg.batch});
  const Tensor table = g.param("embedding", {cfg.vocab, cfg.embed});
  const Tensor w = g.param("gru.W", {2, 3 * H, cfg.embed});
  const Tensor r = g.param("gru.R", {2, 3 * H, H});
  const Tensor b = g.param("gru.B", {2, 6 * H});
  source_code = encode(g, cfg, table, source_ids, w, r, b, "source");
  target_code = encode(g, cfg, table, target_ids, w, r, b, "target");
  dot = g.sum(g.mul(source_code, target_code, "st"), 1, 1.0f, "dot");
  source_norm2 = g.sum(g.mul(source_code, source_code, "ss"), 1, 1.0f, "source_norm2");
  target_norm2 = g.sum(g.mul(target_code, target_code, "tt"), 1, 1.0f, "target_norm2");
  similarity = g.div(dot, g.sqrt(g.mul(source_norm2, target_norm2, "norm2"), "norm"), "similarity");
  for (Tensor t : {source_code, target_code, dot, source_norm2, target_norm2, similarity}) g.keep(t);
}

void TextSimilarity::init_params() {
  std::mt19937_64 rng(config.seed);
  const float k = 1.0f / std::sqrt(static_cast<float>(config.hidden));
  for (Tensor p : graph.params()) {
    const float bound = p.name() == "embedding" ? 0.1f : k;
    std::uniform_real_distribution<float> u(-bound, bound);
    float* d = graph.data(p);
    for (int64_t e = 0; e < p.shape().numel(); ++e) d[e] = u(rng);
  }
}

}  // namespace corun::models
