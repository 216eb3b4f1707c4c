// corun train: builds a model's training graph, runs N iterations under the configured policy and prints
// a results table (optionally JSON, saved parameters, gradients).
#include "cli/args.hpp"
#include "cli/checkpoint.hpp"
#include "cli/co_tenancy.hpp"
#include "cli/commands.hpp"
#include "cli/lstm_session.hpp"
#include "cli/output_paths.hpp"
#include "cli/non_finite.hpp"
#include "cli/train_session.hpp"
#include "cli/progress.hpp"
#include "cli/shared_machine.hpp"
#include "cli/sessions/dcgan.hpp"
#include "cli/stop_signals.hpp"
#include "cli/train_files.hpp"
#include "engine/mpi/job.hpp"
#include "trace/trace.hpp"

#include <corun/engine.hpp>
#include <corun/machine.hpp>
#include <corun/models/lstm.hpp>

#include "base/check.hpp"
#include "base/files.hpp"
#include "base/json.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>

namespace corun::cli {

namespace {

const std::vector<FlagSpec> kOwnFlags = {
    {"--iters", true, "training iterations (default 20; cifar-quick: --epochs worth of batches)"},
    {"--lr", true, "SGD learning rate (default per model: lstm 0.5, phased-lstm 2, cifar-quick, pathnet, googlenet 0.01, wide-deep 1, --onnx 0.001)"},
    {"--seed", true, "seed of parameters and data (default 42)"},
    {"--cell", true, "fused (one lstm_cell task per step, default) | unfused (split, sigmoid, tanh, mul, add)"},
    {"--fuse-elementwise", false, "fuse chains of elementwise ops into single tasks (Graph::fuse_elementwise)"},
    {"--json", true, "write config, machine info, per-iteration times and losses to this file"},
    {"--save", true, "save the trained parameters (and state: batch-norm statistics, velocities) as <name>.npy into this directory"},
    {"--load", true, "load initial parameters <name>.npy (and any saved state) from this directory"},
    {"--dump-grads", true, "save the last iteration's gradients as <name>.grad.npy into this directory"},
    {"--trace", true, "write the last iteration's timeline as a Chrome/Perfetto trace (corun plot-trace draws it)"},
    {"--checkpoint", true, "write checkpoints into this directory (at the end, on SIGTERM/SIGUSR1/SIGINT, every N)"},
    {"--checkpoint-every", true, "also write a checkpoint every N iterations (needs --checkpoint)"},
    {"--progress-every", true,
     "without a terminal, print a progress line every N iterations (default: iterations / 10); on a terminal "
     "one line is redrawn after every iteration"},
    {"--allow-non-finite", false,
     "load --load parameters (and --onnx initializers) holding NaN or inf, and keep training when the loss is "
     "not finite (by default each stops the run with exit 1)"},
    {"--resume", false, "continue from the newest checkpoint in the --checkpoint directory (from 0 when it has none)"},
    {"--help", false, "show this help"},
};

std::vector<FlagSpec> flags() {
  std::vector<FlagSpec> f = model_flags();
  f.insert(f.end(), kOwnFlags.begin(), kOwnFlags.end());
  return f;
}

std::string usage() {
  return "usage: corun train --model lstm|phased-lstm|cifar-quick|pathnet|googlenet|wide-deep | --onnx FILE [options]\n" + describe(flags()) +
         "environment: CORUN_PARALLEL_OPS=auto|on|off (the parallel-op grouping pass; default auto for train: groups only\n"
         "where the per-width models predict a gain), CORUN_PARALLEL_OPS_MIN=N,\n"
         "CORUN_SCHED and the rest of docs/env-vars.md\n"
         "exit codes: 0 done, 1 runtime or configuration error, 2 usage error, 3 stopped by SIGTERM/SIGUSR1/SIGINT\n"
         "after finishing an iteration (checkpoint written with --checkpoint; a second signal exits at once\n"
         "with 128 + its number)\n";
}

// The schedule's physical limit, from the same models the policy used (design.md section 5). Printed only
// when it means something: every op has a calibrated model, and the measured makespan is not below the
// bound beyond noise (it cannot be, unless the models were recorded under another load). Otherwise one line
// says why, naming where the models come from. The measured side is the makespan of docs/traces.md (first
// task start to last task end, the trace's and the Gantt chart's number) when the iteration was traced;
// otherwise the run's wall time, submission to completion, which also counts submitting and waking up, and
// says so: the two differ by the submission overhead, and a reader comparing them must know which is which.
constexpr double kBoundTolerance = 0.95;  // a makespan 5 % under the bound is still timing noise

void print_bound(const RunStats& s, const EngineInfo& info, double traced_makespan_ms) {
  if (!info.own_policy && std::isnan(s.lower_bound_ms) && s.uncalibrated == 0) return;  // not computed
  const std::string models = "StarPU history models for machine " + info.machine_key + " under $STARPU_HOME";
  if (std::isnan(s.lower_bound_ms)) {
    std::printf("lower bound: not computed, %d of %d tasks have no calibrated model yet (%s); run more iterations "
                "or `corun profile`\n",
                s.uncalibrated, s.tasks, models.c_str());
    return;
  }
  const bool traced = !std::isnan(traced_makespan_ms);
  const double measured = traced ? traced_makespan_ms : s.wall_ms;
  const char* what = traced ? "makespan" : "wall time";
  const double ratio = measured / s.lower_bound_ms;
  if (ratio < kBoundTolerance) {
    std::printf("lower bound: not shown, the models predict %.2f ms, more than the measured %s %.2f ms "
                "(ratio %.2f): they were recorded under another load (%s); recalibrate on a quiet machine with "
                "STARPU_CALIBRATE=2\n",
                s.lower_bound_ms, what, measured, ratio, models.c_str());
    return;
  }
  std::printf("last iteration: %s %.2f ms (%s), lower bound %.2f ms = max(critical path %.2f, work %.2f / %d cores), "
              "ratio %.2f\n",
              what, measured,
              traced ? "first task start to last task end, as in the trace"
                     : "submission to completion; the trace's makespan, first task start to last task end, excludes "
                       "submission",
              s.lower_bound_ms, s.critical_path_ms, s.total_work_ms, s.bound_cores, ratio);
}

// What every rank of a job must agree on before the first step (docs/batch-jobs.md#several-nodes): a rank
// started with another binary, other arguments or other settings would hang or diverge, not fail.
std::vector<job::Fingerprint> fingerprints(int argc, char** argv, const RunIdentity& identity, int replicas,
                                           const Config& c) {
  std::string args, config;
  for (int i = 2; i < argc; ++i) args += std::string(argv[i]) + '\n';
  for (const auto& [key, value] : identity) config += key + '=' + value + '\n';
  config += "replicas=" + std::to_string(replicas) + "\npolicy=" + c.policy + "\nkernels=" +
            (c.ref_kernels ? "ref" : "fast") + "\nnuma=" + std::to_string(static_cast<int>(c.numa)) +
            "\nparallel_ops=" + std::to_string(c.grouping().enabled) + "/" + std::to_string(c.grouping().min_size);
  return {{"the corun binary", job::executable_hash()},
          {"the arguments", job::hash_text(args)},
          {"the model and engine configuration", job::hash_text(config)}};
}

// The run stops at a non-finite loss: what went bad first, and what is kept (the checkpoints written so far
// all had finite losses; nothing else is written).
void report_non_finite_loss(long it, float loss, const std::string& first_bad, const Checkpoints* ckpt) {
  std::fprintf(stderr,
               "corun: error: the loss is %g at iteration %ld: training stopped%s%s; no --json, --save, --trace or "
               "--dump-grads output is written. %s Lower --lr, check the --load parameters, or pass "
               "--allow-non-finite to keep training.\n",
               static_cast<double>(loss), it + 1, first_bad.empty() ? "" : "; the first non-finite value is ",
               first_bad.c_str(),
               ckpt == nullptr || ckpt->newest() < 0
                   ? "No checkpoint was written."
                   : ("The newest checkpoint (iteration " + std::to_string(ckpt->newest()) + ") is kept.").c_str());
}

// The training run of this process. `session` and `engine_owner` belong to the caller, which keeps them alive
// when a rank of a job fails (train() below).
int run_training(int argc, char** argv, const job::World& world, std::unique_ptr<TrainSession>& session,
                 std::unique_ptr<Engine>& engine_owner) {
  const bool root_rank = world.rank == 0;  // rank 0 alone writes files and reports (one process: itself)
  long iters = 0;
  bool fuse = false;
  std::string json_path, save_dir, load_dir, grads_dir, trace_path, ckpt_dir, dump_dir;
  long ckpt_every = 0, progress_every = 0;
  bool resume = false;
  std::string plan;  // what the run will do, said before it starts
  bool allow_non_finite = false;
  Config engine_config = Config::from_env();
  try {
    Args args(argc, argv, 2, flags());
    if (args.has("--help")) {
      std::cout << usage();
      return 0;
    }
    fuse = args.has("--fuse-elementwise");
    engine_config.fuse_elementwise = fuse;
    json_path = args.str("--json", "");
    save_dir = args.str("--save", "");
    load_dir = args.str("--load", "");
    grads_dir = args.str("--dump-grads", "");
    dump_dir = args.str("--dump-inputs", "");
    trace_path = args.str("--trace", "");
    ckpt_dir = args.str("--checkpoint", "");
    ckpt_every = args.positive("--checkpoint-every", 0);
    resume = args.has("--resume");
    args.positive("--iters", 1);  // malformed counts fail now; their defaults depend on the model (below)
    args.positive("--progress-every", 1);
    allow_non_finite = args.has("--allow-non-finite");
    if (args.has("--checkpoint") && ckpt_dir.empty()) throw UsageError("--checkpoint needs a directory");
    if (ckpt_dir.empty() && args.has("--checkpoint-every")) throw UsageError("--checkpoint-every needs --checkpoint DIR");
    if (ckpt_dir.empty() && resume) throw UsageError("--resume needs --checkpoint DIR (where the checkpoints are)");
    // Everything that can fail without the model fails now, in milliseconds, not after the model is built
    // (seconds) or after the last iteration (the whole run): the policy and StarPU's settings, the outputs.
    check_config(engine_config);
    check_output_file("--json", json_path);
    check_output_file("--trace", trace_path);
    check_output_dir("--save", save_dir);
    check_output_dir("--dump-grads", grads_dir);
    check_output_dir("--checkpoint", ckpt_dir);
    // Replicas (docs/numa.md): a model that can run them gets a replica per NUMA domain by default; the
    // graphs are built before the engine starts, so the count comes from the same plan the engine makes.
    engine_config.replicate_by_default = supports_replicas(args.has("--onnx") ? "onnx" : args.str("--model", ""));
    const int replicas = planned_replicas(engine_config);
    if (replicas > 1 && args.has("--trace"))
      throw UsageError("--trace records one solver; with " + std::to_string(replicas) +
                       " replicas (CORUN_REPLICAS / CORUN_NUMA=replicate) set CORUN_NUMA=off to trace");
    if (world.distributed() && args.has("--trace"))
      throw UsageError("--trace records one solver in one process; run without mpirun/srun to trace");
    session = make_session(args, BatchShare::of(replicas, world.rank, world.size));
    iters = args.positive("--iters", session->default_iters());
    session->set_run_iters(iters);
    progress_every = args.positive("--progress-every", std::max(1L, iters / 10));
    plan = args.str(args.has("--onnx") ? "--onnx" : "--model", "") + ": " + session->run_plan(iters, args.has("--iters"));
  } catch (const UsageError& e) {
    return usage_error("train", e, flags(), usage());
  }
  if (policy_help_requested(engine_config)) return 0;
  if (root_rank) std::fprintf(stderr, "corun train: %s\n", plan.c_str());
  stop::install();  // from here on, SIGTERM/SIGUSR1/SIGINT stop the run after an iteration

  Graph& g = session->graph();  // the root replica (the only graph of one solver)
  const std::vector<Graph*> graphs = replica_graphs(*session);
  const int replicas = session->replicas();
  // The plan step's passes (--fuse-elementwise, and the parallel-op grouping pass): same numbers, fewer
  // tasks. The engine would run them at the first step; run here, after backward (in the session) and
  // before the first step, they can be reported. A checkpoint does not depend on them. Grouping is auto by
  // default: a group is made only where the engine's per-width models predict a gain under its policy
  // (under policies that form no teams, lws, eager, dmdas, a group runs on one worker, and PathNet's grouped
  // convolutions measured 1.5x slower: docs/models.md); with no models yet, none is made.
  engine_config.parallel_ops_by_default = false;
  engine_config.parallel_ops_auto_by_default = true;
  // Activations and gradients between the convolutions stay in oneDNN's blocked layout: the same bits, fewer
  // reorders (the replicas' reduction reads parameter gradients, which stay NCHW).
  engine_config.block_layouts = session->layout_blocking().value_or(false);
  const ParallelOps pass = engine_config.grouping();
  engine_owner = std::make_unique<Engine>(engine_config);
  Engine& engine = *engine_owner;
  CORUN_CHECK(engine.info().replicas == replicas, Status::runtime_error,
              "the engine runs " << engine.info().replicas << " replicas, the session built " << replicas);
  stop::install();  // again: starpu_init replaced the SIGINT handler
  if (engine_config.test_grace_seconds > 0) stop::set_test_grace_seconds(engine_config.test_grace_seconds);
  GraphPassReport root_pass;
  int nodes_before = 0, nodes_after = 0;  // over every replica's graph
  for (Graph* r : graphs) {  // every replica gets the same passes, so they stay copies of one graph
    const GraphPassReport report = engine.apply_graph_passes(*r);
    nodes_before += report.nodes_before;
    nodes_after += report.nodes_after;
    if (r == &g) root_pass = report;
  }
  const size_t groups = root_pass.groups.size();
  if (root_rank) {
    std::fprintf(stderr, "corun train: parallel-op pass %s: %zu group(s), %d -> %d tasks per iteration%s",
                 pass.mode(), groups, root_pass.nodes_before, root_pass.nodes_after,
                 replicas > 1 ? " of each replica" : "");
    if (pass.by_models)
      std::fprintf(stderr, " (%d declined: no predicted gain, or no models yet; CORUN_VERBOSE=passes says why)",
                   root_pass.declined);
    std::fputc('\n', stderr);
  }
  RunIdentity identity = session->identity();
  identity.emplace_back("fuse_elementwise", fuse ? "true" : "false");
  job::check_same(fingerprints(argc, argv, identity, replicas, engine_config));
  if (!root_rank) json_path = save_dir = grads_dir = ckpt_dir = "";  // rank 0 writes the job's files
  std::unique_ptr<Checkpoints> ckpt;
  CheckpointState state;  // the history before this process (from the checkpoint) and after
  if (!ckpt_dir.empty()) ckpt = std::make_unique<Checkpoints>(ckpt_dir);
  if (resume && root_rank) {  // the other ranks of a job get rank 0's checkpoint below
    if (auto loaded = ckpt->load_newest(g, identity)) {
      state = *loaded;
      std::fprintf(stderr, "corun: resuming from %s (%ld iterations done)%s\n", ckpt->loaded_path().c_str(),
                   state.iteration, load_dir.empty() ? "" : "; --load is ignored");
      load_dir.clear();
    } else {
      std::fprintf(stderr, "corun: no checkpoint in %s yet: starting at iteration 0\n", ckpt_dir.c_str());
    }
  }
  if (!load_dir.empty()) load_training_files(g, load_dir, allow_non_finite);  // parameters and saved state
  if (resume && world.distributed()) {
    // Every rank continues from rank 0's checkpoint: its iteration (the data position), its parameters and
    // optimizer state (velocities), so that all ranks hold the same numbers, as after any step.
    state.iteration = job::broadcast(state.iteration);
    std::vector<Tensor> tensors = g.params();
    for (Tensor t : g.optimizer_state()) tensors.push_back(t);
    for (Tensor t : tensors) job::broadcast(g.data(t), static_cast<size_t>(t.shape().numel()));
  }
  copy_root_params(*session);  // loaded or resumed weights reach every replica
  CoTenancyWatch co_tenants("train", machine::allocation(engine_config.cgroup_root), engine_config.quiet);
  // Initial states are zero inputs: the graph's buffers start zero-filled and nothing writes them.
  if (root_rank) co_tenants.check();  // one line, before the timings (and later, if a co-tenant arrives)
  const long resumed_from = state.iteration;
  std::vector<double> ms;  // this process's iterations
  double slowest_ms = 0.0;
  std::vector<double> remote;  // bytes read from tensors homed on another NUMA domain, per iteration
  int tasks = g.num_nodes();
  RunStats last;
  auto checkpoint = [&] {
    const std::string path = ckpt->write(g, engine, identity, state, static_cast<double>(session->learning_rate()),
                                         session->data_generator(), static_cast<unsigned long long>(session->seed()));
    std::fprintf(stderr, "corun: checkpoint %s\n", path.c_str());
  };
  Progress progress(iters, progress_every, stderr_is_terminal());
  int stop_signal = 0;  // agreed by every rank after each step, so that all stop after the same iteration
  // One process stops on its own signal; a rank of a job only on the agreed one (a rank stopping alone would
  // leave the others waiting for its gradients).
  auto may_continue = [&] { return stop_signal == 0 && (world.distributed() || stop::requested() == 0); };
  for (long it = state.iteration; it < iters && may_continue(); ++it) {
    if (!trace_path.empty() && it == iters - 1) engine.set_tracing(true);
    const RunStats s = session->step(engine, static_cast<uint64_t>(it));  // batch `it`: the data position
    if (it == resumed_from && s.uncalibrated > 0 && !engine_config.quiet && root_rank)  // StarPU's own chatter is silenced
      std::fprintf(stderr,
                   "corun train: calibrating: %d of %d tasks have no performance model yet (StarPU history models "
                   "for machine %s); the first iterations are slower\n",
                   s.uncalibrated, s.tasks, engine.info().machine_key.c_str());
    ms.push_back(s.wall_ms);
    // After a stop signal: time for the iteration under way and a checkpoint (about as long as a few
    // iterations) before the grace period ends it.
    slowest_ms = std::max(slowest_ms, s.wall_ms);
    stop::set_grace_seconds(10.0 * slowest_ms / 1000.0 + stop::kMinGraceSeconds);
    remote.push_back(s.remote_bytes);
    tasks = s.tasks;
    last = s;
    state.ms.push_back(s.wall_ms);
    const JobStep outcome = finish_step(*session, engine, stop::requested());
    stop_signal = outcome.stop_signal;
    state.losses.push_back(outcome.loss);
    if (!allow_non_finite && !std::isfinite(state.losses.back())) {  // the same loss on every rank
      progress.finish();
      const std::string first_bad = first_non_finite_value(engine, g);
      if (root_rank) report_non_finite_loss(it, state.losses.back(), first_bad, ckpt.get());
      for (Graph* r : graphs) engine.release(*r);
      return 1;
    }
    state.iteration = it + 1;
    if (root_rank) progress.update(state.iteration, s.wall_ms, state.losses.back());
    if (root_rank) co_tenants.check();
    if (ckpt && ckpt_every > 0 && state.iteration % ckpt_every == 0 && state.iteration < iters) checkpoint();
  }
  progress.finish();
  if (stop_signal == 0 && !world.distributed()) stop_signal = stop::requested();
  const bool stopped = stop_signal != 0 && state.iteration < iters;
  // At the end, and when stopped by a signal (unless nothing ran since the checkpoint we resumed from).
  if (ckpt && state.iteration > ckpt->newest()) checkpoint();

  const EngineInfo& info = engine.info();
  // The test accuracy of the final parameters (a model with a test set only; not after a stop signal).
  const double accuracy = stopped || !root_rank ? -1.0 : session->test_accuracy(engine);
  if (!root_rank) {  // the job's table and files are rank 0's
    for (Graph* r : graphs) engine.release(*r);
    return stopped ? stop::kStoppedExitCode : 0;
  }
  std::printf("\n%s\n\n", session->title().c_str());
  // The first iteration of a process also registers data and loads perfmodels: keep it out of the summary.
  const std::vector<double> timed(ms.size() > 1 ? ms.begin() + 1 : ms.begin(), ms.end());
  const double med = timed.empty() ? NAN : median(timed);
  const double best = timed.empty() ? NAN : *std::min_element(timed.begin(), timed.end());
  const double first_loss = state.losses.empty() ? NAN : state.losses.front();
  const double final_loss = state.losses.empty() ? NAN : state.losses.back();
  std::printf("| iterations | median ms/iter | min ms/iter | tasks/iter | policy | workers | first loss | final loss |\n");
  std::printf("|---:|---:|---:|---:|---|---:|---:|---:|\n");
  std::printf("| %ld | %.2f | %.2f | %d | %s | %d | %.4f | %.4f |\n", state.iteration, med, best, tasks,
              info.policy.c_str(), info.workers, first_loss, final_loss);
  // The run's tasks as they would be without the passes (replicas: every replica's graph plus the reduction
  // and copy tasks, which the passes do not change).
  const int tasks_before_pass = tasks + (nodes_before - nodes_after);
  std::printf("tasks/iter before the passes: %d (CORUN_PARALLEL_OPS=%s, %zu group(s))\n", tasks_before_pass,
              pass.mode(), groups);
  if (ms.size() > 1) std::printf("(timing excludes the first iteration of this run)\n");
  if (resumed_from > 0)
    std::printf("(resumed at iteration %ld: this run did %zu iterations)\n", resumed_from, ms.size());
  const bool traced = !trace_path.empty() && !engine.trace().empty();
  if (!ms.empty()) print_bound(last, info, traced ? engine.trace_meta().makespan_us / 1000.0 : NAN);
  // Remote bytes are accounted with replicas or with one solver over several NUMA domains (docs/numa.md).
  const bool numa_accounted = replicas > 1 || info.numa_domains > 1;
  const double remote_med = remote.empty() ? NAN : median(remote);
  if (numa_accounted)
    std::printf("replicas: %d, remote bytes per iteration %.0f (median; NUMA %s over %d domain%s; from the placement: "
                "what tasks read from tensors homed on another domain)\n",
                replicas, remote_med, info.numa_mode.c_str(), info.numa_domains, info.numa_domains == 1 ? "" : "s");
  if (world.distributed())
    std::printf("ranks: %d x %d replica(s); rank 0 sent %.0f bytes of gradient sums in the last iteration (StarPU-MPI, "
                "binary rank tree)\n",
                world.size, replicas, last.cross_rank_bytes);
  if (accuracy >= 0.0) std::printf("test accuracy: %.2f%%\n", 100.0 * accuracy);
  if (!trace_path.empty()) {
    write_chrome_trace(trace_path, engine.trace_meta(), engine.trace());
    std::printf("trace of the last iteration: %s (draw it with: corun plot-trace %s -o %s.png)\n", trace_path.c_str(),
                trace_path.c_str(), trace_path.c_str());
  }

  write_training_files(engine, g, {save_dir, grads_dir, dump_dir, replicas * world.size});
  if (!json_path.empty()) {
    json::Value config = session->json_config();
    config["iters"] = iters;
    config["fuse_elementwise"] = fuse;
    config["parallel_ops"] = pass.enabled;
    config["parallel_ops_mode"] = pass.mode();
    config["parallel_ops_min"] = pass.min_size;
    if (session->layout_blocking()) config["blocked_tensors"] = root_pass.blocked_tensors;
    config["ranks"] = world.size;
    json::Value summary = {{"median_ms", med},
                           {"min_ms", best},
                           {"tasks_per_iter", tasks},
                           {"tasks_per_iter_before_passes", tasks_before_pass},
                           {"first_loss", first_loss},
                           {"final_loss", final_loss},
                           {"last_ms", last.wall_ms},
                           {"lower_bound_ms", last.lower_bound_ms},
                           {"critical_path_ms", last.critical_path_ms},
                           {"total_work_ms", last.total_work_ms},
                           {"uncalibrated_nodes", last.uncalibrated}};
    if (numa_accounted) summary["remote_bytes_per_iter"] = remote_med;
    if (world.distributed()) summary["cross_rank_bytes_last_iter"] = last.cross_rank_bytes;
    if (accuracy >= 0.0) summary["test_accuracy"] = accuracy;
    json::Value result = {
        {"config", std::move(config)},
        {"machine",
         {{"nproc", machine::nproc()},
          {"cpu_model", machine::cpu_model()},
          {"topology", machine::topology_summary()},
          {"affinity", machine::affinity_list()},
          {"git_sha", machine::git_sha()}}},
        {"engine",
         {{"policy", info.policy},
          {"policy_source", info.policy_source},
          {"workers", info.workers},
          {"workers_source", info.workers_source},
          {"starpu_version", info.starpu_version},
          {"starpu_maxcpus", info.starpu_maxcpus},
          {"starpu_maxnumanodes", info.starpu_maxnumanodes},
          {"blas", info.blas},
          {"blas_core", info.blas_core},
          {"blas_threads", info.blas_threads},
          {"kernels", info.kernels},
          {"executors", info.layout},
          {"machine_key", info.machine_key},
          {"replicas", info.replicas},
          {"numa_mode", info.numa_mode},
          {"numa_domains", info.numa_domains}}},
        {"ms_per_iter", state.ms},
        {"loss", state.losses}};
    if (numa_accounted) result["remote_bytes_per_iter"] = remote;
    result["progress"] = {{"iterations_done", state.iteration},
                          {"resumed_from", resumed_from},
                          {"iterations_this_run", ms.size()},
                          {"stopped_by", stopped ? stop::name(stop_signal) : ""},
                          {"checkpoint", ckpt ? ckpt_dir : std::string()}};
    result["summary"] = std::move(summary);
    write_file_atomically(json_path, json::dump(result) + "\n", "the --json results");
  }
  for (Graph* r : graphs) engine.release(*r);
  if (stopped) {
    std::fprintf(stderr, "corun: stopped by %s after iteration %ld of %ld%s\n", stop::name(stop_signal), state.iteration,
                 iters, ckpt ? ("; resume with --checkpoint " + ckpt_dir + " --resume").c_str()
                             : " (no --checkpoint: the progress is lost)");
    return stop::kStoppedExitCode;
  }
  return 0;
}

}  // namespace

int train(int argc, char** argv) {
  if (dcgan_requested(argc, argv)) return train_dcgan(argc, argv);  // two graphs: its own loop (sessions/dcgan.hpp)
  const job::World& world = job::start();  // MPI, when a launcher started several ranks (engine/mpi/job.hpp)
  std::unique_ptr<TrainSession> session;
  std::unique_ptr<Engine> engine;
  if (!world.distributed()) return run_training(argc, argv, world, session, engine);
  int code = 0;
  try {
    code = run_training(argc, argv, world, session, engine);
  } catch (const std::exception& e) {
    // A failing rank ends the whole job at once, named, instead of leaving the others waiting for its
    // gradients. The engine and the graphs are not torn down: other ranks' transfers may still target them.
    std::fprintf(stderr, "%s [rank %d of %d failed: ending the job]\n", e.what(), world.rank, world.size);
    std::fflush(stderr);
    job::abort_job(1);
  }
  engine.reset();
  session.reset();
  job::finish();
  return code;
}

}  // namespace corun::cli
