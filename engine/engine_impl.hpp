// engine/engine_impl.hpp — what the Engine's files share: Engine::Impl (settings, replicas, bound graphs)
// and the task builders. Each file does one job:
//   config.cpp          Config::from_env (every CORUN_* variable), EngineInfo::summary
//   starpu_runtime.cpp  StarPU's lifetime: policy resolution and its options, starpu_init/shutdown, info
//   binding.cpp         a graph's values as StarPU handles (bind, read, write, release)
//   graph_passes.cpp    the plan step's graph passes (fusion, grouping) as Config asks
//   submit.cpp          one graph's tasks: creation, plan, submission (run, run_on_root)
//   task_observers.cpp  the observers of task start and end (add_observer; the trace recorder is one)
//   replicated_run.cpp  the replicated SGD step: replicas, tree reduction, update, parameter copies
#pragma once

#include <corun/engine.hpp>

#include "codelets/op.hpp"
#include "sched/registry.hpp"
#include "sched/tuner.hpp"
#include "engine/pass_gain.hpp"
#include "engine/planning.hpp"
#include "engine/replicas.hpp"
#include "engine/task_observers.hpp"
#include "engine/trace_recorder.hpp"
#include "graphs/graph_impl.hpp"
#include "numa/replica_plan.hpp"

#include <starpu.h>

#include <condition_variable>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace corun {

struct Engine::Impl {
  EngineInfo info;
  Config config;
  sched::ResolvedPolicy policy;  // the running policy: its traits and its engine-side phase (make_tuner)
  std::unique_ptr<engine::Planner> planner;  // set when one of our policies runs (or tracing is on)
  bool tracing = false;
  engine::TraceRecorder recorder;   // an observer while a run is recorded (traced or tuning)
  engine::TaskObservers observers;  // the users' (add_observer) and, for a recorded run, the recorder
  std::vector<starpu_task*> tasks;  // scratch: the tasks of one run
  int runs = 0;

  numa::Plan numa_plan;                      // CORUN_NUMA / CORUN_REPLICAS, checked before starpu_init
  std::vector<engine::ReplicaPlace> places;  // one per replica: context, workers, home memory node
  // starpu_runtime.cpp, once StarPU runs: `places` from the NUMA plan, and info's replica and domain counts.
  void set_up_replicas();
  // run_replicated's own calls per parameter (tasks point at them until they complete), made once per set of
  // graphs, and the root's buffers of the mean gradient (momentum only), registered on the root's node.
  struct SyncCalls {
    codelets::OpCall add_child;  // G_parent += G_child (sgd with f = -1: an exact addition)
    codelets::OpCall update;     // W -= lr / n * G_sum (plain SGD)
    codelets::OpCall mean;       // M = G_sum / n (momentum: the velocity accumulates the mean gradient)
    codelets::OpCall momentum;   // V = mu V + M; W -= lr V
    codelets::OpCall copy;       // W_replica = W_root
    codelets::OpCall hyper_update;  // adam / sgd_wd on M (optimizer_updates.cpp's node at the root, issue 19)
  };
  std::vector<SyncCalls> sync_calls;
  // replicated_run.cpp: one run_replicated call, its inputs checked, as the jobs it does (bind, reduce,
  // update, account).
  struct ReplicaStep;
  // One solver over several domains: each worker's domain (by worker id), and the domain of the main thread,
  // where the graphs' buffers were first touched.
  std::vector<int> worker_domain;
  int home_domain = 0;
  std::vector<uint64_t> task_reads;  // scratch: bytes each task of a run reads
  std::vector<std::unique_ptr<float[]>> mean_grads;
  std::vector<starpu_data_handle_t> mean_grad_handles;

  struct Bound {
    int home = STARPU_MAIN_RAM;                 // memory node the handles are registered on
    bool pages_placed = false;                  // run_replicated moved the buffers' pages to the home domain
    std::vector<starpu_data_handle_t> handles;  // indexed by value id
    engine::GraphPlan plan;
    std::unique_ptr<sched::PlanTuner> tuner;    // the policy's engine-side phase, if it has one (sched/tuner.hpp)
    long runs = 0;                              // runs of this graph on this engine (0: the next is cold)
    // Host buffers registered as written only through the engine (codelets/stable_buffers.hpp), and the node
    // count they were chosen at (a node added later may write one).
    std::vector<const float*> stable;
    size_t stable_nodes = static_cast<size_t>(-1);
    bool running = false;      // a submit()ted run is in flight (guarded by flight_mu: its last task clears it)
    bool prioritised = false;  // the hints' levels carry kPriorityLevelUs (async_run.cpp)
    std::vector<engine::TaskObservers::Record> observed;  // per node, while observers watch its run's tasks
  };
  // Keyed by the graph's storage, which a move of the Graph object keeps.
  std::unordered_map<detail::GraphImpl*, Bound> bound;

  // graph_passes.cpp: the models the plan step decides groups by (made at the first use: the policy's team
  // widths are known once StarPU runs).
  std::unique_ptr<engine::StarpuOpTimes> pass_times;
  engine::PassModels pass_models();
  // Graphs Engine::apply_graph_passes ran the plan step on, with their node count then: their first bind()
  // skips it when the graph has not changed since (a pass that grouped nothing leaves no mark on the graph).
  std::unordered_map<detail::GraphImpl*, size_t> planned;
  GraphPassReport plan_graph(Graph& graph);

  // binding.cpp. `home`: the memory node to register on (run_replicated: the replica's domain); -1 keeps the
  // graph's current home (main RAM for a new binding). A new binding first runs the plan step's passes.
  Bound& bind(Graph& graph, int home = -1);
  // Undoes bind(): unregisters the handles (data returns to the host buffers) and drops the binding.
  void unbind(detail::GraphImpl& g, Bound& b);
  // Registers the values no node writes as stable buffers (binding.cpp), again whenever the nodes changed.
  void mark_stable_buffers(detail::GraphImpl& g, Bound& b);
  // The handle of a user's tensor of `graph` (bound on first use); `what` names the caller in errors.
  starpu_data_handle_t handle(Graph& graph, Tensor t, const char* what);
  void drop_mean_grads();

  // submit.cpp: Engine::run_solver's steps. How one solver over several NUMA domains counts remote reads.
  struct RemoteReads {
    bool several = false;    // one solver (no replicas) over several domains
    bool off_count = false;  // CORUN_NUMA=off: reads counted per task, from the worker that ran it
    bool recording = false;  // traced or tuning: the recorder knows each task's worker
  };
  bool make_planned_tasks(const detail::GraphImpl& g, Bound& b, RunStats& stats);
  // One run with nothing else in flight (run(), run_on_root() and the runs submit() cannot overlap): plans,
  // submits and waits. finish_alone is its part after make_planned_tasks. The caller holds `mu`.
  RunStats run_alone(Graph& graph);
  RunStats finish_alone(const detail::GraphImpl& g, Bound& b, RunStats& stats, bool tuning, double t0);

  // async_run.cpp: Engine::submit/wait. `mu` serialises planning, submission and the bindings (every public
  // call that touches `bound`, the planner or the scratch vectors takes it). `flight_mu` guards in_flight and
  // Bound::running, which the last task of each submitted run counts down in its callback; a callback never
  // takes `mu`, since a run that must be alone waits for in_flight == 0 while holding it.
  std::mutex mu;
  std::mutex flight_mu;
  std::condition_variable flight_cv;
  int in_flight = 0;  // submitted runs whose tasks have not all ended
  void wait_until_no_run_in_flight();
  // A submitted run's priority (SubmitOptions::priority) on its hints and the scratch tasks.
  void set_priority(Bound& b, bool priority);
  void prepare_remote_reads(const detail::GraphImpl& g, Bound& b, const RemoteReads& reads, RunStats& stats);
  // With observers attached, watches every task first (as run `run`, each node's record in b.observed).
  void submit_in_node_order(const std::vector<detail::Node>& nodes, Bound& b, uint64_t run, RunStats& stats);
  void count_off_remote_reads(size_t nodes, const RemoteReads& reads, RunStats& stats) const;
};

namespace engine {

starpu_data_access_mode to_starpu(codelets::Access a);
/// One StarPU task for a node (not submitted). Tasks are destroyed by StarPU once they complete.
starpu_task* make_task(const detail::Node& node, const std::vector<starpu_data_handle_t>& handles);
/// One StarPU task for an engine-made call over `handles` (run_replicated's reductions, update and copies).
starpu_task* make_call_task(const codelets::OpCall& call, std::initializer_list<starpu_data_handle_t> handles,
                            const char* name);
/// "no worker can run it" or the errno text of a failed starpu_task_submit.
std::string submit_error(int ret);

}  // namespace engine
}  // namespace corun
