// corun — command-line front end: `corun train`, `corun info`, `corun profile`, `corun plot-trace`,
// `corun serve-bench`, `corun serve`.
// Exit codes: 0 success, 1 runtime or configuration error, 2 usage error, 3 `train` stopped by SIGTERM/SIGUSR1/
// SIGINT after an iteration (a second signal: 128 + its number), 4 a simulated run refused: ops without a model
// (kUnmodelledExitCode; `corun simulate` turns it into 1).
#include "cli/blas_pool.hpp"
#include "cli/commands.hpp"
#include "engine/simulated_models.hpp"

#include <corun/error.hpp>
// In a SimGrid build of StarPU, starpu.h renames main to starpu_main, which StarPU's own main runs as the
// simulated application (docs/simulation.md); in a native build it changes nothing here.
#include <starpu.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>

namespace {
const char* kUsage =
    "usage: corun <command> [options]\n"
    "commands:\n"
    "  train       train a model and print a results table (corun train --help)\n"
    "  infer       run a model's inference graph and print its latency (corun infer --help)\n"
    "  info        topology, CPU allocation (mask, cgroup), workers and the binding actually applied, warnings\n"
    "  profile     search executor layouts, calibrate per-width models, write a profile (corun profile --help)\n"
    "  plot-trace  draw an execution trace as a Gantt chart, PNG or SVG (corun plot-trace --help)\n"
    "  serve       serve ONNX models over HTTP, KServe v2 / Triton protocol (corun serve --help)\n"
    "  serve-bench RNN serving latency: planned LSTM/GRU inference or a BLAS baseline (corun serve-bench --help)\n"
    "  simulate    run train or infer in simulated time on a described machine (corun simulate --help)\n"
    "environment: CORUN_SCHED=<policy>|help, CORUN_KERNELS=fast|ref (see docs/env-vars.md)\n"
    "exit codes: 0 success, 1 runtime or configuration error, 2 usage error, 3 train stopped by a signal,\n"
    "  4 a simulated run refused ops without a model (SimGrid build; corun simulate then exits 1)\n";
}

int main(int argc, char** argv) {
  corun::cli::restore_user_blas_threads();
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    if (argc < 2) std::fputs("corun: no command given\n", stderr);
    return argc < 2 ? 2 : 0;
  }
  try {
    if (!std::strcmp(argv[1], "train")) return corun::cli::train(argc, argv);
    if (!std::strcmp(argv[1], "infer")) return corun::cli::infer(argc, argv);
    if (!std::strcmp(argv[1], "info")) return corun::cli::info(argc, argv);
    if (!std::strcmp(argv[1], "profile")) return corun::cli::profile(argc, argv);
    if (!std::strcmp(argv[1], "plot-trace")) return corun::cli::plot_trace(argc, argv);
    if (!std::strcmp(argv[1], "serve")) return corun::cli::serve(argc, argv);
    if (!std::strcmp(argv[1], "serve-bench")) return corun::cli::serve_bench(argc, argv);
    if (!std::strcmp(argv[1], "simulate")) return corun::cli::simulate(argc, argv);
  } catch (const corun::engine::UnmodelledOpsError& e) {  // only in a simulated run (the SimGrid build)
    std::fprintf(stderr, "%s\n", e.what());
    return corun::cli::kUnmodelledExitCode;
  } catch (const corun::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "corun: error: %s\n", e.what());
    return 1;
  }
  std::fprintf(stderr, "%scorun: unknown command '%s'\n", kUsage, argv[1]);  // the reason last, where the eye is
  return 2;
}
