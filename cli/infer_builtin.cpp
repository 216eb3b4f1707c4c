// corun infer --model lstm|phased-lstm|cifar-quick|pathnet|googlenet|wide-deep: the inference graph
// (training = false: no backward, no updates) of every built-in model `corun train` knows, run --warmup + --iters
// times under CORUN_SCHED; prints the latency per inference (median, p99, min). Each inference reads the
// model's own synthetic batch k (the task `corun train` learns), except the inputs given with --input
// NAME=FILE.npy, which stay fixed; --output DIR writes the logits of the last inference as DIR/logits.npy,
// as `corun infer --onnx` writes its outputs. wide-deep without --input / --output keeps cli/infer.cpp's
// benchmark (--exec inline).
#include "cli/args.hpp"
#include "cli/infer_inputs.hpp"
#include "cli/commands.hpp"
#include "cli/quantile.hpp"
#include "cli/footprint.hpp"
#include "cli/lstm_session.hpp"
#include "cli/output_paths.hpp"

#include <corun/engine.hpp>
#include <corun/models/cnn.hpp>
#include <corun/models/lstm.hpp>
#include <corun/models/wide_deep.hpp>
#include <corun/npy.hpp>

#include "base/check.hpp"
#include "base/files.hpp"
#include "base/json.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace corun::cli {

namespace {

const std::vector<FlagSpec> kFlags = {
    {"--model", true, "lstm | phased-lstm | cifar-quick | pathnet | googlenet | wide-deep"},
    {"--size", true, "small | medium | large (lstm, phased-lstm, pathnet, googlenet; default small)"},
    infer_batch_flag(),
    {"--layers", true, "LSTM layers (lstm, phased-lstm)"},
    {"--seq", true, "LSTM timesteps (lstm, phased-lstm)"},
    {"--hidden", true, "LSTM hidden size = input size (lstm, phased-lstm)"},
    infer_iters_flag(20),
    infer_warmup_flag(2),
    {"--input", true, "NAME=FILE.npy: a fixed value for graph input NAME (repeat for each; the rest is synthetic)"},
    {"--output", true, "write the last inference's logits as DIR/logits.npy (created)"},
    infer_json_flag(),
    help_flag(),
};

std::string usage() {
  return "usage: corun infer --model lstm|phased-lstm|cifar-quick|pathnet|googlenet|wide-deep [--size S] [--batch N]\n"
         "                   [--iters N] [--warmup N] [--input NAME=FILE.npy ...] [--output DIR] [--json FILE]\n" +
         describe(kFlags) +
         "exit codes: 0 done, 1 a bad input or output (nothing is written), 2 usage error\n";
}

// One built-in model's inference graph and its synthetic inputs: fill(k) gives batch k of every data input.
struct InferModel {
  std::string name;
  Graph* graph = nullptr;
  Tensor logits;
  std::function<std::map<std::string, std::vector<float>>(uint64_t)> fill;
  std::shared_ptr<void> owner;  // keeps the model (and its graph) alive
};

InferModel lstm_model(const Args& args) {
  std::string size;
  const models::LstmConfig cfg = lstm_config_from(args, size, /*training=*/false);  // refuses one too large
  auto m = std::make_shared<models::Lstm>(cfg, /*training=*/false);
  m->init_params();
  auto task = std::make_shared<models::SequenceTask>(cfg);
  InferModel im{cfg.phased ? "phased-lstm" : "lstm", &m->graph, m->logits, nullptr, m};
  im.fill = [m, task](uint64_t k) {
    std::map<std::string, std::vector<float>> in;
    std::vector<std::vector<float>> xs, times;
    task->make_batch(k, xs, in[m->targets.name()]);
    for (size_t t = 0; t < xs.size(); ++t) in[m->x[t].name()] = std::move(xs[t]);
    if (m->config.phased) {
      task->make_times(k, times);
      for (size_t t = 0; t < times.size(); ++t) in[m->times[t].name()] = std::move(times[t]);
    }
    return in;
  };
  return im;
}

InferModel cnn_model(const Args& args, const std::string& model) {
  const std::string size = args.str("--size", "small");
  if (size != "small" && size != "medium" && size != "large")
    throw UsageError("--size must be small, medium or large, got '" + size + "'", "--size");
  models::CnnConfig cfg = model == "cifar-quick" ? models::cifar_quick_config()
                          : model == "pathnet"   ? models::pathnet_config(size)
                                                 : models::googlenet_config(size);
  cfg.batch = static_cast<int>(args.positive("--batch", 1));
  // Before the graph is built: every tensor is allocated as it grows.
  const std::string given = args.given({"--batch"});
  check_fits_in_memory(cnn_footprint(cfg, /*training=*/false), given.empty() ? "--size " + size : given,
                       model + " batch=" + std::to_string(cfg.batch) + " image=" + std::to_string(cfg.image),
                       "lower --batch");
  auto m = std::make_shared<models::Cnn>(cfg, /*training=*/false);
  m->init_params();
  // cifar-quick trains on Fashion-MNIST; its inference latency needs no data set: the synthetic images.
  auto task = std::make_shared<models::SyntheticImages>(cfg);
  InferModel im{model, &m->graph, m->logits, nullptr, m};
  im.fill = [m, task](uint64_t k) {
    std::map<std::string, std::vector<float>> in;
    task->make_batch(k, in[m->x.name()], in[m->targets.name()]);
    return in;
  };
  return im;
}

InferModel wide_deep_model(const Args& args) {
  models::WideDeepConfig cfg;
  cfg.batch = static_cast<int>(args.positive("--batch", 1));
  check_wide_deep_fits(args, cfg, 0);  // the times are kept as they come, not reserved
  auto m = std::make_shared<models::WideDeep>(cfg, /*training=*/false);
  m->init_params();
  auto task = std::make_shared<models::TabularTask>(cfg);
  InferModel im{"wide-deep", &m->graph, m->logits, nullptr, m};
  im.fill = [m, task](uint64_t k) {
    std::map<std::string, std::vector<float>> in;
    std::vector<float> labels;
    task->make_batch(k, in[m->categories.name()], in[m->dense.name()], labels);
    return in;
  };
  return im;
}

// What the command line asks for, with the model it names already built.
struct BuiltinOptions {
  std::string out_dir, json_path;
  long iters = 20, warmup = 2;
  InferModel im;
  std::map<std::string, std::string> input_files;  // graph input name -> .npy
  bool help = false;
};

InferModel model_named(const Args& args, const std::string& model) {
  if (model == "lstm" || model == "phased-lstm") return lstm_model(args);
  if (model == "cifar-quick" || model == "pathnet" || model == "googlenet") return cnn_model(args, model);
  if (model == "wide-deep") return wide_deep_model(args);
  throw UsageError("unknown model '" + model + "' (available: lstm, phased-lstm, cifar-quick, pathnet, googlenet, "
                   "wide-deep; an ONNX file: --onnx)", "--model");
}

// Parses and checks every flag (throws UsageError), then builds the model (last: the cheap checks first).
BuiltinOptions parse_options(int argc, char** argv) {
  BuiltinOptions o;
  const Args args = args_with_inputs(argc, argv, kFlags, o.input_files);
  if (args.has("--help")) {
    o.help = true;
    return o;
  }
  const std::string model = args.str("--model", "");
  if (model.empty()) throw UsageError("--model is required");
  o.iters = args.positive("--iters", o.iters);
  o.warmup = args.has("--warmup") ? args.positive("--warmup", o.warmup) : o.warmup;
  o.out_dir = args.str("--output", "");
  o.json_path = args.str("--json", "");
  if (!o.out_dir.empty()) check_output_dir("--output", o.out_dir);
  check_output_file("--json", o.json_path);
  o.im = model_named(args, model);
  return o;
}

// Every --input read and checked before the engine starts and before anything is written.
std::vector<std::pair<Tensor, NpyArray>> read_fixed_inputs(const BuiltinOptions& o) {
  const Graph& g = *o.im.graph;
  std::string names;
  for (const Tensor& t : g.inputs()) names += (names.empty() ? "" : ", ") + t.name() + " " + t.shape().str();
  std::vector<std::pair<Tensor, NpyArray>> fixed;
  for (const auto& [name, file] : o.input_files) {
    Tensor t;
    for (const Tensor& in : g.inputs())
      if (in.name() == name) t = in;
    CORUN_CHECK(t.valid(), Status::invalid_argument,
                "--input " << name << ": " << o.im.name << " has no input of that name; its inputs: " << names);
    NpyArray a = load_npy(file);
    CORUN_CHECK(a.shape == t.shape(), Status::invalid_argument,
                "--input " << name << ": " << file << " has the shape " << a.shape.str() << ", " << o.im.name
                           << "'s input is " << t.shape().str() << " (--batch sets the first dimension)");
    fixed.emplace_back(t, std::move(a));
  }
  return fixed;
}

// What the inferences measured.
struct BuiltinRuns {
  std::vector<double> ms;  // the timed inferences, in order
  std::vector<float> logits;  // the last inference's
  std::string policy;
  int workers = 0;
};

// The latency table, --output's logits and --json.
void report(const BuiltinOptions& o, const BuiltinRuns& r) {
  const InferModel& im = o.im;
  std::vector<double> ms = r.ms;
  std::sort(ms.begin(), ms.end());
  const int batch = static_cast<int>(im.logits.shape()[0]);
  std::printf("| model | batch | inferences | median ms | p99 ms | min ms | policy | workers |\n");
  std::printf("|---|---|---|---|---|---|---|---|\n");
  std::printf("| %s | %d | %ld | %.3f | %.3f | %.3f | %s | %d |\n", im.name.c_str(), batch, o.iters, quantile(ms, 0.5),
              quantile(ms, 0.99), ms.front(), r.policy.c_str(), r.workers);
  json::Value outputs = json::Value::array();
  if (!o.out_dir.empty()) {
    std::filesystem::create_directories(o.out_dir);
    save_npy(o.out_dir + "/logits.npy", im.logits.shape(), r.logits.data());
    outputs.push_back({{"name", "logits"}, {"file", "logits.npy"}, {"shape", im.logits.shape().str()}});
    std::printf("logits %s -> %s/logits.npy\n", im.logits.shape().str().c_str(), o.out_dir.c_str());
  }
  if (o.json_path.empty()) return;
  json::Value inputs = json::Value::object();
  for (const auto& [name, file] : o.input_files) inputs[name] = file;
  const json::Value result = {
      {"config", {{"model", im.name}, {"batch", batch}, {"iters", o.iters}, {"warmup", o.warmup}, {"inputs", inputs}}},
      {"engine", {{"policy", r.policy}, {"workers", r.workers}}},
      {"summary", {{"median_ms", quantile(ms, 0.5)}, {"p99_ms", quantile(ms, 0.99)}, {"min_ms", ms.front()}}},
      {"outputs", outputs},
      {"ms_per_inference", r.ms}};
  write_file_atomically(o.json_path, json::dump(result) + "\n", "the --json results");
}

// --warmup + --iters inferences, each on the model's synthetic batch i except the fixed inputs.
BuiltinRuns run_inferences(Engine& engine, const BuiltinOptions& o,
                           const std::vector<std::pair<Tensor, NpyArray>>& fixed) {
  Graph& g = *o.im.graph;
  BuiltinRuns r;
  for (long i = 0; i < o.warmup + o.iters; ++i) {
    for (auto& [name, data] : o.im.fill(static_cast<uint64_t>(i))) {
      if (o.input_files.count(name)) continue;
      engine.write(g, g.find(name), data);
    }
    for (const auto& [t, a] : fixed) engine.write(g, t, a.data);
    const RunStats stats = engine.run(g);
    if (i >= o.warmup) r.ms.push_back(stats.wall_ms);
  }
  r.logits = engine.read(g, o.im.logits);
  engine.release(g);
  r.policy = engine.info().policy;
  r.workers = engine.info().workers;
  return r;
}

}  // namespace

int infer_builtin(int argc, char** argv) {
  BuiltinOptions o;
  Config config;
  if (const auto code = start_infer(o, config, [&] { return parse_options(argc, argv); }, kFlags, usage()))
    return *code;
  check_config(config);
  const std::vector<std::pair<Tensor, NpyArray>> fixed = read_fixed_inputs(o);
  Engine engine(config);  // alive until the report is written, as the run's other resources
  const BuiltinRuns runs = run_inferences(engine, o, fixed);
  report(o, runs);
  return 0;
}

}  // namespace corun::cli
