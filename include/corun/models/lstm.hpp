// corun/models/lstm.hpp — a stacked LSTM classifier and the synthetic sequence task it learns.
//
// Sizes follow the Graphi paper's Table 1a (batch 64; input = hidden, as in the PTB LSTM it builds on):
//   small  seq 20, hidden 128      medium seq 30, hidden 512      large seq 40, hidden 1024
//
//   auto cfg = corun::models::lstm_config("small");   // 4 layers
//   corun::models::Lstm m(cfg);                       // graph with backward + SGD: one training step
//   corun::models::SequenceTask task(cfg);
//   m.init_params();                                  // before the graph is bound to an engine
//   for (it...) { task.make_batch(it, xs, t); /* eng.write each x[t] and targets */ eng.run(m.graph); }
#pragma once

#include <corun/graph.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace corun::models {

struct LstmConfig {
  int layers = 4;
  int batch = 64;
  int seq = 20;
  int hidden = 128;
  int input = 128;      ///< features per timestep
  int classes = 10;
  float learning_rate = 0.5f;
  float momentum = 0.0f;  ///< SGD momentum (0: plain SGD, the default)
  /// The optimizer beyond SGD / momentum (issue 19): its optimizer, weight_decay, nesterov, beta1, beta2 and
  /// eps are used; its sgd_update, learning_rate and momentum come from this config's own fields.
  BackwardOptions optimizer{};
  uint64_t seed = 42;   ///< parameters and data
  /// One lstm_cell node per step (default), or the unfused split / sigmoid / tanh / mul / add nodes (about
  /// ten tasks per step forward and more backward); both compute the same cell.
  bool fused_cell = true;
  /// Append the SGD updates to the graph (a training step). false: gradients only, for replicas whose update
  /// Engine::run_replicated applies once after summing their gradients.
  bool sgd_update = true;
  /// Phased LSTM (Neil et al. 2016): after each cell step, c_t = k c~_t + (1 - k) c_{t-1} and the same for
  /// h, with k the time gate of the step's timestamps (Graph::phased_gate). Periods tau ~ exp(U(ln 1,
  /// ln max_period)) and shifts s ~ U(0, tau) per unit and layer at initialisation; learned with the other
  /// parameters (params tau<l>, shift<l>) when learn_gate, else fixed inputs.
  bool phased = false;
  bool learn_gate = true;
  float r_on = 0.5f;     ///< open ratio
  float leak = 1e-3f;    ///< alpha: the gate's slope while closed, during training
  float max_period = 3.0f;  ///< largest initial period, in timesteps
  /// Called on the forward graph before backward() (and on an inference graph once it is built): a program's own
  /// rewrite of the forward graph. Empty: nothing (the graph as built). The input-projection pass does not need
  /// it: the engine's plan step runs it (CORUN_INPUT_PROJECTION) on the graph with its backward.
  std::function<void(Graph&)> before_backward;
};

/// The SGD learning rate `corun train --model phased-lstm` uses by default (the LSTM's 0.5 leaves the 4-layer
/// Phased LSTM on its initial plateau; docs/models.md).
inline constexpr float kPhasedLearningRate = 2.0f;

/// "small", "medium" or "large" (4 layers, batch 64); throws corun::Error for another name.
LstmConfig lstm_config(const std::string& size);

/// Cell equations (per layer l, step t; gate order i, f, g, o as in PyTorch):
///   [i f g o] = [x_t, h_{t-1}] W_l + b_l;  c_t = sigmoid(f) c_{t-1} + sigmoid(i) tanh(g);
///   h_t = sigmoid(o) tanh(c_t);  logits = h_T(top) W_out + b_out;  loss = mean softmax cross-entropy.
/// W_l is [(input or hidden) + hidden, 4 hidden]; parameters are named w<l>, b<l>, w_out, b_out. Each step
/// is concat -> matmul -> bias add -> Graph::lstm_cell (or its unfused ops with fused_cell = false).
/// `loss` and `logits` are kept (Graph::keep), so Graph::fuse_elementwise may be run on the graph.
struct Lstm {
  explicit Lstm(const LstmConfig& config, bool training = true);

  LstmConfig config;
  Graph graph;
  std::vector<Tensor> x;        ///< one [batch, input] input per timestep: x0, x1, ...
  std::vector<Tensor> times;    ///< phased: one [batch] timestamp input per timestep (time0, ...); else empty
  Tensor targets;               ///< [batch, classes] one-hot
  Tensor loss;                  ///< [1]
  Tensor logits;                ///< [batch, classes]

  /// Uniform(-1/sqrt(hidden), 1/sqrt(hidden)) weights, forget-gate bias 1 (phased: and each layer's
  /// periods and shifts, inputs tau<l> and shift<l>), from config.seed. Writes through
  /// Graph::data, so call it before the graph is bound to an Engine.
  void init_params();
};

/// A learnable synthetic task: each sequence gets a uniformly drawn class c, and every step is
/// x_t = N(0, I) noise + 0.5 * pattern_c, with one fixed random N(0, I) pattern per class. The model must
/// tell the class from the noisy sequence. Batch k is the same for every run with the same seed.
class SequenceTask {
 public:
  explicit SequenceTask(const LstmConfig& config);
  /// Fills the inputs (seq x [batch, input]) and one-hot targets of batch `k`.
  void make_batch(uint64_t k, std::vector<std::vector<float>>& xs, std::vector<float>& targets) const;
  /// Phased LSTM timestamps of batch k: step t of sample b happens at t + U(0, 1) (asynchronous samples).
  void make_times(uint64_t k, std::vector<std::vector<float>>& times) const;

 private:
  LstmConfig config_;
  static constexpr float kSignal = 0.5f;  // pattern strength relative to the unit noise
  std::vector<float> patterns_;          // [classes, input]: one fixed N(0, 1) pattern per class
};

}  // namespace corun::models
