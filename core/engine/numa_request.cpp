#include "core/engine/numa_request.hpp"

#include "numa/replica_plan.hpp"
#include "numa/topology.hpp"

#include <corun/error.hpp>

namespace corun::engine {

std::string check_numa_request(const std::vector<int>& usable) {
  const numa::Request request = numa::request_from_env();
  const numa::Plan plan = numa::plan_replicas(numa::discover(usable), request);
  if (plan.mode == numa::Mode::off) return "";
  if (request.mode_given || request.replicas > 0)
    throw Error(Status::invalid_config, "corun: NUMA " + numa::describe(plan) +
                                            ": this engine does not run per-domain replicas or interleaved memory "
                                            "yet, only one solver on every allocated core; unset CORUN_NUMA and "
                                            "CORUN_REPLICAS, or set CORUN_NUMA=off");
  return "NUMA mode " + std::string(numa::mode_name(plan.mode)) + " would be the default here (" + plan.why +
         ") but is not built yet: running one solver on every allocated core";
}

}  // namespace corun::engine
