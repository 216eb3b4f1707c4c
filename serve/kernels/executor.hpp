// serve/kernels/executor.hpp — one plan's execution state and the work of one team member (plain C++).
//
// The team's members each own fixed blocks of every layer and direction: a range of batch rows (PCP's Xi)
// and a range of hidden units with all their gates (Xj), so a member computes its gates' MMs and the cell
// update of its units without waiting for anyone; the only synchronisation is one barrier per step (h_t
// is read by every member at t+1). A member's weight blocks are packed once, contiguous, hoisted gates
// first, so they stay in its private L2 across steps as long as the member keeps running on the same core
// (weight-centric streamlining). Phases of a request of `seq` steps, per layer: one time-independent
// phase (the hoisted input projections of every step: one GEMM over seq x batch rows) then `seq` steps.
#pragma once

#include <corun/serve.hpp>

#include <atomic>
#include <cstdint>
#include <vector>

namespace corun::serve {

/// A sense-reversing barrier for the members of one SPMD task. Spins, and yields the CPU after a while:
/// under oversubscription (more workers than cores) a pure spin would wait for whole OS time slices.
class SpinBarrier {
 public:
  explicit SpinBarrier(int members) : members_(members) {}
  void wait();
  int members() const { return members_; }

 private:
  int members_;
  alignas(64) std::atomic<int> arrived_{0};
  alignas(64) std::atomic<uint32_t> generation_{0};
};

class Executor {
 public:
  /// Packs the weights for `plan` (team width plan.workers) and allocates every buffer for sequences of up
  /// to `max_seq` steps. Throws corun::Error when the plan does not fit the model (e.g. more blocks than
  /// hidden units).
  Executor(const Model& model, int batch, int max_seq, const Plan& plan);
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  /// Points the first layer at a request's input ([seq, batch, input], not copied).
  void set_input(const float* x, int seq);
  int seq() const { return seq_; }
  /// Phases of the current request: layers * (seq + 1).
  int phases() const { return spec_.layers * (seq_ + 1); }
  /// Member `rank`'s share of phase `phase` (0 <= rank < width()).
  void run_phase(int rank, int phase);
  /// Member `rank`'s share of every phase, with `barrier` after each step (the WCS loop).
  void run_all(int rank, SpinBarrier& barrier);

  int width() const { return plan_.workers; }
  const Plan& plan() const { return plan_; }
  /// The last layer's output of the current request: [seq, batch, hidden * directions].
  const float* output() const { return outs_.back().data(); }
  int64_t output_size() const { return static_cast<int64_t>(seq_) * batch_ * spec_.hidden * spec_.directions(); }

 private:
  struct Block;
  void fill_block(Block& b, const CellWeights& cw, const int* order) const;
  void hoist(Block& b);
  void step(Block& b, int t);

  ModelSpec spec_;
  int gates_;
  int batch_;
  int max_seq_;
  Plan plan_;
  int seq_ = 0;
  const float* input_ = nullptr;
  std::vector<std::vector<float>> outs_;            // per layer: [max_seq, batch, hidden * dirs]
  std::vector<std::vector<std::vector<Block>>> blocks_;  // [rank][layer] -> the member's blocks
};

}  // namespace corun::serve
