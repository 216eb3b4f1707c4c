// corun/models/dcgan.hpp — a DCGAN (Radford et al. 2016) for 32x32 grey images (Fashion-MNIST padded from
// 28x28), trained as two graphs with alternating steps (docs/models.md, "DCGAN").
//
//   generator      z [B, latent, 1, 1] -> ConvT 4x4/1 (4f) -> BN -> ReLU -> ConvT 4x4/2 (2f) -> BN -> ReLU
//                  -> ConvT 4x4/2 (f) -> BN -> ReLU -> ConvT 4x4/2 (channels) -> tanh: [B, channels, 32, 32]
//   discriminator  image -> Conv 4x4/2 (f) -> LeakyReLU(0.2) -> Conv 4x4/2 (2f) -> BN -> LeakyReLU -> Conv 4x4/2
//                  (4f) -> BN -> LeakyReLU -> Conv 4x4/1 (1): one logit per image [B, 1]; the loss is the
//                  logistic cross-entropy (sigmoid + binary cross-entropy, PyTorch's BCEWithLogitsLoss)
// f = DcganConfig::filters (64: the classic widths 64/128/256), no convolution biases (BN follows), weights
// N(0, 0.02), BN scales N(1, 0.02), as the paper and PyTorch's DCGAN example.
//
//   corun::models::Dcgan gan(corun::models::DcganConfig{});
//   gan.init_params();                        // before the graphs are bound to an Engine
//   per iteration: write the real batch into d_real and one z into d_z and g_z, the Adam hyper-parameters
//   into both graphs' optimizer_hyper(), G's weights into generator_copy, run d_step, D's new weights into
//   discriminator_copy, run g_step (cli/sessions/dcgan.cpp does exactly this)
#pragma once

#include <corun/graph.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace corun::models {

struct DcganConfig {
  int batch = 64;
  int latent = 100;  ///< z's length
  int image = 32;    ///< height = width; a power of two >= 16 (28x28 images are padded to 32)
  int channels = 1;
  int filters = 64;  ///< the first D / last G layer's width (the classic 64; 128 and 256 above it)
  float learning_rate = 2e-4f;
  Optimizer optimizer = Optimizer::adam;  ///< adam or adamw (beta1 0.5 as the paper)
  float beta1 = 0.5f;
  float beta2 = 0.999f;
  float leaky_slope = 0.2f;
  float bn_epsilon = 1e-5f;
  float bn_momentum = 0.9f;  ///< ONNX's momentum: PyTorch's default 0.1
  uint64_t seed = 42;
};

/// Whether a network's weights are trained by the graph (parameters) or copied in before every run from
/// the graph that trains them (inputs: no gradient, no update).
enum class DcganWeights { params, inputs };

/// One network's weights in layer order: conv[l] for every layer, bn_scale[l] / bn_bias[l] only for the
/// layers with batch normalisation (invalid Tensors elsewhere).
struct DcganNet {
  std::vector<Tensor> conv, bn_scale, bn_bias;
  /// Every valid weight, in layer order (conv, scale, bias per layer).
  std::vector<Tensor> all() const;
};

/// Declares the generator's weights ("g.convt<l>.w", "g.bn<l>.scale", "g.bn<l>.bias") in `g`.
DcganNet dcgan_generator_weights(Graph& g, const DcganConfig& c, DcganWeights kind);
/// Declares the discriminator's weights ("d.conv<l>.w", "d.bn<l>.scale", "d.bn<l>.bias") in `g`.
DcganNet dcgan_discriminator_weights(Graph& g, const DcganConfig& c, DcganWeights kind);
/// The generator on `z` [N, latent, 1, 1]: an image [N, channels, image, image] in (-1, 1). Its batch norms'
/// running statistics are state tensors "<stats>g.bn<l>.running_mean/var" (training: updated by the run;
/// otherwise used), `tag` prefixes the node names (a graph may apply a network twice).
Tensor dcgan_generate(Graph& g, const DcganNet& net, Tensor z, const DcganConfig& c, bool training,
                      const std::string& tag, const std::string& stats = "");
/// The discriminator on `image` [N, channels, image, image]: logits [N, 1]; statistics and tags as above.
Tensor dcgan_discriminate(Graph& g, const DcganNet& net, Tensor image, const DcganConfig& c, bool training,
                          const std::string& tag, const std::string& stats = "");

/// The two training graphs. d_step: G (weights copied in) makes fake = G(z); D (parameters) scores the
/// real and the fake batch; loss_d = xent(D(real), 1) + xent(D(fake), 0); Adam updates D only. g_step: G
/// (parameters) makes G(z), D (weights copied in) scores it; loss_g = xent(D(G(z)), 1) (the non-saturating
/// loss); Adam updates G only. Each graph owns its network's parameters, batch-norm statistics and Adam
/// state; the other network's weights are inputs, refreshed from their owner before each run.
struct Dcgan {
  explicit Dcgan(const DcganConfig& config);

  DcganConfig config;
  Graph d_step;
  Graph g_step;
  Tensor d_real;                ///< d_step input [B, channels, image, image], scaled to [-1, 1]
  Tensor d_z;                   ///< d_step input [B, latent, 1, 1]
  Tensor d_fake;                ///< G(z) in d_step (kept)
  Tensor d_real_logits;         ///< [B, 1]
  Tensor d_fake_logits;         ///< [B, 1]
  Tensor loss_d;                ///< [1]
  Tensor g_z;                   ///< g_step input [B, latent, 1, 1] (the same z as d_z)
  Tensor g_fake;                ///< G(z) in g_step (kept)
  Tensor g_logits;              ///< D(G(z)) [B, 1]
  Tensor loss_g;                ///< [1]
  DcganNet generator;           ///< parameters of g_step
  DcganNet discriminator;       ///< parameters of d_step
  DcganNet generator_copy;      ///< inputs of d_step, same order as `generator`
  DcganNet discriminator_copy;  ///< inputs of g_step, same order as `discriminator`

  /// N(0, 0.02) convolution weights, N(1, 0.02) BN scales, zero BN biases from config.seed, written into
  /// both the owners' parameters and the copies. Call before the graphs are bound to an Engine.
  void init_params();
  /// Whether a value of a step graph belongs to the network that graph trains (its parameters, running
  /// statistics and optimizer state: what --save writes): "g." in g_step, "d." in d_step.
  static bool owned(const std::string& name, bool generator);
};

/// A forward-only generator (training-mode batch statistics, as PyTorch's DCGAN example samples) over
/// `batch` latent vectors, its weights inputs: for sample grids.
struct DcganSampler {
  DcganSampler(const DcganConfig& config, int batch);
  Graph graph;
  Tensor z;       ///< [batch, latent, 1, 1]
  Tensor images;  ///< [batch, channels, image, image]
  DcganNet weights;
};

}  // namespace corun::models
