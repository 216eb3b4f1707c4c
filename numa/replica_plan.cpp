#include "numa/replica_plan.hpp"

#include "base/cgroup.hpp"

#include <corun/error.hpp>

#include <sstream>

namespace corun::numa {

namespace {

// Part `k` of `n` contiguous, as-even-as-possible parts of [0, size).
std::pair<size_t, size_t> part(size_t size, int k, int n) {
  const size_t begin = size * static_cast<size_t>(k) / static_cast<size_t>(n);
  const size_t end = size * static_cast<size_t>(k + 1) / static_cast<size_t>(n);
  return {begin, end};
}

}  // namespace

const char* mode_name(Mode m) {
  switch (m) {
    case Mode::off:
      return "off";
    case Mode::replicate:
      return "replicate";
    case Mode::interleave:
      return "interleave";
  }
  return "?";
}

void link_reduction_tree(std::vector<Replica>& replicas, int arity) {
  if (arity < 2)
    throw Error(Status::invalid_argument,
                "corun: numa: the reduction tree needs a fan-in of at least 2, got " + std::to_string(arity));
  const int n = static_cast<int>(replicas.size());
  for (int r = 0; r < n; ++r) {
    Replica& rep = replicas[static_cast<size_t>(r)];
    rep.children.clear();
    rep.parent = r == 0 ? -1 : (r - 1) / arity;
    for (int c = r * arity + 1; c <= r * arity + arity && c < n; ++c) rep.children.push_back(c);
  }
}

Plan plan_replicas(const Topology& topo, const Request& req, int arity) {
  const auto domains = topo.cpu_domains();
  if (domains.empty())
    throw Error(Status::invalid_config, "corun: numa: no usable CPU in any NUMA domain (allocation of " +
                                            std::to_string(topo.usable_cpus) +
                                            " CPUs): check the affinity mask and cgroup cpuset (corun info)");

  Plan plan;
  plan.real_topology = topo.source == "this machine";
  int count = 1;
  if (req.replicas > 0) {
    if (req.mode_given && req.mode != Mode::replicate)
      throw Error(Status::invalid_config, std::string("corun: CORUN_REPLICAS=") + std::to_string(req.replicas) +
                                              " with CORUN_NUMA=" + mode_name(req.mode) +
                                              ": replicas need CORUN_NUMA=replicate (or unset CORUN_REPLICAS)");
    plan.mode = Mode::replicate;
    count = req.replicas;
    plan.why = "CORUN_REPLICAS=" + std::to_string(count);
  } else if (req.mode_given) {
    plan.mode = req.mode;
    plan.why = std::string("CORUN_NUMA=") + mode_name(req.mode);
    if (plan.mode == Mode::replicate) count = static_cast<int>(domains.size());
  } else if (req.replicate_by_default && domains.size() > 1) {
    // The caller builds one graph per replica (corun train): a replica per domain with CPUs.
    plan.mode = Mode::replicate;
    count = static_cast<int>(domains.size());
    plan.why = "default for training: a replica per domain with CPUs; CORUN_NUMA=off runs one solver";
  } else {
    // One solver: the caller runs one graph (Engine::run; inference), or there is one domain.
    plan.mode = Mode::off;
    plan.why = domains.size() > 1 ? "default: one solver over " + std::to_string(domains.size()) +
                                        " domains with CPUs; CORUN_NUMA=replicate asks for a replica per domain"
                                  : "default: one domain with CPUs";
  }

  if (plan.mode != Mode::replicate) {
    Replica all;
    all.home_os_index = domains.front()->os_index;
    for (const Domain* d : domains) {
      all.cpus.insert(all.cpus.end(), d->cpus.begin(), d->cpus.end());
      plan.domain_cpus.push_back(static_cast<int>(d->cpus.size()));
      if (plan.mode == Mode::interleave) plan.interleave_nodes.push_back(d->os_index);
    }
    plan.replicas.push_back(std::move(all));
    link_reduction_tree(plan.replicas, arity);
    return plan;
  }

  if (count > topo.usable_cpus)
    throw Error(Status::invalid_config, "corun: CORUN_REPLICAS=" + std::to_string(count) +
                                            " is more replicas than the " + std::to_string(topo.usable_cpus) +
                                            " usable CPUs: each replica needs at least one (lower it)");
  // Domains first: replica r goes to domain r * D / count, so every domain gets floor or ceil(count / D)
  // replicas, in order; then each domain's CPUs are cut into that many contiguous groups.
  const int ndom = static_cast<int>(domains.size());
  std::vector<std::vector<int>> per_domain(static_cast<size_t>(ndom));
  for (int r = 0; r < count; ++r) per_domain[static_cast<size_t>(static_cast<long>(r) * ndom / count)].push_back(r);
  plan.replicas.resize(static_cast<size_t>(count));
  for (int d = 0; d < ndom; ++d) {
    const auto& reps = per_domain[static_cast<size_t>(d)];
    const Domain& dom = *domains[static_cast<size_t>(d)];
    if (reps.empty()) continue;  // fewer replicas than domains: this domain stays idle
    if (reps.size() > dom.cpus.size())
      throw Error(Status::invalid_config, "corun: CORUN_REPLICAS=" + std::to_string(count) + ": NUMA node " +
                                              std::to_string(dom.os_index) + " would get " +
                                              std::to_string(reps.size()) + " replicas for its " +
                                              std::to_string(dom.cpus.size()) + " usable CPUs (use at most " +
                                              std::to_string(topo.usable_cpus) + " replicas spread evenly)");
    for (size_t k = 0; k < reps.size(); ++k) {
      Replica& rep = plan.replicas[static_cast<size_t>(reps[k])];
      rep.index = reps[k];
      rep.home_os_index = dom.os_index;
      const auto [b, e] = part(dom.cpus.size(), static_cast<int>(k), static_cast<int>(reps.size()));
      rep.cpus.assign(dom.cpus.begin() + static_cast<long>(b), dom.cpus.begin() + static_cast<long>(e));
    }
  }
  link_reduction_tree(plan.replicas, arity);
  return plan;
}

bool Plan::spans_several_domains() const {
  for (const Replica& r : replicas)
    if (r.home_os_index != replicas.front().home_os_index) return true;
  return false;
}

std::string describe(const Plan& plan) {
  std::ostringstream os;
  os << mode_name(plan.mode) << " (" << plan.why << ")";
  if (plan.mode == Mode::interleave) os << ", pages over nodes " << cgroup::format_cpu_list(plan.interleave_nodes);
  if (plan.mode == Mode::replicate) {
    os << ", " << plan.replicas.size() << (plan.replicas.size() == 1 ? " replica" : " replicas") << ":";
    for (const Replica& r : plan.replicas)
      os << (r.index ? ";" : "") << " r" << r.index << " node " << r.home_os_index << " CPUs "
         << cgroup::format_cpu_list(r.cpus);
  }
  return os.str();
}

}  // namespace corun::numa
