// The sessions behind `corun train --model lstm|phased-lstm|cifar-quick|pathnet|googlenet|wide-deep`.
#include "cli/train_session.hpp"

#include "cli/fashion_mnist.hpp"
#include "cli/lstm_session.hpp"

#include <corun/models/cnn.hpp>
#include <corun/models/lstm.hpp>
#include <corun/models/wide_deep.hpp>

#include "base/check.hpp"

#include <algorithm>
#include <memory>
#include <cstdio>
#include <numeric>
#include <random>

namespace corun::cli {
namespace {

// The rows of a batch each replica trains on: B / n, or an error when n does not divide B.
int replica_batch(const std::string& model, int batch, int replicas) {
  CORUN_CHECK(batch % replicas == 0, Status::invalid_argument,
              "corun train --model " << model << ": the batch of " << batch << " samples does not split evenly over "
                                     << replicas << " replicas (CORUN_REPLICAS / CORUN_NUMA=replicate); choose a --batch "
                                                    "that is a multiple of "
                                     << replicas << ", or set CORUN_NUMA=off for one solver");
  return batch / replicas;
}

// Replica r of a batch-major array holding the whole batch: its rows are the r-th of n equal parts.
void write_rows(Engine& engine, Graph& g, Tensor t, const std::vector<float>& whole, int r, int n) {
  const size_t part = static_cast<size_t>(t.shape().numel());
  CORUN_CHECK(whole.size() == part * static_cast<size_t>(n), Status::runtime_error,
              "replica input '" << t.name() << "': " << whole.size() << " floats for " << n << " x " << part);
  engine.write(g, t, whole.data() + part * static_cast<size_t>(r), part);
}

// One step over the replicas' graphs: the one solver's run, or the replicated step with its tree reduction.
RunStats run_step(Engine& engine, const std::vector<Graph*>& graphs, float learning_rate, float momentum) {
  if (graphs.size() == 1) return engine.run(*graphs[0]);
  return engine.run_replicated(graphs, learning_rate, momentum);
}

// ", 2 replicas of batch 32" for a title (nothing for one solver).
std::string replicas_note(int replicas) {
  return replicas > 1 ? ", " + std::to_string(replicas) + " replicas" : std::string();
}

std::string exact(double v) {  // %.9g is exact for a float: identities compare as text
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.9g", v);
  return buf;
}

class LstmTrain : public TrainSession {
 public:
  LstmTrain(const models::LstmConfig& cfg, int replicas) : cfg_(cfg), task_(cfg) {
    models::LstmConfig rc = cfg;
    rc.batch = replica_batch(cfg.phased ? "phased-lstm" : "lstm", cfg.batch, replicas);
    rc.sgd_update = replicas == 1;  // replicas: gradients only, Engine::run_replicated updates
    for (int r = 0; r < replicas; ++r) {
      models_.push_back(std::make_unique<models::Lstm>(rc));
      models_.back()->init_params();
      graphs_.push_back(&models_.back()->graph);
    }
  }
  Graph& graph(int r) override { return models_[static_cast<size_t>(r)]->graph; }
  Tensor loss(int r) const override { return models_[static_cast<size_t>(r)]->loss; }
  int replicas() const override { return static_cast<int>(models_.size()); }
  RunStats step(Engine& engine, uint64_t k) override {
    const int n = replicas();
    task_.make_batch(k, xs_, targets_);  // the whole batch; replica r writes its rows
    if (cfg_.phased) task_.make_times(k, times_);
    for (int r = 0; r < n; ++r) {
      models::Lstm& m = *models_[static_cast<size_t>(r)];
      for (size_t t = 0; t < m.x.size(); ++t) write_rows(engine, m.graph, m.x[t], xs_[t], r, n);
      write_rows(engine, m.graph, m.targets, targets_, r, n);
      for (size_t t = 0; t < m.times.size(); ++t) write_rows(engine, m.graph, m.times[t], times_[t], r, n);
    }
    return run_step(engine, graphs_, cfg_.learning_rate, 0.0f);
  }
  RunIdentity identity() const override {
    const models::LstmConfig& c = cfg_;
    return {{"model", c.phased ? "phased-lstm" : "lstm"},
            {"layers", std::to_string(c.layers)},
            {"batch", std::to_string(c.batch)},
            {"seq", std::to_string(c.seq)},
            {"hidden", std::to_string(c.hidden)},
            {"input", std::to_string(c.input)},
            {"classes", std::to_string(c.classes)},
            {"learning_rate", exact(c.learning_rate)},
            {"seed", std::to_string(c.seed)},
            {"cell", c.fused_cell ? "fused" : "unfused"}};
  }
  std::string title() const override {
    const models::LstmConfig& c = cfg_;
    char buf[200];
    std::snprintf(buf, sizeof(buf), "%s train: layers=%d batch=%d seq=%d hidden=%d lr=%g%s",
                  c.phased ? "PhasedLSTM" : "LSTM", c.layers, c.batch, c.seq, c.hidden,
                  static_cast<double>(c.learning_rate), replicas_note(replicas()).c_str());
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
            {"cell", c.fused_cell ? "fused" : "unfused"}};
  }
  std::string data_generator() const override { return "corun::models::SequenceTask"; }
  uint64_t seed() const override { return cfg_.seed; }
  float learning_rate() const override { return cfg_.learning_rate; }

 private:
  models::LstmConfig cfg_;  // the whole batch's
  models::SequenceTask task_;
  std::vector<std::unique_ptr<models::Lstm>> models_;  // one per replica, batch / replicas each
  std::vector<Graph*> graphs_;
  std::vector<std::vector<float>> xs_;  // reused: no allocation per step
  std::vector<float> targets_;
  std::vector<std::vector<float>> times_;
};

// wide&deep on its synthetic click task (TabularTask): 26 embedding lookups, the MLP and the wide part,
// mean logistic cross-entropy, plain SGD.
class WideDeepTrain : public TrainSession {
 public:
  explicit WideDeepTrain(const models::WideDeepConfig& cfg) : model_(cfg), task_(cfg) { model_.init_params(); }
  Graph& graph(int) override { return model_.graph; }
  Tensor loss(int) const override { return model_.loss; }
  RunStats step(Engine& engine, uint64_t k) override {
    task_.make_batch(k, categories_, dense_, labels_);
    engine.write(model_.graph, model_.categories, categories_);
    engine.write(model_.graph, model_.dense, dense_);
    engine.write(model_.graph, model_.labels, labels_);
    return engine.run(model_.graph);
  }
  RunIdentity identity() const override {
    const models::WideDeepConfig& c = model_.config;
    return {{"model", "wide-deep"},
            {"batch", std::to_string(c.batch)},
            {"categorical", std::to_string(c.categorical)},
            {"vocab", std::to_string(c.vocab)},
            {"embed_dim", std::to_string(c.embed_dim)},
            {"dense", std::to_string(c.dense)},
            {"learning_rate", exact(c.learning_rate)},
            {"seed", std::to_string(c.seed)}};
  }
  std::string title() const override {
    const models::WideDeepConfig& c = model_.config;
    char buf[160];
    std::snprintf(buf, sizeof(buf), "wide&deep train: batch=%d tables=%dx%dx%d dense=%d lr=%g", c.batch, c.categorical,
                  c.vocab, c.embed_dim, c.dense, static_cast<double>(c.learning_rate));
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
            {"seed", static_cast<long>(c.seed)}};
  }
  std::string data_generator() const override { return "corun::models::TabularTask"; }
  uint64_t seed() const override { return model_.config.seed; }
  float learning_rate() const override { return model_.config.learning_rate; }

 private:
  models::WideDeep model_;
  models::TabularTask task_;
  std::vector<float> categories_, dense_, labels_;  // reused: no allocation per step
};

// Fashion-MNIST pixels scaled to [0, 1], then standardised with the training set's mean and deviation.
constexpr float kPixelMean = 0.2860f;
constexpr float kPixelStd = 0.3530f;

class CnnTrain : public TrainSession {
 public:
  CnnTrain(const models::CnnConfig& cfg, int replicas, std::string size, const std::string& data_dir, long epochs,
           long eval_images)
      : cfg_(cfg), size_(std::move(size)), synthetic_(cfg), epochs_(epochs), eval_images_(eval_images) {
    models::CnnConfig rc = cfg;
    rc.batch = replica_batch(models::cnn_name(cfg.kind), cfg.batch, replicas);
    rc.sgd_update = replicas == 1;  // replicas: gradients (and the root's velocities) only
    for (int r = 0; r < replicas; ++r) {
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
    images_.resize(static_cast<size_t>(models_[0]->x.shape().numel()) * static_cast<size_t>(replicas));
    targets_.resize(static_cast<size_t>(models_[0]->targets.shape().numel()) * static_cast<size_t>(replicas));
  }

  Graph& graph(int r) override { return models_[static_cast<size_t>(r)]->graph; }
  Tensor loss(int r) const override { return models_[static_cast<size_t>(r)]->loss; }
  int replicas() const override { return static_cast<int>(models_.size()); }
  const models::CnnConfig& cfg() const { return cfg_; }
  bool dataset() const { return cfg().kind == models::CnnKind::cifar_quick; }

  RunStats step(Engine& engine, uint64_t k) override {
    if (dataset())
      dataset_batch(k);
    else
      synthetic_.make_batch(k, images_, targets_);
    const int n = replicas();
    for (int r = 0; r < n; ++r) {
      models::Cnn& m = *models_[static_cast<size_t>(r)];
      write_rows(engine, m.graph, m.x, images_, r, n);
      write_rows(engine, m.graph, m.targets, targets_, r, n);
    }
    return run_step(engine, graphs_, cfg_.learning_rate, cfg_.momentum);
  }

  RunIdentity identity() const override {
    const models::CnnConfig& c = cfg();
    return {{"model", models::cnn_name(c.kind)},       {"size", size_},
            {"batch", std::to_string(c.batch)},        {"image", std::to_string(c.image)},
            {"channels", std::to_string(c.channels)},  {"classes", std::to_string(c.classes)},
            {"filters", std::to_string(c.filters)},    {"width", std::to_string(c.width)},
            {"learning_rate", exact(c.learning_rate)}, {"momentum", exact(c.momentum)},
            {"seed", std::to_string(c.seed)}};
  }
  std::string title() const override {
    const models::CnnConfig& c = cfg();
    char buf[200];
    std::snprintf(buf, sizeof(buf), "%s train (%s): batch=%d image=%dx%dx%d lr=%g momentum=%g%s%s",
                  models::cnn_name(c.kind), size_.c_str(), c.batch, c.channels, c.image, c.image,
                  static_cast<double>(c.learning_rate), static_cast<double>(c.momentum),
                  dataset() ? " data=Fashion-MNIST" : " data=synthetic", replicas_note(replicas()).c_str());
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
            {"epochs", dataset() ? epochs_ : 0L},
            {"data", dataset() ? "fashion-mnist" : "synthetic"}};
  }
  std::string data_generator() const override {
    return dataset() ? "fashion-mnist, shuffled per epoch" : "corun::models::SyntheticImages";
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
    for (int b = 0; b < cfg().batch; ++b) {
      const int64_t item = perm_[static_cast<size_t>(first + b)];
      normalise(data_.train, item, images_.data() + b * per);
      targets_[static_cast<size_t>(b * cfg().classes + data_.train.labels[static_cast<size_t>(item)])] = 1.0f;
    }
  }

  models::CnnConfig cfg_;  // the whole batch's
  std::vector<std::unique_ptr<models::Cnn>> models_;  // one per replica, batch / replicas each
  std::vector<Graph*> graphs_;
  std::string size_;
  models::SyntheticImages synthetic_;
  FashionMnist data_;
  long epochs_;
  long eval_images_;
  int64_t batches_per_epoch_ = 1;
  int64_t perm_epoch_ = -1;
  std::vector<int64_t> perm_;
  std::vector<float> images_;  // reused: no allocation per step
  std::vector<float> targets_;
};

// Flags only some models take: using one with another model is a usage error, not silently ignored.
void only_for(const Args& args, const std::string& model, const std::vector<std::string>& flags,
              const std::vector<std::string>& models) {
  if (std::find(models.begin(), models.end(), model) != models.end()) return;
  for (const std::string& f : flags)
    if (args.has(f)) {
      std::string list;
      for (const std::string& m : models) list += (list.empty() ? "" : "|") + m;
      throw UsageError(f + " applies to --model " + list + " only, not " + model);
    }
}

}  // namespace

std::vector<FlagSpec> model_flags() {
  return {
      {"--model", true, "lstm | phased-lstm | cifar-quick | pathnet | googlenet | wide-deep"},
      {"--size", true, "small | medium | large (default small; cifar-quick has one size)"},
      {"--batch", true, "override the batch size"},
      {"--layers", true, "lstm, phased-lstm, pathnet: override the number of layers"},
      {"--seq", true, "lstm, phased-lstm: override the sequence length"},
      {"--hidden", true, "lstm, phased-lstm: override the hidden (and input) size"},
      {"--image", true, "pathnet, googlenet: override the image height and width"},
      {"--momentum", true, "cifar-quick, pathnet, googlenet: SGD momentum in [0, 1) (default 0.9)"},
      {"--epochs", true, "cifar-quick: epochs over the 60000 training images (default 1) unless --iters is given"},
      {"--data", true, std::string("cifar-quick: Fashion-MNIST directory (default ") + kFashionMnistDir + ")"},
      {"--eval-images", true, "cifar-quick: test images for the final accuracy (default 10000, all)"},
  };
}

float read_loss(TrainSession& session, Engine& engine) {
  double sum = 0.0;  // replica order: the same sum every run
  for (int r = 0; r < session.replicas(); ++r) sum += engine.read(session.graph(r), session.loss(r))[0];
  return static_cast<float>(sum / session.replicas());
}

void copy_root_params(TrainSession& session) {
  Graph& root = session.graph(0);
  const std::vector<Tensor> params = root.params();
  for (int r = 1; r < session.replicas(); ++r) {
    Graph& g = session.graph(r);
    const std::vector<Tensor> mine = g.params();
    for (size_t k = 0; k < params.size(); ++k)
      std::copy(root.data(params[k]), root.data(params[k]) + params[k].shape().numel(), g.data(mine[k]));
  }
}

std::vector<Graph*> replica_graphs(TrainSession& session) {
  std::vector<Graph*> graphs;
  for (int r = 0; r < session.replicas(); ++r) graphs.push_back(&session.graph(r));
  return graphs;
}

bool supports_replicas(const std::string& model) { return model != "wide-deep"; }

std::unique_ptr<TrainSession> make_session(const Args& args, int replicas) {
  const std::string model = args.str("--model", "");
  if (model.empty()) throw UsageError("--model is required");
  if (model != "lstm" && model != "phased-lstm" && model != "cifar-quick" && model != "pathnet" &&
      model != "googlenet" && model != "wide-deep")
    throw UsageError("unknown model '" + model +
                     "' (available: lstm, phased-lstm, cifar-quick, pathnet, googlenet, wide-deep)");
  only_for(args, model, {"--seq", "--hidden", "--cell"}, {"lstm", "phased-lstm"});
  only_for(args, model, {"--layers"}, {"lstm", "phased-lstm", "pathnet"});
  only_for(args, model, {"--size"}, {"lstm", "phased-lstm", "pathnet", "googlenet"});  // CIFAR-quick has one size
  only_for(args, model, {"--image"}, {"pathnet", "googlenet"});
  only_for(args, model, {"--momentum"}, {"cifar-quick", "pathnet", "googlenet"});
  only_for(args, model, {"--epochs", "--data", "--eval-images"}, {"cifar-quick"});
  const std::string size = args.str("--size", "small");
  if (size != "small" && size != "medium" && size != "large")
    throw UsageError("--size must be small, medium or large, got '" + size + "'");
  if (model == "lstm" || model == "phased-lstm") {
    std::string unused;
    models::LstmConfig cfg = lstm_config_from(args, unused);
    cfg.learning_rate = static_cast<float>(args.positive_real("--lr", cfg.learning_rate));
    cfg.seed = static_cast<uint64_t>(args.positive("--seed", static_cast<long>(cfg.seed)));
    const std::string cell = args.str("--cell", "fused");
    if (cell != "fused" && cell != "unfused") throw UsageError("--cell must be fused or unfused, got '" + cell + "'");
    cfg.fused_cell = cell == "fused";
    return std::make_unique<LstmTrain>(cfg, replicas);
  }
  if (replicas > 1 && !supports_replicas(model))
    throw Error(Status::invalid_config,
                "corun train --model " + model + " runs one solver; " + std::to_string(replicas) +
                    " replicas (CORUN_REPLICAS / CORUN_NUMA=replicate) work with lstm, phased-lstm, cifar-quick, "
                    "pathnet and googlenet: unset CORUN_REPLICAS and set CORUN_NUMA=off");
  if (model == "wide-deep") {
    models::WideDeepConfig cfg;
    cfg.batch = static_cast<int>(args.positive("--batch", cfg.batch));
    cfg.learning_rate = static_cast<float>(args.positive_real("--lr", cfg.learning_rate));
    cfg.seed = static_cast<uint64_t>(args.positive("--seed", static_cast<long>(cfg.seed)));
    return std::make_unique<WideDeepTrain>(cfg);
  }
  models::CnnConfig cfg = model == "cifar-quick" ? models::cifar_quick_config()
                          : model == "pathnet"   ? models::pathnet_config(size)
                                                 : models::googlenet_config(size);
  cfg.batch = static_cast<int>(args.positive("--batch", cfg.batch));
  cfg.image = static_cast<int>(args.positive("--image", cfg.image));
  cfg.layers = static_cast<int>(args.positive("--layers", cfg.layers));
  cfg.learning_rate = static_cast<float>(args.positive_real("--lr", cfg.learning_rate));
  cfg.seed = static_cast<uint64_t>(args.positive("--seed", static_cast<long>(cfg.seed)));
  if (args.has("--momentum")) {
    const std::string m = args.str("--momentum", "");
    char* end = nullptr;
    const double v = std::strtod(m.c_str(), &end);
    if (m.empty() || *end != '\0' || !(v >= 0.0 && v < 1.0))
      throw UsageError("--momentum must be a number in [0, 1), got '" + m + "'");
    cfg.momentum = static_cast<float>(v);
  }
  const long epochs = args.positive("--epochs", 1);
  const long eval_images = args.positive("--eval-images", 10000);
  return std::make_unique<CnnTrain>(cfg, replicas, model == "cifar-quick" ? "fixed" : size,
                                    args.str("--data", kFashionMnistDir), epochs, eval_images);
}

}  // namespace corun::cli
