// engine/simulated_models.hpp — a simulated run (StarPU's SimGrid mode, docs/simulation.md) refuses a graph
// whose ops have no model, before its first task.
//
// Under SimGrid a task's kernel is replaced by a sleep of its model's prediction, and StarPU 1.3.10 asserts
// ("Codelet X does not have a perfmodel", src/core/simgrid.c) on a task whose history holds no entry for its
// footprint at the width it runs at: an abort with a backtrace, after part of the run, naming neither the
// shapes nor what to run. So the engine asks every op's model, at every width its policy may give it, before
// it submits a graph for the first time, and refuses with the ops, their footprints and shapes, and the way to
// calibrate them. The check itself is plain C++ over a prediction function, so it is unit-tested natively
// (tests/unit/test_simulated_models.cpp); the SimGrid build runs it on StarPU's models.
#pragma once

#include "graphs/graph_impl.hpp"
#include "sched/registry.hpp"

#include <corun/error.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace corun::engine {

/// One (op, footprint) of a graph that has no prediction at some widths.
struct UnmodelledOp {
  std::string op;           ///< the op's name ("matmul"; its model's symbol is "corun_matmul")
  uint32_t footprint = 0;   ///< the history key StarPU looks up (codelets::footprint)
  std::string shapes;       ///< its buffers' shapes, in buffer order: "[64, 32] [32, 16] [64, 16]"
  std::vector<int> widths;  ///< the widths without a prediction, ascending
  std::string node;         ///< the first node that runs it
  int nodes = 0;            ///< how many nodes run it
};

/// The team widths a policy may give a task of `max_width` on `cores` workers: 1 under a policy of single
/// workers (lws, dmda, ...); every width from 1 to min(max_width, cores) under one that forms teams (corun's
/// own widths are any count of cores, StarPU's parallel policies take its power-of-two teams).
std::vector<int> widths_to_model(sched::TeamWidths teams, int max_width, int cores);

/// The prediction of `call` at team width `width`, in µs: 0 or NaN when there is none.
using PredictUs = std::function<double(const codelets::OpCall& call, int width)>;

/// Every (op, footprint) of `nodes` without a prediction at a width of widths_to_model, in node order. A group
/// of the parallel-op pass is timed from its members' width-1 models under SimGrid (codelets.cpp, group_cost),
/// so its members are what is checked, at width 1.
std::vector<UnmodelledOp> unmodelled_ops(const std::vector<detail::Node>& nodes, sched::TeamWidths teams, int cores,
                                         const PredictUs& predict);

/// Widths as ranges: {1, 2, 3, 5} -> "1-3, 5".
std::string describe_widths(const std::vector<int>& widths);

/// The refusal: what lacks a model (the first kListed ops, and how many more), where the models were looked
/// for, and how to calibrate them.
std::string unmodelled_ops_message(const std::vector<UnmodelledOp>& ops, const std::string& policy,
                                   const std::string& model_dir, const std::string& machine_key);
inline constexpr size_t kListed = 12;

/// Thrown by a simulated run whose graph has ops without a model (Status::invalid_config). `corun` exits
/// with its own code then, so that `corun simulate` knows to remove the files it wrote and to print the
/// command that calibrates them.
class UnmodelledOpsError : public Error {
 public:
  explicit UnmodelledOpsError(const std::string& message) : Error(Status::invalid_config, message) {}
};

/// In a simulated run: throws UnmodelledOpsError when an op of `nodes` has no prediction in StarPU's models
/// at a width `policy` (with `teams`) may give it on `cores` workers. Before the graph's first submission.
void refuse_unmodelled_ops(const std::vector<detail::Node>& nodes, const std::string& policy,
                           sched::TeamWidths teams, int cores);

}  // namespace corun::engine
