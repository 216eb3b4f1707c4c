// cli/sessions/dcgan.hpp — `corun train --model dcgan`: a DCGAN (corun/models/dcgan.hpp) on Fashion-MNIST,
// two graphs with alternating steps, D and G losses per iteration and an 8x8 PNG grid of samples. It has
// its own run loop (cli/sessions/dcgan_train.cpp): the common loop of cli/train.cpp trains one graph with
// one loss, and its checkpoints, replicas and --dump-grads are about that one graph.
#pragma once

#include "cli/fashion_mnist.hpp"

#include <corun/engine.hpp>
#include <corun/models/dcgan.hpp>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace corun::cli {

/// Whether argv (from argv[2]) asks for `--model dcgan` (or --model=dcgan): corun train hands those over.
bool dcgan_requested(int argc, char** argv);
/// corun train --model dcgan ...: exit 0 done, 1 runtime error, 2 usage error.
int train_dcgan(int argc, char** argv);

/// The model, its data and one training iteration; holds every buffer it writes, allocated once.
class DcganSession {
 public:
  DcganSession(const models::DcganConfig& config, const std::string& data_dir);

  /// What one iteration measured.
  struct Step {
    double ms = 0.0;       ///< both runs and the weight copies
    double copy_ms = 0.0;  ///< the weight copies between the graphs alone
    int tasks = 0;         ///< tasks of both runs
    float loss_d = 0.0f;
    float loss_g = 0.0f;
    float d_real = 0.0f;  ///< mean sigmoid(D(real)) in the D step
    float d_fake = 0.0f;  ///< mean sigmoid(D(G(z))) in the D step (before D's update)
    bool uncalibrated = false;
  };
  /// Iteration k (0-based): batch k of the shuffled training set and z drawn from (seed, k); the D step, then
  /// the G step through the updated D.
  Step step(Engine& engine, uint64_t k);

  /// --load: every parameter of both networks from DIR/<name>.npy (required), batch-norm statistics and Adam
  /// moments where saved. Before the graphs are bound.
  void load(const std::string& dir, bool allow_non_finite);
  /// --save: parameters, batch-norm statistics and Adam moments of both networks as DIR/<name>.npy.
  void save(Engine& engine, const std::string& dir);
  /// An 8x8 grid of the generator's samples from fixed noise (seed), as a PNG file.
  void write_samples(Engine& engine, const std::string& path, int count, int columns);
  /// Releases both graphs from the engine.
  void release(Engine& engine);

  const models::DcganConfig& config() const { return gan_.config; }
  int64_t train_images() const { return data_.train.count; }

 private:
  void real_batch(uint64_t k);
  void copy(Engine& engine, Graph& from, const std::vector<Tensor>& src, Graph& to, const std::vector<Tensor>& dst);

  models::Dcgan gan_;
  FashionMnist data_;
  int64_t batches_per_epoch_ = 1;
  int64_t perm_epoch_ = -1;
  std::vector<int64_t> perm_;
  std::vector<float> real_;  // the batch's images, padded to the model's size, in [-1, 1]
  std::vector<float> z_;
  std::vector<float> hyper_;
};

}  // namespace corun::cli
