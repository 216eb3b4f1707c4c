// corun/models/cnn.hpp — the convolutional models: CIFAR-quick, PathNet and a GoogLeNet-style network
// (docs/models.md), each an NCHW image classifier with a mean softmax cross-entropy loss.
//
//   corun::models::CnnConfig cfg = corun::models::cifar_quick_config();
//   corun::models::Cnn m(cfg);            // forward + backward + SGD (with momentum): one training step
//   m.init_params();                      // before the graph is bound to an engine
//   /* eng.write(m.graph, m.x, images); eng.write(m.graph, m.targets, one_hot); eng.run(m.graph); */
//
// Sizes:
//   cifar-quick  28x28x1 (Fashion-MNIST), batch 64: conv5x5-32 -> maxpool 3/2 -> ReLU -> conv5x5-32 -> ReLU ->
//                avgpool 3/2 -> conv5x5-64 -> ReLU -> avgpool 3/2 -> fc64 -> fc10 (pad 2 keeps conv sizes)
//   pathnet      3 layers x 6 modules (conv3x3 -> ReLU -> maxpool 2/2, module outputs summed), batch 64,
//                small/medium/large = image 32/48/64 and 16/32/48 filters; a dense classifier head
//   googlenet    GoogLeNet (Szegedy et al. 2015: stem, inception 3a-5b, global average pool, dense head),
//                every filter count times the width 1/2/4, image 64/192/256 for small/medium/large, batch 32,
//                learning rate warmed up over 20 iterations
#pragma once

#include <corun/graph.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace corun::models {

enum class CnnKind { cifar_quick, pathnet, googlenet };

struct CnnConfig {
  CnnKind kind = CnnKind::cifar_quick;
  int batch = 64;
  int image = 28;       ///< input height = width
  int channels = 1;     ///< input channels
  int classes = 10;
  int filters = 16;     ///< PathNet: filters per module conv
  int modules = 6;      ///< PathNet: parallel modules per layer
  int layers = 3;       ///< PathNet: layers
  int width = 1;        ///< GoogLeNet: filter-count multiplier
  float learning_rate = 0.01f;
  float momentum = 0.9f;
  /// Iterations of linear learning-rate warm-up: step k (from 0) trains at learning_rate * min(1, (k + 1) /
  /// warmup); 0: none. The trainer applies it (Graph::set_learning_rate); the graph holds learning_rate.
  int warmup = 0;
  /// false: gradients only (and the velocities, when momentum > 0), no update nodes: a replica of
  /// Engine::run_replicated, which sums the replicas' gradients and updates once.
  bool sgd_update = true;
  uint64_t seed = 42;   ///< parameters (and synthetic data)
  /// The optimizer beyond SGD / momentum (issue 19): its optimizer, weight_decay, nesterov, beta1, beta2 and
  /// eps are used; its sgd_update, learning_rate and momentum come from this config's own fields.
  BackwardOptions optimizer{};
};

/// CIFAR-quick on Fashion-MNIST's 28x28 grey images (lr 0.01, momentum 0.9, batch 64).
CnnConfig cifar_quick_config();
/// PathNet of Table 1b: "small", "medium" or "large"; throws corun::Error for another name.
CnnConfig pathnet_config(const std::string& size);
/// GoogLeNet-style network of Table 1c: "small", "medium" or "large".
CnnConfig googlenet_config(const std::string& size);

/// "cifar-quick", "pathnet", "googlenet".
const char* cnn_name(CnnKind kind);

/// The model's training graph (training = true: backward and SGD-with-momentum updates appended) or its
/// inference graph (forward only, the same parameter names, so trained values can be copied across).
struct Cnn {
  explicit Cnn(const CnnConfig& config, bool training = true);

  CnnConfig config;
  Graph graph;
  Tensor x;        ///< [batch, channels, image, image]
  Tensor targets;  ///< [batch, classes] one-hot
  Tensor logits;   ///< [batch, classes] (kept)
  Tensor loss;     ///< [1]

  /// He-uniform weights (U(+-sqrt(6 / fan_in)), fan_in = C*R*S or the dense input), zero biases, from
  /// config.seed; the classifier at a tenth of that (first loss near ln(classes)) and PathNet's module
  /// convolutions at 1/modules of it (docs/models.md). Writes through Graph::data: call before the graph is
  /// bound to an Engine.
  void init_params();
};

/// A learnable synthetic image task for PathNet and GoogLeNet: each image gets a uniformly drawn class c
/// and is N(0, 1) noise + 0.5 * pattern_c, one fixed random N(0, 1) pattern per class plus a random colour
/// per class and channel (which global pooling keeps). Batch k depends only
/// on the seed and k.
class SyntheticImages {
 public:
  explicit SyntheticImages(const CnnConfig& config);
  void make_batch(uint64_t k, std::vector<float>& images, std::vector<float>& targets) const;

 private:
  CnnConfig config_;
  std::vector<float> patterns_;
};

}  // namespace corun::models
