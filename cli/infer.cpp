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
    {"--batch", true, "inputs per inference (default 1)"},
    {"--iters", true, "timed inferences (default 2000)"},
    {"--warmup", true, "untimed inferences first (default 100)"},
    {"--onnx", true, "run an ONNX model once on given inputs and write its outputs instead (corun infer --onnx F --help)"},
    {"--exec", true,
     "starpu (one StarPU task per node, default) | inline (every kernel on the calling thread, no StarPU)"
     " | auto (times max(5, --warmup) inferences of each, then runs the faster; both give the same numbers)"},
    {"--json", true, "write the configuration, the latency summary and every inference's time to this file"},
    {"--help", false, "show this help"},
};

std::string usage() {
  return "usage: corun infer --model wide-deep [--batch N] [--iters N] [--warmup N] [--exec starpu|inline|auto] [--json FILE]\n"
         "       corun infer --onnx FILE --input NAME=FILE.npy ... --output DIR [--batch N] [--json FILE]\n" +
         describe(kFlags) +
         "environment: CORUN_PARALLEL_OPS=on|off (default on), CORUN_PARALLEL_OPS_MIN=N (default 2), CORUN_SCHED\n";
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
  models::WideDeepConfig cfg;
  long iters = 2000, warmup = 100;
  std::string exec = "starpu";
  std::string json_path;
  try {
    const Args args(argc, argv, 2, kFlags);
    if (args.has("--help")) {
      std::fputs(usage().c_str(), stdout);
      return 0;
    }
    if (!args.has("--model")) throw UsageError("--model is required");
    const std::string model = args.str("--model", "");
    if (model != "wide-deep") throw UsageError("--model must be wide-deep (the inference models), got '" + model + "'");
    cfg.batch = static_cast<int>(args.positive("--batch", 1));
    iters = args.positive("--iters", iters);
    warmup = args.has("--warmup") ? args.positive("--warmup", warmup) : warmup;
    exec = exec_mode(args);
    json_path = args.str("--json", "");
    check_output_file("--json", json_path);
    check_wide_deep_fits(args, cfg, iters);  // before the model and the times' vector are allocated
  } catch (const UsageError& e) {
    return usage_error("infer", e, kFlags, usage());
  }
  Config config = Config::from_env();
  config.parallel_ops_by_default = true;  // batch-1 inference gains from grouping under every policy
  if (policy_help_requested(config)) return 0;
  if (exec != "inline") check_config(config);  // before the model is built; inline runs without StarPU

  // The plan step's passes, run here (the engine would at its first run) so that they can be reported and
  // the inline runner gets the same graph.
  models::WideDeep m(cfg, /*training=*/false);
  m.init_params();
  const GraphPassReport report = apply_graph_passes(m.graph, config);
  const ParallelOps& pass = report.grouping;
  const int nodes_after = report.nodes_after;
  std::fprintf(stderr, "corun infer: parallel-op pass %s: %zu group(s), %d -> %d tasks per inference\n",
               pass.enabled ? "on" : "off", report.groups.size(), report.nodes_before, nodes_after);
  for (const auto& grp : report.groups)
    std::fprintf(stderr, "  group of %d %s (%s), first member %s\n", grp.members, grp.kind.c_str(),
                 grp.pattern.c_str(), grp.first_member.c_str());

  // A few distinct batches, cycled: every inference reads new inputs, none is generated inside the loop.
  const models::TabularTask task(cfg);
  constexpr int kBatches = 16;
  std::vector<std::vector<float>> cats(kBatches), dense(kBatches), labels(kBatches);
  for (int k = 0; k < kBatches; ++k) task.make_batch(static_cast<uint64_t>(k), cats[k], dense[k], labels[k]);

  std::vector<double> us;
  us.reserve(static_cast<size_t>(iters));
  double checksum = 0.0;
  std::string policy = "inline";
  int workers = 1;
  std::unique_ptr<Engine> engine;
  // `skip` untimed then `n` timed inferences (us) of each path, the batches cycled.
  auto run_inline = [&](long skip, long n, std::vector<double>& out) {
    // The graph is never bound to an Engine: its host buffers are the data (the coherence rule of
    // corun/inline.hpp), written and read directly.
    InlineRunner runner(m.graph);
    float* cat_buf = m.graph.data(m.categories);
    float* dense_buf = m.graph.data(m.dense);
    for (long i = 0; i < skip + n; ++i) {
      const auto k = static_cast<size_t>(i % kBatches);
      std::copy(cats[k].begin(), cats[k].end(), cat_buf);
      std::copy(dense[k].begin(), dense[k].end(), dense_buf);
      const auto t0 = std::chrono::steady_clock::now();
      runner.run();
      const auto t1 = std::chrono::steady_clock::now();
      if (i >= skip) out.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    }
    checksum = m.graph.data(m.logits)[0];
  };
  auto run_starpu = [&](long skip, long n, std::vector<double>& out) {
    if (!engine) engine = std::make_unique<Engine>(config);
    for (long i = 0; i < skip + n; ++i) {
      const auto k = static_cast<size_t>(i % kBatches);
      engine->write(m.graph, m.categories, cats[k]);
      engine->write(m.graph, m.dense, dense[k]);
      // The run's own time, on StarPU's clock: simulated time under `corun simulate`.
      const RunStats stats = engine->run(m.graph);
      if (i >= skip) out.push_back(stats.wall_ms * 1000.0);
    }
    checksum = engine->read(m.graph, m.logits)[0];
  };
  std::string chosen = exec;
  json::Value auto_choice;  // --exec auto: what each path took
  if (exec == "auto") {
    // Both paths compute the same numbers, so the faster can be chosen by timing: max(5, --warmup) inferences
    // of each after one untimed one (StarPU's first run also does the plan step), medians compared.
    const long trial = exec_trial_runs(warmup);
    std::vector<double> a, b;
    run_inline(1, trial, a);
    run_starpu(1, trial, b);
    const ExecChoice choice = choose_exec(a, b);
    chosen = choice.chosen;
    std::fprintf(stderr, "corun infer: --exec auto: inline %.1f us, StarPU %.1f us (medians of %ld inferences): runs %s\n",
                 choice.inline_median, choice.starpu_median, trial, chosen.c_str());
    if (chosen == "inline") {  // the host buffers hold the values again
      engine->release(m.graph);
      engine.reset();
    }
    auto_choice = {{"inline_us", choice.inline_median}, {"starpu_us", choice.starpu_median}, {"inferences", trial}};
  }
  if (chosen == "inline") {
    run_inline(warmup, iters, us);
  } else {
    run_starpu(warmup, iters, us);
    engine->release(m.graph);
    policy = engine->info().policy;
    workers = engine->info().workers;
  }
  const std::vector<double> in_order = us;  // for --json
  std::sort(us.begin(), us.end());
  std::printf("| model | batch | inferences | median us | p99 us | min us | tasks/inference | parallel-op pass | exec | policy | workers |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
  std::printf("| wide-deep | %d | %ld | %.1f | %.1f | %.1f | %d | %s | %s | %s | %d |\n", cfg.batch, iters,
              quantile(us, 0.5), quantile(us, 0.99), us.front(), nodes_after, pass.enabled ? "on" : "off",
              chosen.c_str(), policy.c_str(), workers);
  std::printf("last logit (row 0): %.6f\n", checksum);
  if (!json_path.empty()) {
    json::Value result = {
        {"config", {{"model", "wide-deep"}, {"batch", cfg.batch}, {"iters", iters}, {"warmup", warmup},
                    {"exec", chosen}, {"exec_requested", exec}, {"parallel_ops", pass.enabled}}},
        {"engine", {{"policy", policy}, {"workers", workers}}},
        {"summary", {{"median_us", quantile(us, 0.5)}, {"p99_us", quantile(us, 0.99)}, {"min_us", us.front()},
                     {"tasks_per_inference", nodes_after}}},
        {"us_per_inference", in_order}};
    if (exec == "auto") result["exec_auto"] = auto_choice;
    write_file_atomically(json_path, json::dump(result) + "\n", "the --json results");
  }
  return 0;
}

}  // namespace corun::cli
