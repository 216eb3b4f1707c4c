// The DCGAN of corun/models/dcgan.hpp: conv_transpose2d / conv2d layers with batch_norm, relu, leaky_relu
// and tanh, and the two step graphs that train it alternately.
#include <corun/models/dcgan.hpp>

#include "base/check.hpp"

#include <algorithm>
#include <random>

namespace corun::models {
namespace {

// Stride-2 layers between 4x4 and the image: 3 for 32x32 (4 -> 8 -> 16 -> 32).
int upsamplings(const DcganConfig& c) {
  int n = 0;
  for (int s = 4; s < c.image; s *= 2) ++n;
  return n;
}

void check_config(const DcganConfig& c) {
  const bool power_of_two = c.image >= 16 && c.image <= 256 && (c.image & (c.image - 1)) == 0;
  CORUN_CHECK(
      power_of_two, Status::invalid_argument,
      "dcgan: the image size must be a power of two from 16 to 256 (28x28 images are padded to 32), got " << c.image);
  CORUN_CHECK(c.batch >= 1 && c.latent >= 1 && c.channels >= 1 && c.filters >= 1, Status::invalid_argument,
              "dcgan: batch, latent, channels and filters must be positive (got batch="
                  << c.batch << " latent=" << c.latent << " channels=" << c.channels << " filters=" << c.filters
                  << ")");
  CORUN_CHECK(c.optimizer == Optimizer::adam || c.optimizer == Optimizer::adamw, Status::invalid_argument,
              "dcgan: trains with adam or adamw");
}

Tensor weight(Graph& g, const std::string& name, const Shape& shape, DcganWeights kind) {
  return kind == DcganWeights::params ? g.param(name, shape) : g.input(name, shape);
}

Conv2dOptions window(int stride, int pad) {
  Conv2dOptions o;
  o.stride_h = o.stride_w = stride;
  o.pad_top = o.pad_left = o.pad_bottom = o.pad_right = pad;
  return o;
}

Tensor normalise(Graph& g, const DcganNet& net, size_t l, Tensor x, const DcganConfig& c, bool training,
                 const std::string& node, const std::string& stats_name) {
  const int64_t ch = x.shape()[1];
  const Tensor mean = g.state(stats_name + ".running_mean", {ch}, 0.0f);
  const Tensor var = g.state(stats_name + ".running_var", {ch}, 1.0f);
  return g.batch_norm(x, net.bn_scale[l], net.bn_bias[l], mean, var, c.bn_epsilon, c.bn_momentum, training, node);
}

// The batch-norm layers' scale and bias for layer l of a network named `net` ("g" or "d").
void declare_bn(Graph& g, DcganNet& n, const std::string& net, size_t l, int64_t ch, DcganWeights kind) {
  n.bn_scale[l] = weight(g, net + ".bn" + std::to_string(l) + ".scale", {ch}, kind);
  n.bn_bias[l] = weight(g, net + ".bn" + std::to_string(l) + ".bias", {ch}, kind);
}

}  // namespace

std::vector<Tensor> DcganNet::all() const {
  std::vector<Tensor> out;
  for (size_t l = 0; l < conv.size(); ++l)
    for (const Tensor& t : {conv[l], bn_scale[l], bn_bias[l]})
      if (t.valid()) out.push_back(t);
  return out;
}

// Generator widths: layer 0 maps z to 4x4 with filters * 2^(n-1) channels; each stride-2 layer halves the
// channels and doubles the size; the last makes the image channels.
DcganNet dcgan_generator_weights(Graph& g, const DcganConfig& c, DcganWeights kind) {
  check_config(c);
  const int n = upsamplings(c);
  DcganNet net;
  net.conv.resize(static_cast<size_t>(n) + 1);
  net.bn_scale.resize(net.conv.size());
  net.bn_bias.resize(net.conv.size());
  int64_t in = c.latent;
  for (int l = 0; l <= n; ++l) {
    const int64_t out = l == n ? c.channels : static_cast<int64_t>(c.filters) << (n - 1 - l);
    const auto k = static_cast<size_t>(l);
    net.conv[k] =
        weight(g, "g.convt" + std::to_string(l) + ".w", {in, out, 4, 4}, kind);  // ConvTranspose: [C_in, C_out, R, S]
    if (l < n) declare_bn(g, net, "g", k, out, kind);
    in = out;
  }
  return net;
}

// Discriminator widths: filters, 2 filters, ... up to 4x4, then one 4x4 convolution to a logit.
DcganNet dcgan_discriminator_weights(Graph& g, const DcganConfig& c, DcganWeights kind) {
  check_config(c);
  const int n = upsamplings(c);
  DcganNet net;
  net.conv.resize(static_cast<size_t>(n) + 1);
  net.bn_scale.resize(net.conv.size());
  net.bn_bias.resize(net.conv.size());
  int64_t in = c.channels;
  for (int l = 0; l <= n; ++l) {
    const int64_t out = l == n ? 1 : static_cast<int64_t>(c.filters) << l;
    const auto k = static_cast<size_t>(l);
    net.conv[k] = weight(g, "d.conv" + std::to_string(l) + ".w", {out, in, 4, 4}, kind);
    if (l > 0 && l < n) declare_bn(g, net, "d", k, out, kind);  // none on the first layer (the paper)
    in = out;
  }
  return net;
}

Tensor dcgan_generate(Graph& g, const DcganNet& net, Tensor z, const DcganConfig& c, bool training,
                      const std::string& tag, const std::string& stats) {
  const size_t n = net.conv.size() - 1;
  CORUN_CHECK(z.shape() == Shape({z.shape()[0], c.latent, 1, 1}), Status::invalid_argument,
              "dcgan generator: z must be [N, " << c.latent << ", 1, 1], got " << z.shape().str());
  Tensor h = z;
  for (size_t l = 0; l <= n; ++l) {
    const std::string name = tag + ".convt" + std::to_string(l);
    h = g.conv_transpose2d(h, net.conv[l], Tensor(), l == 0 ? window(1, 0) : window(2, 1), name);
    if (l == n) return g.tanh(h, tag + ".tanh");
    h = normalise(g, net, l, h, c, training, tag + ".bn" + std::to_string(l), stats + "g.bn" + std::to_string(l));
    h = g.relu(h, tag + ".relu" + std::to_string(l));
  }
  return h;
}

Tensor dcgan_discriminate(Graph& g, const DcganNet& net, Tensor image, const DcganConfig& c, bool training,
                          const std::string& tag, const std::string& stats) {
  const size_t n = net.conv.size() - 1;
  Tensor h = image;
  for (size_t l = 0; l <= n; ++l) {
    const std::string name = tag + ".conv" + std::to_string(l);
    h = g.conv2d(h, net.conv[l], Tensor(), l == n ? window(1, 0) : window(2, 1), name);
    if (l == n) break;
    if (net.bn_scale[l].valid())
      h = normalise(g, net, l, h, c, training, tag + ".bn" + std::to_string(l), stats + "d.bn" + std::to_string(l));
    h = g.leaky_relu(h, c.leaky_slope, tag + ".lrelu" + std::to_string(l));
  }
  return g.reshape(h, {h.shape()[0], 1}, tag + ".logits");
}

Dcgan::Dcgan(const DcganConfig& cfg) : config(cfg) {
  check_config(cfg);
  const Shape z_shape{cfg.batch, cfg.latent, 1, 1};
  const Shape image_shape{cfg.batch, cfg.channels, cfg.image, cfg.image};
  BackwardOptions adam;
  adam.optimizer = cfg.optimizer;
  adam.learning_rate = cfg.learning_rate;
  adam.beta1 = cfg.beta1;
  adam.beta2 = cfg.beta2;

  // The discriminator's step. G's batch norms here keep throwaway statistics ("aux."): g_step owns G's.
  {
    Graph& g = d_step;
    d_real = g.input("real", image_shape);
    d_z = g.input("z", z_shape);
    const Tensor ones = g.input("ones", {cfg.batch, 1});
    const Tensor zeros = g.input("zeros", {cfg.batch, 1});
    std::fill_n(g.data(ones), cfg.batch, 1.0f);  // inputs written once: targets never change
    generator_copy = dcgan_generator_weights(g, cfg, DcganWeights::inputs);
    discriminator = dcgan_discriminator_weights(g, cfg, DcganWeights::params);
    d_fake = dcgan_generate(g, generator_copy, d_z, cfg, true, "gen", "aux.");
    // Real and fake batches go through D separately, as PyTorch's example (batch norm sees one kind at a
    // time); the second pass keeps its own statistics.
    d_real_logits = dcgan_discriminate(g, discriminator, d_real, cfg, true, "disc_real");
    d_fake_logits = dcgan_discriminate(g, discriminator, d_fake, cfg, true, "disc_fake", "aux.fake.");
    const Tensor real_loss = g.logistic_xent(d_real_logits, ones, "loss_real");
    const Tensor fake_loss = g.logistic_xent(d_fake_logits, zeros, "loss_fake");
    loss_d = g.add(real_loss, fake_loss, "loss_d");
    for (Tensor t : {d_fake, d_real_logits, d_fake_logits, loss_d}) g.keep(t);
    g.backward(loss_d, adam);
  }
  // The generator's step: D's weights are inputs, so backward() updates G only.
  {
    Graph& g = g_step;
    g_z = g.input("z", z_shape);
    const Tensor ones = g.input("ones", {cfg.batch, 1});
    std::fill_n(g.data(ones), cfg.batch, 1.0f);
    generator = dcgan_generator_weights(g, cfg, DcganWeights::params);
    discriminator_copy = dcgan_discriminator_weights(g, cfg, DcganWeights::inputs);
    g_fake = dcgan_generate(g, generator, g_z, cfg, true, "gen");
    g_logits = dcgan_discriminate(g, discriminator_copy, g_fake, cfg, true, "disc", "aux.");
    loss_g = g.logistic_xent(g_logits, ones, "loss_g");
    for (Tensor t : {g_fake, g_logits, loss_g}) g.keep(t);
    g.backward(loss_g, adam);
  }
}

void Dcgan::init_params() {
  std::mt19937_64 rng(config.seed);
  auto fill = [&](Graph& owner, const DcganNet& net, Graph& other, const DcganNet& copy) {
    const std::vector<Tensor> mine = net.all(), theirs = copy.all();
    for (size_t k = 0; k < mine.size(); ++k) {
      const std::string& name = mine[k].name();
      const bool bias = name.size() > 5 && name.compare(name.size() - 5, 5, ".bias") == 0;
      const bool scale = name.size() > 6 && name.compare(name.size() - 6, 6, ".scale") == 0;
      std::normal_distribution<float> normal(scale ? 1.0f : 0.0f, 0.02f);
      float* d = owner.data(mine[k]);
      for (int64_t e = 0; e < mine[k].shape().numel(); ++e) d[e] = bias ? 0.0f : normal(rng);
      std::copy(d, d + mine[k].shape().numel(), other.data(theirs[k]));
    }
  };
  fill(g_step, generator, d_step, generator_copy);
  fill(d_step, discriminator, g_step, discriminator_copy);
}

bool Dcgan::owned(const std::string& name, bool generator) {
  return name.rfind(generator ? "g." : "d.", 0) == 0;
}

DcganSampler::DcganSampler(const DcganConfig& config, int batch) {
  z = graph.input("z", {batch, config.latent, 1, 1});
  weights = dcgan_generator_weights(graph, config, DcganWeights::inputs);
  images = dcgan_generate(graph, weights, z, config, true, "gen", "aux.");
  graph.keep(images);
}

}  // namespace corun::models
