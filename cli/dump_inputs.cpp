// corun train --dump-inputs DIR: the inputs and targets a run generated, as .npy files, so that another
// framework can replay the same batch (with --save / --dump-grads: the same step).
#include "cli/train_session.hpp"

#include <corun/npy.hpp>

#include "base/check.hpp"

#include <filesystem>

namespace corun::cli {

void dump_inputs(Engine& engine, Graph& g, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  CORUN_CHECK(!ec, Status::io_error, "--dump-inputs: cannot create directory '" << dir << "': " << ec.message());
  for (Tensor t : g.inputs()) save_npy(dir + "/" + t.name() + ".npy", t.shape(), engine.read(g, t).data());
}

}  // namespace corun::cli
