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
    {"--batch", true, "inputs per inference (default 1)"},
    {"--layers", true, "LSTM layers (lstm, phased-lstm)"},
    {"--seq", true, "LSTM timesteps (lstm, phased-lstm)"},
    {"--hidden", true, "LSTM hidden size = input size (lstm, phased-lstm)"},
    {"--iters", true, "timed inferences (default 20)"},
    {"--warmup", true, "untimed inferences first (default 2)"},
    {"--input", true, "NAME=FILE.npy: a fixed value for graph input NAME (repeat for each; the rest is synthetic)"},
    {"--output", true, "write the last inference's logits as DIR/logits.npy (created)"},
    {"--json", true, "write the configuration, the latency summary and every inference's time to this file"},
    {"--help", false, "show this help"},
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

}  // namespace

int infer_builtin(int argc, char** argv) {
  std::string out_dir, json_path;
  long iters = 20, warmup = 2;
  InferModel im;
  std::map<std::string, std::string> input_files;  // graph input name -> .npy
  try {
    // --input repeats, which Args refuses: taken out first.
    InferInputFlags flags = take_input_flags(argc, argv);
    input_files = std::move(flags.files);
    const Args args(static_cast<int>(flags.rest.size()), flags.rest.data(), 2, kFlags);
    if (args.has("--help")) {
      std::fputs(usage().c_str(), stdout);
      return 0;
    }
    const std::string model = args.str("--model", "");
    if (model.empty()) throw UsageError("--model is required");
    iters = args.positive("--iters", iters);
    warmup = args.has("--warmup") ? args.positive("--warmup", warmup) : warmup;
    out_dir = args.str("--output", "");
    json_path = args.str("--json", "");
    if (!out_dir.empty()) check_output_dir("--output", out_dir);
    check_output_file("--json", json_path);
    if (model == "lstm" || model == "phased-lstm")
      im = lstm_model(args);
    else if (model == "cifar-quick" || model == "pathnet" || model == "googlenet")
      im = cnn_model(args, model);
    else if (model == "wide-deep")
      im = wide_deep_model(args);
    else
      throw UsageError("unknown model '" + model + "' (available: lstm, phased-lstm, cifar-quick, pathnet, googlenet, "
                       "wide-deep; an ONNX file: --onnx)", "--model");
  } catch (const UsageError& e) {
    return usage_error("infer", e, kFlags, usage());
  }
  Config config = Config::from_env();
  if (policy_help_requested(config)) return 0;
  check_config(config);

  // Every --input is read and checked before the engine starts and before anything is written.
  Graph& g = *im.graph;
  std::string names;
  for (const Tensor& t : g.inputs()) names += (names.empty() ? "" : ", ") + t.name() + " " + t.shape().str();
  std::vector<std::pair<Tensor, NpyArray>> fixed;
  for (const auto& [name, file] : input_files) {
    Tensor t;
    for (const Tensor& in : g.inputs())
      if (in.name() == name) t = in;
    CORUN_CHECK(t.valid(), Status::invalid_argument,
                "--input " << name << ": " << im.name << " has no input of that name; its inputs: " << names);
    NpyArray a = load_npy(file);
    CORUN_CHECK(a.shape == t.shape(), Status::invalid_argument,
                "--input " << name << ": " << file << " has the shape " << a.shape.str() << ", " << im.name
                           << "'s input is " << t.shape().str() << " (--batch sets the first dimension)");
    fixed.emplace_back(t, std::move(a));
  }

  Engine engine(config);
  std::vector<double> ms;
  std::vector<float> logits;
  for (long i = 0; i < warmup + iters; ++i) {
    for (auto& [name, data] : im.fill(static_cast<uint64_t>(i))) {
      if (input_files.count(name)) continue;
      engine.write(g, g.find(name), data);
    }
    for (const auto& [t, a] : fixed) engine.write(g, t, a.data);
    const RunStats stats = engine.run(g);
    if (i >= warmup) ms.push_back(stats.wall_ms);
  }
  logits = engine.read(g, im.logits);
  engine.release(g);
  const std::string policy = engine.info().policy;
  const int workers = engine.info().workers;

  const std::vector<double> in_order = ms;
  std::sort(ms.begin(), ms.end());
  const int batch = static_cast<int>(im.logits.shape()[0]);
  std::printf("| model | batch | inferences | median ms | p99 ms | min ms | policy | workers |\n");
  std::printf("|---|---|---|---|---|---|---|---|\n");
  std::printf("| %s | %d | %ld | %.3f | %.3f | %.3f | %s | %d |\n", im.name.c_str(), batch, iters, quantile(ms, 0.5),
              quantile(ms, 0.99), ms.front(), policy.c_str(), workers);
  json::Value outputs = json::Value::array();
  if (!out_dir.empty()) {
    std::filesystem::create_directories(out_dir);
    save_npy(out_dir + "/logits.npy", im.logits.shape(), logits.data());
    outputs.push_back({{"name", "logits"}, {"file", "logits.npy"}, {"shape", im.logits.shape().str()}});
    std::printf("logits %s -> %s/logits.npy\n", im.logits.shape().str().c_str(), out_dir.c_str());
  }
  if (!json_path.empty()) {
    json::Value inputs = json::Value::object();
    for (const auto& [name, file] : input_files) inputs[name] = file;
    const json::Value result = {
        {"config", {{"model", im.name}, {"batch", batch}, {"iters", iters}, {"warmup", warmup}, {"inputs", inputs}}},
        {"engine", {{"policy", policy}, {"workers", workers}}},
        {"summary", {{"median_ms", quantile(ms, 0.5)}, {"p99_ms", quantile(ms, 0.99)}, {"min_ms", ms.front()}}},
        {"outputs", outputs},
        {"ms_per_inference", in_order}};
    write_file_atomically(json_path, json::dump(result) + "\n", "the --json results");
  }
  return 0;
}

}  // namespace corun::cli
