// The session of `corun train --onnx FILE`: the imported forward graph plus softmax cross-entropy on its
// single output (corun::import_onnx with add_training_loss), made a training graph by backward(). The data
// is the built-in CNNs' synthetic task (models::SyntheticImages: a fixed random pattern per class plus
// noise), shaped like the model's input, with one-hot targets over the output's classes; for an integer
// input (token ids, as a transformer's) models::SyntheticTokens in the ids its Gather accepts. One solver.
#include "cli/optimizer_flags.hpp"
#include "cli/sessions/sessions.hpp"

#include <corun/models/cnn.hpp>
#include <corun/models/synthetic_tokens.hpp>
#include <corun/onnx.hpp>

#include "base/check.hpp"

#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace corun::cli {
namespace {

struct OnnxTrainConfig {
  std::string path;
  int batch = 0;  // 0: the file's
  // 0.001, not the built-in CNNs' 0.01: an imported network can be deep, and randomly initialised ResNet-50
  // at batch 16 diverges at lr 0.01 with momentum 0.9 in PyTorch as in corun (docs/onnx.md, "ResNet-50"),
  // while 0.001 trains every exported model; it is also Adam's usual rate (--optimizer adam).
  float learning_rate = 0.001f;
  float momentum = 0.9f;  // the default optimizer: SGD with momentum, as the built-in CNNs
  uint64_t seed = 42;
  OptimizerChoice optimizer;  // --optimizer, --lr-schedule, ... (cli/optimizer_flags.hpp)
  bool block_layouts = true;  // the plan step's Config::block_layouts (--keep-layouts: off)
  bool allow_non_finite = false;  // --allow-non-finite: import initializers holding NaN or inf
};

// The synthetic task for an input of shape [B, ...]: a square image [B, C, H, H] keeps its channels (a
// colour per class and channel, as the CNNs get); any other shape is B rows of numel / B features.
models::CnnConfig data_config(const Shape& in, int classes, uint64_t seed) {
  models::CnnConfig c;
  c.batch = static_cast<int>(in[0]);
  c.classes = classes;
  c.seed = seed;
  if (in.rank == 4 && in[2] == in[3]) {
    c.channels = static_cast<int>(in[1]);
    c.image = static_cast<int>(in[2]);
  } else {
    c.channels = static_cast<int>(in.numel() / in[0]);
    c.image = 1;
  }
  return c;
}

OnnxModel import_for_training(const OnnxTrainConfig& cfg) {
  OnnxImportOptions opt;
  opt.batch = cfg.batch;
  opt.add_training_loss = true;
  opt.training = true;  // BatchNormalization with batch statistics, running statistics updated as state
  opt.allow_non_finite = cfg.allow_non_finite;
  OnnxModel m = import_onnx_model(cfg.path, opt);
  CORUN_CHECK(m.inputs.size() == 1, Status::invalid_argument,
              "corun train --onnx " << cfg.path << ": the model has " << m.inputs.size()
                                    << " inputs; training on generated data supports models with one input");
  CORUN_CHECK(m.index_limits[0] >= 0, Status::invalid_argument,
              "corun train --onnx " << cfg.path << ": the integer input '" << m.inputs[0].name()
                                    << "' is not the indices of a Gather, so the range of valid ids is unknown; "
                                       "training on generated data supports float inputs and token ids that index "
                                       "an embedding table");
  CORUN_CHECK(!m.graph.params().empty(), Status::invalid_argument,
              "corun train --onnx " << cfg.path << ": the model has no initializers, nothing to train");
  return m;
}

class OnnxTrain : public TrainSession {
 public:
  explicit OnnxTrain(const OnnxTrainConfig& cfg)
      : cfg_(cfg),
        model_(import_for_training(cfg)),
        synthetic_(data_config(model_.inputs[0].shape(), static_cast<int>(model_.targets.shape()[1]), cfg.seed)) {
    if (model_.index_limits[0] > 0) {
      const Shape in = model_.inputs[0].shape();
      tokens_.emplace(models::SyntheticTokensConfig{in[0], in.numel() / in[0], model_.index_limits[0],
                                                    model_.targets.shape()[1], cfg.seed});
    }
    // Before backward() adds the optimizer's state (velocities): the state so far is what the import made of
    // initializers, BatchNormalization's running statistics, which --save-onnx writes back.
    initializer_state_ = model_.graph.optimizer_state();
    BackwardOptions b = cfg.optimizer.options;
    b.learning_rate = cfg.learning_rate;
    b.momentum = cfg.optimizer.momentum;
    model_.graph.backward(model_.loss, b);
    // Dropout nodes read the iteration number from one [1] input: written each step, so every iteration
    // draws a fresh mask and a resumed run (k restarts at the checkpoint's iteration) draws the same ones.
    for (const Tensor& t : model_.graph.inputs())
      if (t.name() == Graph::kDropoutStep) dropout_step_ = t;
  }
  Graph& graph(int) override { return model_.graph; }
  Tensor loss(int) const override { return model_.loss; }
  RunStats step(Engine& engine, uint64_t k) override {
    if (tokens_) tokens_->make_batch(k, data_, targets_);
    else synthetic_.make_batch(k, data_, targets_);
    engine.write(model_.graph, model_.inputs[0], data_);
    engine.write(model_.graph, model_.targets, targets_);
    if (dropout_step_.valid()) {
      step_value_[0] = static_cast<float>(k);
      engine.write(model_.graph, dropout_step_, step_value_);
    }
    apply_learning_rate(engine, model_.graph, cfg_.optimizer, cfg_.learning_rate, k, run_iters_, false);
    return engine.run(model_.graph);
  }
  RunIdentity identity() const override {
    RunIdentity id = {{"model", "onnx"},
                      {"onnx", std::filesystem::path(cfg_.path).filename().string()},
                      {"batch", std::to_string(batch())},
                      {"learning_rate", exact(cfg_.learning_rate)},
                      {"momentum", exact(cfg_.momentum)},
                      {"seed", std::to_string(cfg_.seed)}};
    add_optimizer_identity(cfg_.optimizer, run_iters_, id);
    return id;
  }
  std::string title() const override {
    char buf[512];
    std::snprintf(buf, sizeof(buf), "ONNX train: %s batch=%d input=%s classes=%lld params=%zu lr=%g momentum=%g%s",
                  cfg_.path.c_str(), batch(), model_.inputs[0].shape().str().c_str(),
                  static_cast<long long>(model_.targets.shape()[1]), model_.graph.params().size(),
                  static_cast<double>(cfg_.learning_rate), static_cast<double>(cfg_.momentum),
                  optimizer_note(cfg_.optimizer).c_str());
    return buf;
  }
  json::Value json_config() const override {
    return {{"model", "onnx"},
            {"onnx", cfg_.path},
            {"opset", model_.opset},
            {"batch", batch()},
            {"classes", static_cast<long>(model_.targets.shape()[1])},
            {"learning_rate", static_cast<double>(cfg_.learning_rate)},
            {"momentum", static_cast<double>(cfg_.momentum)},
            {"seed", static_cast<long>(cfg_.seed)},
            {"optimizer", optimizer_json(cfg_.optimizer)}};
  }
  std::optional<bool> layout_blocking() const override { return cfg_.block_layouts; }
  std::string run_plan(long iters, bool) const override {
    return iterations_text(iters) + " of batch " + std::to_string(batch());
  }
  std::string data_generator() const override {
    return tokens_ ? "corun::models::SyntheticTokens" : "corun::models::SyntheticImages";
  }
  uint64_t seed() const override { return cfg_.seed; }
  float learning_rate() const override { return cfg_.learning_rate; }
  // The parameters are the file's float initializers and the running statistics its BatchNormalization
  // initializers, each under its initializer's corun name (onnx_value_name): written back by those names.
  void save_onnx(Engine& engine, const std::string& path) override {
    std::vector<OnnxTrainedTensor> trained;
    for (const Tensor& t : model_.graph.params()) trained.push_back({t.name(), engine.read(model_.graph, t)});
    for (const Tensor& t : initializer_state_) trained.push_back({t.name(), engine.read(model_.graph, t)});
    save_onnx_model(cfg_.path, path, trained);
  }

 private:
  int batch() const { return static_cast<int>(model_.inputs[0].shape()[0]); }
  OnnxTrainConfig cfg_;
  OnnxModel model_;
  models::SyntheticImages synthetic_;
  std::optional<models::SyntheticTokens> tokens_;  // an integer (token id) input: ids below its table's rows
  std::vector<float> data_, targets_;  // reused: no allocation per step
  Tensor dropout_step_;                 // the graph's "dropout.step" input, if it has dropout nodes
  std::vector<Tensor> initializer_state_;  // BatchNormalization's running statistics (from initializers)
  std::vector<float> step_value_{0.0f};
};

}  // namespace

std::unique_ptr<TrainSession> make_onnx_session(const Args& args, const BatchShare& share) {
  OnnxTrainConfig cfg;
  cfg.path = args.str("--onnx", "");
  cfg.allow_non_finite = args.has("--allow-non-finite");
  if (cfg.path.empty()) throw UsageError("--onnx needs a file");
  if (share.total > 1)
    throw Error(Status::invalid_config,
                "corun train --onnx runs one solver in one process; " + std::to_string(share.total) +
                    " replicas (CORUN_REPLICAS / CORUN_NUMA=replicate, or several MPI ranks) are not supported yet: "
                    "unset CORUN_REPLICAS, set CORUN_NUMA=off and run one process");
  cfg.batch = args.has("--batch") ? static_cast<int>(args.positive("--batch", 1)) : 0;
  cfg.learning_rate = static_cast<float>(args.positive_real("--lr", cfg.learning_rate));
  cfg.seed = static_cast<uint64_t>(args.positive("--seed", static_cast<long>(cfg.seed)));
  cfg.optimizer = optimizer_from(args, cfg.momentum, 0);
  cfg.momentum = cfg.optimizer.momentum;
  cfg.block_layouts = !args.has("--keep-layouts");
  return std::make_unique<OnnxTrain>(cfg);
}

}  // namespace corun::cli
