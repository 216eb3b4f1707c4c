#include "serve/kernels/executor.hpp"

#include "base/check.hpp"
#include "serve/kernels/cells.hpp"
#include "serve/kernels/step_gemm.hpp"

#include <immintrin.h>
#include <sched.h>

#include <algorithm>
#include <cstring>

namespace corun::serve {

void SpinBarrier::wait() {
  if (members_ <= 1) return;
  const uint32_t gen = generation_.load(std::memory_order_acquire);
  if (arrived_.fetch_add(1, std::memory_order_acq_rel) == members_ - 1) {
    arrived_.store(0, std::memory_order_relaxed);
    generation_.store(gen + 1, std::memory_order_release);
    return;
  }
  int spins = 0;
  while (generation_.load(std::memory_order_acquire) == gen) {
    if (++spins < 2000) {
      _mm_pause();
    } else {
      sched_yield();
    }
  }
}

// One member's share of one layer and direction: batch rows [b0, b0+bn), hidden units [h0, h0+hn).
struct Executor::Block {
  int layer = 0, dir = 0, in = 0;
  int b0 = 0, bn = 0, h0 = 0, hn = 0;
  int hoisted = 0;               // gates whose input MM is in the time-independent phase (slots [0, hoisted))
  int slot[4] = {0, 0, 0, 0};    // gate g's columns start at slot[g] * hn
  std::vector<float> w_ih;       // [G*hn, in], slot-major (the hoisted phase's GEMM reads it)
  StepGemm step_input;           // x_t W_ih^T for the slots not hoisted (none when every gate is hoisted)
  StepGemm step_recurrent;       // h_{t-1} W_hh^T over every slot
  std::vector<float> bias_x;     // [G*hn]: b_ih (+ b_hh for LSTM)
  std::vector<float> bias_h;     // [G*hn]: b_hh (GRU only)
  std::vector<float> xg;         // [max_seq, bn, G*hn]: x-side pre-activations (LSTM: the whole gates)
  std::vector<float> hg;         // [bn, G*hn] (GRU)
  std::vector<float> c;          // [bn, hn] (LSTM)
  std::vector<float> tmp;        // [hn]
};

Executor::~Executor() = default;

namespace {
// The plan against the model and the sizes: team width, inline mode, direction groups, partition and the
// hoisted gate mask.
void check_plan(const ModelSpec& spec, int gates, int batch, int max_seq, const Plan& plan) {
  CORUN_CHECK(batch >= 1, Status::invalid_argument, "serve: batch " << batch << " must be at least 1");
  CORUN_CHECK(max_seq >= 1, Status::invalid_argument, "serve: max sequence " << max_seq << " must be at least 1");
  const int dirs = spec.directions();
  const int w = plan.workers;
  CORUN_CHECK(w >= 1, Status::invalid_argument, "serve: plan with " << w << " workers");
  CORUN_CHECK(plan.mode != ExecMode::on_caller || w == 1, Status::invalid_argument,
              "serve: an inline plan runs on the calling thread alone; it has " << w << " workers, not 1");
  CORUN_CHECK(plan.direction_groups == 1 || (plan.direction_groups == 2 && dirs == 2 && w % 2 == 0),
              Status::invalid_argument,
              "serve: direction groups " << plan.direction_groups << " need a bidirectional model and an even team");
  const int per_dir = w / plan.direction_groups;  // members working on one direction
  CORUN_CHECK(plan.xi >= 1 && plan.xj >= 1 && plan.xi * plan.xj <= per_dir && plan.xi <= batch &&
                  plan.xj <= spec.hidden,
              Status::invalid_argument,
              "serve: partition " << plan.xi << "x" << plan.xj << " does not fit " << per_dir << " members, batch "
                                  << batch << " and " << spec.hidden << " hidden units");
  CORUN_CHECK(plan.hoisted_gates < (1u << gates), Status::invalid_argument,
              "serve: hoisted gate mask " << plan.hoisted_gates << " has bits beyond the cell's " << gates << " gates");
}
}  // namespace

Executor::Executor(const Model& model, int batch, int max_seq, const Plan& plan)
    : spec_(model.spec()), gates_(gate_count(model.spec().cell)), batch_(batch), max_seq_(max_seq), plan_(plan) {
  check_plan(spec_, gates_, batch, max_seq, plan);
  const int dirs = spec_.directions();
  const int w = plan.workers;
  const int per_dir = w / plan.direction_groups;  // members working on one direction
  const int64_t H = spec_.hidden;
  for (int l = 0; l < spec_.layers; ++l)
    outs_.emplace_back(static_cast<size_t>(max_seq) * batch * H * dirs, 0.0f);
  blocks_.assign(static_cast<size_t>(w), std::vector<std::vector<Block>>(static_cast<size_t>(spec_.layers)));

  // Slot order: hoisted gates first, so the time-independent phase writes one contiguous column range.
  int order[4];
  int nh = 0;
  for (int g = 0; g < gates_; ++g)
    if (plan.hoisted_gates & (1u << g)) order[nh++] = g;
  int n = nh;
  for (int g = 0; g < gates_; ++g)
    if (!(plan.hoisted_gates & (1u << g))) order[n++] = g;

  for (int rank = 0; rank < w; ++rank) {
    const int group = rank / per_dir;
    const int local = rank % per_dir;
    if (local >= plan.xi * plan.xj) continue;  // idle member (P larger than the partition)
    const int bi = local / plan.xj, bj = local % plan.xj;
    const int b0 = static_cast<int>(static_cast<int64_t>(batch) * bi / plan.xi);
    const int b1 = static_cast<int>(static_cast<int64_t>(batch) * (bi + 1) / plan.xi);
    const int h0 = static_cast<int>(H * bj / plan.xj);
    const int h1 = static_cast<int>(H * (bj + 1) / plan.xj);
    for (int l = 0; l < spec_.layers; ++l)
      for (int d = 0; d < dirs; ++d) {
        if (plan.direction_groups == 2 && d != group) continue;
        Block b;
        b.layer = l;
        b.dir = d;
        b.in = spec_.layer_input(l);
        b.b0 = b0;
        b.bn = b1 - b0;
        b.h0 = h0;
        b.hn = h1 - h0;
        b.hoisted = nh;
        fill_block(b, model.weights(l, d), order);
        blocks_[static_cast<size_t>(rank)][static_cast<size_t>(l)].push_back(std::move(b));
      }
  }
}

// The block's slice of its layer's weights in slot order (`order`: the gate of each slot), its step GEMMs and
// its scratch buffers; its place (layer, direction, rows, units, hoisted gates) is set.
void Executor::fill_block(Block& b, const CellWeights& cw, const int* order) const {
  const int64_t H = spec_.hidden;
  const int dirs = spec_.directions();
  const size_t ghn = static_cast<size_t>(gates_ * b.hn);
  b.w_ih.resize(ghn * static_cast<size_t>(b.in));
  std::vector<float> w_hh(ghn * static_cast<size_t>(H));
  b.bias_x.resize(ghn);
  b.bias_h.resize(ghn);
  for (int s = 0; s < gates_; ++s) {
    const int g = order[s];
    b.slot[g] = s;
    for (int u = 0; u < b.hn; ++u) {
      const size_t src = static_cast<size_t>(g * H + b.h0 + u);
      const size_t dst = static_cast<size_t>(s * b.hn + u);
      std::memcpy(&b.w_ih[dst * b.in], &cw.w_ih[src * b.in], sizeof(float) * static_cast<size_t>(b.in));
      std::memcpy(&w_hh[dst * H], &cw.w_hh[src * H], sizeof(float) * static_cast<size_t>(H));
      if (spec_.cell == Cell::lstm) {
        b.bias_x[dst] = cw.b_ih[src] + cw.b_hh[src];
        b.bias_h[dst] = 0.0f;
      } else {
        b.bias_x[dst] = cw.b_ih[src];
        b.bias_h[dst] = cw.b_hh[src];
      }
    }
  }
  const int g_cols = static_cast<int>(ghn), first = b.hoisted * b.hn;
  const int in_row = b.layer == 0 ? spec_.input : static_cast<int>(H) * dirs;
  auto kernel = [&](int cols, int k) {
    return plan_.step_gemm == StepGemmKernel::automatic ? prefer_step_gemm(b.bn, cols, k) : plan_.step_gemm;
  };
  if (first < g_cols)
    b.step_input = StepGemm(kernel(g_cols - first, b.in), b.bn, g_cols - first, b.in,
                            b.w_ih.data() + static_cast<size_t>(first) * b.in, b.in, in_row, g_cols);
  b.step_recurrent = StepGemm(kernel(g_cols, static_cast<int>(H)), b.bn, g_cols, static_cast<int>(H), w_hh.data(),
                              static_cast<int>(H), static_cast<int>(H) * dirs, g_cols);
  b.xg.assign(static_cast<size_t>(max_seq_) * b.bn * ghn, 0.0f);
  if (spec_.cell == Cell::gru) b.hg.assign(static_cast<size_t>(b.bn) * ghn, 0.0f);
  if (spec_.cell == Cell::lstm) b.c.assign(static_cast<size_t>(b.bn) * b.hn, 0.0f);
  b.tmp.assign(static_cast<size_t>(b.hn), 0.0f);
}

void Executor::set_input(const float* x, int seq) {
  CORUN_CHECK(seq >= 1 && seq <= max_seq_, Status::invalid_argument,
              "serve: sequence of " << seq << " steps; this server was planned for 1 to " << max_seq_);
  input_ = x;
  seq_ = seq;
}

void Executor::hoist(Block& b) {
  if (b.hoisted == 0) return;
  const int ghn = gates_ * b.hn;
  const int ncols = b.hoisted * b.hn;
  const int dirs = spec_.directions();
  const float* in = b.layer == 0 ? input_ : outs_[static_cast<size_t>(b.layer - 1)].data();
  const int in_row = b.layer == 0 ? spec_.input : spec_.hidden * dirs;
  for (int64_t r = 0; r < static_cast<int64_t>(seq_) * b.bn; ++r)
    std::memcpy(&b.xg[static_cast<size_t>(r * ghn)], b.bias_x.data(), sizeof(float) * static_cast<size_t>(ncols));
  if (b.bn == batch_) {
    // Rule 3's payoff: one GEMM over every step's rows.
    gemm_acc_nt(seq_ * batch_, ncols, b.in, in, in_row, b.w_ih.data(), b.in, b.xg.data(), ghn);
  } else {
    for (int t = 0; t < seq_; ++t)
      gemm_acc_nt(b.bn, ncols, b.in, in + (static_cast<int64_t>(t) * batch_ + b.b0) * in_row, in_row, b.w_ih.data(),
                  b.in, b.xg.data() + static_cast<int64_t>(t) * b.bn * ghn, ghn);
  }
}

void Executor::step(Block& b, int t) {
  const int dirs = spec_.directions();
  const int64_t H = spec_.hidden;
  const int ghn = gates_ * b.hn;
  const int tt = b.dir == 0 ? t : seq_ - 1 - t;              // time index this direction is at
  const int tp = b.dir == 0 ? tt - 1 : tt + 1;               // its previous step
  const int64_t ldo = H * dirs;
  float* out = outs_[static_cast<size_t>(b.layer)].data();
  const float* h_prev = t == 0 ? nullptr : out + (static_cast<int64_t>(tp) * batch_ + b.b0) * ldo + b.dir * H;
  float* h = out + (static_cast<int64_t>(tt) * batch_ + b.b0) * ldo + b.dir * H;
  float* xg = b.xg.data() + static_cast<int64_t>(tt) * b.bn * ghn;

  // Input MMs that the schedule keeps in the step (not hoisted): x_t W for the remaining slots.
  const int first = b.hoisted * b.hn;
  if (first < ghn) {
    const float* in = b.layer == 0 ? input_ : outs_[static_cast<size_t>(b.layer - 1)].data();
    const int in_row = b.layer == 0 ? spec_.input : static_cast<int>(H) * dirs;
    for (int r = 0; r < b.bn; ++r)
      std::memcpy(xg + static_cast<int64_t>(r) * ghn + first, b.bias_x.data() + first,
                  sizeof(float) * static_cast<size_t>(ghn - first));
    b.step_input.run(in + (static_cast<int64_t>(tt) * batch_ + b.b0) * in_row, xg + first);
  }
  if (spec_.cell == Cell::lstm) {
    if (h_prev != nullptr) b.step_recurrent.run(h_prev, xg);
    lstm_cell_block(b.bn, b.hn, xg, ghn, b.slot, b.c.data(), t == 0, h + b.h0, static_cast<int>(ldo), b.tmp.data());
  } else {
    for (int r = 0; r < b.bn; ++r)
      std::memcpy(b.hg.data() + static_cast<int64_t>(r) * ghn, b.bias_h.data(), sizeof(float) * static_cast<size_t>(ghn));
    if (h_prev != nullptr) b.step_recurrent.run(h_prev, b.hg.data());
    gru_cell_block(b.bn, b.hn, xg, ghn, b.hg.data(), ghn, b.slot, h_prev == nullptr ? nullptr : h_prev + b.h0,
                   h + b.h0, static_cast<int>(ldo));
  }
}

void Executor::run_phase(int rank, int phase) {
  const int per_layer = seq_ + 1;
  const int layer = phase / per_layer;
  const int q = phase % per_layer;
  for (Block& b : blocks_[static_cast<size_t>(rank)][static_cast<size_t>(layer)]) {
    if (q == 0) {
      hoist(b);
    } else {
      step(b, q - 1);
    }
  }
}

void Executor::run_all(int rank, SpinBarrier& barrier) {
  const int per_layer = seq_ + 1;
  const int last = phases() - 1;
  for (int p = 0; p <= last; ++p) {
    run_phase(rank, p);
    // No barrier after a time-independent phase (each member only reads the projections it wrote), nor
    // after the last step (the task's end is the synchronisation).
    if (p % per_layer != 0 && p != last) barrier.wait();
  }
}

}  // namespace corun::serve
