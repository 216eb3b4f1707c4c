#include <corun/models/lstm.hpp>

#include "base/check.hpp"

#include <cmath>
#include <random>
#include <tuple>

namespace corun::models {

LstmConfig lstm_config(const std::string& size) {
  LstmConfig c;
  if (size == "small") {
    c.seq = 20, c.hidden = 128;
  } else if (size == "medium") {
    c.seq = 30, c.hidden = 512;
  } else if (size == "large") {
    c.seq = 40, c.hidden = 1024;
  } else {
    detail::fail(Status::invalid_argument, "LSTM size '" + size + "' is not one of small, medium, large");
  }
  c.input = c.hidden;
  return c;
}

Lstm::Lstm(const LstmConfig& cfg, bool training) : config(cfg) {
  CORUN_CHECK(cfg.layers > 0 && cfg.batch > 0 && cfg.seq > 0 && cfg.hidden > 0 && cfg.input > 0 && cfg.classes > 1,
              Status::invalid_argument,
              "LSTM: layers, batch, seq, hidden and input must be positive and classes > 1 (got layers="
                  << cfg.layers << " batch=" << cfg.batch << " seq=" << cfg.seq << " hidden=" << cfg.hidden
                  << " input=" << cfg.input << " classes=" << cfg.classes << ")");
  Graph& g = graph;
  const int64_t B = cfg.batch, H = cfg.hidden;
  for (int t = 0; t < cfg.seq; ++t) x.push_back(g.input("x" + std::to_string(t), {B, cfg.input}));
  targets = g.input("targets", {B, cfg.classes});
  if (cfg.phased)
    for (int t = 0; t < cfg.seq; ++t) times.push_back(g.input("time" + std::to_string(t), {B}));

  std::vector<Tensor> w, b;
  for (int l = 0; l < cfg.layers; ++l) {
    const int64_t in = l == 0 ? cfg.input : H;
    w.push_back(g.param("w" + std::to_string(l), {in + H, 4 * H}));
    b.push_back(g.param("b" + std::to_string(l), {4 * H}));
  }
  const Tensor w_out = g.param("w_out", {H, cfg.classes});
  const Tensor b_out = g.param("b_out", {cfg.classes});

  std::vector<Tensor> below = x;  // the sequence fed to the current layer
  for (int l = 0; l < cfg.layers; ++l) {
    const std::string L = "l" + std::to_string(l);
    Tensor h = g.input("h0_" + L, {B, H});
    Tensor c = g.input("c0_" + L, {B, H});
    Tensor tau, shift;
    if (cfg.phased) {  // parameters (learned, as in the paper) or fixed inputs
      const std::string tn = "tau" + std::to_string(l), sn = "shift" + std::to_string(l);
      tau = cfg.learn_gate ? g.param(tn, {H}) : g.input(tn, {H});
      shift = cfg.learn_gate ? g.param(sn, {H}) : g.input(sn, {H});
    }
    for (int t = 0; t < cfg.seq; ++t) {
      const std::string id = L + ".t" + std::to_string(t);
      const Tensor xh = g.concat({below[static_cast<size_t>(t)], h}, 1, "xh." + id);
      const Tensor gates = g.add(g.matmul(xh, w[static_cast<size_t>(l)], false, false, "mm." + id),
                                 b[static_cast<size_t>(l)], "gates." + id);
      const Tensor h_prev = h, c_prev = c;
      if (cfg.fused_cell) {
        std::tie(h, c) = g.lstm_cell(gates, c, "cell." + id);
      } else {
        const auto ifgo = g.split(gates, 1, {H, H, H, H}, "ifgo." + id);
        const Tensor i = g.sigmoid(ifgo[0], "i." + id);
        const Tensor f = g.sigmoid(ifgo[1], "f." + id);
        const Tensor gg = g.tanh(ifgo[2], "g." + id);
        const Tensor o = g.sigmoid(ifgo[3], "o." + id);
        c = g.add(g.mul(f, c, "fc." + id), g.mul(i, gg, "ig." + id), "c." + id);
        h = g.mul(o, g.tanh(c, "tc." + id), "h." + id);
      }
      if (cfg.phased) {  // x_t = x_{t-1} + k (x~_t - x_{t-1}) = k x~_t + (1 - k) x_{t-1}, for c and h
        const Tensor k = g.phased_gate(times[static_cast<size_t>(t)], tau, shift, cfg.r_on, cfg.leak, "k." + id);
        c = g.add(c_prev, g.mul(k, g.sub(c, c_prev, "dc." + id), "kdc." + id), "pc." + id);
        h = g.add(h_prev, g.mul(k, g.sub(h, h_prev, "dh." + id), "kdh." + id), "ph." + id);
      }
      below[static_cast<size_t>(t)] = h;
    }
  }
  logits = g.add(g.matmul(below.back(), w_out, false, false, "mm.out"), b_out, "logits");
  loss = g.softmax_xent(logits, targets, "loss");
  g.keep(logits);  // public outputs survive Graph::fuse_elementwise
  g.keep(loss);
  if (cfg.before_backward) cfg.before_backward(g);
  if (training) {
    BackwardOptions o = cfg.optimizer;
    o.sgd_update = cfg.sgd_update;
    o.learning_rate = cfg.learning_rate;
    o.momentum = cfg.momentum;
    g.backward(loss, o);
  }
}

void Lstm::init_params() {
  std::mt19937_64 rng(config.seed);
  const float k = 1.0f / std::sqrt(static_cast<float>(config.hidden));
  std::uniform_real_distribution<float> u(-k, k);
  for (Tensor p : graph.params()) {
    float* d = graph.data(p);
    const int64_t n = p.shape().numel();
    const bool bias = p.shape().rank == 1;
    for (int64_t e = 0; e < n; ++e) d[e] = bias ? 0.0f : u(rng);
    // Forget-gate bias 1 (gate order i, f, g, o): the usual start that lets gradients flow through time.
    if (bias && n == 4 * config.hidden)
      for (int64_t e = config.hidden; e < 2 * config.hidden; ++e) d[e] = 1.0f;
  }
  if (!config.phased) return;
  std::uniform_real_distribution<float> log_period(0.0f, std::log(config.max_period)), u01(0.0f, 1.0f);
  for (int l = 0; l < config.layers; ++l) {
    float* tau = graph.data(graph.find("tau" + std::to_string(l)));
    float* shift = graph.data(graph.find("shift" + std::to_string(l)));
    for (int j = 0; j < config.hidden; ++j) {
      tau[j] = std::exp(log_period(rng));
      shift[j] = u01(rng) * tau[j];
    }
  }
}

void SequenceTask::make_times(uint64_t k, std::vector<std::vector<float>>& times) const {
  std::mt19937_64 rng(config_.seed * 7919ULL + k);
  std::uniform_real_distribution<float> u01(0.0f, 1.0f);
  times.assign(static_cast<size_t>(config_.seq), std::vector<float>(static_cast<size_t>(config_.batch)));
  for (int t = 0; t < config_.seq; ++t)
    for (float& v : times[static_cast<size_t>(t)]) v = static_cast<float>(t) + u01(rng);
}

SequenceTask::SequenceTask(const LstmConfig& config) : config_(config) {
  std::mt19937_64 rng(config.seed ^ 0x5eedda7aULL);
  std::normal_distribution<float> n01(0.0f, 1.0f);
  patterns_.resize(static_cast<size_t>(config.classes) * static_cast<size_t>(config.input));
  for (float& p : patterns_) p = n01(rng);
}

void SequenceTask::make_batch(uint64_t k, std::vector<std::vector<float>>& xs, std::vector<float>& targets) const {
  const int B = config_.batch, I = config_.input, C = config_.classes, T = config_.seq;
  std::mt19937_64 rng(config_.seed * 1000003ULL + k);
  std::normal_distribution<float> n01(0.0f, 1.0f);
  std::uniform_int_distribution<int> pick(0, C - 1);
  targets.assign(static_cast<size_t>(B) * static_cast<size_t>(C), 0.0f);
  std::vector<int> label(static_cast<size_t>(B));
  for (int b = 0; b < B; ++b) {
    label[static_cast<size_t>(b)] = pick(rng);
    targets[static_cast<size_t>(b) * C + label[static_cast<size_t>(b)]] = 1.0f;
  }
  // Every step of a sequence of class c is noise plus the class's pattern, scaled by the signal strength.
  xs.assign(static_cast<size_t>(T), std::vector<float>(static_cast<size_t>(B) * static_cast<size_t>(I)));
  for (auto& xt : xs)
    for (int b = 0; b < B; ++b) {
      const float* mu = &patterns_[static_cast<size_t>(label[static_cast<size_t>(b)]) * I];
      for (int i = 0; i < I; ++i) xt[static_cast<size_t>(b) * I + i] = n01(rng) + kSignal * mu[i];
    }
}

}  // namespace corun::models
