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
#include "cli/train_report.hpp"
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
    {"--save-onnx", true,
     "with --onnx: write the trained model as ONNX to this file (the --onnx model with its initializers, BatchNorm "
     "running statistics included, holding the trained values; docs/onnx.md)"},
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

// Parses and checks every flag, and builds the model's session (throws UsageError). Everything that can fail
// without the model fails first, in milliseconds, not after the model is built (seconds) or after the last
// iteration (the whole run): the policy and StarPU's settings, the outputs.
TrainOptions parse_options(int argc, char** argv, const job::World& world, Config& engine_config,
                           std::unique_ptr<TrainSession>& session) {
  TrainOptions o;
  Args args(argc, argv, 2, flags());
  if (args.has("--help")) {
    o.help = true;
    return o;
  }
  o.fuse = args.has("--fuse-elementwise");
  engine_config.fuse_elementwise = o.fuse;
  o.json_path = args.str("--json", "");
  o.save_dir = args.str("--save", "");
  o.save_onnx = args.str("--save-onnx", "");
  o.load_dir = args.str("--load", "");
  o.grads_dir = args.str("--dump-grads", "");
  o.dump_dir = args.str("--dump-inputs", "");
  o.trace_path = args.str("--trace", "");
  o.ckpt_dir = args.str("--checkpoint", "");
  o.ckpt_every = args.positive("--checkpoint-every", 0);
  o.resume = args.has("--resume");
  args.positive("--iters", 1);  // malformed counts fail now; their defaults depend on the model (below)
  args.positive("--progress-every", 1);
  o.allow_non_finite = args.has("--allow-non-finite");
  if (args.has("--checkpoint") && o.ckpt_dir.empty()) throw UsageError("--checkpoint needs a directory");
  if (o.ckpt_dir.empty() && args.has("--checkpoint-every")) throw UsageError("--checkpoint-every needs --checkpoint DIR");
  if (o.ckpt_dir.empty() && o.resume) throw UsageError("--resume needs --checkpoint DIR (where the checkpoints are)");
  if (args.has("--save-onnx") && !args.has("--onnx"))
    throw UsageError("--save-onnx needs --onnx IN: it writes IN's model with the trained values (a built-in --model "
                     "has no ONNX file; save its parameters with --save DIR)");
  if (args.has("--save-onnx") && o.save_onnx.empty()) throw UsageError("--save-onnx needs a file");
  check_config(engine_config);
  check_output_file("--json", o.json_path);
  check_output_file("--trace", o.trace_path);
  check_output_file("--save-onnx", o.save_onnx);
  check_output_dir("--save", o.save_dir);
  check_output_dir("--dump-grads", o.grads_dir);
  check_output_dir("--checkpoint", o.ckpt_dir);
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
  o.iters = args.positive("--iters", session->default_iters());
  session->set_run_iters(o.iters);
  o.progress_every = args.positive("--progress-every", std::max(1L, o.iters / 10));
  o.plan = args.str(args.has("--onnx") ? "--onnx" : "--model", "") + ": " + session->run_plan(o.iters, args.has("--iters"));
  return o;
}

// The plan step's passes (--fuse-elementwise, and the parallel-op grouping pass): same numbers, fewer
// tasks. The engine would run them at the first step; run here, after backward (in the session) and
// before the first step, they can be reported. A checkpoint does not depend on them. Grouping is auto by
// default: a group is made only where the engine's per-width models predict a gain under its policy
// (under policies that form no teams, lws, eager, dmdas, a group runs on one worker, and PathNet's grouped
// convolutions measured 1.5x slower: docs/models.md); with no models yet, none is made.
void configure_plan_step(Config& engine_config, const TrainSession& session) {
  engine_config.parallel_ops_by_default = false;
  engine_config.parallel_ops_auto_by_default = true;
  // Activations and gradients between the convolutions stay in oneDNN's blocked layout: the same bits, fewer
  // reorders (the replicas' reduction reads parameter gradients, which stay NCHW).
  engine_config.block_layouts = session.layout_blocking().value_or(false);
}

// Starts the engine with the session's replica count, and the stop signals' handlers again.
std::unique_ptr<Engine> start_engine(const Config& engine_config, int replicas) {
  auto engine = std::make_unique<Engine>(engine_config);
  CORUN_CHECK(engine->info().replicas == replicas, Status::runtime_error,
              "the engine runs " << engine->info().replicas << " replicas, the session built " << replicas);
  stop::install();  // again: starpu_init replaced the SIGINT handler
  if (engine_config.test_grace_seconds > 0) stop::set_test_grace_seconds(engine_config.test_grace_seconds);
  return engine;
}

// Runs the passes on every replica's graph (the same passes, so they stay copies of one graph); rank 0
// says what they did.
PassTotals apply_passes(Engine& engine, TrainSession& session, const ParallelOps& pass, bool root_rank) {
  PassTotals t;
  t.pass = pass;
  for (Graph* r : replica_graphs(session)) {
    const GraphPassReport report = engine.apply_graph_passes(*r);
    t.nodes_before += report.nodes_before;
    t.nodes_after += report.nodes_after;
    if (r == &session.graph()) t.root = report;
  }
  if (!root_rank) return t;
  std::fprintf(stderr, "corun train: parallel-op pass %s: %zu group(s), %d -> %d tasks per iteration%s",
               pass.mode(), t.root.groups.size(), t.root.nodes_before, t.root.nodes_after,
               session.replicas() > 1 ? " of each replica" : "");
  if (pass.by_models)
    std::fprintf(stderr, " (%d declined: no predicted gain, or no models yet; CORUN_VERBOSE=passes says why)",
                 t.root.declined);
  std::fputc('\n', stderr);
  return t;
}

// Where the run starts: --resume's newest checkpoint (rank 0 reads it, every rank of a job gets it), else
// --load's parameters, else the session's own; then every replica gets the root's parameters.
CheckpointState restore(TrainOptions& o, const job::World& world, TrainSession& session, const RunIdentity& identity,
                        Checkpoints* ckpt) {
  Graph& g = session.graph();
  CheckpointState state;
  if (o.resume && world.rank == 0) {  // the other ranks of a job get rank 0's checkpoint below
    if (auto loaded = ckpt->load_newest(g, identity)) {
      state = *loaded;
      std::fprintf(stderr, "corun: resuming from %s (%ld iterations done)%s\n", ckpt->loaded_path().c_str(),
                   state.iteration, o.load_dir.empty() ? "" : "; --load is ignored");
      o.load_dir.clear();
    } else {
      std::fprintf(stderr, "corun: no checkpoint in %s yet: starting at iteration 0\n", o.ckpt_dir.c_str());
    }
  }
  if (!o.load_dir.empty()) load_training_files(g, o.load_dir, o.allow_non_finite);  // parameters and saved state
  if (o.resume && world.distributed()) {
    // Every rank continues from rank 0's checkpoint: its iteration (the data position), its parameters and
    // optimizer state (velocities), so that all ranks hold the same numbers, as after any step.
    state.iteration = job::broadcast(state.iteration);
    std::vector<Tensor> tensors = g.params();
    for (Tensor t : g.optimizer_state()) tensors.push_back(t);
    for (Tensor t : tensors) job::broadcast(g.data(t), static_cast<size_t>(t.shape().numel()));
  }
  copy_root_params(session);  // loaded or resumed weights reach every replica
  return state;
}

// What the iterations share: the run's settings and the objects they step, check and write.
struct TrainLoop {
  const TrainOptions& o;
  const job::World& world;
  TrainSession& session;
  Engine& engine;
  const RunIdentity& identity;
  Checkpoints* ckpt;  // null without --checkpoint (and on ranks other than 0)
  CoTenancyWatch& co_tenants;
  bool quiet;

  void checkpoint(const CheckpointState& state) const {
    const std::string path = ckpt->write(session.graph(), engine, identity, state,
                                         static_cast<double>(session.learning_rate()), session.data_generator(),
                                         static_cast<unsigned long long>(session.seed()));
    std::fprintf(stderr, "corun: checkpoint %s\n", path.c_str());
  }

  // One process stops on its own signal; a rank of a job only on the agreed one (a rank stopping alone would
  // leave the others waiting for its gradients).
  bool may_continue(const TrainRecord& r) const {
    return r.stop_signal == 0 && (world.distributed() || stop::requested() == 0);
  }

  // The measured side of one step, and the grace period a stop signal leaves.
  void record(const RunStats& s, long it, TrainRecord& r, double& slowest_ms) const {
    if (it == r.resumed_from && s.uncalibrated > 0 && !quiet && world.rank == 0)  // StarPU's own chatter is silenced
      std::fprintf(stderr,
                   "corun train: calibrating: %d of %d tasks have no performance model yet (StarPU history models "
                   "for machine %s); the first iterations are slower\n",
                   s.uncalibrated, s.tasks, engine.info().machine_key.c_str());
    r.ms.push_back(s.wall_ms);
    // After a stop signal: time for the iteration under way and a checkpoint (about as long as a few
    // iterations) before the grace period ends it.
    slowest_ms = std::max(slowest_ms, s.wall_ms);
    stop::set_grace_seconds(10.0 * slowest_ms / 1000.0 + stop::kMinGraceSeconds);
    r.remote.push_back(s.remote_bytes);
    r.tasks = s.tasks;
    r.tuning_runs += s.tuning ? 1 : 0;
    r.last = s;
    r.state.ms.push_back(s.wall_ms);
  }

  // The iterations from r.state.iteration on, until --iters or a stop signal; false when the loss is not
  // finite (and that is not allowed): reported, the graphs released, nothing written.
  bool run(TrainRecord& r) const {
    const bool root_rank = world.rank == 0;
    Progress progress(o.iters, o.progress_every, stderr_is_terminal());
    double slowest_ms = 0.0;
    for (long it = r.state.iteration; it < o.iters && may_continue(r); ++it) {
      if (!o.trace_path.empty() && it == o.iters - 1) engine.set_tracing(true);
      const RunStats s = session.step(engine, static_cast<uint64_t>(it));  // batch `it`: the data position
      record(s, it, r, slowest_ms);
      const JobStep outcome = finish_step(session, engine, stop::requested());
      r.stop_signal = outcome.stop_signal;
      r.state.losses.push_back(outcome.loss);
      if (!o.allow_non_finite && !std::isfinite(r.state.losses.back())) {  // the same loss on every rank
        progress.finish();
        const std::string first_bad = first_non_finite_value(engine, session.graph());
        if (root_rank) report_non_finite_loss(it, r.state.losses.back(), first_bad, ckpt);
        for (Graph* g : replica_graphs(session)) engine.release(*g);
        return false;
      }
      r.state.iteration = it + 1;
      if (root_rank) progress.update(r.state.iteration, s.wall_ms, r.state.losses.back());
      if (root_rank) co_tenants.check();
      if (ckpt && o.ckpt_every > 0 && r.state.iteration % o.ckpt_every == 0 && r.state.iteration < o.iters)
        checkpoint(r.state);
    }
    progress.finish();
    return true;
  }
};

// The training run of this process: parse, set up, loop, report. `session` and `engine_owner` belong to the
// caller, which keeps them alive when a rank of a job fails (train() below).
int run_training(int argc, char** argv, const job::World& world, std::unique_ptr<TrainSession>& session,
                 std::unique_ptr<Engine>& engine_owner) {
  const bool root_rank = world.rank == 0;  // rank 0 alone writes files and reports (one process: itself)
  Config engine_config = Config::from_env();
  TrainOptions o;
  try {
    o = parse_options(argc, argv, world, engine_config, session);
  } catch (const UsageError& e) {
    return usage_error("train", e, flags(), usage());
  }
  if (o.help) {
    std::cout << usage();
    return 0;
  }
  if (policy_help_requested(engine_config)) return 0;
  if (root_rank) std::fprintf(stderr, "corun train: %s\n", o.plan.c_str());
  stop::install();  // from here on, SIGTERM/SIGUSR1/SIGINT stop the run after an iteration

  const int replicas = session->replicas();
  configure_plan_step(engine_config, *session);
  engine_owner = start_engine(engine_config, replicas);
  Engine& engine = *engine_owner;
  const PassTotals passes = apply_passes(engine, *session, engine_config.grouping(), root_rank);
  RunIdentity identity = session->identity();
  identity.emplace_back("fuse_elementwise", o.fuse ? "true" : "false");
  job::check_same(fingerprints(argc, argv, identity, replicas, engine_config));
  if (!root_rank) o.json_path = o.save_dir = o.save_onnx = o.grads_dir = o.ckpt_dir = "";  // rank 0 writes the job's files
  std::unique_ptr<Checkpoints> ckpt;
  if (!o.ckpt_dir.empty()) ckpt = std::make_unique<Checkpoints>(o.ckpt_dir);
  TrainRecord r;
  r.state = restore(o, world, *session, identity, ckpt.get());
  CoTenancyWatch co_tenants("train", machine::allocation(engine_config.cgroup_root), engine_config.quiet);
  // Initial states are zero inputs: the graph's buffers start zero-filled and nothing writes them.
  if (root_rank) co_tenants.check();  // one line, before the timings (and later, if a co-tenant arrives)
  r.resumed_from = r.state.iteration;
  r.tasks = session->graph().num_nodes();
  const TrainLoop loop{o, world, *session, engine, identity, ckpt.get(), co_tenants, engine_config.quiet};
  if (!loop.run(r)) return 1;
  if (r.stop_signal == 0 && !world.distributed()) r.stop_signal = stop::requested();
  r.stopped = r.stop_signal != 0 && r.state.iteration < o.iters;
  // At the end, and when stopped by a signal (unless nothing ran since the checkpoint we resumed from).
  if (ckpt && r.state.iteration > ckpt->newest()) loop.checkpoint(r.state);
  // The test accuracy of the final parameters (a model with a test set only; not after a stop signal).
  const double accuracy = r.stopped || !root_rank ? -1.0 : session->test_accuracy(engine);
  if (root_rank) report_training(o, r, passes, *session, engine, world, ckpt != nullptr, accuracy);
  for (Graph* g : replica_graphs(*session)) engine.release(*g);
  if (!root_rank) return r.stopped ? stop::kStoppedExitCode : 0;  // the job's table and files are rank 0's
  if (r.stopped) {
    std::fprintf(stderr, "corun: stopped by %s after iteration %ld of %ld%s\n", stop::name(r.stop_signal),
                 r.state.iteration, o.iters,
                 ckpt ? ("; resume with --checkpoint " + o.ckpt_dir + " --resume").c_str()
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
