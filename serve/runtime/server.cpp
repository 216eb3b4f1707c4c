// corun::serve::Server: plan (cache, calibration or forced), then one Executor and one TeamRunner that
// every request reuses.
#include <corun/machine.hpp>
#include <corun/serve.hpp>

#include "base/check.hpp"
#include "serve/kernels/executor.hpp"
#include "serve/kernels/plan_file.hpp"
#include "serve/runtime/plan_search.hpp"
#include "serve/runtime/team_runner.hpp"

#include <algorithm>

namespace corun::serve {

struct Server::Impl {
  Plan plan;
  std::string source;
  std::vector<Plan> timed;
  int batch = 0;
  int input = 0;
  std::unique_ptr<Executor> exec;
  std::unique_ptr<TeamRunner> runner;
};

Server::Server(Engine& engine, const Model& model, int batch, int max_seq, const ServeOptions& options)
    : impl_(std::make_unique<Impl>()) {
  // The server submits to the StarPU the engine started, and takes its settings (the plan cache directory)
  // from the engine's Config.
  CORUN_CHECK(batch >= 1, Status::invalid_argument, "serve: batch " << batch << " must be at least 1");
  CORUN_CHECK(max_seq >= 1, Status::invalid_argument, "serve: max sequence " << max_seq << " must be at least 1");
  CORUN_CHECK(options.calibration_runs >= 1, Status::invalid_argument,
              "serve: calibration_runs " << options.calibration_runs << " must be at least 1");
  // Teams wider than the allocated cores never win (members of an oversubscribed team wait for OS time
  // slices at every barrier), so the search stops at the core count, e.g. with STARPU_NCPU=8 on 2 cores.
  int workers = std::min(starpu_cpu_workers(), std::max(1, machine::allocation().cores));
  if (options.max_workers > 0) workers = std::min(workers, options.max_workers);
  Impl& s = *impl_;
  s.batch = batch;
  s.input = model.spec().input;
  if (options.forced_plan != nullptr) {
    s.plan = *options.forced_plan;
    s.source = "forced";
  } else {
    const std::string key = plan_key(model.spec(), batch, max_seq, workers, machine::machine_key());
    const std::string path = plan_path(plan_cache_dir(engine.config().serve_plans), key);
    if (options.use_cache && !options.recalibrate) {
      if (std::optional<Plan> p = load_plan(path, key, model.spec().cell)) {
        s.plan = *p;
        s.source = "cache " + path;
      }
    }
    if (s.source.empty()) {
      if (options.calibrate) {
        s.plan = search_plan(model, batch, max_seq, workers, options.calibration_runs, &s.timed);
        s.source = "calibrated (" + std::to_string(s.timed.size()) + " plans)";
        if (options.use_cache) save_plan(path, key, s.plan);
      } else {
        s.plan = candidate_plans(model.spec(), batch, max_seq, workers, cache_sizes().l2).front();
        s.source = "default";
      }
    }
  }
  s.exec = std::make_unique<Executor>(model, batch, max_seq, s.plan);
  s.runner = std::make_unique<TeamRunner>(s.plan.workers);
  s.runner->reserve(s.plan.mode == ExecMode::wcs ? 1 : model.spec().layers * (max_seq + 1));
}

Server::~Server() = default;

FloatView Server::infer(const float* x, size_t count, int seq) {
  Impl& s = *impl_;
  CORUN_CHECK(static_cast<int64_t>(count) == static_cast<int64_t>(seq) * s.batch * s.input, Status::invalid_argument,
              "serve: a request of " << seq << " steps needs " << static_cast<int64_t>(seq) * s.batch * s.input
                                     << " floats ([seq, batch, input] = [" << seq << ", " << s.batch << ", " << s.input
                                     << "]), got " << count);
  s.exec->set_input(x, seq);
  s.runner->run(*s.exec, s.plan.mode);
  return FloatView{s.exec->output(), static_cast<size_t>(s.exec->output_size())};
}

const Plan& Server::plan() const { return impl_->plan; }
const std::string& Server::plan_source() const { return impl_->source; }
const std::vector<Plan>& Server::candidates() const { return impl_->timed; }

}  // namespace corun::serve
