// The engine's settings: every CORUN_* variable corun reads is parsed here (docs/env-vars.md), strictly,
// and the layers below get plain options structs built from the Config.
#include <corun/engine.hpp>

#include "base/env.hpp"
#include "codelets/conv2d/conv2d_dnnl.hpp"
#include "engine/conv_kernel.hpp"

#include <sstream>

namespace corun {

namespace engine {

namespace {
std::string conv_kernel_from_env() {
  return env::get_choice("CORUN_CONV_KERNEL", {"auto", "dnnl", "direct", "im2col"}).value_or("auto");
}

std::string gemm_kernel_from_env() {
  return env::get_choice("CORUN_GEMM_KERNEL", {"auto", "onednn", "openblas"}).value_or("auto");
}
}  // namespace

KernelPreferences kernel_preferences_from_env() { return {conv_kernel_from_env(), gemm_kernel_from_env()}; }

}  // namespace engine

Config Config::from_env() {
  Config c;
  if (auto v = env::get("CORUN_SCHED")) c.policy = *v;
  if (auto k = env::get_choice("CORUN_KERNELS", {"fast", "ref"})) c.ref_kernels = *k == "ref";
  if (auto q = env::get_bool("CORUN_QUIET")) c.quiet = *q;
  c.conv_kernel = engine::conv_kernel_from_env();
  c.gemm_kernel = engine::gemm_kernel_from_env();
  if (auto v = env::get("CORUN_EXECUTORS")) c.executors = *v;
  if (auto v = env::get("CORUN_PROFILE")) c.profile = *v;
  if (auto w = env::get_int("CORUN_FIXED_WIDTH", 1, 4096)) c.fixed_width = static_cast<int>(*w);
  if (auto x = env::get_int("CORUN_WIDTH_INTERVAL", 1, 4096)) c.width_interval = static_cast<int>(*x);
  if (auto d = env::get_bool("CORUN_DETERMINISTIC")) c.deterministic = *d;
  if (auto v = env::get("CORUN_SCHEDULE")) c.schedule = *v;
  if (auto v = env::get_choice("CORUN_VERBOSE", {"sched", "passes", "kernels", "all", "none"})) {
    c.verbose_sched = *v == "sched" || *v == "all";
    c.verbose_passes = *v == "passes" || *v == "all";
    c.verbose_kernels = *v == "kernels" || *v == "all";
  }
  if (const auto m = env::get_choice("CORUN_NUMA", {"off", "replicate", "interleave"}))
    c.numa = *m == "off" ? NumaMode::off : *m == "replicate" ? NumaMode::replicate : NumaMode::interleave;
  if (const auto n = env::get_int("CORUN_REPLICAS", 1, 1024)) c.replicas = static_cast<int>(*n);
  if (auto v = env::get_choice("CORUN_PARALLEL_OPS", {"on", "off", "auto"})) {
    if (*v == "auto") c.parallel_ops_auto = true;
    else c.parallel_ops = *v == "on";
  }
  if (auto v = env::get_int("CORUN_PARALLEL_OPS_MIN", 2, 1 << 20)) c.parallel_ops_min = static_cast<int>(*v);
  if (auto v = env::get_choice("CORUN_INPUT_PROJECTION", {"on", "off", "auto"})) {
    if (*v == "auto") c.input_projection_auto = true;
    else c.input_projection = *v == "on";
  }
  if (auto v = env::get("CORUN_CGROUP_ROOT")) c.cgroup_root = *v;
  if (auto v = env::get("CORUN_SERVE_PLANS")) c.serve_plans = *v;
  if (auto v = env::get_choice("CORUN_COTENANCY", {"auto", "off"})) c.cotenancy = *v == "auto";
  if (auto v = env::get_choice("CORUN_IDLE_NAPS", {"auto", "off", "always"})) c.idle_naps = *v;
  if (auto v = env::get_choice("CORUN_WIDTH_MEMORY", {"on", "off"})) c.width_memory = *v == "on";
  // StarPU records every sample of a calibration run (STARPU_CALIBRATE=1 or 2) into the model of the width the
  // task ran at. A governor narrowing width-2 teams to width 1 under load left the documented width-2
  // calibration with 8 width-2 times of 366 footprints (issue 52): calibration keeps the widths asked for,
  // as CORUN_FIXED_WIDTH does.
  if (auto v = env::get("STARPU_CALIBRATE"); v && *v != "0") c.cotenancy = false;
  if (auto v = env::get_choice("CORUN_CPF_MERGE", {"auto", "off"})) c.cpf_merge = *v == "auto";
  if (auto v = env::get_choice("CORUN_TEST_PAUSE_IN_CHECKPOINT", {"files", "manifest", "prune", "stuck"}))
    c.test_pause_in_checkpoint = *v;
  if (auto v = env::get_int("CORUN_TEST_GRACE_SECONDS", 1, 60)) c.test_grace_seconds = static_cast<int>(*v);
  return c;
}

std::string EngineInfo::summary() const {
  std::ostringstream os;
  os << "policy=" << policy << " (" << (own_policy ? "corun" : "StarPU built-in") << ", from " << policy_source
     << ") workers=" << workers << " starpu=" << starpu_version << " (maxcpus " << starpu_maxcpus << ", maxnumanodes "
     << starpu_maxnumanodes << ") blas=" << blas << " core=" << blas_core << " blas_threads=" << blas_threads
     << " kernels=" << kernels;
  if (!layout.empty()) os << " executors=" << layout << " (" << layout_source << ")";
  if (replicas > 1) os << " replicas=" << replicas;
  if (simulated) os << " simulated=SimGrid (kernels do not run; times come from machine key " << machine_key << ")";
  return os.str();
}

}  // namespace corun
