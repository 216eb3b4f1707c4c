// corun/models/wide_deep.hpp — the wide&deep click-through model of the MXNet parallel-op proposal
// (seed 003) and a synthetic tabular task it can learn.
//
//   corun::models::WideDeepConfig cfg;               // 26 categorical features, vocab 10000, dim 16
//   corun::models::WideDeep m(cfg);                  // training graph (backward + SGD); false: inference
//   corun::models::TabularTask task(cfg);
//   m.init_params();                                 // before the graph is bound to an engine
//   for (it...) { task.make_batch(it, cats, dense, labels); /* eng.write each */ eng.run(m.graph); }
//
// Graph: the categorical ids [B, 26] are split into 26 columns (fan-out), each looked up in its own table
// (26 independent embedding nodes), concatenated (fan-in) to [B, 416] and fed to the deep part, an MLP
// 416 -> 256 -> 128 -> 1 with ReLU. The dense features [B, 13] feed the wide part, a linear layer 13 -> 1;
// the two logits are added and the loss is the mean logistic cross-entropy. The proposal's MLP input of
// 416 = 26 x 16 holds the embeddings only, so the dense features join at the logit (the "wide" side of
// wide&deep) rather than inside the MLP.
#pragma once

#include <corun/graph.hpp>

#include <cstdint>
#include <vector>

namespace corun::models {

struct WideDeepConfig {
  int batch = 256;           ///< 256 for training, 1 for the latency benchmark
  int categorical = 26;      ///< categorical features, one embedding table each
  int vocab = 10000;         ///< rows per table
  int embed_dim = 16;
  int dense = 13;            ///< dense (numeric) features of the wide part
  std::vector<int> hidden = {256, 128};
  float learning_rate = 1.0f;
  float momentum = 0.0f;     ///< SGD momentum (0: plain SGD, the default)
  /// The optimizer beyond SGD / momentum (issue 19): its optimizer, weight_decay, nesterov, beta1, beta2 and
  /// eps are used; its sgd_update, learning_rate and momentum come from this config's own fields.
  BackwardOptions optimizer{};
  uint64_t seed = 42;        ///< parameters and data
};

struct WideDeep {
  /// Builds the graph; with `training` it adds backward() and the SGD updates.
  explicit WideDeep(const WideDeepConfig& config, bool training = true);

  WideDeepConfig config;
  Graph graph;
  Tensor categories;  ///< [batch, categorical] ids in 0..vocab-1 (exact integers in f32)
  Tensor dense;       ///< [batch, dense]
  Tensor labels;      ///< [batch, 1] in {0, 1} (training only)
  Tensor logits;      ///< [batch, 1] (kept)
  Tensor loss;        ///< [1] (kept; training only)

  /// Tables uniform(-0.05, 0.05), weights uniform(-1/sqrt(fan_in), 1/sqrt(fan_in)), biases 0, from
  /// config.seed. Writes through Graph::data, so call it before the graph is bound to an Engine.
  void init_params();
};

/// A learnable synthetic click task. Category ids follow a power law (id = floor(vocab * u^8), so a few
/// hundred ids per feature carry most of the mass, as in click logs); each (feature, id) has a fixed
/// hidden score of +1 or -1 and each dense feature a fixed weight. The label is 1 when the sum of the
/// 26 scores plus the dense part is positive. Batch k is the same for every run with the same seed.
class TabularTask {
 public:
  explicit TabularTask(const WideDeepConfig& config);
  void make_batch(uint64_t k, std::vector<float>& categories, std::vector<float>& dense,
                  std::vector<float>& labels) const;

 private:
  WideDeepConfig config_;
  std::vector<float> dense_weight_;
};

}  // namespace corun::models
