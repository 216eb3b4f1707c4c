// tests/engine/engine_test_util.hpp — helpers shared by the engine tests: scoped environment variables,
// a private STARPU_HOME per test process, deterministic random fills, the Engine configuration of the tests,
// and an assertion helper for corun::Error. Include it from exactly one source file per test executable.
#pragma once

#include <corun/engine.hpp>
#include <corun/error.hpp>
#include <corun/graph.hpp>

#include "codelets/conv2d/conv2d_dnnl.hpp"
#include "common/error_matchers.hpp"
#include "engine/conv_kernel.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace corun::test {

/// Sets (or, with nullptr, unsets) an environment variable for the lifetime of the object, then restores
/// the previous state.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = std::string(old);
    if (value != nullptr) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_.c_str(), old_->c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

/// History-based perfmodels (calibrated by dmdas, pheft, ...) are saved under $STARPU_HOME at shutdown.
/// Keep the tests' tiny shapes and oversubscribed timings out of the user's models: every test process
/// gets a fresh directory, removed at exit (which also makes calibration start from the same state).
/// XDG_CACHE_HOME beats STARPU_HOME in StarPU's lookup, so it is unset for the process too.
class PrivateStarpuHome : public ::testing::Environment {
 public:
  void SetUp() override {
    std::string templ = (std::filesystem::temp_directory_path() / "corun-test-starpu-XXXXXX").string();
    if (::mkdtemp(templ.data()) == nullptr) return;
    dir_ = templ;
    xdg_ = std::make_unique<ScopedEnv>("XDG_CACHE_HOME", nullptr);
    home_ = std::make_unique<ScopedEnv>("STARPU_HOME", dir_.c_str());
  }
  void TearDown() override {
    home_.reset();
    xdg_.reset();
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }

 private:
  std::string dir_;
  std::unique_ptr<ScopedEnv> xdg_, home_;
};

// Internal linkage on purpose: an unreferenced inline variable is never emitted, so never initialised.
[[maybe_unused]] static ::testing::Environment* const g_private_starpu_home =
    ::testing::AddGlobalTestEnvironment(new PrivateStarpuHome);

/// The environment's configuration (CORUN_SCHED, CORUN_KERNELS, ...) with `policy` forced when not empty
/// and no config line. Worker count is left to StarPU (STARPU_NCPU), so the suite also runs oversubscribed.
inline Config test_config(const std::string& policy = "") {
  Config c = Config::from_env();
  if (!policy.empty()) c.policy = policy;
  c.quiet = true;
  return c;
}

/// n values uniform in [lo, hi) from `rng`.
inline std::vector<float> uniform(std::mt19937_64& rng, int64_t n, float lo = -1.0f, float hi = 1.0f) {
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = u(rng);
  return v;
}

/// Fills t's host buffer (graph not bound yet) with uniform values.
inline void fill_uniform(Graph& g, Tensor t, std::mt19937_64& rng, float lo = -1.0f, float hi = 1.0f) {
  const auto v = uniform(rng, t.shape().numel(), lo, hi);
  std::copy(v.begin(), v.end(), g.data(t));
}

/// Copies t's host buffer (graph not bound yet).
inline std::vector<float> host_copy(const Graph& g, Tensor t) {
  const float* p = g.data(t);
  return std::vector<float>(p, p + t.shape().numel());
}

/// ||a - b|| / max(||b||, tiny): the normwise relative error of `a` against the reference `b`.
template <class A, class B>
double rel_error(const A& a, const B& b) {
  double num = 0.0, den = 0.0;
  for (size_t i = 0; i < b.size(); ++i) {
    const double d = static_cast<double>(a[i]) - static_cast<double>(b[i]);
    num += d * d;
    den += static_cast<double>(b[i]) * static_cast<double>(b[i]);
  }
  return std::sqrt(num) / std::max(std::sqrt(den), 1e-30);
}

/// Bitwise equality of two float vectors (what "the same numbers under every policy" means).
inline bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

/// max |a - b| over the elements, relative to max |b|: "within 1e-6 relative" of the replica equivalence tests
/// (one scale for a whole tensor, so near-zero elements do not blow the error up).
inline double relative_error(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0, scale = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    diff = std::max(diff, std::fabs(static_cast<double>(a[i]) - b[i]));
    scale = std::max(scale, std::fabs(static_cast<double>(b[i])));
  }
  return a.size() == b.size() ? diff / std::max(scale, 1e-30) : INFINITY;
}

/// gtest predicate-style check that `text` contains `part`.
inline ::testing::AssertionResult contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << part << "' not found in: " << text;
}

/// Runs `g` once on `e`, reads `t`, and releases the graph (so that a pass may change it afterwards).
/// Gives every convolution pass of `g` without an implementation the list's choice under `kernel` (what the
/// plan step does with CORUN_CONV_KERNEL), before Graph::block_layouts decides by those choices.
inline void choose_conv_kernel(Graph& g, codelets::ConvKernel kernel) {
  const char* name = kernel == codelets::ConvKernel::dnnl     ? "dnnl"
                     : kernel == codelets::ConvKernel::direct ? "direct"
                     : kernel == codelets::ConvKernel::im2col ? "im2col"
                                                              : "auto";
  engine::choose_kernels(g, {name, "auto"}, false);
}

inline std::vector<float> run_and_read(Engine& e, Graph& g, Tensor t) {
  e.run(g);
  std::vector<float> v = e.read(g, t);
  e.release(g);
  return v;
}

}  // namespace corun::test
