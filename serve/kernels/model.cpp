// The public model types of corun/serve.hpp: spec checks, random and .npy weights, flop counts.
#include <corun/npy.hpp>
#include <corun/serve.hpp>

#include "base/check.hpp"

#include <cmath>
#include <filesystem>
#include <random>
#include <sstream>

namespace corun::serve {

const char* cell_name(Cell c) { return c == Cell::lstm ? "lstm" : "gru"; }
int gate_count(Cell c) { return c == Cell::lstm ? 4 : 3; }
const char* exec_mode_name(ExecMode m) {
  switch (m) {
    case ExecMode::wcs: return "wcs";
    case ExecMode::per_step: return "per-step";
    case ExecMode::on_caller: return "inline";
    case ExecMode::resident: return "resident";
  }
  return "?";
}

bool parse_exec_mode(const std::string& name, ExecMode* out) {
  for (ExecMode m : {ExecMode::wcs, ExecMode::per_step, ExecMode::on_caller, ExecMode::resident})
    if (name == exec_mode_name(m)) {
      *out = m;
      return true;
    }
  return false;
}

const char* step_gemm_name(StepGemmKernel k) {
  switch (k) {
    case StepGemmKernel::automatic: return "auto";
    case StepGemmKernel::openblas: return "openblas";
    case StepGemmKernel::libxsmm: return "libxsmm";
  }
  return "?";
}

bool parse_step_gemm(const std::string& name, StepGemmKernel* out) {
  for (StepGemmKernel k : {StepGemmKernel::automatic, StepGemmKernel::openblas, StepGemmKernel::libxsmm})
    if (name == step_gemm_name(k)) {
      *out = k;
      return true;
    }
  return false;
}

void ModelSpec::validate() const {
  CORUN_CHECK(input >= 1, Status::invalid_argument, "serve: input size " << input << " must be at least 1");
  CORUN_CHECK(hidden >= 1, Status::invalid_argument, "serve: hidden size " << hidden << " must be at least 1");
  CORUN_CHECK(layers >= 1, Status::invalid_argument, "serve: layers " << layers << " must be at least 1");
  CORUN_CHECK(static_cast<int64_t>(gate_count(cell)) * hidden * std::max(input, hidden * 2) < (int64_t{1} << 31),
              Status::invalid_argument, "serve: the model is too large (a weight matrix over 2^31 elements)");
}

std::string ModelSpec::str() const {
  std::ostringstream os;
  os << cell_name(cell) << " E=" << input << " H=" << hidden << " L=" << layers << (bidirectional ? " bi" : " uni");
  return os.str();
}

const CellWeights& Model::weights(int layer, int dir) const {
  CORUN_CHECK(layer >= 0 && layer < spec_.layers && dir >= 0 && dir < spec_.directions(), Status::invalid_argument,
              "serve: no weights for layer " << layer << " direction " << dir << " in a " << spec_.str() << " model");
  return cells_[static_cast<size_t>(layer * spec_.directions() + dir)];
}

double Model::flops(int batch, int seq) const {
  const double g = gate_count(spec_.cell);
  double per_step = 0.0;
  for (int l = 0; l < spec_.layers; ++l)
    per_step += 2.0 * batch * g * spec_.hidden * (spec_.layer_input(l) + spec_.hidden) * spec_.directions();
  return per_step * seq;
}

Model Model::random(const ModelSpec& spec, uint64_t seed) {
  spec.validate();
  Model m;
  m.spec_ = spec;
  std::mt19937_64 rng(seed);
  const float bound = 1.0f / std::sqrt(static_cast<float>(spec.hidden));
  std::uniform_real_distribution<float> u(-bound, bound);
  const size_t gh = static_cast<size_t>(gate_count(spec.cell) * spec.hidden);
  for (int l = 0; l < spec.layers; ++l)
    for (int d = 0; d < spec.directions(); ++d) {
      CellWeights w;
      w.w_ih.resize(gh * static_cast<size_t>(spec.layer_input(l)));
      w.w_hh.resize(gh * static_cast<size_t>(spec.hidden));
      w.b_ih.resize(gh);
      w.b_hh.resize(gh);
      for (auto* v : {&w.w_ih, &w.w_hh, &w.b_ih, &w.b_hh})
        for (float& x : *v) x = u(rng);
      m.cells_.push_back(std::move(w));
    }
  return m;
}

namespace {

std::vector<float> load_exact(const std::filesystem::path& file, const Shape& want) {
  CORUN_CHECK(std::filesystem::exists(file), Status::io_error,
              "serve: missing weight file " << file.string() << " (expected shape " << want.str()
                                            << "; names follow torch.nn.LSTM/GRU's state_dict)");
  NpyArray a = load_npy(file.string());
  CORUN_CHECK(a.shape == want, Status::io_error,
              "serve: " << file.string() << " has shape " << a.shape.str() << ", expected " << want.str()
                        << " for this model (check --input/--hidden/--layers and the cell type)");
  // A NaN or inf weight makes every answer NaN: refuse it here, naming the file, not at the first request.
  for (size_t i = 0; i < a.data.size(); ++i)
    CORUN_CHECK(std::isfinite(a.data[i]), Status::io_error,
                "serve: " << file.string() << " is not finite: element " << i << " is " << a.data[i]
                          << " (the weights must be finite numbers)");
  return std::move(a.data);
}

}  // namespace

Model Model::load_npy(const ModelSpec& spec, const std::string& dir) {
  spec.validate();
  // The weights are a directory of .npy files: a file there is not "missing", it is the wrong kind of path.
  CORUN_CHECK(std::filesystem::exists(dir), Status::io_error, "serve: weight directory " << dir << " does not exist");
  CORUN_CHECK(std::filesystem::is_directory(dir), Status::io_error,
              "serve: weight directory " << dir << " is a file, not a directory: give the directory that holds "
                                            "the .npy weights (weight_ih_l0.npy, ...)");
  Model m;
  m.spec_ = spec;
  const int64_t gh = static_cast<int64_t>(gate_count(spec.cell)) * spec.hidden;
  for (int l = 0; l < spec.layers; ++l)
    for (int d = 0; d < spec.directions(); ++d) {
      const std::string suffix = "_l" + std::to_string(l) + (d == 1 ? "_reverse" : "") + ".npy";
      const std::filesystem::path p(dir);
      CellWeights w;
      w.w_ih = load_exact(p / ("weight_ih" + suffix), Shape{gh, spec.layer_input(l)});
      w.w_hh = load_exact(p / ("weight_hh" + suffix), Shape{gh, spec.hidden});
      w.b_ih = load_exact(p / ("bias_ih" + suffix), Shape{gh});
      w.b_hh = load_exact(p / ("bias_hh" + suffix), Shape{gh});
      m.cells_.push_back(std::move(w));
    }
  return m;
}

}  // namespace corun::serve
