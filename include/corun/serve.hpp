// corun/serve.hpp — low-latency RNN inference (LSTM, GRU) the DeepCPU way (docs/serving.md).
//
//   corun::serve::ModelSpec spec{corun::serve::Cell::lstm, /*input*/ 256, /*hidden*/ 256};
//   corun::serve::Model model = corun::serve::Model::random(spec, /*seed*/ 1);   // or Model::load_npy(spec, dir)
//   corun::Engine engine;                                   // one per process; the server submits to it
//   corun::serve::Server server(engine, model, /*batch*/ 1, /*max_seq*/ 100);   // plans (calibrated, cached)
//   corun::serve::FloatView y = server.infer(x, seq);        // x: [seq, batch, input], y: [seq, batch, H*dirs]
//
// The server plans once (phased schedule x parallelism x partition x execution mode, docs/serving.md),
// allocates every buffer then, and each infer() runs the request on a fixed team of StarPU workers (or, for
// an "inline" plan, on the calling thread): no allocation and no thread creation in the request loop. Destroy the Server before the Engine (it keeps
// StarPU task structures). One request at a time per Server (infer is not reentrant). Weights use PyTorch's layout and gate order
// (torch.nn.LSTM: i, f, g, o; torch.nn.GRU: r, z, n), so a state_dict saved as .npy loads unchanged.
#pragma once

#include <corun/engine.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace corun::serve {

enum class Cell { lstm, gru };

/// "lstm" / "gru".
const char* cell_name(Cell c);
/// Gate blocks per cell: 4 for LSTM (i, f, g, o), 3 for GRU (r, z, n).
int gate_count(Cell c);

/// The shape of a model (what torch.nn.LSTM / torch.nn.GRU take, batch_first=False).
struct ModelSpec {
  Cell cell = Cell::lstm;
  int input = 0;               ///< E: features per timestep
  int hidden = 0;              ///< H
  int layers = 1;              ///< stacked layers; layer l > 0 reads the previous layer's output (H * dirs)
  bool bidirectional = false;  ///< a second direction per layer reads the sequence backwards
  int directions() const { return bidirectional ? 2 : 1; }
  /// Features read by layer `l`.
  int layer_input(int l) const { return l == 0 ? input : hidden * directions(); }
  /// Throws corun::Error naming the bad field.
  void validate() const;
  /// "lstm E=256 H=256 L=1 uni".
  std::string str() const;
};

/// The weights of one direction of one layer, PyTorch layout: W_ih [G*H, in], W_hh [G*H, H], b_ih [G*H],
/// b_hh [G*H], row blocks in gate order (G = gate_count).
struct CellWeights {
  std::vector<float> w_ih, w_hh, b_ih, b_hh;
};

class Model {
 public:
  /// Uniform(-1/sqrt(H), 1/sqrt(H)) like PyTorch's initialisation, from a fixed seed.
  static Model random(const ModelSpec& spec, uint64_t seed);
  /// Reads the state_dict names of torch.nn.LSTM/GRU as `<dir>/<name>.npy`: weight_ih_l0, weight_hh_l0,
  /// bias_ih_l0, bias_hh_l0 and the `_reverse` variants. A missing file or a wrong shape is a corun::Error
  /// naming the file, the expected shape and the one found.
  static Model load_npy(const ModelSpec& spec, const std::string& dir);

  const ModelSpec& spec() const { return spec_; }
  /// Layer l, direction d (0 forward, 1 reverse).
  const CellWeights& weights(int layer, int dir) const;

  /// Multiply-adds x2 of one request: every MM of every step (the elementwise cell work not counted).
  double flops(int batch, int seq) const;

 private:
  ModelSpec spec_;
  std::vector<CellWeights> cells_;  // layer-major, then direction
};

/// How requests are executed (docs/serving.md#execution).
enum class ExecMode {
  wcs,       ///< weight-centric streamlining: one SPMD task per request, members keep their weight block and
             ///< meet at a barrier between steps
  per_step,  ///< one SPMD task per phase (time-independent phase, then each step) on the same team
  on_caller, ///< "inline": the calling thread runs the whole request at width 1, no StarPU task (tiny requests)
  resident,  ///< WCS in one long-lived SPMD task that serves requests posted in a mailbox, so back-to-back
             ///< requests pay no StarPU round trip; it leaves the team after 1 ms without requests
};
/// "wcs", "per-step", "inline", "resident".
const char* exec_mode_name(ExecMode m);
/// The inverse of exec_mode_name; false for an unknown name.
bool parse_exec_mode(const std::string& name, ExecMode* out);

/// The kernel of each step's products, [rows of the member's batch share, H] x [H, its gate columns]
/// (docs/serving.md#the-step-products): OpenBLAS's sgemm, or libxsmm's JIT kernel for exactly that shape
/// (in builds with libxsmm-dev). `automatic`: a rule on the shape (libxsmm for 3-64 rows with weights in
/// the caches); the plan search times it against OpenBLAS and keeps the faster.
enum class StepGemmKernel { automatic, openblas, libxsmm };
/// "auto", "openblas", "libxsmm".
const char* step_gemm_name(StepGemmKernel k);
/// The inverse of step_gemm_name; false for an unknown name.
bool parse_step_gemm(const std::string& name, StepGemmKernel* out);

/// One choice of the plan search: which input projections are hoisted out of the step loop (the phased
/// schedule), how many workers, how they are split over directions and each MM (PCP), and the mode.
struct Plan {
  uint32_t hoisted_gates = 0;  ///< bit g: gate g's x_t W_ih is in the time-independent phase (rule 3)
  int workers = 1;             ///< team width (the parallelism degree of the step phases)
  int direction_groups = 1;    ///< 2: directions run side by side on half the team each (GEMMs in parallel)
  int xi = 1;                  ///< PCP: batch blocks per direction (Xi)
  int xj = 1;                  ///< PCP: hidden-unit blocks per direction (Xj); Xk is always 1 (see serving.md)
  ExecMode mode = ExecMode::wcs;
  StepGemmKernel step_gemm = StepGemmKernel::automatic;
  double calibrated_ms = 0.0;  ///< median calibration time of this plan (0: not measured)

  /// "schedule=hoist{i,f,g,o} workers=2 groups=1 pcp=1x2x1 mode=wcs gemm=auto".
  std::string str(Cell cell) const;
};

/// Server settings.
struct ServeOptions {
  bool calibrate = true;         ///< search the plan by calibration runs (else: the analytical default)
  bool use_cache = true;         ///< read and write the plan cache (CORUN_SERVE_PLANS, docs/env-vars.md)
  bool recalibrate = false;      ///< do not read the cache: search again and replace the cached plan
  int calibration_runs = 5;      ///< requests per candidate after a warm-up (the median counts)
  int max_workers = 0;           ///< cap on the team width (0: every worker of the engine, at most one per
                                 ///< allocated core)
  const Plan* forced_plan = nullptr;  ///< use this plan (tests); calibrate/use_cache are then ignored
};

/// Read-only floats owned by the server (the public headers are C++17: no std::span).
struct FloatView {
  const float* data = nullptr;
  size_t size = 0;
  const float* begin() const { return data; }
  const float* end() const { return data + size; }
  float operator[](size_t i) const { return data[i]; }
};

class Server {
 public:
  /// Plans for `batch` and sequences of up to `max_seq` steps and allocates everything a request needs.
  Server(Engine& engine, const Model& model, int batch, int max_seq, const ServeOptions& options = {});
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  /// Runs one request. `x` holds [seq, batch, input] floats (seq <= max_seq); the result, [seq, batch,
  /// hidden * directions] (the last layer's h for every step, directions concatenated like PyTorch), stays
  /// valid until the next call. `count` must be seq * batch * input.
  FloatView infer(const float* x, size_t count, int seq);
  FloatView infer(const std::vector<float>& x, int seq) { return infer(x.data(), x.size(), seq); }

  const Plan& plan() const;
  /// Where the plan came from: "calibrated (N candidates)", "cache <file>", "forced", "default".
  const std::string& plan_source() const;
  /// Every plan the search timed, with its calibrated_ms (empty unless this server calibrated).
  const std::vector<Plan>& candidates() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace corun::serve
