// serve/kernels/schedules.hpp — phased schedules of an RNN step's MM-DAG (DeepCPU section 5.1) and MM fusion
// (5.2.1), as plain data for the plan search.
//
// One step of a cell with G gates has 2G MMs: x_t W_g (input MMs, no dependency across steps) and
// h_{t-1} U_g (recurrent MMs). A phased schedule is an ordered partition of them into phases; the
// enumeration generates every ordered partition of one step that respects the dependencies (`deps`) and
// keeps those that pass the three pruning rules:
//   (i)   time-dependent phases are symmetric across steps: one step's phases are enumerated and repeated;
//   (ii)  two consecutive phases of the same type must depend on each other (else they are one phase);
//   (iii) time-independent phases (input MMs only) come first, hoisted out of the step loop for all t.
// Rule (ii) applies across the step boundary too: the last phase of step t feeds the first of t+1 through
// h_t. Fusion then merges the MMs of a phase that read the same input into one MM (weights concatenated
// along the columns).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace corun::serve {

/// MM m of a step: m < G is the input MM of gate m (reads x_t), m >= G the recurrent MM of gate m - G.
struct StepDag {
  int gates = 0;
  std::vector<uint32_t> deps;  ///< deps[m]: bit n set when MM m needs MM n of the same step first
  int mms() const { return 2 * gates; }
  bool recurrent(int m) const { return m >= gates; }
  /// The DAG of LSTM/GRU: no MM of a step depends on another (the cell's elementwise work follows them all).
  static StepDag independent(int gates);
};

/// A fused MM: the gates whose weights are concatenated and the input they share.
struct FusedMM {
  bool recurrent = false;  ///< reads h_{t-1} (else x_t)
  uint32_t gates = 0;      ///< bit g: gate g
};

struct PhasedSchedule {
  std::vector<uint32_t> phases;  ///< MM masks of one step, in order (the time-independent ones first)
  int time_independent = 0;      ///< how many leading phases are hoisted out of the step loop

  /// Bit g: gate g's input MM is hoisted (the schedule's identity for the executor).
  uint32_t hoisted_gates(int gates) const;
  /// The phase's MMs fused by shared input (5.2.1).
  std::vector<FusedMM> fused(int phase, int gates) const;
  /// "{x:i,f}{x:g,o h:i,f,g,o}" with the cell's gate letters.
  std::string str(const char* gate_letters) const;
};

/// Counts of the enumeration, for the tests and docs.
struct ScheduleCounts {
  int64_t ordered_partitions = 0;  ///< every ordered partition of one step's MMs
  int64_t valid = 0;               ///< ... that respects the dependencies
  int64_t rule_ii = 0;             ///< ... and rule (ii)
  int64_t rule_iii = 0;            ///< ... and rule (iii): what enumerate_schedules returns
};

/// Every phased schedule of `dag` that passes the three rules (rule (i) by construction).
std::vector<PhasedSchedule> enumerate_schedules(const StepDag& dag, ScheduleCounts* counts = nullptr);

/// One schedule per performance class: schedules whose fused phases have the same MM shapes (every gate
/// has the same size) run the same; the one with the lowest hoisted mask stands for its class.
std::vector<PhasedSchedule> distinct_by_shape(const std::vector<PhasedSchedule>& schedules, int gates);

}  // namespace corun::serve
