// corun infer: builds a model's inference graph (no backward), optionally rewrites it with the
// parallel-op grouping pass (CORUN_PARALLEL_OPS, default on), runs it N times and prints the latency per
// inference (median, p99, min). Each inference gets a fresh input batch, written before the clock starts;
// the clock covers Engine::run, i.e. submitting every task and waiting for the last one. With
// --exec inline the graph never meets StarPU: the calling thread runs every node's kernel in order
// (corun::InlineRunner, corun/inline.hpp), and the clock covers InlineRunner::run; --exec auto times both and
// runs the faster.
#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "cli/exec_choice.hpp"
#include "cli/infer_inputs.hpp"
#include "cli/quantile.hpp"
#include "cli/output_paths.hpp"

#include <corun/engine.hpp>
#include <corun/inline.hpp>
#include <corun/models/wide_deep.hpp>

#include "base/files.hpp"
#include "base/json.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace corun::cli {

namespace {

const std::vector<FlagSpec> kFlags = {
    {"--model", true, "wide-deep (this benchmark); the other built-in models: corun infer --model lstm --help"},
    infer_batch_flag(),
    infer_iters_flag(2000),
    infer_warmup_flag(100),
    {"--onnx", true, "run an ONNX model once on given inputs and write its outputs instead (corun infer --onnx F --help)"},
    {"--exec", true,
     "starpu (one StarPU task per node, default) | inline (every kernel on the calling thread, no StarPU)"
     " | auto (times max(5, --warmup) inferences of each, then runs the faster; both give the same numbers)"},
    infer_json_flag(),
    help_flag(),
};

std::string usage() {
  return "usage: corun infer --model wide-deep [--batch N] [--iters N] [--warmup N] [--exec starpu|inline|auto] [--json FILE]\n"
         "       corun infer --onnx FILE --input NAME=FILE.npy ... --output DIR [--batch N] [--json FILE]\n" +
         describe(kFlags) +
         "environment: CORUN_PARALLEL_OPS=on|off (default on), CORUN_PARALLEL_OPS_MIN=N (default 2), CORUN_SCHED\n";
}

// What the command line asks for.
struct BenchOptions {
  models::WideDeepConfig cfg;
  long iters = 2000, warmup = 100;
  std::string exec = "starpu";
  std::string json_path;
  bool help = false;
};

// Parses and checks every flag (throws UsageError), and that the model and its times fit in memory.
BenchOptions parse_options(int argc, char** argv) {
  BenchOptions o;
  const Args args(argc, argv, 2, kFlags);
  if (args.has("--help")) {
    o.help = true;
    return o;
  }
  if (!args.has("--model")) throw UsageError("--model is required");
  const std::string model = args.str("--model", "");
  if (model != "wide-deep") throw UsageError("--model must be wide-deep (the inference models), got '" + model + "'");
  o.cfg.batch = static_cast<int>(args.positive("--batch", 1));
  o.iters = args.positive("--iters", o.iters);
  o.warmup = args.has("--warmup") ? args.positive("--warmup", o.warmup) : o.warmup;
  o.exec = exec_mode(args);
  o.json_path = args.str("--json", "");
  check_output_file("--json", o.json_path);
  check_wide_deep_fits(args, o.cfg, o.iters);  // before the model and the times' vector are allocated
  return o;
}

void print_pass_report(const GraphPassReport& report) {
  std::fprintf(stderr, "corun infer: parallel-op pass %s: %zu group(s), %d -> %d tasks per inference\n",
               report.grouping.enabled ? "on" : "off", report.groups.size(), report.nodes_before, report.nodes_after);
  for (const auto& grp : report.groups)
    std::fprintf(stderr, "  group of %d %s (%s), first member %s\n", grp.members, grp.kind.c_str(),
                 grp.pattern.c_str(), grp.first_member.c_str());
}

// The inferences of the benchmark on the path --exec chose, and what they measured.
class WideDeepRuns {
 public:
  WideDeepRuns(models::WideDeep& m, const Config& config, const BenchOptions& o)
      : chosen(o.exec), m_(m), config_(config), o_(o) {
    // A few distinct batches, cycled: every inference reads new inputs, none is generated inside the loop.
    const models::TabularTask task(o.cfg);
    for (int k = 0; k < kBatches; ++k)
      task.make_batch(static_cast<uint64_t>(k), cats_[k], dense_[k], labels_[k]);
  }

  void run() {
    us.reserve(static_cast<size_t>(o_.iters));
    if (o_.exec == "auto") choose_by_timing();
    if (chosen == "inline") {
      run_inline(o_.warmup, o_.iters, us);
    } else {
      run_starpu(o_.warmup, o_.iters, us);
      engine_->release(m_.graph);
      policy = engine_->info().policy;
      workers = engine_->info().workers;
    }
  }

  std::vector<double> us;  // the timed inferences, in order
  double checksum = 0.0;   // the last logit of row 0
  std::string policy = "inline";
  int workers = 1;
  std::string chosen;      // the path that ran: inline or starpu
  json::Value auto_choice;  // --exec auto: what each path took

 private:
  static constexpr int kBatches = 16;

  // `skip` untimed then `n` timed inferences (us), the batches cycled.
  void run_inline(long skip, long n, std::vector<double>& out) {
    // The graph is never bound to an Engine: its host buffers are the data (the coherence rule of
    // corun/inline.hpp), written and read directly.
    InlineRunner runner(m_.graph);
    float* cat_buf = m_.graph.data(m_.categories);
    float* dense_buf = m_.graph.data(m_.dense);
    for (long i = 0; i < skip + n; ++i) {
      const auto k = static_cast<size_t>(i % kBatches);
      std::copy(cats_[k].begin(), cats_[k].end(), cat_buf);
      std::copy(dense_[k].begin(), dense_[k].end(), dense_buf);
      const auto t0 = std::chrono::steady_clock::now();
      runner.run();
      const auto t1 = std::chrono::steady_clock::now();
      if (i >= skip) out.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    }
    checksum = m_.graph.data(m_.logits)[0];
  }

  void run_starpu(long skip, long n, std::vector<double>& out) {
    if (!engine_) engine_ = std::make_unique<Engine>(config_);
    for (long i = 0; i < skip + n; ++i) {
      const auto k = static_cast<size_t>(i % kBatches);
      engine_->write(m_.graph, m_.categories, cats_[k]);
      engine_->write(m_.graph, m_.dense, dense_[k]);
      // The run's own time, on StarPU's clock: simulated time under `corun simulate`.
      const RunStats stats = engine_->run(m_.graph);
      if (i >= skip) out.push_back(stats.wall_ms * 1000.0);
    }
    checksum = engine_->read(m_.graph, m_.logits)[0];
  }

  // Both paths compute the same numbers, so the faster can be chosen by timing: max(5, --warmup) inferences
  // of each after one untimed one (StarPU's first run also does the plan step), medians compared.
  void choose_by_timing() {
    const long trial = exec_trial_runs(o_.warmup);
    std::vector<double> a, b;
    run_inline(1, trial, a);
    run_starpu(1, trial, b);
    const ExecChoice choice = choose_exec(a, b);
    chosen = choice.chosen;
    std::fprintf(stderr, "corun infer: --exec auto: inline %.1f us, StarPU %.1f us (medians of %ld inferences): runs %s\n",
                 choice.inline_median, choice.starpu_median, trial, chosen.c_str());
    if (chosen == "inline") {  // the host buffers hold the values again
      engine_->release(m_.graph);
      engine_.reset();
    }
    auto_choice = {{"inline_us", choice.inline_median}, {"starpu_us", choice.starpu_median}, {"inferences", trial}};
  }

  models::WideDeep& m_;
  const Config& config_;
  const BenchOptions& o_;
  using Batches = std::vector<std::vector<float>>;
  Batches cats_ = Batches(kBatches), dense_ = Batches(kBatches), labels_ = Batches(kBatches);
  std::unique_ptr<Engine> engine_;
};

// The latency table (and --json), from the times in order.
void report(const BenchOptions& o, const WideDeepRuns& runs, const GraphPassReport& passes) {
  std::vector<double> us = runs.us;
  std::sort(us.begin(), us.end());
  const bool grouped = passes.grouping.enabled;
  std::printf("| model | batch | inferences | median us | p99 us | min us | tasks/inference | parallel-op pass | exec | policy | workers |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
  std::printf("| wide-deep | %d | %ld | %.1f | %.1f | %.1f | %d | %s | %s | %s | %d |\n", o.cfg.batch, o.iters,
              quantile(us, 0.5), quantile(us, 0.99), us.front(), passes.nodes_after, grouped ? "on" : "off",
              runs.chosen.c_str(), runs.policy.c_str(), runs.workers);
  std::printf("last logit (row 0): %.6f\n", runs.checksum);
  if (o.json_path.empty()) return;
  json::Value result = {
      {"config", {{"model", "wide-deep"}, {"batch", o.cfg.batch}, {"iters", o.iters}, {"warmup", o.warmup},
                  {"exec", runs.chosen}, {"exec_requested", o.exec}, {"parallel_ops", grouped}}},
      {"engine", {{"policy", runs.policy}, {"workers", runs.workers}}},
      {"summary", {{"median_us", quantile(us, 0.5)}, {"p99_us", quantile(us, 0.99)}, {"min_us", us.front()},
                   {"tasks_per_inference", passes.nodes_after}}},
      {"us_per_inference", runs.us}};
  if (o.exec == "auto") result["exec_auto"] = runs.auto_choice;
  write_file_atomically(o.json_path, json::dump(result) + "\n", "the --json results");
}

}  // namespace

int infer(int argc, char** argv) {
  for (int i = 2; i < argc; ++i)
    if (!std::strcmp(argv[i], "--onnx")) return infer_onnx(argc, argv);  // cli/infer_onnx.cpp
  // The other built-in models, and wide-deep with --input / --output: cli/infer_builtin.cpp.
  for (int i = 2; i < argc; ++i)
    if (!std::strcmp(argv[i], "--input") || !std::strcmp(argv[i], "--output") ||
        (!std::strcmp(argv[i], "--model") && i + 1 < argc && std::strcmp(argv[i + 1], "wide-deep") != 0))
      return infer_builtin(argc, argv);
  BenchOptions o;
  Config config;
  if (const auto code = start_infer(o, config, [&] { return parse_options(argc, argv); }, kFlags, usage()))
    return *code;
  config.parallel_ops_by_default = true;  // batch-1 inference gains from grouping under every policy
  if (o.exec != "inline") check_config(config);  // before the model is built; inline runs without StarPU

  // The plan step's passes, run here (the engine would at its first run) so that they can be reported and
  // the inline runner gets the same graph.
  models::WideDeep m(o.cfg, /*training=*/false);
  m.init_params();
  const GraphPassReport passes = apply_graph_passes(m.graph, config);
  print_pass_report(passes);
  WideDeepRuns runs(m, config, o);
  runs.run();
  report(o, runs, passes);
  return 0;
}

}  // namespace corun::cli
