// corun train: builds a model's training graph, runs N iterations under the configured policy and prints
// a results table (optionally JSON, saved parameters, gradients).
#include "cli/args.hpp"
#include "cli/checkpoint.hpp"
#include "cli/commands.hpp"
#include "cli/lstm_session.hpp"
#include "cli/train_session.hpp"
#include "cli/progress.hpp"
#include "cli/stop_signals.hpp"
#include "trace/trace.hpp"

#include <corun/engine.hpp>
#include <corun/machine.hpp>
#include <corun/models/lstm.hpp>
#include <corun/npy.hpp>

#include "base/check.hpp"
#include "base/files.hpp"
#include "base/json.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

namespace corun::cli {

namespace {

const std::vector<FlagSpec> kOwnFlags = {
    {"--iters", true, "training iterations (default 20; cifar-quick: --epochs worth of batches)"},
    {"--lr", true, "SGD learning rate (default per model: lstm 0.5, phased-lstm 2, cifar-quick, pathnet, googlenet 0.01, wide-deep 1)"},
    {"--seed", true, "seed of parameters and data (default 42)"},
    {"--cell", true, "fused (one lstm_cell task per step, default) | unfused (split, sigmoid, tanh, mul, add)"},
    {"--fuse-elementwise", false, "fuse chains of elementwise ops into single tasks (Graph::fuse_elementwise)"},
    {"--json", true, "write config, machine info, per-iteration times and losses to this file"},
    {"--save", true, "save the trained parameters as <name>.npy into this directory"},
    {"--load", true, "load initial parameters <name>.npy from this directory"},
    {"--dump-grads", true, "save the last iteration's gradients as <name>.grad.npy into this directory"},
    {"--trace", true, "write the last iteration's timeline as a Chrome/Perfetto trace (corun plot-trace draws it)"},
    {"--checkpoint", true, "write checkpoints into this directory (at the end, on SIGTERM/SIGUSR1/SIGINT, every N)"},
    {"--checkpoint-every", true, "also write a checkpoint every N iterations (needs --checkpoint)"},
    {"--progress-every", true,
     "without a terminal, print a progress line every N iterations (default: iterations / 10); on a terminal "
     "one line is redrawn after every iteration"},
    {"--resume", false, "continue from the newest checkpoint in the --checkpoint directory (from 0 when it has none)"},
    {"--help", false, "show this help"},
};

std::vector<FlagSpec> flags() {
  std::vector<FlagSpec> f = model_flags();
  f.insert(f.end(), kOwnFlags.begin(), kOwnFlags.end());
  return f;
}

std::string usage() {
  return "usage: corun train --model lstm|phased-lstm|cifar-quick|pathnet|googlenet|wide-deep [options]\n" + describe(flags()) +
         "environment: CORUN_PARALLEL_OPS=auto|on|off (the parallel-op grouping pass; default auto for train: groups only\n"
         "where the per-width models predict a gain), CORUN_PARALLEL_OPS_MIN=N,\n"
         "CORUN_SCHED and the rest of docs/env-vars.md\n"
         "exit codes: 0 done, 1 runtime or configuration error, 2 usage error, 3 stopped by SIGTERM/SIGUSR1/SIGINT\n"
         "after finishing an iteration (checkpoint written with --checkpoint; a second signal exits at once\n"
         "with 128 + its number)\n";
}

void make_dir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  CORUN_CHECK(!ec, Status::io_error, "cannot create directory '" << dir << "': " << ec.message());
}

// The schedule's physical limit, from the same models the policy used (design.md section 5).
void print_bound(const RunStats& s, const EngineInfo& info) {
  if (!info.own_policy && std::isnan(s.lower_bound_ms) && s.uncalibrated == 0) return;  // not computed
  if (std::isnan(s.lower_bound_ms)) {
    std::printf("lower bound: n/a (%d nodes not calibrated yet; run more iterations or `corun profile`)\n",
                s.uncalibrated);
    return;
  }
  std::printf("last iteration: makespan %.2f ms, lower bound %.2f ms = max(critical path %.2f, work %.2f / %d cores), "
              "ratio %.2f\n",
              s.wall_ms, s.lower_bound_ms, s.critical_path_ms, s.total_work_ms,
              s.bound_cores, s.wall_ms / s.lower_bound_ms);
}

}  // namespace

int train(int argc, char** argv) {
  std::unique_ptr<TrainSession> session;
  long iters = 0;
  bool fuse = false;
  std::string json_path, save_dir, load_dir, grads_dir, trace_path, ckpt_dir;
  long ckpt_every = 0, progress_every = 0;
  bool resume = false;
  Config engine_config = Config::from_env();
  try {
    Args args(argc, argv, 2, flags());
    if (args.has("--help")) {
      std::cout << usage();
      return 0;
    }
    // Replicas (docs/numa.md): a model that can run them gets a replica per NUMA domain by default; the
    // graphs are built before the engine starts, so the count comes from the same plan the engine makes.
    engine_config.replicate_by_default = supports_replicas(args.str("--model", ""));
    const int replicas = planned_replicas(engine_config);
    if (replicas > 1 && args.has("--trace"))
      throw UsageError("--trace records one solver; with " + std::to_string(replicas) +
                       " replicas (CORUN_REPLICAS / CORUN_NUMA=replicate) set CORUN_NUMA=off to trace");
    session = make_session(args, replicas);
    fuse = args.has("--fuse-elementwise");
    engine_config.fuse_elementwise = fuse;
    iters = args.positive("--iters", session->default_iters());
    json_path = args.str("--json", "");
    save_dir = args.str("--save", "");
    load_dir = args.str("--load", "");
    grads_dir = args.str("--dump-grads", "");
    trace_path = args.str("--trace", "");
    ckpt_dir = args.str("--checkpoint", "");
    ckpt_every = args.positive("--checkpoint-every", 0);
    resume = args.has("--resume");
    progress_every = args.positive("--progress-every", std::max(1L, iters / 10));
    if (args.has("--checkpoint") && ckpt_dir.empty()) throw UsageError("--checkpoint needs a directory");
    if (ckpt_dir.empty() && args.has("--checkpoint-every")) throw UsageError("--checkpoint-every needs --checkpoint DIR");
    if (ckpt_dir.empty() && resume) throw UsageError("--resume needs --checkpoint DIR (where the checkpoints are)");
  } catch (const UsageError& e) {
    std::fprintf(stderr, "corun train: %s\n%s", e.what(), usage().c_str());
    return 2;
  }
  if (policy_help_requested(engine_config)) return 0;
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
  const ParallelOps pass = engine_config.grouping();
  Engine engine(engine_config);
  CORUN_CHECK(engine.info().replicas == replicas, Status::runtime_error,
              "the engine runs " << engine.info().replicas << " replicas, the session built " << replicas);
  stop::install();  // again: starpu_init replaced the SIGINT handler
  GraphPassReport root_pass;
  int nodes_before = 0, nodes_after = 0;  // over every replica's graph
  for (Graph* r : graphs) {  // every replica gets the same passes, so they stay copies of one graph
    const GraphPassReport report = engine.apply_graph_passes(*r);
    nodes_before += report.nodes_before;
    nodes_after += report.nodes_after;
    if (r == &g) root_pass = report;
  }
  const size_t groups = root_pass.groups.size();
  std::fprintf(stderr, "corun train: parallel-op pass %s: %zu group(s), %d -> %d tasks per iteration%s",
               pass.mode(), groups, root_pass.nodes_before, root_pass.nodes_after,
               replicas > 1 ? " of each replica" : "");
  if (pass.by_models)
    std::fprintf(stderr, " (%d declined: no predicted gain, or no models yet; CORUN_VERBOSE=passes says why)",
                 root_pass.declined);
  std::fputc('\n', stderr);
  RunIdentity identity = session->identity();
  identity.emplace_back("fuse_elementwise", fuse ? "true" : "false");
  std::unique_ptr<Checkpoints> ckpt;
  CheckpointState state;  // the history before this process (from the checkpoint) and after
  if (!ckpt_dir.empty()) ckpt = std::make_unique<Checkpoints>(ckpt_dir);
  if (resume) {
    if (auto loaded = ckpt->load_newest(g, identity)) {
      state = *loaded;
      std::fprintf(stderr, "corun: resuming from %s (%ld iterations done)%s\n", ckpt->loaded_path().c_str(),
                   state.iteration, load_dir.empty() ? "" : "; --load is ignored");
      load_dir.clear();
    } else {
      std::fprintf(stderr, "corun: no checkpoint in %s yet: starting at iteration 0\n", ckpt_dir.c_str());
    }
  }
  if (!load_dir.empty()) {
    for (Tensor p : g.params()) {
      NpyArray a = load_npy(load_dir + "/" + p.name() + ".npy");
      CORUN_CHECK(a.shape == p.shape(), Status::invalid_argument,
                  "parameter '" << p.name() << "' has shape " << p.shape().str() << " but " << load_dir << "/"
                                << p.name() << ".npy has " << a.shape.str());
      std::copy(a.data.begin(), a.data.end(), g.data(p));
    }
  }
  copy_root_params(*session);  // loaded or resumed weights reach every replica
  // Initial states are zero inputs: the graph's buffers start zero-filled and nothing writes them.
  const long resumed_from = state.iteration;
  std::vector<double> ms;  // this process's iterations
  std::vector<double> remote;  // bytes read from tensors homed on another NUMA domain, per iteration
  int tasks = g.num_nodes();
  RunStats last;
  auto checkpoint = [&] {
    const std::string path = ckpt->write(g, engine, identity, state, static_cast<double>(session->learning_rate()),
                                         session->data_generator(), static_cast<unsigned long long>(session->seed()));
    std::fprintf(stderr, "corun: checkpoint %s\n", path.c_str());
  };
  Progress progress(iters, progress_every, stderr_is_terminal());
  for (long it = state.iteration; it < iters && stop::requested() == 0; ++it) {
    if (!trace_path.empty() && it == iters - 1) engine.set_tracing(true);
    const RunStats s = session->step(engine, static_cast<uint64_t>(it));  // batch `it`: the data position
    ms.push_back(s.wall_ms);
    remote.push_back(s.remote_bytes);
    tasks = s.tasks;
    last = s;
    state.ms.push_back(s.wall_ms);
    state.losses.push_back(read_loss(*session, engine));
    state.iteration = it + 1;
    progress.update(state.iteration, s.wall_ms, state.losses.back());
    if (ckpt && ckpt_every > 0 && state.iteration % ckpt_every == 0 && state.iteration < iters) checkpoint();
  }
  progress.finish();
  const int stop_signal = stop::requested();
  const bool stopped = stop_signal != 0 && state.iteration < iters;
  // At the end, and when stopped by a signal (unless nothing ran since the checkpoint we resumed from).
  if (ckpt && state.iteration > ckpt->newest()) checkpoint();

  const EngineInfo& info = engine.info();
  // The test accuracy of the final parameters (a model with a test set only; not after a stop signal).
  const double accuracy = stopped ? -1.0 : session->test_accuracy(engine);
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
  if (!ms.empty()) print_bound(last, info);
  // Remote bytes are accounted with replicas or with one solver over several NUMA domains (docs/numa.md).
  const bool numa_accounted = replicas > 1 || info.numa_domains > 1;
  const double remote_med = remote.empty() ? NAN : median(remote);
  if (numa_accounted)
    std::printf("replicas: %d, remote bytes per iteration %.0f (median; NUMA %s over %d domain%s; from the placement: "
                "what tasks read from tensors homed on another domain)\n",
                replicas, remote_med, info.numa_mode.c_str(), info.numa_domains, info.numa_domains == 1 ? "" : "s");
  if (accuracy >= 0.0) std::printf("test accuracy: %.2f%%\n", 100.0 * accuracy);
  if (!trace_path.empty()) {
    write_chrome_trace(trace_path, engine.trace_meta(), engine.trace());
    std::printf("trace of the last iteration: %s (draw it with: corun plot-trace %s -o %s.png)\n", trace_path.c_str(),
                trace_path.c_str(), trace_path.c_str());
  }

  if (!save_dir.empty()) {
    make_dir(save_dir);
    for (Tensor p : g.params()) save_npy(save_dir + "/" + p.name() + ".npy", p.shape(), engine.read(g, p).data());
  }
  if (!grads_dir.empty()) {
    make_dir(grads_dir);
    for (Tensor p : g.params()) {
      const Tensor d = g.grad(p);
      if (!d.valid()) continue;
      std::vector<float> grad = engine.read(g, d);
      // Replicas: the root holds the sum of the replicas' mean gradients; divided, the whole batch's mean.
      if (replicas > 1)
        for (float& x : grad) x /= static_cast<float>(replicas);
      save_npy(grads_dir + "/" + p.name() + ".grad.npy", p.shape(), grad.data());
    }
  }
  if (!json_path.empty()) {
    json::Value config = session->json_config();
    config["iters"] = iters;
    config["fuse_elementwise"] = fuse;
    config["parallel_ops"] = pass.enabled;
    config["parallel_ops_mode"] = pass.mode();
    config["parallel_ops_min"] = pass.min_size;
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
    write_file_atomically(json_path, json::dump(result) + "\n");
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

}  // namespace corun::cli
