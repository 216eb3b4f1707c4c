// tests/fuzz/fuzz_harness.hpp — runs one reader over thousands of mutated inputs and collects what went wrong.
//
//   const FuzzReport r = fuzz_reader(seeds, options, [&](const std::string& input) {
//     write_file(path, input);      // where the reader looks
//     corun::load_npy(path);        // returns: accepted; throws corun::Error: rejected
//   }, path);                       // what every rejection message must name
//   EXPECT_TRUE(r.failures.empty()) << r;
//
// The pass criterion of issue 21 item 8, for every input: no crash (the sanitizers of scripts/test.sh's
// sanitize pass abort the test), no hang (a watchdog thread aborts the process when one input takes longer
// than `per_input_limit_s`, naming the input's file, which the kept temp dir still holds), no allocation
// above kAllocationCap (an input of a few hundred bytes never needs 64 MiB: that is a reader trusting a size
// it read), and every rejection a corun::Error whose message starts with "corun: " and names the file.
// Anything else (std::bad_alloc, std::length_error, a nlohmann or filesystem exception, a message without
// the path) is a failure, reported with the input index; inputs come from a seeded Mutator, so the index
// reproduces it.
#pragma once

#include "fuzz/mutator.hpp"

#include <corun/error.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <ostream>
#include <string>
#include <thread>
#include <typeinfo>
#include <vector>

namespace corun::fuzz {

/// Allocations above this size throw std::bad_alloc and are reported (the operator new of the fuzz test).
inline constexpr size_t kAllocationCap = size_t{64} << 20;
/// The largest refused allocation since the last reset (0: none); set by the replaced operator new.
std::atomic<size_t>& refused_allocation();

struct FuzzOptions {
  uint64_t rng_seed = 21;
  size_t min_inputs = 2000;   ///< always run at least these many inputs, whatever the time
  size_t max_inputs = 20000;  ///< and at most these many
  double budget_s = 3.0;      ///< past min_inputs, stop after this much time
  double per_input_limit_s = 10.0;
};

struct FuzzReport {
  size_t inputs = 0, accepted = 0, rejected = 0;
  double seconds = 0.0;
  std::vector<std::string> failures;  ///< "input k: what went wrong"
};

inline std::ostream& operator<<(std::ostream& os, const FuzzReport& r) {
  os << r.inputs << " inputs (" << r.accepted << " accepted, " << r.rejected << " rejected) in " << r.seconds << " s, "
     << r.failures.size() << " failures";
  for (const std::string& f : r.failures) os << "\n  " << f;
  return os;
}

/// Aborts the process when one input runs longer than the limit: a hang must not wait for CTest's timeout
/// (which would not say which input it was).
class Watchdog {
 public:
  Watchdog(double limit_s, std::string what) : limit_(limit_s), what_(std::move(what)) {
    thread_ = std::thread([this] { watch(); });
  }
  ~Watchdog() {
    stop_ = true;
    thread_.join();
  }
  void start(size_t index) {
    index_ = index;
    started_ = now();
  }
  void done() { started_ = 0.0; }

 private:
  static double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  }
  void watch() {
    while (!stop_) {
      const double t = started_;
      if (t != 0.0 && now() - t > limit_) {
        std::fprintf(stderr, "fuzz: input %zu took more than %.0f s (a hang); it is in %s\n", index_.load(), limit_,
                     what_.c_str());
        std::fflush(stderr);
        std::abort();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }

  double limit_;
  std::string what_;
  std::atomic<bool> stop_{false};
  std::atomic<double> started_{0.0};
  std::atomic<size_t> index_{0};
  std::thread thread_;
};

/// Feeds `run_one` the mutated inputs; `must_name` is the text every rejection message must contain (the
/// path of the file, or of the checkpoint directory) and `where` the file(s) a hang leaves the input in.
inline FuzzReport fuzz_reader(const std::vector<std::string>& seeds, const FuzzOptions& options,
                              const std::function<void(const std::string&)>& run_one, const std::string& must_name,
                              const std::string& where) {
  constexpr size_t kMaxFailures = 20;
  FuzzReport r;
  Mutator mutator(seeds, options.rng_seed);
  Watchdog watchdog(options.per_input_limit_s, where);
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  for (size_t k = 0; k < options.max_inputs && r.failures.size() < kMaxFailures; ++k) {
    if (k >= options.min_inputs && elapsed() > options.budget_s) break;
    const std::string input = mutator.next();
    refused_allocation() = 0;
    std::string failure;
    watchdog.start(k);
    try {
      run_one(input);
      ++r.accepted;
    } catch (const Error& e) {
      ++r.rejected;
      const std::string msg = e.what();
      if (msg.rfind("corun: ", 0) != 0 || msg.size() <= 7)
        failure = "message does not start with 'corun: ' or says nothing: '" + msg + "'";
      else if (msg.find(must_name) == std::string::npos)
        failure = "message does not name '" + must_name + "': '" + msg + "'";
    } catch (const std::exception& e) {
      failure = std::string("not a corun::Error: ") + typeid(e).name() + ": " + e.what();
    }
    watchdog.done();
    ++r.inputs;
    if (const size_t bytes = refused_allocation(); bytes != 0)
      failure += (failure.empty() ? "" : "; ") + std::string("asked for ") + std::to_string(bytes) +
                 " bytes from an input of " + std::to_string(input.size());
    if (!failure.empty()) r.failures.push_back("input " + std::to_string(k) + ": " + failure);
  }
  r.seconds = elapsed();
  return r;
}

}  // namespace corun::fuzz
