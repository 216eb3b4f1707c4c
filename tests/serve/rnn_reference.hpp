// tests/serve/rnn_reference.hpp — the plain-loop LSTM/GRU forward (double precision, std::exp/std::tanh)
// the serving runtime is checked against, written from PyTorch's equations:
//   LSTM: i,f,g,o = W_ih x + b_ih + W_hh h + b_hh (rows in that order); c = f c + i g; h = o tanh(c)
//   GRU:  r,z = sigma(W_i* x + b_i* + W_h* h + b_h*); n = tanh(W_in x + b_in + r (W_hn h + b_hn));
//         h = (1 - z) n + z h
// Layers stack; a reverse direction reads the sequence backwards; outputs concatenate directions.
#pragma once

#include <corun/serve.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

namespace corun::test {

inline double ref_sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

/// x: [seq, batch, input]; returns [seq, batch, hidden * dirs] of the last layer.
inline std::vector<float> rnn_reference(const serve::Model& m, const std::vector<float>& x, int batch, int seq) {
  const serve::ModelSpec& s = m.spec();
  const int H = s.hidden, dirs = s.directions();
  const bool lstm = s.cell == serve::Cell::lstm;
  std::vector<double> in(x.begin(), x.end());
  int in_f = s.input;
  for (int l = 0; l < s.layers; ++l) {
    std::vector<double> out(static_cast<size_t>(seq) * batch * H * dirs, 0.0);
    for (int d = 0; d < dirs; ++d) {
      const serve::CellWeights& w = m.weights(l, d);
      for (int b = 0; b < batch; ++b) {
        std::vector<double> h(static_cast<size_t>(H), 0.0), c(static_cast<size_t>(H), 0.0);
        for (int step = 0; step < seq; ++step) {
          const int t = d == 0 ? step : seq - 1 - step;
          const double* xt = &in[(static_cast<size_t>(t) * batch + b) * in_f];
          const int G = lstm ? 4 : 3;
          std::vector<double> gx(static_cast<size_t>(G * H)), gh(static_cast<size_t>(G * H));
          for (int r = 0; r < G * H; ++r) {
            double ax = w.b_ih[r], ah = w.b_hh[r];
            for (int k = 0; k < in_f; ++k) ax += static_cast<double>(w.w_ih[static_cast<size_t>(r) * in_f + k]) * xt[k];
            for (int k = 0; k < H; ++k) ah += static_cast<double>(w.w_hh[static_cast<size_t>(r) * H + k]) * h[k];
            gx[r] = ax;
            gh[r] = ah;
          }
          std::vector<double> hn(static_cast<size_t>(H));
          for (int j = 0; j < H; ++j) {
            if (lstm) {
              const double i = ref_sigmoid(gx[j] + gh[j]);
              const double f = ref_sigmoid(gx[H + j] + gh[H + j]);
              const double g = std::tanh(gx[2 * H + j] + gh[2 * H + j]);
              const double o = ref_sigmoid(gx[3 * H + j] + gh[3 * H + j]);
              c[j] = f * c[j] + i * g;
              hn[j] = o * std::tanh(c[j]);
            } else {
              const double r = ref_sigmoid(gx[j] + gh[j]);
              const double z = ref_sigmoid(gx[H + j] + gh[H + j]);
              const double n = std::tanh(gx[2 * H + j] + r * gh[2 * H + j]);
              hn[j] = (1.0 - z) * n + z * h[j];
            }
          }
          h = hn;
          for (int j = 0; j < H; ++j) out[(static_cast<size_t>(t) * batch + b) * H * dirs + d * H + j] = h[j];
        }
      }
    }
    in = out;
    in_f = H * dirs;
  }
  return std::vector<float>(in.begin(), in.end());
}

/// ||a - b|| / ||b|| in double.
template <class A, class B>
double normwise_rel(const A& a, const B& b) {
  double num = 0.0, den = 0.0;
  for (size_t i = 0; i < b.size(); ++i) {
    const double d = static_cast<double>(a[i]) - static_cast<double>(b[i]);
    num += d * d;
    den += static_cast<double>(b[i]) * b[i];
  }
  return std::sqrt(num) / std::max(std::sqrt(den), 1e-30);
}

}  // namespace corun::test
