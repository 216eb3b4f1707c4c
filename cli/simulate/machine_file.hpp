// cli/simulate/machine_file.hpp — a machine to simulate, read from machines/*.json (docs/simulation.md).
#pragma once

#include <string>

namespace corun::cli::sim {

/// What `corun simulate` needs to know about a machine it does not run on.
struct Machine {
  std::string path;         ///< the file it came from (printed with every simulated result)
  std::string name;         ///< short name, also the StarPU machine key suffix (corun-sim-<name>)
  std::string description;  ///< free text: what real machine this stands for
  int cores = 0;            ///< simulated CPU cores = StarPU CPU workers
  int numa_domains = 1;     ///< NUMA domains; StarPU 1.3.10 under SimGrid simulates one memory node, so the
                            ///< domains only enter the pessimistic scaling law (bandwidth per domain)
  double domain_bandwidth_gbs = 0;  ///< memory bandwidth of one NUMA domain, GB/s, shared by its cores
  double team_sync_us = 0;          ///< pessimistic law: cost of a team barrier per doubling of the width, µs

  int cores_per_domain() const { return cores / numa_domains; }
};

/// Reads and checks a machine file; throws corun::Error(io_error or invalid_argument) naming the file and the
/// field that is wrong.
Machine read_machine(const std::string& path);

}  // namespace corun::cli::sim
