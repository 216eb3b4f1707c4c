// serve/kernels/baselines.hpp — the two baselines of the DeepCPU comparison (section 5.3), without StarPU:
//   gemms  per step, one GEMM per gate and input (8 for LSTM, 6 for GRU), each a parallel OpenBLAS call;
//   fused  per step, one GEMM over [x_t, h_{t-1}] and the concatenated weights (TensorFlow/CNTK's fusion;
//          GRU needs its h-side separately for n, so two GEMMs).
// The caller sets OpenBLAS's thread count (serve-bench: one thread per allocated core). Buffers are
// allocated once; run() only computes.
#pragma once

#include <corun/serve.hpp>

#include <vector>

namespace corun::serve {

enum class BaselineKind { gemms, fused };

class BaselineRunner {
 public:
  BaselineRunner(const Model& model, int batch, int max_seq, BaselineKind kind);
  /// x: [seq, batch, input].
  void run(const float* x, int seq);
  const float* output() const { return outs_.back().data(); }

 private:
  struct Dir {
    std::vector<float> w_cat;   // fused: [G*H, in + H] rows = [W_ih | W_hh]
    std::vector<float> bias_x;  // [G*H]: b_ih (+ b_hh for LSTM)
    std::vector<float> bias_h;  // [G*H]: b_hh (GRU)
  };
  ModelSpec spec_;
  int gates_, batch_, max_seq_;
  BaselineKind kind_;
  const Model* model_;
  std::vector<Dir> dirs_;                      // layer-major
  std::vector<std::vector<float>> outs_;       // per layer [max_seq, batch, H * dirs]
  std::vector<float> xh_, xg_, hg_, c_, tmp_;  // step scratch
};

}  // namespace corun::serve
