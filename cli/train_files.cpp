// corun train's file I/O (cli/train_files.hpp): --load, --save, --dump-grads, --dump-inputs. The inputs and
// targets a run generated are dumped so that another framework can replay the same batch (with --save /
// --dump-grads: the same step).
#include "cli/train_files.hpp"

#include "cli/non_finite.hpp"

#include <corun/npy.hpp>

#include "base/check.hpp"

#include <algorithm>
#include <filesystem>
#include <vector>

namespace corun::cli {

namespace {

void make_dir(const std::string& dir, const char* flag) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  CORUN_CHECK(!ec, Status::io_error, flag << "cannot create directory '" << dir << "': " << ec.message());
}

// --load of one value: <dir>/<name>.npy, its shape checked and (unless allowed) its numbers finite.
void load_tensor(Graph& g, Tensor t, const char* what, const std::string& dir, bool allow_non_finite) {
  const std::string file = dir + "/" + t.name() + ".npy";
  NpyArray a = load_npy(file);
  CORUN_CHECK(a.shape == t.shape(), Status::invalid_argument,
              what << " '" << t.name() << "' has shape " << t.shape().str() << " but " << file << " has "
                   << a.shape.str());
  if (!allow_non_finite) check_finite_parameter(t.name(), file, a.data);
  std::copy(a.data.begin(), a.data.end(), g.data(t));
}

}  // namespace

void load_training_files(Graph& g, const std::string& dir, bool allow_non_finite) {
  for (Tensor p : g.params()) load_tensor(g, p, "parameter", dir, allow_non_finite);
  for (Tensor t : g.optimizer_state())
    if (std::filesystem::exists(dir + "/" + t.name() + ".npy")) load_tensor(g, t, "state", dir, allow_non_finite);
}

void write_training_files(Engine& engine, Graph& g, const TrainOutputDirs& dirs) {
  if (!dirs.save.empty()) {
    make_dir(dirs.save, "");
    for (Tensor p : g.params()) save_npy(dirs.save + "/" + p.name() + ".npy", p.shape(), engine.read(g, p).data());
    for (Tensor t : g.optimizer_state())
      save_npy(dirs.save + "/" + t.name() + ".npy", t.shape(), engine.read(g, t).data());
  }
  if (!dirs.grads.empty()) {
    make_dir(dirs.grads, "");
    for (Tensor p : g.params()) {
      const Tensor d = g.grad(p);
      if (!d.valid()) continue;
      std::vector<float> grad = engine.read(g, d);
      // Replicas: the root holds the sum of the replicas' mean gradients (of every rank's replicas); divided,
      // the whole batch's mean.
      if (dirs.job_replicas > 1)
        for (float& x : grad) x /= static_cast<float>(dirs.job_replicas);
      save_npy(dirs.grads + "/" + p.name() + ".grad.npy", p.shape(), grad.data());
    }
  }
  if (!dirs.inputs.empty()) dump_inputs(engine, g, dirs.inputs);
}

void dump_inputs(Engine& engine, Graph& g, const std::string& dir) {
  make_dir(dir, "--dump-inputs: ");
  for (Tensor t : g.inputs()) save_npy(dir + "/" + t.name() + ".npy", t.shape(), engine.read(g, t).data());
}

}  // namespace corun::cli
