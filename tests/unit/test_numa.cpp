// NUMA domains of an allocation and the replica plan (numa/), on hwloc synthetic topologies: domains and their
// CPUs, memory-only nodes (flat-mode HBM, package-wide nodes above sub-NUMA clusters), the allocation's
// restriction, replica placement and splits, the reduction tree, and the errors of CORUN_NUMA / CORUN_REPLICAS.
#include "numa/pages.hpp"
#include "numa/replica_plan.hpp"
#include "numa/topology.hpp"

#include <corun/error.hpp>

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using corun::numa::discover_synthetic;
using corun::numa::Mode;
using corun::numa::Plan;
using corun::numa::plan_replicas;
using corun::numa::Request;

namespace {

std::vector<int> range(int begin, int end) {
  std::vector<int> v;
  for (int i = begin; i < end; ++i) v.push_back(i);
  return v;
}

Request replicas(int n) {
  Request r;
  r.replicas = n;
  return r;
}

Request mode(Mode m) {
  Request r;
  r.mode = m;
  r.mode_given = true;
  return r;
}

}  // namespace

TEST(NumaTopology, FourDomainsWithTheirCpusAndCores) {
  const auto t = discover_synthetic("pack:2 numa:2 core:4 pu:1", {});
  ASSERT_EQ(t.domains.size(), 4u);
  EXPECT_EQ(t.usable_cpus, 16);
  for (int d = 0; d < 4; ++d) {
    EXPECT_EQ(t.domains[d].os_index, d);
    EXPECT_EQ(t.domains[d].cpus, range(4 * d, 4 * d + 4));
    EXPECT_EQ(t.domains[d].cores, range(4 * d, 4 * d + 4));
    EXPECT_TRUE(t.domains[d].no_cpu_reason.empty());
  }
  EXPECT_EQ(t.cpu_domains().size(), 4u);
}

TEST(NumaTopology, SmtCpusOfOneCoreCountOnce) {
  const auto t = discover_synthetic("pack:1 numa:2 core:2 pu:2", {});
  ASSERT_EQ(t.domains.size(), 2u);
  EXPECT_EQ(t.domains[1].cpus, range(4, 8));
  EXPECT_EQ(t.domains[1].cores, range(2, 4));
}

TEST(NumaTopology, FlatModeHighBandwidthMemoryIsListedWithoutCpus) {
  // Each package has DDR and a second (high-bandwidth) node over the same cores, as hwloc shows KNL flat mode.
  const auto t = discover_synthetic("pack:2 [numa] [numa(memory=16GB)] core:2 pu:1", {});
  ASSERT_EQ(t.domains.size(), 4u);
  ASSERT_EQ(t.cpu_domains().size(), 2u);
  EXPECT_EQ(t.cpu_domains()[0]->cpus, range(0, 2));
  EXPECT_EQ(t.cpu_domains()[1]->cpus, range(2, 4));
  int memory_only = 0;
  for (const auto& d : t.domains)
    if (!d.has_cpus()) {
      ++memory_only;
      EXPECT_NE(d.no_cpu_reason.find("memory only"), std::string::npos) << d.no_cpu_reason;
    }
  EXPECT_EQ(memory_only, 2);
  EXPECT_EQ(plan_replicas(t, Request{}).mode, Mode::off);  // a caller running one graph: one solver
  Request training;
  training.replicate_by_default = true;  // a trainer's default: one replica per domain with CPUs
  EXPECT_EQ(plan_replicas(t, training).replicas.size(), 2u);
  const Plan p = plan_replicas(t, mode(Mode::replicate));
  ASSERT_EQ(p.replicas.size(), 2u);  // one per domain with CPUs, none on the memory-only nodes
  EXPECT_EQ(p.replicas[1].cpus, range(2, 4));
}

TEST(NumaTopology, SubNumaClustersOwnTheCpusNotThePackageNode) {
  const auto t = discover_synthetic("pack:1 [numa(memory=4GB)] l3:2 [numa(memory=1GB)] core:2 pu:1", {});
  ASSERT_EQ(t.domains.size(), 3u);
  const auto with_cpus = t.cpu_domains();
  ASSERT_EQ(with_cpus.size(), 2u);
  EXPECT_EQ(with_cpus[0]->cpus, range(0, 2));
  EXPECT_EQ(with_cpus[1]->cpus, range(2, 4));
}

TEST(NumaTopology, RestrictedToTheAllocation) {
  const auto t = discover_synthetic("pack:2 numa:2 core:4 pu:1", {0, 1, 2, 3, 4});
  EXPECT_EQ(t.usable_cpus, 5);
  EXPECT_EQ(t.domains[0].cpus, range(0, 4));
  EXPECT_EQ(t.domains[1].cpus, std::vector<int>{4});
  EXPECT_FALSE(t.domains[2].has_cpus());
  EXPECT_NE(t.domains[2].no_cpu_reason.find("outside the allocation"), std::string::npos);
  const Plan p = plan_replicas(t, mode(Mode::replicate));
  ASSERT_EQ(p.replicas.size(), 2u);  // only the domains the job may use
  EXPECT_EQ(p.replicas[1].home_os_index, 1);
  EXPECT_EQ(p.replicas[1].cpus, std::vector<int>{4});
}

TEST(NumaTopology, RejectsABadSyntheticDescription) {
  try {
    discover_synthetic("pack:two", {});
    FAIL() << "no error";
  } catch (const corun::Error& e) {
    EXPECT_NE(std::string(e.what()).find("pack:two"), std::string::npos) << e.what();
  }
}

TEST(ReplicaPlan, OneDomainDefaultsToOff) {
  const Plan p = plan_replicas(discover_synthetic("pack:1 numa:1 core:2 pu:1", {}), Request{});
  EXPECT_EQ(p.mode, Mode::off);
  ASSERT_EQ(p.replicas.size(), 1u);
  EXPECT_EQ(p.replicas[0].cpus, range(0, 2));
}

TEST(ReplicaPlan, TrainingDefaultsToAReplicaPerDomainWithCpus) {
  Request training;
  training.replicate_by_default = true;
  const Plan four = plan_replicas(discover_synthetic("pack:4 numa:1 core:2 pu:1", {}), training);
  EXPECT_EQ(four.mode, Mode::replicate);
  EXPECT_EQ(four.replicas.size(), 4u);
  EXPECT_NE(four.why.find("default"), std::string::npos) << four.why;
  // One domain: nothing to replicate over.
  const Plan one = plan_replicas(discover_synthetic("pack:1 numa:1 core:2 pu:1", {}), training);
  EXPECT_EQ(one.mode, Mode::off);
  EXPECT_EQ(one.replicas.size(), 1u);
  // An explicit CORUN_NUMA=off beats the default.
  Request off = mode(Mode::off);
  off.replicate_by_default = true;
  EXPECT_EQ(plan_replicas(discover_synthetic("pack:4 numa:1 core:2 pu:1", {}), off).replicas.size(), 1u);
}

TEST(ReplicaPlan, ForcedReplicasSplitOneDomainContiguously) {
  const auto t = discover_synthetic("pack:1 numa:1 core:8 pu:1", {});
  const Plan p = plan_replicas(t, replicas(3));
  EXPECT_EQ(p.mode, Mode::replicate);
  ASSERT_EQ(p.replicas.size(), 3u);
  EXPECT_EQ(p.replicas[0].cpus, range(0, 2));
  EXPECT_EQ(p.replicas[1].cpus, range(2, 5));
  EXPECT_EQ(p.replicas[2].cpus, range(5, 8));
  for (const auto& r : p.replicas) EXPECT_EQ(r.home_os_index, 0);
}

TEST(ReplicaPlan, MoreReplicasThanDomainsSpreadEvenly) {
  const auto t = discover_synthetic("pack:2 numa:1 core:4 pu:1", {});
  const Plan p = plan_replicas(t, replicas(4));
  ASSERT_EQ(p.replicas.size(), 4u);
  const int homes[] = {0, 0, 1, 1};
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(p.replicas[r].index, r);
    EXPECT_EQ(p.replicas[r].home_os_index, homes[r]);
    EXPECT_EQ(p.replicas[r].cpus.size(), 2u);
  }
}

TEST(ReplicaPlan, FewerReplicasThanDomainsLeaveDomainsIdle) {
  const auto t = discover_synthetic("pack:4 numa:1 core:2 pu:1", {});
  const Plan p = plan_replicas(t, replicas(2));
  ASSERT_EQ(p.replicas.size(), 2u);
  EXPECT_EQ(p.replicas[0].home_os_index, 0);
  EXPECT_EQ(p.replicas[1].home_os_index, 2);
}

TEST(ReplicaPlan, InterleaveKeepsOneSolverOverEveryDomain) {
  const auto t = discover_synthetic("pack:2 numa:2 core:2 pu:1", {});
  const Plan p = plan_replicas(t, mode(Mode::interleave));
  EXPECT_EQ(p.mode, Mode::interleave);
  ASSERT_EQ(p.replicas.size(), 1u);
  EXPECT_EQ(p.replicas[0].cpus, range(0, 8));
  EXPECT_EQ(p.interleave_nodes, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(plan_replicas(t, mode(Mode::off)).replicas.size(), 1u);
}

TEST(ReplicaPlan, ReductionTreeIsFixedHeapOrder) {
  const auto t = discover_synthetic("pack:1 numa:1 core:8 pu:1", {});
  const Plan p = plan_replicas(t, replicas(7), 3);
  const std::vector<int> parents = {-1, 0, 0, 0, 1, 1, 1};
  for (int r = 0; r < 7; ++r) EXPECT_EQ(p.replicas[r].parent, parents[r]) << r;
  EXPECT_EQ(p.replicas[0].children, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(p.replicas[1].children, (std::vector<int>{4, 5, 6}));
  EXPECT_TRUE(p.replicas[2].children.empty());
  const Plan binary = plan_replicas(t, replicas(4));
  EXPECT_EQ(binary.replicas[0].children, (std::vector<int>{1, 2}));
  EXPECT_EQ(binary.replicas[1].children, (std::vector<int>{3}));
}

TEST(ReplicaPlan, ErrorsSayWhatToChange) {
  const auto t = discover_synthetic("pack:1 numa:1 core:2 pu:1", {});
  auto message = [&](const Request& r) -> std::string {
    try {
      plan_replicas(t, r);
    } catch (const corun::Error& e) {
      return e.what();
    }
    return "";
  };
  Request off_with_replicas = mode(Mode::off);
  off_with_replicas.replicas = 2;
  EXPECT_NE(message(off_with_replicas).find("CORUN_NUMA=replicate"), std::string::npos);
  EXPECT_NE(message(replicas(3)).find("more replicas than the 2 usable CPUs"), std::string::npos);
  const auto none = discover_synthetic("pack:1 numa:1 core:2 pu:1", {7});
  EXPECT_THROW(plan_replicas(none, Request{}), corun::Error);
}

namespace {

// The nodes this machine has (0 to 63 probed).
std::vector<int> machine_nodes() {
  std::vector<int> nodes;
  for (int n = 0; n < 64; ++n)
    if (corun::numa::machine_has_node(n)) nodes.push_back(n);
  return nodes;
}

}  // namespace

// On one node every page is already where it is asked to go: nothing would be tested, so the test skips
// (and says so) instead of passing.
TEST(NumaPages, MovesTheWholePagesOfABufferToANodeTheMachineHas) {
  const std::vector<int> nodes = machine_nodes();
  if (nodes.size() < 2) GTEST_SKIP() << "needs 2 NUMA nodes, this machine has " << nodes.size();
  const int target = nodes.back();  // first touch put the pages on this thread's node, usually the first
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* p = nullptr;
  ASSERT_EQ(posix_memalign(&p, page, 16 * page), 0);
  std::memset(p, 1, 16 * page);  // faulted in
  char* c = static_cast<char*>(p);
  EXPECT_EQ(corun::numa::move_to_node(c, 16 * page, target), 16u);
  for (size_t k = 0; k < 16; ++k) EXPECT_EQ(corun::numa::node_of_page(c + k * page), target) << "page " << k;
  // Partial pages stay: they may hold other buffers.
  EXPECT_EQ(corun::numa::move_to_node(c + 100, 16 * page - 200, nodes.front()), 14u);
  EXPECT_EQ(corun::numa::move_to_node(c + 100, page / 2, nodes.front()), 0u);
  EXPECT_THROW(corun::numa::move_to_node(c, page, 4096), corun::Error);
  std::free(p);
}

// CORUN_NUMA=interleave's page placement over this machine's nodes; skipped on one node (the development
// VM), where every page lands on node 0 whatever the code does.
TEST(NumaPages, InterleavesTheWholePagesOfABuffer) {
  const std::vector<int> nodes = machine_nodes();
  if (nodes.size() < 2) GTEST_SKIP() << "needs 2 NUMA nodes, this machine has " << nodes.size();
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* p = nullptr;
  ASSERT_EQ(posix_memalign(&p, page, 16 * page), 0);
  std::memset(p, 1, 16 * page);  // faulted in before, as Graph's zero-filled buffers are
  char* c = static_cast<char*>(p);
  EXPECT_EQ(corun::numa::interleave(c, 16 * page, nodes), 16u);
  for (size_t k = 0; k < 16; ++k) {
    const int node = corun::numa::node_of_page(c + k * page);
    EXPECT_NE(std::find(nodes.begin(), nodes.end(), node), nodes.end()) << "page " << k << " on node " << node;
  }
  EXPECT_EQ(corun::numa::interleave(c + 100, page / 2, nodes), 0u);  // no whole page inside
  EXPECT_THROW(corun::numa::interleave(c, page, {4096}), corun::Error);
  EXPECT_THROW(corun::numa::interleave(c, page, {}), corun::Error);
  std::free(p);
}
