// corun info: what corun would run on — topology, workers and where they are bound, StarPU caps, BLAS.
#include "apps/args.hpp"
#include "apps/commands.hpp"

#include <corun/engine.hpp>
#include <corun/machine.hpp>

#include <cstdio>
#include <iostream>

namespace corun::cli {

int info(int argc, char** argv) {
  const std::vector<FlagSpec> flags = {{"--help", false, "show this help"}};
  try {
    Args args(argc, argv, 2, flags);
    if (args.has("--help")) {
      std::cout << "usage: corun info\n" << describe(flags);
      return 0;
    }
  } catch (const UsageError& e) {
    std::fprintf(stderr, "corun info: %s\nusage: corun info\n", e.what());
    return 2;
  }
  if (policy_help_requested()) return 0;
  std::printf("cpu          %s (nproc %d)\n", machine::cpu_model().c_str(), machine::nproc());
  std::printf("topology     %s\n", machine::topology_summary().c_str());
  std::printf("affinity     %s (process mask)\n", machine::affinity_list().c_str());
  Config cfg = Config::from_env();
  cfg.quiet = true;
  Engine engine(cfg);
  const EngineInfo& i = engine.info();
  std::printf("starpu       %s, STARPU_MAXCPUS %d, STARPU_MAXNUMANODES %d\n", i.starpu_version.c_str(),
              i.starpu_maxcpus, i.starpu_maxnumanodes);
  std::printf("policy       %s (%s, from %s)\n", i.policy.c_str(), i.own_policy ? "corun" : "StarPU built-in",
              i.policy_source.c_str());
  std::printf("workers      %d CPU\n", i.workers);
  for (const auto& b : machine::worker_bindings())
    std::printf("  worker %-3d bindid %-3d runs on cpus %s\n", b.worker, b.bindid, b.cpus.c_str());
  std::printf("blas         %s, core %s, %d thread(s) per call\n", i.blas.c_str(), i.blas_core.c_str(), i.blas_threads);
  std::printf("git          %s\n", machine::git_sha().c_str());
  return 0;
}

}  // namespace corun::cli
