// The session of `corun train --model lstm|phased-lstm`: sequence classification on the synthetic
// SequenceTask, plain SGD, one graph per replica over its rows of the batch.
#include "cli/lstm_session.hpp"
#include "cli/sessions/sessions.hpp"

#include <corun/models/lstm.hpp>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace corun::cli {
namespace {

class LstmTrain : public TrainSession {
 public:
  LstmTrain(const models::LstmConfig& cfg, const OptimizerChoice& choice, const BatchShare& share)
      : cfg_(cfg), choice_(choice), task_(cfg), share_(share) {
    models::LstmConfig rc = cfg;
    rc.batch = replica_batch(cfg.phased ? "phased-lstm" : "lstm", cfg.batch, share);
    rc.sgd_update = share.total == 1;  // replicas: gradients only, Engine::run_replicated updates
    for (int r = 0; r < share.local; ++r) {
      models_.push_back(std::make_unique<models::Lstm>(rc));
      models_.back()->init_params();
      graphs_.push_back(&models_.back()->graph);
    }
  }
  Graph& graph(int r) override { return models_[static_cast<size_t>(r)]->graph; }
  Tensor loss(int r) const override { return models_[static_cast<size_t>(r)]->loss; }
  int replicas() const override { return static_cast<int>(models_.size()); }
  RunStats step(Engine& engine, uint64_t k) override {
    // The whole batch, even on a rank of a job: the generator draws every row from one random stream, so a
    // rank cannot draw its rows alone without changing the data. Replica r writes its part of it.
    task_.make_batch(k, xs_, targets_);
    if (cfg_.phased) task_.make_times(k, times_);
    const int n = share_.total;
    for (int r = 0; r < replicas(); ++r) {
      models::Lstm& m = *models_[static_cast<size_t>(r)];
      const int part = share_.first + r;
      for (size_t t = 0; t < m.x.size(); ++t) write_rows(engine, m.graph, m.x[t], xs_[t], part, n);
      write_rows(engine, m.graph, m.targets, targets_, part, n);
      for (size_t t = 0; t < m.times.size(); ++t) write_rows(engine, m.graph, m.times[t], times_[t], part, n);
    }
    const float lr = apply_learning_rate(engine, models_[0]->graph, choice_, cfg_.learning_rate, k, run_iters_, n > 1);
    return run_step(engine, graphs_, share_, lr, cfg_.momentum);
  }
  RunIdentity identity() const override {
    const models::LstmConfig& c = cfg_;
    RunIdentity id = {{"model", c.phased ? "phased-lstm" : "lstm"},
            {"layers", std::to_string(c.layers)},
            {"batch", std::to_string(c.batch)},
            {"seq", std::to_string(c.seq)},
            {"hidden", std::to_string(c.hidden)},
            {"input", std::to_string(c.input)},
            {"classes", std::to_string(c.classes)},
            {"learning_rate", exact(c.learning_rate)},
            {"seed", std::to_string(c.seed)},
            {"cell", c.fused_cell ? "fused" : "unfused"}};
    add_optimizer_identity(choice_, run_iters_, id);
    return id;
  }
  std::string title() const override {
    const models::LstmConfig& c = cfg_;
    char buf[300];
    std::snprintf(buf, sizeof(buf), "%s train: layers=%d batch=%d seq=%d hidden=%d lr=%g%s%s",
                  c.phased ? "PhasedLSTM" : "LSTM", c.layers, c.batch, c.seq, c.hidden,
                  static_cast<double>(c.learning_rate), optimizer_note(choice_).c_str(),
                  replicas_note(share_.total).c_str());
    return buf;
  }
  json::Value json_config() const override {
    const models::LstmConfig& c = cfg_;
    return {{"model", c.phased ? "phased-lstm" : "lstm"},
            {"layers", c.layers},
            {"batch", c.batch},
            {"seq", c.seq},
            {"hidden", c.hidden},
            {"input", c.input},
            {"classes", c.classes},
            {"learning_rate", static_cast<double>(c.learning_rate)},
            {"seed", static_cast<long>(c.seed)},
            {"cell", c.fused_cell ? "fused" : "unfused"},
            {"optimizer", optimizer_json(choice_)}};
  }
  std::string run_plan(long iters, bool) const override {
    return iterations_text(iters) + " of batch " + std::to_string(cfg_.batch) + " (sequences of " +
           std::to_string(cfg_.seq) + " steps)";
  }
  std::string data_generator() const override { return "corun::models::SequenceTask"; }
  uint64_t seed() const override { return cfg_.seed; }
  float learning_rate() const override { return cfg_.learning_rate; }

 private:
  models::LstmConfig cfg_;  // the whole batch's
  OptimizerChoice choice_;
  models::SequenceTask task_;
  BatchShare share_;  // this process's parts of every batch
  std::vector<std::unique_ptr<models::Lstm>> models_;  // one per replica, batch / replicas each
  std::vector<Graph*> graphs_;
  std::vector<std::vector<float>> xs_;  // reused: no allocation per step
  std::vector<float> targets_;
  std::vector<std::vector<float>> times_;
};

}  // namespace

std::unique_ptr<TrainSession> make_lstm_session(const Args& args, const BatchShare& share) {
  std::string unused;
  models::LstmConfig cfg = lstm_config_from(args, unused);
  cfg.learning_rate = static_cast<float>(args.positive_real("--lr", cfg.learning_rate));
  cfg.seed = static_cast<uint64_t>(args.positive("--seed", static_cast<long>(cfg.seed)));
  const std::string cell = args.str("--cell", "fused");
  if (cell != "fused" && cell != "unfused") throw UsageError("--cell must be fused or unfused, got '" + cell + "'");
  cfg.fused_cell = cell == "fused";
  const OptimizerChoice choice = optimizer_from(args, 0.0f, 0);
  cfg.momentum = choice.momentum;
  cfg.optimizer = choice.options;
  return std::make_unique<LstmTrain>(cfg, choice, share);
}

}  // namespace corun::cli
