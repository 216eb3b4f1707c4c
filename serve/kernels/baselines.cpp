#include "serve/kernels/baselines.hpp"

#include "base/check.hpp"
#include "serve/kernels/cells.hpp"

#include <cstring>

namespace corun::serve {

BaselineRunner::BaselineRunner(const Model& model, int batch, int max_seq, BaselineKind kind)
    : spec_(model.spec()), gates_(gate_count(model.spec().cell)), batch_(batch), max_seq_(max_seq), kind_(kind),
      model_(&model) {
  CORUN_CHECK(batch >= 1 && max_seq >= 1, Status::invalid_argument, "serve: baseline batch and sequence must be >= 1");
  const int H = spec_.hidden, dirs = spec_.directions(), G = gates_;
  for (int l = 0; l < spec_.layers; ++l) {
    outs_.emplace_back(static_cast<size_t>(max_seq) * batch * H * dirs, 0.0f);
    const int in = spec_.layer_input(l);
    for (int d = 0; d < dirs; ++d) {
      const CellWeights& w = model.weights(l, d);
      Dir dd;
      if (kind == BaselineKind::fused) {
        dd.w_cat.resize(static_cast<size_t>(G) * H * (in + H));
        for (int r = 0; r < G * H; ++r) {
          std::memcpy(&dd.w_cat[static_cast<size_t>(r) * (in + H)], &w.w_ih[static_cast<size_t>(r) * in], sizeof(float) * in);
          std::memcpy(&dd.w_cat[static_cast<size_t>(r) * (in + H) + in], &w.w_hh[static_cast<size_t>(r) * H], sizeof(float) * H);
        }
      }
      dd.bias_x = w.b_ih;
      dd.bias_h = w.b_hh;
      if (spec_.cell == Cell::lstm)
        for (int r = 0; r < G * H; ++r) dd.bias_x[static_cast<size_t>(r)] += w.b_hh[static_cast<size_t>(r)];
      dirs_.push_back(std::move(dd));
    }
  }
  const int max_in = std::max(spec_.input, H * dirs);
  xh_.assign(static_cast<size_t>(batch) * (max_in + H), 0.0f);
  xg_.assign(static_cast<size_t>(batch) * G * H, 0.0f);
  hg_.assign(static_cast<size_t>(batch) * G * H, 0.0f);
  c_.assign(static_cast<size_t>(batch) * H, 0.0f);
  tmp_.assign(static_cast<size_t>(H), 0.0f);
}

void BaselineRunner::run(const float* x, int seq) {
  CORUN_CHECK(seq >= 1 && seq <= max_seq_, Status::invalid_argument,
              "serve: sequence of " << seq << " steps; the baseline was sized for 1 to " << max_seq_);
  const int H = spec_.hidden, dirs = spec_.directions(), G = gates_, B = batch_, GH = G * H;
  const int slot[4] = {0, 1, 2, 3};
  const bool lstm = spec_.cell == Cell::lstm;
  for (int l = 0; l < spec_.layers; ++l) {
    const int in = spec_.layer_input(l);
    const float* src = l == 0 ? x : outs_[static_cast<size_t>(l - 1)].data();
    float* out = outs_[static_cast<size_t>(l)].data();
    const int ldo = H * dirs;
    for (int d = 0; d < dirs; ++d) {
      const Dir& dd = dirs_[static_cast<size_t>(l * dirs + d)];
      const CellWeights& w = model_->weights(l, d);
      for (int step = 0; step < seq; ++step) {
        const int t = d == 0 ? step : seq - 1 - step;
        const int tp = d == 0 ? t - 1 : t + 1;
        const float* xt = src + static_cast<int64_t>(t) * B * in;
        const float* hp = step == 0 ? nullptr : out + static_cast<int64_t>(tp) * B * ldo + d * H;
        for (int b = 0; b < B; ++b) {
          std::memcpy(&xg_[static_cast<size_t>(b) * GH], dd.bias_x.data(), sizeof(float) * GH);
          if (!lstm) std::memcpy(&hg_[static_cast<size_t>(b) * GH], dd.bias_h.data(), sizeof(float) * GH);
        }
        float* hside = lstm ? xg_.data() : hg_.data();
        if (kind_ == BaselineKind::fused && lstm) {
          for (int b = 0; b < B; ++b) {
            std::memcpy(&xh_[static_cast<size_t>(b) * (in + H)], xt + static_cast<int64_t>(b) * in, sizeof(float) * in);
            float* hdst = &xh_[static_cast<size_t>(b) * (in + H) + in];
            if (hp != nullptr) {
              std::memcpy(hdst, hp + static_cast<int64_t>(b) * ldo, sizeof(float) * H);
            } else {
              std::memset(hdst, 0, sizeof(float) * H);
            }
          }
          gemm_acc_nt(B, GH, in + H, xh_.data(), in + H, dd.w_cat.data(), in + H, xg_.data(), GH);
        } else if (kind_ == BaselineKind::fused) {
          gemm_acc_nt(B, GH, in, xt, in, w.w_ih.data(), in, xg_.data(), GH);
          if (hp != nullptr) gemm_acc_nt(B, GH, H, hp, ldo, w.w_hh.data(), H, hside, GH);
        } else {
          for (int g = 0; g < G; ++g) {
            gemm_acc_nt(B, H, in, xt, in, w.w_ih.data() + static_cast<int64_t>(g) * H * in, in, xg_.data() + g * H, GH);
            if (hp != nullptr)
              gemm_acc_nt(B, H, H, hp, ldo, w.w_hh.data() + static_cast<int64_t>(g) * H * H, H, hside + g * H, GH);
          }
        }
        float* h = out + static_cast<int64_t>(t) * B * ldo + d * H;
        if (lstm) {
          lstm_cell_block(B, H, xg_.data(), GH, slot, c_.data(), step == 0, h, ldo, tmp_.data());
        } else {
          gru_cell_block(B, H, xg_.data(), GH, hg_.data(), GH, slot, hp, h, ldo);
        }
      }
    }
  }
}

}  // namespace corun::serve
