// corun infer --onnx FILE --input NAME=FILE.npy ... --output DIR: runs an imported ONNX model's forward
// graph once on the given inputs and writes every graph output as DIR/<output name>.npy, so that anyone can
// compare corun's numbers with another framework's on the same inputs and weights. With --exec inline the
// graph never meets StarPU: the calling thread runs every node's kernel in order (corun::InlineRunner), which
// is what a batch-1 inference of a small model wants (a StarPU task costs more than its kernels); --exec auto
// times both and runs the faster (the same bits either way).
#include "cli/args.hpp"
#include "cli/infer_inputs.hpp"
#include "cli/commands.hpp"
#include "cli/exec_choice.hpp"
#include "cli/output_paths.hpp"

#include <corun/engine.hpp>
#include <corun/inline.hpp>
#include <corun/npy.hpp>
#include <corun/onnx.hpp>

#include "base/check.hpp"
#include "base/files.hpp"
#include "base/json.hpp"
#include "base/memory_budget.hpp"
#include "trace/trace.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace corun::cli {

namespace {

const std::vector<FlagSpec> kFlags = {
    {"--onnx", true, "the ONNX model (docs/onnx.md)"},
    {"--input", true, "NAME=FILE.npy: the value of graph input NAME (repeat for each input; f32 .npy)"},
    {"--output", true, "write every graph output as DIR/<output name>.npy (created; required)"},
    {"--batch", true,
     "the batch size for a dynamic batch dimension of the model's inputs (default: the --input files' first "
     "dimension; given, the files must agree)"},
    {"--iters", true, "run the inference N times on the same inputs (default 1); the outputs are the last run's"},
    {"--warmup", true, "untimed runs before those (default 0)"},
    {"--exec", true,
     "starpu (one StarPU task per node, default) | inline (every kernel on the calling thread at width 1, no StarPU)"
     " | auto (times a few runs of each, then runs the faster; both give the same bits)"},
    {"--json", true, "write the model, inputs, outputs, time and engine to this file"},
    {"--trace", true, "write the last run's timeline as a Chrome/Perfetto trace (corun plot-trace draws it)"},
    {"--keep-batch-norm", false,
     "run each BatchNormalization as its own op instead of folding it into the convolution before it"},
    {"--keep-activations", false,
     "run each Relu and Clip after a convolution as its own op instead of fusing it into the convolution"},
    {"--keep-layouts", false,
     "keep every tensor in NCHW instead of oneDNN's blocked layout between the convolutions that use it"},
    {"--allow-non-finite", false,
     "import initializers holding NaN or inf (by default such a model is refused, exit 1, naming the initializer)"},
    help_flag(),
};

std::string usage() {
  return "usage: corun infer --onnx FILE --input NAME=FILE.npy [--input ...] --output DIR [--batch N] [--iters N]\n"
         "                   [--warmup N] [--exec starpu|inline|auto] [--json FILE] [--trace FILE] [--keep-batch-norm]\n"
         "                   [--keep-activations] [--keep-layouts]\n" +
         describe(kFlags) + "environment: CORUN_SCHED and the rest of docs/env-vars.md\n"
         "exit codes: 0 done, 1 a bad model, input or output (nothing is written), 2 usage error\n";
}

// What the command line asks for.
struct OnnxInferOptions {
  OnnxImportOptions import;
  std::string path, out_dir, json_path, trace_path;
  long iters = 1, warmup = 0;
  bool fold = true, fuse = true, block = true;  // the plan step's inference passes (--keep-... turn them off)
  std::string exec = "starpu";
  std::map<std::string, std::string> input_files;  // ONNX input name -> .npy
  bool help = false;
};

// Parses and checks every flag (throws UsageError); the outputs are checked writable, nothing is written.
OnnxInferOptions parse_options(int argc, char** argv) {
  OnnxInferOptions o;
  const Args args = args_with_inputs(argc, argv, kFlags, o.input_files);
  if (args.has("--help")) {
    o.help = true;
    return o;
  }
  o.path = args.str("--onnx", "");
  o.out_dir = args.str("--output", "");
  o.json_path = args.str("--json", "");
  o.trace_path = args.str("--trace", "");
  if (o.path.empty()) throw UsageError("--onnx needs a file");
  if (o.out_dir.empty()) throw UsageError("--output DIR is required (where the outputs are written)");
  if (args.has("--batch")) o.import.batch = static_cast<int>(args.positive("--batch", 1));
  o.import.allow_non_finite = args.has("--allow-non-finite");
  o.iters = args.positive("--iters", o.iters);
  o.warmup = args.has("--warmup") ? args.positive("--warmup", 1) : 0;
  o.fold = !args.has("--keep-batch-norm");
  o.fuse = !args.has("--keep-activations");
  o.block = !args.has("--keep-layouts");
  o.exec = exec_mode(args);
  if (o.exec != "starpu" && !o.trace_path.empty())
    throw UsageError("--trace records StarPU's tasks; an --exec " + o.exec +
                     " run may have none (use --exec starpu with --trace)");
  check_output_dir("--output", o.out_dir);
  check_output_file("--json", o.json_path);
  check_output_file("--trace", o.trace_path);
  return o;
}

// Every --input file, read before the import: a dynamic batch dimension takes its size from them when --batch
// is not given (and must agree with --batch when it is: OnnxImportOptions::input_batches).
std::map<std::string, NpyArray> load_input_files(OnnxInferOptions& o) {
  std::map<std::string, NpyArray> arrays;
  for (const auto& [name, file] : o.input_files) {
    NpyArray a = load_npy(file);
    if (a.shape.rank > 0) o.import.input_batches[name] = a.shape[0];
    arrays.emplace(name, std::move(a));
  }
  return arrays;
}

// The --input arrays checked against the model's inputs, in the order of m.inputs: an unknown name, a
// missing input or a wrong shape fails here, before the engine starts and before anything is written.
std::vector<NpyArray> read_inputs(const OnnxModel& m, const OnnxInferOptions& o,
                                  std::map<std::string, NpyArray>& loaded) {
  std::string names;
  for (const Tensor& t : m.inputs) names += (names.empty() ? "" : ", ") + t.name() + " " + t.shape().str();
  for (const auto& [name, file] : o.input_files) {
    bool known = false;
    for (const Tensor& t : m.inputs) known = known || t.name() == onnx_value_name(name);
    CORUN_CHECK(known, Status::invalid_argument,
                "--input " << name << ": the model has no input of that name; its inputs: " << names);
  }
  std::vector<NpyArray> arrays;
  for (const Tensor& t : m.inputs) {
    std::string file, given;
    for (const auto& [name, f] : o.input_files)
      if (onnx_value_name(name) == t.name()) file = f, given = name;
    CORUN_CHECK(!file.empty(), Status::invalid_argument,
                "model input '" << t.name() << "' " << t.shape().str() << " has no --input " << t.name()
                                << "=FILE.npy; the model's inputs: " << names);
    NpyArray a = std::move(loaded.at(given));
    CORUN_CHECK(a.shape == t.shape(), Status::invalid_argument,
                "--input " << t.name() << ": " << file << " has the shape " << a.shape.str() << ", the model's input is "
                           << t.shape().str() << (o.import.batch == 0 ? "" : " (--batch sets the first dimension)"));
    arrays.push_back(std::move(a));
  }
  return arrays;
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// The runs of one model on its inputs, on the path --exec chose, and what they measured. The engine (when
// StarPU ran) stays alive for the report: the trace is read from it.
class OnnxRuns {
 public:
  OnnxRuns(OnnxModel& m, const std::vector<NpyArray>& arrays, const Config& config, const OnnxInferOptions& o)
      : chosen(o.exec), m_(m), arrays_(arrays), config_(config), o_(o) {}

  // --iters: the latency of repeated inferences (bench/onnx_models.sh); the median is reported.
  void run() {
    if (o_.exec != "starpu")
      for (size_t i = 0; i < m_.inputs.size(); ++i)
        std::copy(arrays_[i].data.begin(), arrays_[i].data.end(), m_.graph.data(m_.inputs[i]));
    if (o_.exec == "auto") choose_by_timing();
    if (chosen == "inline") {
      run_inline(o_.warmup, o_.iters, ms);
      for (const Tensor& t : m_.outputs) {
        const float* y = m_.graph.data(t);
        results.emplace_back(y, y + t.shape().numel());
      }
    } else {
      run_starpu();
    }
  }

  std::vector<double> ms;                      // the timed runs
  std::vector<std::vector<float>> results;     // the last run's outputs, in the order of m.outputs
  std::string policy = "inline";
  int workers = 1;
  std::unique_ptr<Engine> engine;
  std::string chosen;                          // the path that ran: inline or starpu
  json::Value auto_choice;                     // --exec auto: what each path took

 private:
  // `skip` untimed then `n` timed inline runs. The graph is bound to no Engine: its host buffers are the data
  // (corun/inline.hpp's coherence rule).
  void run_inline(long skip, long n, std::vector<double>& out) {
    InlineRunner runner(m_.graph);
    for (long i = 0; i < skip + n; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      runner.run();
      if (i >= skip) out.push_back(ms_since(t0));
    }
  }

  void start_engine() {
    engine = std::make_unique<Engine>(config_);
    for (size_t i = 0; i < m_.inputs.size(); ++i) engine->write(m_.graph, m_.inputs[i], arrays_[i].data);
  }

  // Both paths give the same bits, so the faster one can be chosen by timing: max(5, --warmup) runs of each
  // after one untimed run, on the same clock; StarPU's first run also does the plan step.
  void choose_by_timing() {
    const long trial = exec_trial_runs(o_.warmup);
    std::vector<double> a, b;
    run_inline(1, trial, a);
    start_engine();
    for (long i = 0; i < 1 + trial; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      engine->run(m_.graph);
      if (i >= 1) b.push_back(ms_since(t0));
    }
    const ExecChoice choice = choose_exec(a, b);
    chosen = choice.chosen;
    std::fprintf(stderr, "corun infer: --exec auto: inline %.4f ms, StarPU %.4f ms (medians of %ld runs): runs %s\n",
                 choice.inline_median, choice.starpu_median, trial, chosen.c_str());
    if (chosen == "inline") engine->release(m_.graph);  // the host buffers hold the values again
    auto_choice = {{"inline_ms", choice.inline_median}, {"starpu_ms", choice.starpu_median}, {"runs", trial}};
  }

  void run_starpu() {
    if (!engine) start_engine();
    for (long i = 0; i < o_.warmup + o_.iters; ++i) {
      if (!o_.trace_path.empty() && i == o_.warmup + o_.iters - 1) engine->set_tracing(true);
      const RunStats run = engine->run(m_.graph);
      if (i >= o_.warmup) ms.push_back(run.wall_ms);
    }
    for (const Tensor& t : m_.outputs) results.push_back(engine->read(m_.graph, t));
    engine->release(m_.graph);
    policy = engine->info().policy;
    workers = engine->info().workers;
  }

  OnnxModel& m_;
  const std::vector<NpyArray>& arrays_;
  const Config& config_;
  const OnnxInferOptions& o_;
};

// Every output as DIR/<name>.npy, one line each; returns the --json "outputs" array.
json::Value write_outputs(const OnnxModel& m, const OnnxRuns& runs, const std::string& out_dir) {
  std::filesystem::create_directories(out_dir);
  json::Value outputs = json::Value::array();
  for (size_t k = 0; k < m.outputs.size(); ++k) {
    const std::string file = onnx_value_name(m.output_names[k]) + ".npy";
    save_npy(out_dir + "/" + file, m.outputs[k].shape(), runs.results[k].data());
    outputs.push_back({{"name", m.output_names[k]}, {"file", file}, {"shape", m.outputs[k].shape().str()}});
    std::printf("%s %s -> %s/%s\n", m.output_names[k].c_str(), m.outputs[k].shape().str().c_str(), out_dir.c_str(),
                file.c_str());
  }
  return outputs;
}

void write_json(const OnnxInferOptions& o, const OnnxModel& m, const GraphPassReport& passes, const OnnxRuns& runs,
                json::Value outputs, double wall_ms) {
  json::Value inputs = json::Value::object();
  for (const auto& [name, file] : o.input_files) inputs[name] = file;
  json::Value result = {{"config",
                         {{"model", "onnx"},
                          {"onnx", o.path},
                          {"opset", m.opset},
                          {"inputs", inputs},
                          {"folded_batch_norms", passes.folded_batch_norms},
                          {"fused_activations", passes.fused_activations},
                          {"blocked_tensors", passes.blocked_tensors},
                          {"exec", runs.chosen},
                          {"exec_requested", o.exec}}},
                        {"outputs", std::move(outputs)},
                        {"wall_ms", wall_ms},
                        {"ms_per_inference", runs.ms},
                        {"engine", {{"policy", runs.policy}, {"workers", runs.workers}}}};
  if (o.exec == "auto") result["exec_auto"] = runs.auto_choice;
  write_file_atomically(o.json_path, json::dump(result) + "\n", "the --json results");
}

}  // namespace

int infer_onnx(int argc, char** argv) {
  OnnxInferOptions o;
  Config config;
  if (const auto code = start_infer(o, config, [&] { return parse_options(argc, argv); }, kFlags, usage()))
    return *code;
  if (o.exec != "inline") check_config(config);  // inline runs without StarPU

  // Everything is read and checked before the engine starts and before anything is written. The file's sizes
  // (and --batch's effect on them) are known only as it is imported: its tensors are capped instead.
  const MemoryBudget budget = memory_budget();
  set_tensor_memory_limit(budget.bytes, budget.source, "lower --batch or run a smaller model");
  std::map<std::string, NpyArray> loaded = load_input_files(o);
  OnnxModel m = import_onnx_model(o.path, o.import);
  // The plan step, run here so that its report can be printed and so that the inline path (no Engine) gets
  // the same graph: every BatchNormalization right after a Conv becomes part of its weights and bias (as ONNX
  // Runtime's graph optimizations do; the outputs differ by rounding only), every Relu or Clip that alone reads
  // a convolution's output becomes part of it, and the activations between convolutions on oneDNN's blocked
  // kernels stay in its blocked layout (both the same bits, fewer tasks and reorders).
  config.fold_batch_norm = o.fold;
  config.fuse_conv_activation = o.fuse;
  config.block_layouts = o.block;
  const GraphPassReport passes = apply_graph_passes(m.graph, config);
  const std::vector<NpyArray> arrays = read_inputs(m, o, loaded);

  OnnxRuns runs(m, arrays, config, o);
  runs.run();
  std::vector<double> sorted = runs.ms;
  std::sort(sorted.begin(), sorted.end());
  const double wall_ms = sorted[sorted.size() / 2];

  json::Value outputs = write_outputs(m, runs, o.out_dir);
  std::printf("%s: %.3f ms (%s, %d workers)\n", o.iters == 1 ? "one inference" : "median inference", wall_ms,
              runs.policy.c_str(), runs.workers);
  if (!o.trace_path.empty()) {
    write_chrome_trace(o.trace_path, runs.engine->trace_meta(), runs.engine->trace());
    std::printf("trace of the last run: %s (draw it with: corun plot-trace %s -o %s.png)\n", o.trace_path.c_str(),
                o.trace_path.c_str(), o.trace_path.c_str());
  }
  if (!o.json_path.empty()) write_json(o, m, passes, runs, std::move(outputs), wall_ms);
  return 0;
}

}  // namespace corun::cli
