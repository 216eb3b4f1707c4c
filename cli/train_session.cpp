// What the sessions behind `corun train --model ...` share: the replicas' rows and steps, the common flags,
// and make_session(), which checks them and hands over to the model's file (cli/sessions/).
#include "cli/train_session.hpp"

#include "cli/fashion_mnist.hpp"
#include "cli/optimizer_flags.hpp"
#include "cli/output_paths.hpp"
#include "cli/sessions/sessions.hpp"

#include "base/check.hpp"
#include "engine/mpi/job.hpp"

#include <algorithm>
#include <cstdio>
#include <memory>

namespace corun::cli {

int replica_batch(const std::string& model, int batch, const BatchShare& share) {
  const int replicas = share.total;
  if (share.total != share.local)  // several ranks
    CORUN_CHECK(batch % replicas == 0, Status::invalid_argument,
                "corun train --model " << model << ": the global batch of " << batch
                                       << " samples does not split evenly over " << share.total / share.local
                                       << " ranks x " << share.local << " replicas = " << replicas
                                       << " parts; choose a --batch that is a multiple of " << replicas
                                       << " (--batch stays the global batch), or change the rank or replica count "
                                          "(CORUN_REPLICAS)");
  CORUN_CHECK(batch % replicas == 0, Status::invalid_argument,
              "corun train --model " << model << ": the batch of " << batch << " samples does not split evenly over "
                                     << replicas << " replicas (CORUN_REPLICAS / CORUN_NUMA=replicate); choose a --batch "
                                                    "that is a multiple of "
                                     << replicas << ", or set CORUN_NUMA=off for one solver");
  return batch / replicas;
}

void write_rows(Engine& engine, Graph& g, Tensor t, const std::vector<float>& whole, int r, int n) {
  const size_t part = static_cast<size_t>(t.shape().numel());
  CORUN_CHECK(whole.size() == part * static_cast<size_t>(n), Status::runtime_error,
              "replica input '" << t.name() << "': " << whole.size() << " floats for " << n << " x " << part);
  engine.write(g, t, whole.data() + part * static_cast<size_t>(r), part);
}

RunStats run_step(Engine& engine, const std::vector<Graph*>& graphs, const BatchShare& share, float learning_rate,
                  float momentum) {
  if (share.total == 1) return engine.run(*graphs[0]);
  return engine.run_replicated(graphs, learning_rate, momentum);
}

std::string replicas_note(int replicas) {
  return replicas > 1 ? ", " + std::to_string(replicas) + " replicas" : std::string();
}

std::string iterations_text(long n) { return std::to_string(n) + (n == 1 ? " iteration" : " iterations"); }

std::string exact(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.9g", v);
  return buf;
}

namespace {

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
  std::vector<FlagSpec> flags = {
      {"--model", true,
       "lstm | phased-lstm | cifar-quick | pathnet | googlenet | wide-deep | dcgan (its own flags: corun train "
       "--model dcgan --help) (heavy defaults: googlenet takes seconds "
       "per iteration on a few cores; cifar-quick without --iters trains a whole epoch, then evaluates 10000 "
       "images)"},
      {"--size", true, "small | medium | large (default small; cifar-quick has one size)"},
      {"--batch", true, "override the batch size"},
      {"--layers", true, "lstm, phased-lstm, pathnet: override the number of layers"},
      {"--seq", true, "lstm, phased-lstm: override the sequence length"},
      {"--hidden", true, "lstm, phased-lstm: override the hidden (and input) size"},
      {"--image", true, "pathnet, googlenet: override the image height and width"},
      {"--epochs", true, "cifar-quick: epochs over the 60000 training images (default 1) unless --iters is given"},
      {"--data", true, std::string("cifar-quick: Fashion-MNIST directory (default ") + kFashionMnistDir + ")"},
      {"--eval-images", true, "cifar-quick: test images for the final accuracy (default 10000, all; 0: none)"},
      {"--onnx", true, "train this ONNX model instead of --model (docs/onnx.md): softmax cross-entropy on its one "
                       "output, generated data; --batch pins a dynamic batch dimension"},
      {"--dump-inputs", true, "save the last iteration's inputs and targets as <name>.npy into this directory"},
      {"--keep-layouts", false,
       "cifar-quick, pathnet, googlenet, --onnx: keep every tensor in NCHW (by default activations and their "
       "gradients stay in oneDNN's blocked layout between the ops that take it, Graph::block_layouts: the same "
       "bits without the reorders)"},
  };
  for (FlagSpec& f : optimizer_flags()) flags.push_back(std::move(f));  // every model (issue 19)
  return flags;
}

JobStep finish_step(TrainSession& session, Engine& engine, int my_stop_signal) {
  const int n = session.replicas();
  std::vector<double> mine;  // this rank's losses, then its stop signal
  for (int r = 0; r < n; ++r) mine.push_back(engine.read(session.graph(r), session.loss(r))[0]);
  mine.push_back(my_stop_signal);
  const std::vector<double> all = job::all_gather(mine);
  JobStep out;
  double sum = 0.0;  // global replica order: the same sum every run, and as in one process
  int replicas = 0;
  for (size_t rank = 0; rank < all.size() / mine.size(); ++rank) {
    const double* own = all.data() + rank * mine.size();
    for (int r = 0; r < n; ++r, ++replicas) sum += own[r];
    out.stop_signal = std::max(out.stop_signal, static_cast<int>(own[n]));
  }
  out.loss = static_cast<float>(sum / replicas);
  return out;
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

bool supports_replicas(const std::string& model) { return model != "wide-deep" && model != "onnx"; }

std::unique_ptr<TrainSession> make_session(const Args& args, int replicas) {
  return make_session(args, BatchShare{replicas, 0, replicas});
}

std::unique_ptr<TrainSession> make_session(const Args& args, const BatchShare& share) {
  const int replicas = share.total;
  if (args.has("--dump-inputs")) {
    if (replicas > 1)
      throw UsageError("--dump-inputs writes one solver's batch; with " + std::to_string(replicas) +
                       " replicas (CORUN_REPLICAS / CORUN_NUMA=replicate, or MPI ranks) set CORUN_NUMA=off");
    check_output_dir("--dump-inputs", args.str("--dump-inputs", ""));
  }
  if (args.has("--onnx")) {
    if (args.has("--model")) throw UsageError("--onnx and --model exclude each other: give one");
    for (const char* f : {"--size", "--layers", "--seq", "--hidden", "--cell", "--image", "--warmup", "--epochs",
                          "--data", "--eval-images"})
      if (args.has(f)) throw UsageError(std::string(f) + " applies to --model only, not --onnx");
    return make_onnx_session(args, share);
  }
  const std::string model = args.str("--model", "");
  if (model.empty()) throw UsageError("--model is required (or --onnx FILE)");
  if (model != "lstm" && model != "phased-lstm" && model != "cifar-quick" && model != "pathnet" &&
      model != "googlenet" && model != "wide-deep")
    throw UsageError("unknown model '" + model +
                     "' (available: lstm, phased-lstm, cifar-quick, pathnet, googlenet, wide-deep; corun train also "
                     "takes dcgan)",
                     "--model");
  only_for(args, model, {"--seq", "--hidden", "--cell"}, {"lstm", "phased-lstm"});
  only_for(args, model, {"--layers"}, {"lstm", "phased-lstm", "pathnet"});
  only_for(args, model, {"--size"}, {"lstm", "phased-lstm", "pathnet", "googlenet"});  // CIFAR-quick has one size
  only_for(args, model, {"--image"}, {"pathnet", "googlenet"});
  only_for(args, model, {"--epochs", "--data", "--eval-images"}, {"cifar-quick"});
  only_for(args, model, {"--keep-layouts"}, {"cifar-quick", "pathnet", "googlenet"});
  const std::string size = args.str("--size", "small");
  if (size != "small" && size != "medium" && size != "large")
    throw UsageError("--size must be small, medium or large, got '" + size + "'");
  if (model == "lstm" || model == "phased-lstm") return make_lstm_session(args, share);
  if (replicas > 1 && !supports_replicas(model))
    throw Error(Status::invalid_config,
                "corun train --model " + model + " runs one solver in one process; " + std::to_string(replicas) +
                    " replicas (CORUN_REPLICAS / CORUN_NUMA=replicate, or several MPI ranks) work with lstm, "
                    "phased-lstm, cifar-quick, pathnet and googlenet: unset CORUN_REPLICAS, set CORUN_NUMA=off "
                    "and run one process");
  if (model == "wide-deep") return make_wide_deep_session(args);
  return make_cnn_session(args, model, size, share);
}

}  // namespace corun::cli
