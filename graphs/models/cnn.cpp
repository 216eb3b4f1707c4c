// The convolutional models of corun/models/cnn.hpp, built from conv2d, pooling, add_n, concat, reshape and
// dense layers. Parameter names follow the layer names (conv1.w, conv1.b, ...), so a training graph and an
// inference graph of one config have the same parameters.
#include <corun/models/cnn.hpp>

#include "base/check.hpp"

#include <cmath>
#include <random>

namespace corun::models {
namespace {

// Layer helpers: each adds its parameters (named "<name>.w", "<name>.b") and nodes.
struct Builder {
  Graph& g;

  Tensor conv(Tensor x, const std::string& name, int filters, int kernel, int stride, int pad) {
    const int64_t c = x.shape()[1];
    const Tensor w = g.param(name + ".w", {filters, c, kernel, kernel});
    const Tensor b = g.param(name + ".b", {filters});
    return g.conv2d(x, w, b, stride, pad, name);
  }
  Tensor conv_relu(Tensor x, const std::string& name, int filters, int kernel, int stride = 1) {
    return g.relu(conv(x, name, filters, kernel, stride, kernel / 2), name + ".relu");
  }
  // Flattens an NCHW tensor to [N, C*H*W] first.
  Tensor dense(Tensor x, const std::string& name, int outputs) {
    if (x.shape().rank != 2) x = g.reshape(x, {x.shape()[0], x.shape().numel() / x.shape()[0]}, name + ".flatten");
    const Tensor w = g.param(name + ".w", {x.shape()[1], outputs});
    const Tensor b = g.param(name + ".b", {outputs});
    return g.add(g.matmul(x, w, false, false, name + ".mm"), b, name);
  }
};

Tensor cifar_quick(Builder& b, Tensor x, int classes) {
  Graph& g = b.g;
  Tensor h = b.conv(x, "conv1", 32, 5, 1, 2);
  h = g.relu(g.max_pool(h, 3, 2, 0, "pool1"), "relu1");
  h = g.relu(b.conv(h, "conv2", 32, 5, 1, 2), "relu2");
  h = g.avg_pool(h, 3, 2, 0, "pool2");
  h = g.relu(b.conv(h, "conv3", 64, 5, 1, 2), "relu3");
  h = g.avg_pool(h, 3, 2, 0, "pool3");
  h = b.dense(h, "fc1", 64);  // Caffe's cifar10_quick has no nonlinearity between its two dense layers
  return b.dense(h, "fc2", classes);
}

Tensor pathnet(Builder& b, Tensor x, const CnnConfig& cfg) {
  Tensor h = x;
  for (int l = 0; l < cfg.layers; ++l) {
    std::vector<Tensor> outs;
    for (int m = 0; m < cfg.modules; ++m) {
      const std::string name = "l" + std::to_string(l) + "m" + std::to_string(m);
      outs.push_back(b.g.max_pool(b.conv_relu(h, name, cfg.filters, 3), 2, 2, 0, name + ".pool"));
    }
    h = b.g.add_n(outs, "l" + std::to_string(l) + ".sum");
  }
  return b.dense(h, "head", cfg.classes);
}

// One inception block: 1x1; 1x1 -> 3x3; 1x1 -> 5x5; 3x3 max pool -> 1x1; concatenated along channels.
Tensor inception(Builder& b, Tensor x, const std::string& name, const int (&f)[6], int width) {
  const Tensor b1 = b.conv_relu(x, name + ".1x1", f[0] * width, 1);
  const Tensor b2 = b.conv_relu(b.conv_relu(x, name + ".3x3r", f[1] * width, 1), name + ".3x3", f[2] * width, 3);
  const Tensor b3 = b.conv_relu(b.conv_relu(x, name + ".5x5r", f[3] * width, 1), name + ".5x5", f[4] * width, 5);
  const Tensor b4 = b.conv_relu(b.g.max_pool(x, 3, 1, 1, name + ".pool"), name + ".proj", f[5] * width, 1);
  return b.g.concat({b1, b2, b3, b4}, 1, name);
}

Tensor googlenet(Builder& b, Tensor x, const CnnConfig& cfg) {
  Graph& g = b.g;
  const int w = cfg.width;
  // Filter counts of Szegedy et al. 2015, Table 1: #1x1, #3x3 reduce, #3x3, #5x5 reduce, #5x5, pool proj.
  static const int k3a[6] = {64, 96, 128, 16, 32, 32}, k3b[6] = {128, 128, 192, 32, 96, 64},
                   k4a[6] = {192, 96, 208, 16, 48, 64}, k4b[6] = {160, 112, 224, 24, 64, 64},
                   k4c[6] = {128, 128, 256, 24, 64, 64}, k4d[6] = {112, 144, 288, 32, 64, 64},
                   k4e[6] = {256, 160, 320, 32, 128, 128}, k5a[6] = {256, 160, 320, 32, 128, 128},
                   k5b[6] = {384, 192, 384, 48, 128, 128};
  Tensor h = b.conv_relu(x, "stem.conv1", 64 * w, 7, 2);
  h = g.max_pool(h, 3, 2, 1, "stem.pool1");
  h = b.conv_relu(h, "stem.conv2r", 64 * w, 1);
  h = b.conv_relu(h, "stem.conv2", 192 * w, 3);
  h = g.max_pool(h, 3, 2, 1, "stem.pool2");
  h = inception(b, h, "3a", k3a, w);
  h = inception(b, h, "3b", k3b, w);
  h = g.max_pool(h, 3, 2, 1, "pool3");
  for (auto [name, f] : {std::pair{"4a", &k4a}, {"4b", &k4b}, {"4c", &k4c}, {"4d", &k4d}, {"4e", &k4e}})
    h = inception(b, h, name, *f, w);
  h = g.max_pool(h, 3, 2, 1, "pool4");
  h = inception(b, h, "5a", k5a, w);
  h = inception(b, h, "5b", k5b, w);
  const int64_t spatial = h.shape()[2];
  h = g.avg_pool(h, static_cast<int>(spatial), 1, 0, "global_pool");
  return b.dense(h, "head", cfg.classes);
}

void check_size(const std::string& size) {
  CORUN_CHECK(size == "small" || size == "medium" || size == "large", Status::invalid_argument,
              "model size must be small, medium or large, got '" << size << "'");
}

int size_index(const std::string& size) { return size == "small" ? 0 : size == "medium" ? 1 : 2; }

// The classifier layer's weights, relative to He-uniform (Cnn::init_params).
constexpr float kClassifierScale = 0.1f;

}  // namespace

CnnConfig cifar_quick_config() {
  CnnConfig c;
  c.kind = CnnKind::cifar_quick;
  c.batch = 64;
  c.image = 28;
  c.channels = 1;
  c.learning_rate = 0.01f;  // 0.05 diverged in the first 100 steps; 0.01 and 0.003 both reach ~72% there
  c.momentum = 0.9f;
  return c;
}

CnnConfig pathnet_config(const std::string& size) {
  check_size(size);
  const int k = size_index(size);
  CnnConfig c;
  c.kind = CnnKind::pathnet;
  c.batch = 64;
  static const int kImage[] = {32, 48, 64}, kFilters[] = {16, 32, 48};
  c.image = kImage[k];
  c.filters = kFilters[k];
  c.channels = 3;
  c.learning_rate = 0.01f;
  c.momentum = 0.9f;
  return c;
}

CnnConfig googlenet_config(const std::string& size) {
  check_size(size);
  const int k = size_index(size);
  CnnConfig c;
  c.kind = CnnKind::googlenet;
  c.batch = 32;
  static const int kImage[] = {64, 192, 256}, kWidth[] = {1, 2, 4};
  c.image = kImage[k];
  c.width = kWidth[k];
  c.channels = 3;
  c.learning_rate = 0.01f;
  // No normalisation layers: at the full rate from the first step the loss jumped 3.4 -> 21 at step 2.
  // Warmed up over 20 iterations it stays within 1.15x of the first loss and ends below it (64 px).
  c.warmup = 20;
  c.momentum = 0.9f;
  return c;
}

const char* cnn_name(CnnKind kind) {
  switch (kind) {
    case CnnKind::cifar_quick: return "cifar-quick";
    case CnnKind::pathnet: return "pathnet";
    case CnnKind::googlenet: return "googlenet";
  }
  return "?";
}

Cnn::Cnn(const CnnConfig& cfg, bool training) : config(cfg) {
  CORUN_CHECK(cfg.batch >= 1 && cfg.image >= 1 && cfg.channels >= 1 && cfg.classes >= 2, Status::invalid_argument,
              cnn_name(cfg.kind) << ": batch, image and channels must be positive and classes >= 2");
  x = graph.input("x", {cfg.batch, cfg.channels, cfg.image, cfg.image});
  targets = graph.input("targets", {cfg.batch, cfg.classes});
  Builder b{graph};
  switch (cfg.kind) {
    case CnnKind::cifar_quick: logits = cifar_quick(b, x, cfg.classes); break;
    case CnnKind::pathnet: logits = pathnet(b, x, cfg); break;
    case CnnKind::googlenet: logits = googlenet(b, x, cfg); break;
  }
  loss = graph.softmax_xent(logits, targets, "loss");
  graph.keep(logits);
  graph.keep(loss);
  if (training) {
    BackwardOptions o = cfg.optimizer;
    o.sgd_update = cfg.sgd_update;
    o.learning_rate = cfg.learning_rate;
    o.momentum = cfg.momentum;
    graph.backward(loss, o);
  }
}

void Cnn::init_params() {
  std::mt19937_64 rng(config.seed);
  const std::vector<Tensor> params = graph.params();
  // The classifier (the dense layer that makes the logits) is built last: its weight is the last matrix.
  size_t classifier = params.size();
  for (size_t k = 0; k < params.size(); ++k)
    if (params[k].shape().rank == 2) classifier = k;
  for (size_t k = 0; k < params.size(); ++k) {
    const Shape& s = params[k].shape();
    float* d = graph.data(params[k]);
    if (s.rank == 1) {  // biases
      std::fill_n(d, s.numel(), 0.0f);
      continue;
    }
    const int64_t fan_in = s.rank == 4 ? s[1] * s[2] * s[3] : s[0];
    float bound = std::sqrt(6.0f / static_cast<float>(fan_in));  // He-uniform: a ReLU layer keeps the variance
    // PathNet sums `modules` module outputs per layer, and each is ReLU then max pool: positive, so their
    // means add up coherently (x modules, not x sqrt(modules)). Scaled by 1/sqrt(modules), as before, the
    // second moment still grew ~14x per layer and the first loss of `small` was 31.5; 1/modules keeps
    // every layer's sum at the scale of one module's output.
    if (config.kind == CnnKind::pathnet && s.rank == 4) bound /= static_cast<float>(config.modules);
    // A classifier at a tenth of the scale makes near-zero logits: the first loss is about ln(classes) (2.30),
    // not the 3.4 (GoogLeNet) or 2.7 (CIFAR-quick) of full-scale random logits.
    if (k == classifier) bound *= kClassifierScale;
    std::uniform_real_distribution<float> u(-bound, bound);
    for (int64_t e = 0; e < s.numel(); ++e) d[e] = u(rng);
  }
}

SyntheticImages::SyntheticImages(const CnnConfig& config) : config_(config) {
  std::mt19937_64 rng(config.seed ^ 0x1a6e5eedULL);
  std::normal_distribution<float> n01(0.0f, 1.0f);
  patterns_.resize(static_cast<size_t>(config.classes) * config.channels * config.image * config.image);
  for (float& p : patterns_) p = n01(rng);
  // A colour per class on top (drawn after the patterns, which therefore stay those of earlier versions).
  const int64_t area = static_cast<int64_t>(config.image) * config.image;
  for (int c = 0; c < config.classes; ++c)
    for (int ch = 0; ch < config.channels; ++ch) {
      const float colour = n01(rng);
      float* p = patterns_.data() + (static_cast<int64_t>(c) * config.channels + ch) * area;
      for (int64_t e = 0; e < area; ++e) p[e] += colour;
    }
}

void SyntheticImages::make_batch(uint64_t k, std::vector<float>& images, std::vector<float>& targets) const {
  constexpr float kSignal = 0.5f;  // pattern strength relative to the unit noise
  const int64_t per = static_cast<int64_t>(config_.channels) * config_.image * config_.image;
  std::mt19937_64 rng(config_.seed * 1000003ULL + k);
  std::normal_distribution<float> n01(0.0f, 1.0f);
  std::uniform_int_distribution<int> pick(0, config_.classes - 1);
  images.resize(static_cast<size_t>(config_.batch * per));
  targets.assign(static_cast<size_t>(config_.batch) * config_.classes, 0.0f);
  for (int b = 0; b < config_.batch; ++b) {
    const int c = pick(rng);
    targets[static_cast<size_t>(b) * config_.classes + c] = 1.0f;
    const float* mu = patterns_.data() + static_cast<int64_t>(c) * per;
    for (int64_t e = 0; e < per; ++e) images[static_cast<size_t>(b * per + e)] = n01(rng) + kSignal * mu[e];
  }
}

}  // namespace corun::models
