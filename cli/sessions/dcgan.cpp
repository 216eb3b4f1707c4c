// The DCGAN session of `corun train --model dcgan` (cli/sessions/dcgan.hpp): Fashion-MNIST batches, the two
// step graphs run alternately, the weight copies between them, --save/--load and the sample grid.
//
// Why two graphs and copies: Graph::backward updates every parameter of a graph, and corun has no
// stop-gradient, so the D step and the G step are two graphs, each owning one network's parameters, batch-norm
// statistics and Adam state. The other network appears as inputs (no gradient, no update), refreshed from
// its owner before each run: G's weights (about 1.1 M floats at 64 filters) before the D step, D's (0.7 M)
// before the G step, through Engine::read/write into buffers allocated when the graphs were built. That is
// ~7 MB of copies against ~26 GFLOP of convolutions per iteration at batch 64 (well under 1 % of a step).
// Sharing one buffer between two graphs would need two StarPU handles on one memory area, which the engine
// does not support (NUMA homing and replicas assume a handle per buffer).
#include "cli/sessions/dcgan.hpp"

#include "cli/non_finite.hpp"
#include "cli/png.hpp"

#include <corun/npy.hpp>

#include "base/check.hpp"
#include "base/files.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <numeric>

namespace corun::cli {
namespace {

// The values of `g` that belong to the network it trains (parameters, then state): what --save writes.
std::vector<Tensor> owned_values(Graph& g, bool generator) {
  std::vector<Tensor> out;
  for (Tensor t : g.params())
    if (models::Dcgan::owned(t.name(), generator)) out.push_back(t);
  for (Tensor t : g.optimizer_state())
    if (models::Dcgan::owned(t.name(), generator)) out.push_back(t);
  return out;
}

float mean_sigmoid(const std::vector<float>& logits) {
  double sum = 0.0;
  for (float v : logits) sum += 1.0 / (1.0 + std::exp(-static_cast<double>(v)));
  return static_cast<float>(sum / static_cast<double>(logits.size()));
}

}  // namespace

DcganSession::DcganSession(const models::DcganConfig& config, const std::string& data_dir) : gan_(config) {
  data_ = load_fashion_mnist(data_dir);
  CORUN_CHECK(data_.train.rows <= config.image && data_.train.cols <= config.image, Status::invalid_argument,
              "dcgan: " << data_dir << " has " << data_.train.rows << "x" << data_.train.cols
                        << " images, larger than the model's " << config.image << "x" << config.image);
  CORUN_CHECK(data_.train.count >= config.batch, Status::invalid_argument,
              "--batch " << config.batch << " is larger than the training set (" << data_.train.count << ")");
  batches_per_epoch_ = data_.train.count / config.batch;
  gan_.init_params();
  real_.assign(static_cast<size_t>(gan_.d_real.shape().numel()), -1.0f);  // the padding stays background
  z_.resize(static_cast<size_t>(gan_.d_z.shape().numel()));
}

// Batch k: slice k % batches_per_epoch of the epoch's permutation (seed and epoch only), as cifar-quick.
void DcganSession::real_batch(uint64_t k) {
  const models::DcganConfig& c = config();
  const int64_t epoch = static_cast<int64_t>(k / static_cast<uint64_t>(batches_per_epoch_));
  if (epoch != perm_epoch_) {
    perm_.resize(static_cast<size_t>(data_.train.count));
    std::iota(perm_.begin(), perm_.end(), 0);
    std::mt19937_64 rng(c.seed * 7919ULL + static_cast<uint64_t>(epoch));
    std::shuffle(perm_.begin(), perm_.end(), rng);
    perm_epoch_ = epoch;
  }
  const int64_t first = static_cast<int64_t>(k % static_cast<uint64_t>(batches_per_epoch_)) * c.batch;
  const int64_t rows = data_.train.rows, cols = data_.train.cols, side = c.image;
  const int64_t top = (side - rows) / 2, left = (side - cols) / 2;  // centred: 28 -> 32 pads 2 on every side
  for (int64_t b = 0; b < c.batch; ++b) {
    const uint8_t* px = data_.train.pixels.data() + perm_[static_cast<size_t>(first + b)] * rows * cols;
    float* out = real_.data() + b * side * side;  // one channel: Fashion-MNIST is grey
    for (int64_t y = 0; y < rows; ++y)
      for (int64_t x = 0; x < cols; ++x)
        out[(top + y) * side + left + x] = static_cast<float>(px[y * cols + x]) / 127.5f - 1.0f;  // tanh's range
  }
}

void DcganSession::copy(Engine& engine, Graph& from, const std::vector<Tensor>& src, Graph& to,
                        const std::vector<Tensor>& dst) {
  for (size_t i = 0; i < src.size(); ++i) {
    const std::vector<float> v = engine.read(from, src[i]);
    engine.write(to, dst[i], v);
  }
}

DcganSession::Step DcganSession::step(Engine& engine, uint64_t k) {
  const models::DcganConfig& c = config();
  real_batch(k);
  std::mt19937_64 rng(c.seed * 1000003ULL + k);
  std::normal_distribution<float> n01(0.0f, 1.0f);
  for (float& v : z_) v = n01(rng);
  const auto start = std::chrono::steady_clock::now();
  Graph& d = gan_.d_step;
  Graph& g = gan_.g_step;
  engine.write(d, gan_.d_real, real_);
  engine.write(d, gan_.d_z, z_);
  engine.write(g, gan_.g_z, z_);  // the same z: G step scores the same fakes D just saw, as PyTorch's example
  hyper_ = d.optimizer_hyper_at(static_cast<int64_t>(k) + 1, c.learning_rate);
  engine.write(d, d.optimizer_hyper(), hyper_);
  engine.write(g, g.optimizer_hyper(), hyper_);
  Step s;
  const auto timed_copy = [&](Graph& from, const models::DcganNet& src, Graph& to, const models::DcganNet& dst) {
    const auto t0 = std::chrono::steady_clock::now();
    copy(engine, from, src.all(), to, dst.all());
    s.copy_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  };
  timed_copy(g, gan_.generator, d, gan_.generator_copy);
  const RunStats sd = engine.run(d);
  timed_copy(d, gan_.discriminator, g, gan_.discriminator_copy);
  const RunStats sg = engine.run(g);
  s.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  s.tasks = sd.tasks + sg.tasks;
  s.uncalibrated = sd.uncalibrated + sg.uncalibrated > 0;
  s.loss_d = engine.read(d, gan_.loss_d)[0];
  s.loss_g = engine.read(g, gan_.loss_g)[0];
  s.d_real = mean_sigmoid(engine.read(d, gan_.d_real_logits));
  s.d_fake = mean_sigmoid(engine.read(d, gan_.d_fake_logits));
  return s;
}

void DcganSession::load(const std::string& dir, bool allow_non_finite) {
  for (bool generator : {true, false}) {
    Graph& g = generator ? gan_.g_step : gan_.d_step;
    const std::vector<Tensor> params = g.params();
    for (Tensor t : owned_values(g, generator)) {
      const std::string file = dir + "/" + t.name() + ".npy";
      const bool param = std::find(params.begin(), params.end(), t) != params.end();
      if (!param && !std::filesystem::exists(file)) continue;  // state: keep its start (a save without Adam)
      NpyArray a = load_npy(file);
      CORUN_CHECK(a.shape == t.shape(), Status::invalid_argument,
                  "dcgan " << (param ? "parameter" : "state") << " '" << t.name() << "' has shape " << t.shape().str()
                           << " but " << file << " has " << a.shape.str() << " (saved with other --filters?)");
      if (!allow_non_finite) check_finite_parameter(t.name(), file, a.data);
      std::copy(a.data.begin(), a.data.end(), g.data(t));
    }
  }
  // The copies start from the loaded weights (step() refreshes them anyway; this keeps the graphs consistent).
  auto mirror = [](Graph& from, const models::DcganNet& src, Graph& to, const models::DcganNet& dst) {
    const std::vector<Tensor> s = src.all(), t = dst.all();
    for (size_t i = 0; i < s.size(); ++i) std::copy_n(from.data(s[i]), s[i].shape().numel(), to.data(t[i]));
  };
  mirror(gan_.g_step, gan_.generator, gan_.d_step, gan_.generator_copy);
  mirror(gan_.d_step, gan_.discriminator, gan_.g_step, gan_.discriminator_copy);
}

void DcganSession::save(Engine& engine, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  CORUN_CHECK(!ec, Status::io_error, "cannot create directory '" << dir << "': " << ec.message());
  for (bool generator : {true, false}) {
    Graph& g = generator ? gan_.g_step : gan_.d_step;
    for (Tensor t : owned_values(g, generator))
      save_npy(dir + "/" + t.name() + ".npy", t.shape(), engine.read(g, t).data());
  }
}

void DcganSession::write_samples(Engine& engine, const std::string& path, int count, int columns) {
  const models::DcganConfig& c = config();
  models::DcganSampler sampler(c, count);
  const std::vector<Tensor> src = gan_.generator.all(), dst = sampler.weights.all();
  for (size_t i = 0; i < src.size(); ++i) {
    const std::vector<float> v = engine.read(gan_.g_step, src[i]);
    std::copy(v.begin(), v.end(), sampler.graph.data(dst[i]));
  }
  std::mt19937_64 rng(c.seed ^ 0x5a3b1e5ULL);  // fixed noise: runs with one seed draw the same z
  std::normal_distribution<float> n01(0.0f, 1.0f);
  float* z = sampler.graph.data(sampler.z);
  for (int64_t e = 0; e < sampler.z.shape().numel(); ++e) z[e] = n01(rng);
  engine.run(sampler.graph);
  const std::vector<float> images = engine.read(sampler.graph, sampler.images);
  engine.release(sampler.graph);
  int width = 0, height = 0;
  const std::vector<uint8_t> px = image_grid(images, count, c.image, columns, 2, width, height);
  write_file_atomically(path, encode_png_grey(width, height, px), "the sample grid");
}

void DcganSession::release(Engine& engine) {
  engine.release(gan_.d_step);
  engine.release(gan_.g_step);
}

}  // namespace corun::cli
