// The session of `corun train --model wide-deep`: one solver (no replicas).
#include "cli/sessions/sessions.hpp"

#include <corun/models/wide_deep.hpp>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace corun::cli {
namespace {

// wide&deep on its synthetic click task (TabularTask): 26 embedding lookups, the MLP and the wide part,
// mean logistic cross-entropy, plain SGD.
class WideDeepTrain : public TrainSession {
 public:
  WideDeepTrain(const models::WideDeepConfig& cfg, const OptimizerChoice& choice)
      : model_(cfg), task_(cfg), choice_(choice) {
    model_.init_params();
  }
  Graph& graph(int) override { return model_.graph; }
  Tensor loss(int) const override { return model_.loss; }
  RunStats step(Engine& engine, uint64_t k) override {
    task_.make_batch(k, categories_, dense_, labels_);
    engine.write(model_.graph, model_.categories, categories_);
    engine.write(model_.graph, model_.dense, dense_);
    engine.write(model_.graph, model_.labels, labels_);
    apply_learning_rate(engine, model_.graph, choice_, model_.config.learning_rate, k, run_iters_, false);
    return engine.run(model_.graph);
  }
  RunIdentity identity() const override {
    const models::WideDeepConfig& c = model_.config;
    RunIdentity id = {{"model", "wide-deep"},
            {"batch", std::to_string(c.batch)},
            {"categorical", std::to_string(c.categorical)},
            {"vocab", std::to_string(c.vocab)},
            {"embed_dim", std::to_string(c.embed_dim)},
            {"dense", std::to_string(c.dense)},
            {"learning_rate", exact(c.learning_rate)},
            {"seed", std::to_string(c.seed)}};
    add_optimizer_identity(choice_, run_iters_, id);
    return id;
  }
  std::string title() const override {
    const models::WideDeepConfig& c = model_.config;
    char buf[260];
    std::snprintf(buf, sizeof(buf), "wide&deep train: batch=%d tables=%dx%dx%d dense=%d lr=%g%s", c.batch,
                  c.categorical, c.vocab, c.embed_dim, c.dense, static_cast<double>(c.learning_rate),
                  optimizer_note(choice_).c_str());
    return buf;
  }
  json::Value json_config() const override {
    const models::WideDeepConfig& c = model_.config;
    return {{"model", "wide-deep"},
            {"batch", c.batch},
            {"categorical", c.categorical},
            {"vocab", c.vocab},
            {"embed_dim", c.embed_dim},
            {"dense", c.dense},
            {"learning_rate", static_cast<double>(c.learning_rate)},
            {"seed", static_cast<long>(c.seed)},
            {"optimizer", optimizer_json(choice_)}};
  }
  std::string run_plan(long iters, bool) const override {
    return iterations_text(iters) + " of batch " + std::to_string(model_.config.batch);
  }
  std::string data_generator() const override { return "corun::models::TabularTask"; }
  uint64_t seed() const override { return model_.config.seed; }
  float learning_rate() const override { return model_.config.learning_rate; }

 private:
  models::WideDeep model_;
  models::TabularTask task_;
  OptimizerChoice choice_;
  std::vector<float> categories_, dense_, labels_;  // reused: no allocation per step
};

}  // namespace

std::unique_ptr<TrainSession> make_wide_deep_session(const Args& args) {
  models::WideDeepConfig cfg;
  cfg.batch = static_cast<int>(args.positive("--batch", cfg.batch));
  cfg.learning_rate = static_cast<float>(args.positive_real("--lr", cfg.learning_rate));
  cfg.seed = static_cast<uint64_t>(args.positive("--seed", static_cast<long>(cfg.seed)));
  const OptimizerChoice choice = optimizer_from(args, 0.0f, 0);
  cfg.momentum = choice.momentum;
  cfg.optimizer = choice.options;
  return std::make_unique<WideDeepTrain>(cfg, choice);
}

}  // namespace corun::cli
