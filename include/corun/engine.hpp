// corun/engine.hpp — running graphs on StarPU.
//
//   corun::Engine eng;                      // Config::from_env(): CORUN_SCHED, ...; prints the resolved config
//   for (int it = 0; it < iters; ++it) {
//     eng.write(g, x, batch(it));           // new inputs
//     corun::RunStats s = eng.run(g);       // one submission of every node, then wait
//   }
//   std::vector<float> loss = eng.read(g, loss_tensor);
//
// One Engine at a time per process: it owns starpu_init/starpu_shutdown. The first run (or read/write) of
// a graph runs the plan step's graph passes the Config asks for (apply_graph_passes), then registers its
// values as StarPU data handles (the graph is then "bound": use read/write instead of Graph::data).
// Dependencies between tasks come from the access modes in node order, so every policy computes the same
// numbers. Destroy (or release()) the engine's hold on a graph before the graph dies.
#pragma once

#include <corun/graph.hpp>
#include <corun/observer.hpp>
#include <corun/trace.hpp>

#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace corun {

/// The parallel-op grouping pass as a Config sets it (Config::grouping()).
struct ParallelOps {
  bool enabled = false;  ///< CORUN_PARALLEL_OPS, else the caller's default (Config::parallel_ops_by_default)
  int min_size = 2;      ///< CORUN_PARALLEL_OPS_MIN: the smallest group worth one task
  /// CORUN_PARALLEL_OPS=auto (or a command's default, Config::parallel_ops_auto_by_default): each group is
  /// made only where the Engine's per-width models predict it is faster than its members as separate tasks
  /// under the running policy (engine/pass_gain.hpp); `on` makes every group.
  bool by_models = false;
  bool when_unknown = true;  ///< by_models: a group whose members the models do not know is made
  /// "on", "off" or "auto", as printed by corun train.
  const char* mode() const { return !enabled ? "off" : by_models ? "auto" : "on"; }
};

/// Engine settings. from_env() reads every CORUN_* variable the library and the CLI know
/// (docs/env-vars.md), strictly: a malformed value is a corun::Error naming the variable. Nothing below the
/// engine reads the environment for corun's own settings; the lower layers get them from here.
struct Config {
  std::string policy;      ///< CORUN_SCHED value ("" = STARPU_SCHED or the default)
  int ncpus = -1;          ///< CPU workers (-1: STARPU_NCPU, else one per allocated core: machine::Allocation)
  bool ref_kernels = false;///< CORUN_KERNELS=ref: run the reference kernels (debugging)
  bool quiet = false;      ///< CORUN_QUIET=1: do not print the configuration line
  /// CORUN_CONV_KERNEL=auto|dnnl|direct|im2col: the convolutions' fast kernels (docs/models.md): oneDNN in its
  /// blocked layouts, im2col + OpenBLAS, or the measured choice per shape (auto, with oneDNN's Winograd kernels
  /// where they were measured faster; direct: the same choice without them).
  std::string conv_kernel = "auto";
  /// CORUN_GEMM_KERNEL=auto|onednn|openblas: the library under matmul and batch_matmul (docs/models.md): oneDNN's
  /// sgemm, OpenBLAS's, or the measured choice per transpose and ISA (auto).
  std::string gemm_kernel = "auto";
  std::string executors;   ///< CORUN_EXECUTORS=NxK: executor layout of corun's policies ("" = profile/default)
  std::string profile;     ///< CORUN_PROFILE=path: a file written by `corun profile` (layout, machine key)
  int fixed_width = 0;     ///< CORUN_FIXED_WIDTH=w: every task at width w (calibration; 0 = the policy decides)
  // The corun policy only (an error with any other):
  int width_interval = 0;  ///< CORUN_WIDTH_INTERVAL=x: width step of the hill climb (0 = max(1, workers / 16))
  bool deterministic = false;  ///< CORUN_DETERMINISTIC=1: freeze widths and teams once tuned (same schedule)
  std::string schedule;    ///< CORUN_SCHEDULE=path: where deterministic mode keeps the frozen schedule
  /// CORUN_WIDTH_MEMORY=on|off: the corun policy keeps the width climbs it measured beside StarPU's models and
  /// replays them in later processes instead of measuring again (sched/corun/climb_memory.hpp).
  bool width_memory = true;
  bool verbose_sched = false;  ///< CORUN_VERBOSE=sched: print every placement and why
  /// CORUN_COTENANCY=auto|off: corun's policies measure team tasks and narrow their teams while the cores are
  /// shared with another process (docs/testing.md, "Bad inputs"); off keeps the widths they choose.
  bool cotenancy = true;
  /// CORUN_IDLE_NAPS=auto|off|always: under corun's policies an idle worker sleeps instead of spinning (until
  /// a task is placed on its core) while the policy sees its cores shared (auto: its teams were narrowed,
  /// needs cotenancy), never (off: StarPU's spinning), or whenever idle (always). docs/scheduling.md.
  std::string idle_naps = "auto";
  /// CORUN_CPF_MERGE=auto|off: under cpf, a lone ready task on an idle machine (every executor idle, nothing
  /// else ready: a chain of ops such as a CNN's stem) runs on merged executors, up to every core, when its
  /// per-width model predicts that faster or, not measured merged yet, when it is long (docs/scheduling.md);
  /// off: executors never merge.
  bool cpf_merge = true;

  // NUMA (docs/numa.md).
  enum class NumaMode { unset, off, replicate, interleave };
  NumaMode numa = NumaMode::unset;  ///< CORUN_NUMA=off|replicate|interleave (unset: see replicate_by_default)
  int replicas = 0;                 ///< CORUN_REPLICAS=N: force N replicas (0 = unset)
  /// Not from the environment: set by a caller that trains with one graph per replica (corun train). Then an
  /// unset CORUN_NUMA means a replica per NUMA domain with CPUs when there are several (docs/numa.md); for
  /// everyone else (Engine::run, inference) it means one solver.
  bool replicate_by_default = false;

  // The plan step's graph passes (apply_graph_passes), run on every graph before the engine first binds it,
  // in this order. Off for the library; `corun train` and `corun infer` set them from their flags.
  /// Not from the environment: an inference graph's batch norms after a convolution become part of its weights
  /// (Graph::fold_batch_norm; the same numbers up to rounding; `corun infer --onnx`, off with --keep-batch-norm).
  /// Skipped on a graph with a backward.
  bool fold_batch_norm = false;
  /// Not from the environment: an inference graph's relu, clip, hard_swish or hard_sigmoid right after a
  /// convolution becomes part of it (Graph::fuse_conv_activation; the same bits; `corun infer --onnx`, off with
  /// --keep-activations). Skipped on a graph with a backward.
  bool fuse_conv_activation = false;
  /// Not from the environment: activations (and gradients) between the convolutions on oneDNN's kernels stay in
  /// its blocked layout (Graph::block_layouts; the same bits; `corun train` and `corun infer --onnx` on
  /// convolutional models, off with --keep-layouts).
  bool block_layouts = false;
  /// Not from the environment: fuse chains of elementwise ops (`corun train --fuse-elementwise`).
  bool fuse_elementwise = false;
  std::optional<bool> parallel_ops;     ///< CORUN_PARALLEL_OPS=on|off (unset: the defaults below)
  bool parallel_ops_auto = false;       ///< CORUN_PARALLEL_OPS=auto: groups where the models predict a gain
  int parallel_ops_min = 2;             ///< CORUN_PARALLEL_OPS_MIN=N (N >= 2)
  /// Not from the environment: the grouping pass when CORUN_PARALLEL_OPS is unset. Off for the library, on
  /// for `corun infer`; with auto, what a group the models know nothing about gets.
  bool parallel_ops_by_default = false;
  /// Not from the environment: an unset CORUN_PARALLEL_OPS means auto (`corun train`: the pass is applied
  /// only where the models predict a gain, since under policies without teams a group runs on one worker).
  bool parallel_ops_auto_by_default = false;
  bool verbose_passes = false;  ///< CORUN_VERBOSE=passes (or all): print each pass, what it did, and every grouping decision
  /// CORUN_VERBOSE=kernels (or all): print the implementation the plan step chose for each node that has a list
  /// (the convolution passes) and why each one before it declined.
  bool verbose_kernels = false;
  /// CORUN_INPUT_PROJECTION=on|off: the plan step's input-projection pass on every layer it can, or never
  /// (include/corun/input_projection.hpp). corun::plan_input_projections, called by a program itself, reads
  /// unset as auto.
  std::optional<bool> input_projection;
  /// CORUN_INPUT_PROJECTION=auto, said explicitly: the plan step stacks a layer where the cost model predicts a
  /// gain. Unset: the plan step runs no input-projection pass (on 2 cores no setting trained faster; docs/models.md).
  bool input_projection_auto = false;

  /// CORUN_CGROUP_ROOT: a directory standing in for / when reading the cgroup limits of the allocation
  /// (tests; "" = the real /). machine::allocation() checks that it is a readable directory.
  std::string cgroup_root;

  /// CORUN_SERVE_PLANS: the directory of corun::serve::Server's plan cache ("" = the default under
  /// $XDG_CACHE_HOME or ~/.cache; docs/serving.md).
  std::string serve_plans;

  /// CORUN_TEST_PAUSE_IN_CHECKPOINT=files|manifest|prune — for the test suite only: `corun train
  /// --checkpoint` stops itself (SIGSTOP) at that point of every checkpoint write (after the parameter files,
  /// after the manifest, inside the removal of an old checkpoint), so that a test's kill -9 lands there every
  /// time instead of by chance (tests/cli/test_checkpoint_kill.cpp). "stuck": stops after the parameter
  /// files like "files", then never returns once continued, as a stuck kernel would (the grace-period test,
  /// tests/cli/test_stop_grace.cpp). "" = never.
  std::string test_pause_in_checkpoint;
  /// CORUN_TEST_GRACE_SECONDS=N (1-60) — for the test suite only: the grace period after a stop signal is N
  /// seconds instead of at least 60 (cli/stop_signals.hpp). 0 = unset.
  int test_grace_seconds = 0;

  /// The grouping pass these settings ask for: CORUN_PARALLEL_OPS over the caller's default.
  ParallelOps grouping() const {
    if (parallel_ops.has_value()) return {*parallel_ops, parallel_ops_min, false, true};
    if (parallel_ops_auto || parallel_ops_auto_by_default) return {true, parallel_ops_min, true, parallel_ops_by_default};
    return {parallel_ops_by_default, parallel_ops_min, false, true};
  }

  static Config from_env();
};

/// The solver replicas an Engine made with `config` will run (CORUN_NUMA / CORUN_REPLICAS over the NUMA
/// domains of this process's allocation), without starting StarPU: a trainer builds that many graphs before
/// it creates the Engine. Throws corun::Error for a replica plan that cannot be made.
int planned_replicas(const Config& config);

/// Every check the Engine makes before starpu_init that needs no running StarPU: the policy name
/// (CORUN_SCHED / STARPU_SCHED), the policy-specific CORUN_* settings and their files (CORUN_EXECUTORS,
/// CORUN_PROFILE, CORUN_SCHEDULE), and StarPU's own variables corun relies on (STARPU_NCPU, the binding
/// variables: docs/env-vars.md). Takes milliseconds: a caller runs it before building a model so that a bad
/// setting fails at once. Throws corun::Error (invalid_config or io_error). CORUN_SCHED=help passes.
void check_config(const Config& config);

/// What the plan step's graph passes did to one graph.
struct GraphPassReport {
  /// RNN layers whose per-step input products the input-projection pass stacked into one (Config::input_projection)
  int stacked_input_projections = 0;
  int folded_batch_norms = 0;  ///< batch norms folded into their convolution (Config::fold_batch_norm)
  int fused_activations = 0;   ///< activations fused into their convolution (Config::fuse_conv_activation)
  int blocked_tensors = 0;     ///< tensors kept in oneDNN's blocked layout (Config::block_layouts)
  int fused_nodes = 0;       ///< nodes the elementwise fusion pass merged away (Config::fuse_elementwise)
  ParallelOps grouping;      ///< the grouping pass's settings (Config::grouping())
  struct Group {
    std::string kind;          ///< the members' op ("embedding")
    std::string pattern;       ///< "fan-out", "fan-in" or "between"
    int members = 0;
    std::string first_member;  ///< the first member's node name
  };
  std::vector<Group> groups;  ///< groups the grouping pass made, in node order
  int declined = 0;           ///< groups the pass found that the models predicted no gain for (by_models)
  int nodes_before = 0;       ///< nodes (tasks per run) before the passes
  int nodes_after = 0;        ///< and after
};

/// The plan step: runs the graph passes `config` asks for on `graph` (the input-projection pass, batch norm
/// folding, convolution + activation fusion, the kernel choice, blocked layouts, elementwise fusion, parallel-op
/// grouping); a pass that changed the graph never runs on it again. The Engine calls it on every graph it
/// binds, so a graph runs as the configuration says; a caller that wants to report what the passes did
/// (corun train and infer), or runs a graph without an Engine (InlineRunner), calls it first. After
/// backward(); the graph must not be bound to an Engine. Numbers stay bitwise the same but for the
/// input-projection pass (other GEMM shapes: within float rounding); fusion removes intermediates (Graph::keep).
/// The input-projection pass on a training graph expands its backward again (graphs/passes/forward_rewrite.hpp):
/// fetch gradient and optimizer-state tensors after the plan step.
GraphPassReport apply_graph_passes(Graph& graph, const Config& config);

/// What one Engine::run did.
struct RunStats {
  double wall_ms = 0.0;   ///< submission of the first task to completion of the last
  int tasks = 0;          ///< tasks submitted
  /// From the perfmodels (corun's policies or tracing only; NaN while any node is uncalibrated):
  double critical_path_ms = NAN;  ///< longest chain of predicted times (each node at its fastest width)
  double total_work_ms = NAN;     ///< sum of each node's least predicted core-time
  double lower_bound_ms = NAN;    ///< max(critical path, total work / cores): no schedule can beat it
  int uncalibrated = 0;           ///< nodes without any prediction yet
  int bound_cores = 0;            ///< cores the lower bound divides the work by
  bool tuning = false;            ///< corun: a width-search run (ops serialised and measured)
  bool frozen = false;            ///< corun, CORUN_DETERMINISTIC=1: this run followed the frozen schedule
  /// Bytes that tasks read (R or RW) from tensors homed on another NUMA domain than the one they ran on, from
  /// the placement, not from hardware counters (docs/numa.md). run_replicated: tensors are homed on their
  /// replica's domain, and each task counts by the memory node of the worker that ran it. One solver over several domains: with CORUN_NUMA=off every
  /// tensor is homed on the main thread's domain and each task counts by the worker that ran it; with
  /// interleave, the expected share (D - 1) / D of all reads. 0 on one domain.
  double remote_bytes = 0.0;
  /// run_replicated: tasks that ran on a worker outside their replica's scheduling context (counted where they
  /// ran, in their completion callback). Always 0 unless a policy broke the contexts; tests check it.
  int tasks_outside_replica = 0;
  /// run_replicated over several MPI ranks (docs/batch-jobs.md#several-nodes): bytes of gradient sums this rank
  /// sent to other ranks in the step (up the rank tree and back down). 0 in one process.
  double cross_rank_bytes = 0.0;
};

/// Facts about the running configuration, for the start line, `corun info` and result tables.
struct EngineInfo {
  std::string policy;            ///< resolved policy name
  std::string policy_source;     ///< "CORUN_SCHED", "STARPU_SCHED" or "default"
  bool own_policy = false;       ///< one of corun's, not a StarPU built-in
  int workers = 0;               ///< CPU workers
  std::string workers_source;    ///< "allocation" (cores of the affinity mask and cgroup, CPU quota), "STARPU_NCPU",
                                 ///< "Config::ncpus" or "fake topology" (see machine::Allocation)
  int combined_workers = 0;      ///< teams StarPU knows about (after the first run for some policies)
  std::string starpu_version;    ///< "1.3.10"
  int starpu_maxcpus = 0;        ///< STARPU_MAXCPUS of the linked library
  int starpu_maxnumanodes = 0;   ///< STARPU_MAXNUMANODES
  std::string blas;              ///< "OpenBLAS 0.3.21 ..."
  std::string blas_core;         ///< OpenBLAS core type actually used ("Haswell")
  int blas_threads = 0;          ///< OpenBLAS threads per call (always 1 under corun)
  std::string kernels;           ///< "fast" or "ref"
  /// The convolutions' fast kernels: "oneDNN 2.6.3, activations nChw16c (CORUN_CONV_KERNEL=auto)", or why
  /// only im2col + OpenBLAS runs.
  std::string conv_kernels;
  /// The products' library: "oneDNN 2.6.3 (avx512_core) for A*B and A^T*B, OpenBLAS for A*B^T
  /// (CORUN_GEMM_KERNEL=auto)".
  std::string gemm_kernels;
  std::string layout;            ///< executors of corun's policies, "NxK" ("" for built-ins)
  std::string layout_source;     ///< "CORUN_EXECUTORS", "CORUN_PROFILE", "default" or ""
  std::string machine_key;       ///< perfmodel key (STARPU_HOSTNAME), see machine::machine_key()
  int replicas = 1;              ///< solver replicas (CORUN_NUMA=replicate / CORUN_REPLICAS, docs/numa.md)
  std::string numa_mode = "off"; ///< "off", "replicate" or "interleave" (the plan's mode)
  int numa_domains = 1;          ///< NUMA domains the workers (or the replicas' homes) span; when > 1 every
                                 ///< run accounts RunStats::remote_bytes
  bool simulated = false;        ///< linked against a SimGrid StarPU: times are simulated (docs/simulation.md)

  /// One line: "policy=lws (default) workers=2 starpu=1.3.10 (maxcpus 4, maxnumanodes 2) ...".
  std::string summary() const;
};

/// How Engine::submit runs a graph.
struct SubmitOptions {
  /// A latency-critical run: under corun's policies its tasks rank before every other run's (its critical
  /// path goes first); under StarPU's priority-aware policies its tasks get STARPU_MAX_PRIO.
  bool priority = false;
};

/// A run Engine::submit started; Engine::wait finishes it. Move-only. Destroying a ticket whose run is still
/// in flight waits for the run (its tasks point at the ticket's state until they end).
class RunTicket {
 public:
  RunTicket() = default;
  RunTicket(RunTicket&& other) noexcept;
  RunTicket& operator=(RunTicket&& other) noexcept;
  RunTicket(const RunTicket&) = delete;
  RunTicket& operator=(const RunTicket&) = delete;
  ~RunTicket();
  bool valid() const { return run_ != nullptr; }

  struct InFlight;  // engine/async_run.cpp

 private:
  friend class Engine;
  explicit RunTicket(std::unique_ptr<InFlight> run);
  std::unique_ptr<InFlight> run_;
};

class Engine {
 public:
  /// Initialises StarPU with the resolved configuration. Throws corun::Error for a bad configuration
  /// (unknown policy, CORUN_SCHED/STARPU_SCHED conflict, CORUN_SCHED=help, a second live Engine).
  explicit Engine(const Config& config = Config::from_env());
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  /// Submits every node of `graph` once (registering its values on first use) and waits for all.
  /// Throws corun::Error if a kernel failed.
  RunStats run(Graph& graph);

  /// One step of synchronous SGD over info().replicas solver replicas (NUMA-Caffe; docs/numa.md). Graph r is
  /// replica r's training graph over its share of the batch, built with backward(loss, {.sgd_update = false})
  /// (same parameters, by name and shape, in every replica). Runs every replica's nodes in its own scheduling
  /// context with its tensors homed on its NUMA domain, sums the gradients along the plan's fixed tree
  /// (each parent adds its children in index order), applies W -= learning_rate / replicas * G at replica 0,
  /// and copies the new parameters to every other replica. With the loss a mean over each replica's rows, this
  /// is the update of one solver over the whole batch (up to the summation order). Waits for all.
  ///
  /// momentum > 0: SGD with momentum at the root, V = momentum V + G; W -= learning_rate V with G the whole
  /// batch's mean gradient (the summed gradient / replicas) and V the root graph's "<param>.velocity" state
  /// values (backward with sgd_update = false and that momentum creates them), as one solver's update.
  ///
  /// Several MPI ranks (the optional MPI component, docs/batch-jobs.md#several-nodes): every rank calls it
  /// with its own replicas (the same count on each); after the in-process tree, replica 0's sums are added
  /// along a binary tree over the ranks through StarPU-MPI, the total returns to every rank, and every rank
  /// applies the same update with the divisor replicas x ranks. One replica per rank is allowed there.
  /// Replicas built with the issue 19 optimizers (adam, adamw, sgd with weight decay or Nesterov) get their
  /// own update at the root instead: on the mean gradient, with replica 0's state and its optimizer_hyper()
  /// tensor, which the caller writes before the step (the rate there counts; docs/optimizers.md).
  RunStats run_replicated(const std::vector<Graph*>& replicas, float learning_rate, float momentum = 0.0f);

  /// Runs a graph that is not a replica (an evaluation between replicated steps) as one solver: in the root
  /// replica's scheduling context, its data homed on the root's domain. Without replicas, the same as run().
  RunStats run_on_root(Graph& graph);

  /// Starts a run of `graph` without waiting for it (the serving endpoint's way to co-run batches): every node
  /// is planned and submitted as run() does, and the call returns; wait() finishes it. Several graphs may be in
  /// flight at once, from any threads: the policy places their tasks on the cores together. Thread-safe with
  /// submit, wait, read and write of other graphs; a graph has at most one run in flight (a second submit of it
  /// is a corun::Error), and read/write of it wait for that run (StarPU orders them after its tasks).
  /// A run that must be alone, because it is measured (the corun policy's width search, tracing) or spans
  /// several NUMA domains or replicas, waits for the runs in flight and completes before submit returns.
  /// run() and run_replicated() also wait for the runs in flight, then run alone.
  RunTicket submit(Graph& graph, const SubmitOptions& options = {});
  /// Waits for the run `ticket` started and returns what it did (RunStats::wall_ms: from its submission to
  /// its last task's end). Throws corun::Error if a kernel failed (a kernel error is reported to the first
  /// run that waits after it). A second wait on one ticket is an error.
  RunStats wait(RunTicket& ticket);

  /// Copies a value of a bound graph to the host, synchronised with the tasks submitted so far.
  std::vector<float> read(Graph& graph, Tensor t);
  /// Overwrites a value of a bound graph (numel floats), synchronised with the tasks submitted so far.
  void write(Graph& graph, Tensor t, const std::vector<float>& values);
  void write(Graph& graph, Tensor t, const float* values, size_t count);

  /// The plan step (apply_graph_passes) with this engine's per-width models: with CORUN_PARALLEL_OPS=auto
  /// (corun train's default) a group is made only where the models predict a gain under this engine's
  /// policy. The engine runs it on every graph it binds; a caller that reports what the passes did calls it
  /// first. The graph must not be bound yet.
  GraphPassReport apply_graph_passes(Graph& graph);

  /// Unregisters the graph's handles; data returns to the graph's host buffers and Graph::data works again.
  void release(Graph& graph);

  const EngineInfo& info() const;
  /// The configuration this engine was made with (the serving runtime reads its settings from it).
  const Config& config() const;

  /// Attaches a task observer (corun/observer.hpp): its set_up(info().workers) now, then its on_entry and
  /// on_exit for every task of the runs started from now on, until remove_observer. Waits for the runs in
  /// flight first. Results do not change. Throws corun::Error for a null observer or one attached already.
  void add_observer(std::shared_ptr<TaskObserver> observer);
  /// Detaches `observer` once the runs in flight have ended: it gets no call after this returns. Throws
  /// corun::Error when it is not attached.
  void remove_observer(const std::shared_ptr<TaskObserver>& observer);

  /// Records a timeline of every following run (StarPU profiling is switched on: a few µs per task).
  void set_tracing(bool on);
  /// The timeline of the last traced run, in node order, and its summary.
  const std::vector<TraceTask>& trace() const;
  TraceMeta trace_meta() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  RunStats run_solver(Graph& graph);  // run() and run_on_root(): one graph in the root's context
};

}  // namespace corun
