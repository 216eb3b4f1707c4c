// The sessions of `corun train --model cifar-quick|pathnet|googlenet`: SGD with momentum, on Fashion-MNIST
// (cifar-quick, with its test accuracy at the end) or synthetic images, one graph per replica.
#include "cli/fashion_mnist.hpp"
#include "cli/sessions/sessions.hpp"
#include "cli/footprint.hpp"

#include <corun/models/cnn.hpp>

#include "base/check.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace corun::cli {
namespace {

// Fashion-MNIST pixels scaled to [0, 1], then standardised with the training set's mean and deviation.
constexpr float kPixelMean = 0.2860f;
constexpr float kPixelStd = 0.3530f;

class CnnTrain : public TrainSession {
 public:
  CnnTrain(const models::CnnConfig& cfg, const OptimizerChoice& choice, const BatchShare& share, std::string size,
           const std::string& data_dir, long epochs, long eval_images, bool block_layouts)
      : cfg_(cfg), choice_(choice), share_(share), size_(std::move(size)), synthetic_(cfg), epochs_(epochs),
        eval_images_(eval_images), block_layouts_(block_layouts) {
    models::CnnConfig rc = cfg;
    rc.batch = replica_batch(models::cnn_name(cfg.kind), cfg.batch, share);
    rc.sgd_update = share.total == 1;  // replicas: gradients (and the root's velocities) only
    for (int r = 0; r < share.local; ++r) {
      models_.push_back(std::make_unique<models::Cnn>(rc));
      models_.back()->init_params();
      graphs_.push_back(&models_.back()->graph);
    }
    if (cfg.kind == models::CnnKind::cifar_quick) {
      data_ = load_fashion_mnist(data_dir);
      CORUN_CHECK(data_.train.rows == cfg.image && data_.train.cols == cfg.image, Status::invalid_argument,
                  "cifar-quick expects " << cfg.image << "x" << cfg.image << " images, " << data_dir << " has "
                                         << data_.train.rows << "x" << data_.train.cols);
      CORUN_CHECK(data_.train.count >= cfg.batch, Status::invalid_argument,
                  "--batch " << cfg.batch << " is larger than the training set (" << data_.train.count << ")");
      batches_per_epoch_ = data_.train.count / cfg.batch;
      eval_images_ = std::min<long>(eval_images_, static_cast<long>(data_.test.count));
    }
    // The whole batch's layout (write_rows takes part `first + r` of `total`); a rank fills its own rows only.
    images_.resize(static_cast<size_t>(models_[0]->x.shape().numel()) * static_cast<size_t>(share.total));
    targets_.resize(static_cast<size_t>(models_[0]->targets.shape().numel()) * static_cast<size_t>(share.total));
  }

  Graph& graph(int r) override { return models_[static_cast<size_t>(r)]->graph; }
  Tensor loss(int r) const override { return models_[static_cast<size_t>(r)]->loss; }
  int replicas() const override { return static_cast<int>(models_.size()); }
  const models::CnnConfig& cfg() const { return cfg_; }
  bool dataset() const { return cfg().kind == models::CnnKind::cifar_quick; }

  RunStats step(Engine& engine, uint64_t k) override {
    if (dataset())
      dataset_batch(k);
    else  // the whole batch: one random stream draws every row, so a rank cannot draw its rows alone
      synthetic_.make_batch(k, images_, targets_);
    const int n = share_.total;
    for (int r = 0; r < replicas(); ++r) {
      models::Cnn& m = *models_[static_cast<size_t>(r)];
      write_rows(engine, m.graph, m.x, images_, share_.first + r, n);
      write_rows(engine, m.graph, m.targets, targets_, share_.first + r, n);
    }
    // Replicas/ranks: run_replicated's step takes the rate (and the root's hyper-parameter tensor).
    const float lr = apply_learning_rate(engine, models_[0]->graph, choice_, cfg_.learning_rate, k, run_iters_, n > 1);
    return run_step(engine, graphs_, share_, lr, cfg_.momentum);
  }

  // The warm-up's step size at batch k: depends on k only, so a resumed run takes the same steps.

  RunIdentity identity() const override {
    const models::CnnConfig& c = cfg();
    RunIdentity id = {{"model", models::cnn_name(c.kind)},       {"size", size_},
                      {"batch", std::to_string(c.batch)},        {"image", std::to_string(c.image)},
                      {"channels", std::to_string(c.channels)},  {"classes", std::to_string(c.classes)},
                      {"filters", std::to_string(c.filters)},    {"width", std::to_string(c.width)},
                      {"learning_rate", exact(c.learning_rate)}, {"momentum", exact(c.momentum)},
                      {"seed", std::to_string(c.seed)}};
    if (c.warmup > 0) id.emplace_back("warmup", std::to_string(c.warmup));  // none: as before warm-ups existed
    add_optimizer_identity(choice_, run_iters_, id);
    return id;
  }
  std::string title() const override {
    const models::CnnConfig& c = cfg();
    char buf[300];
    const std::string warmup = c.warmup > 0 ? " warmup=" + std::to_string(c.warmup) : "";
    std::snprintf(buf, sizeof(buf), "%s train (%s): batch=%d image=%dx%dx%d lr=%g%s momentum=%g%s%s%s",
                  models::cnn_name(c.kind), size_.c_str(), c.batch, c.channels, c.image, c.image,
                  static_cast<double>(c.learning_rate), warmup.c_str(), static_cast<double>(c.momentum),
                  optimizer_note(choice_).c_str(), dataset() ? " data=Fashion-MNIST" : " data=synthetic",
                  replicas_note(share_.total).c_str());
    return buf;
  }
  json::Value json_config() const override {
    const models::CnnConfig& c = cfg();
    return {{"model", models::cnn_name(c.kind)},
            {"size", size_},
            {"batch", c.batch},
            {"image", c.image},
            {"channels", c.channels},
            {"classes", c.classes},
            {"filters", c.filters},
            {"width", c.width},
            {"learning_rate", static_cast<double>(c.learning_rate)},
            {"momentum", static_cast<double>(c.momentum)},
            {"seed", static_cast<long>(c.seed)},
            {"warmup", c.warmup},
            {"epochs", dataset() ? epochs_ : 0L},
            {"data", dataset() ? "fashion-mnist" : "synthetic"},
            {"optimizer", optimizer_json(choice_)}};
  }
  std::optional<bool> layout_blocking() const override { return block_layouts_; }
  std::string data_generator() const override {
    return dataset() ? "fashion-mnist, shuffled per epoch" : "corun::models::SyntheticImages";
  }
  std::string run_plan(long iters, bool iters_given) const override {
    const models::CnnConfig& c = cfg();
    std::string plan = iterations_text(iters) + " of batch " + std::to_string(c.batch) + " at " +
                       std::to_string(c.image) + "x" + std::to_string(c.image) + " px";
    if (c.warmup > 0) plan += ", learning rate warmed up over the first " + std::to_string(c.warmup);
    if (dataset()) {
      if (!iters_given)
        plan += " = " + std::to_string(epochs_) + " epoch" + (epochs_ == 1 ? "" : "s") + " of " +
                std::to_string(batches_per_epoch_ * c.batch) + " Fashion-MNIST images (no --iters)";
      if (eval_images_ > 0)
        plan += ", then the test accuracy on " + std::to_string(eval_images_) + " test images (--eval-images)";
    }
    if (c.kind == models::CnnKind::googlenet)
      plan += "; heavy: GoogLeNet takes seconds per iteration on a few cores (--image 32 --batch 8 for a quick look)";
    else if (dataset() && !iters_given)
      plan += "; a few minutes on 2 cores (--iters 20 --eval-images 1000 for a quick look)";
    return plan;
  }
  uint64_t seed() const override { return cfg().seed; }
  float learning_rate() const override { return cfg().learning_rate; }
  long default_iters() const override { return dataset() ? epochs_ * batches_per_epoch_ : 20; }

  double test_accuracy(Engine& engine) override {
    if (!dataset() || eval_images_ <= 0) return -1.0;
    // A forward-only graph of the same model, at a batch that divides the usual 10000 test images.
    models::CnnConfig ec = cfg();
    ec.batch = static_cast<int>(std::min<long>(100, eval_images_));
    models::Cnn eval(ec, false);
    Graph& root = models_[0]->graph;
    for (Tensor p : root.params()) {
      const std::vector<float> v = engine.read(root, p);
      std::copy(v.begin(), v.end(), eval.graph.data(eval.graph.find(p.name())));
    }
    const int64_t per = static_cast<int64_t>(ec.image) * ec.image;
    std::vector<float> images(static_cast<size_t>(ec.batch * per));
    long correct = 0;
    for (long first = 0; first < eval_images_; first += ec.batch) {
      const long n = std::min<long>(ec.batch, eval_images_ - first);
      std::fill(images.begin(), images.end(), 0.0f);
      for (long b = 0; b < n; ++b) normalise(data_.test, first + b, images.data() + b * per);
      engine.write(eval.graph, eval.x, images);
      engine.run_on_root(eval.graph);  // one solver, also beside replicas
      const std::vector<float> logits = engine.read(eval.graph, eval.logits);
      for (long b = 0; b < n; ++b) {
        const float* row = logits.data() + b * ec.classes;
        const long guess = std::max_element(row, row + ec.classes) - row;
        correct += guess == data_.test.labels[static_cast<size_t>(first + b)] ? 1 : 0;
      }
    }
    engine.release(eval.graph);
    return static_cast<double>(correct) / static_cast<double>(eval_images_);
  }

 private:
  static void normalise(const ImageSet& set, int64_t item, float* out) {
    const int64_t per = set.rows * set.cols;
    const uint8_t* px = set.pixels.data() + item * per;
    for (int64_t e = 0; e < per; ++e) out[e] = (static_cast<float>(px[e]) / 255.0f - kPixelMean) / kPixelStd;
  }

  // Batch k = slice k % batches_per_epoch of epoch k / batches_per_epoch's permutation, which depends on the
  // seed and the epoch only (the checkpoint's data position is k). The tail that fills no batch is skipped.
  void dataset_batch(uint64_t k) {
    const int64_t epoch = static_cast<int64_t>(k / static_cast<uint64_t>(batches_per_epoch_));
    if (epoch != perm_epoch_) {
      perm_.resize(static_cast<size_t>(data_.train.count));
      std::iota(perm_.begin(), perm_.end(), 0);
      std::mt19937_64 rng(cfg().seed * 7919ULL + static_cast<uint64_t>(epoch));
      std::shuffle(perm_.begin(), perm_.end(), rng);
      perm_epoch_ = epoch;
    }
    const int64_t first = static_cast<int64_t>(k % static_cast<uint64_t>(batches_per_epoch_)) * cfg().batch;
    const int64_t per = data_.train.rows * data_.train.cols;
    std::fill(targets_.begin(), targets_.end(), 0.0f);
    // This process's rows only (its replicas' parts): a rank of a job decodes no other rank's images.
    const int rows = cfg().batch / share_.total;
    for (int b = share_.first * rows; b < (share_.first + share_.local) * rows; ++b) {
      const int64_t item = perm_[static_cast<size_t>(first + b)];
      normalise(data_.train, item, images_.data() + b * per);
      targets_[static_cast<size_t>(b * cfg().classes + data_.train.labels[static_cast<size_t>(item)])] = 1.0f;
    }
  }

  models::CnnConfig cfg_;                             // the whole batch's
  OptimizerChoice choice_;
  BatchShare share_;                                  // this process's parts of every batch
  std::vector<std::unique_ptr<models::Cnn>> models_;  // one per replica, batch / replicas each
  std::vector<Graph*> graphs_;
  std::string size_;
  models::SyntheticImages synthetic_;
  FashionMnist data_;
  long epochs_;
  long eval_images_;
  bool block_layouts_;  // the plan step keeps the activations blocked (Config::block_layouts; --keep-layouts: off)
  int64_t batches_per_epoch_ = 1;
  int64_t perm_epoch_ = -1;
  std::vector<int64_t> perm_;
  std::vector<float> images_;  // reused: no allocation per step
  std::vector<float> targets_;
};

}  // namespace

std::unique_ptr<TrainSession> make_cnn_session(const Args& args, const std::string& model, const std::string& size,
                                               const BatchShare& share) {
  models::CnnConfig cfg = model == "cifar-quick" ? models::cifar_quick_config()
                          : model == "pathnet"   ? models::pathnet_config(size)
                                                 : models::googlenet_config(size);
  cfg.batch = static_cast<int>(args.positive("--batch", cfg.batch));
  cfg.image = static_cast<int>(args.positive("--image", cfg.image));
  cfg.layers = static_cast<int>(args.positive("--layers", cfg.layers));
  cfg.learning_rate = static_cast<float>(args.positive_real("--lr", cfg.learning_rate));
  cfg.seed = static_cast<uint64_t>(args.positive("--seed", static_cast<long>(cfg.seed)));
  const OptimizerChoice choice = optimizer_from(args, cfg.momentum, cfg.warmup);
  cfg.momentum = choice.momentum;
  cfg.warmup = static_cast<int>(choice.schedule.warmup);
  cfg.optimizer = choice.options;
  // Checked before anything is built: every tensor is allocated as the graph grows.
  const std::string given = args.given({"--batch", "--image", "--layers"});
  check_fits_in_memory(cnn_footprint(cfg), given.empty() ? "--size " + size : given,
                       model + " batch=" + std::to_string(cfg.batch) + " image=" + std::to_string(cfg.image) +
                           (model == "pathnet" ? " layers=" + std::to_string(cfg.layers) : ""),
                       "lower --batch, --image or --layers");
  const long epochs = args.positive("--epochs", 1);
  const long eval_images = args.non_negative("--eval-images", 10000);
  return std::make_unique<CnnTrain>(cfg, choice, share, model == "cifar-quick" ? "fixed" : size,
                                    args.str("--data", kFashionMnistDir), epochs, eval_images,
                                    !args.has("--keep-layouts"));
}

}  // namespace corun::cli
