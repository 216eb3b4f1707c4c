// NUMA replicas (docs/numa.md; NUMA-Caffe, seed 004): N replicas over batch B give the update of one solver over
// batch B (its Theorem 4.1), the replicas stay equal after each step, the tensors of a replica live on its
// domain (remote bytes are only the tree reduction and the parameter copies), and bad uses are clear errors.
// Replica counts beyond this machine's cores run on hwloc synthetic topologies (HWLOC_SYNTHETIC).
#include "engine_test_util.hpp"

#include <corun/models/lstm.hpp>

#include "graphs/graph_impl.hpp"

#include <starpu.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace corun::test {
namespace {

constexpr float kLearningRate = 0.5f;

models::LstmConfig lstm(int batch, bool sgd) {
  models::LstmConfig c;
  c.layers = 2;
  c.batch = batch;
  c.seq = 4;
  c.hidden = 16;
  c.input = 12;
  c.classes = 5;
  c.learning_rate = kLearningRate;
  c.sgd_update = sgd;
  return c;
}

// Rows [begin, end) of a row-major [rows, cols] block.
std::vector<float> rows(const std::vector<float>& m, int cols, int begin, int end) {
  return {m.begin() + static_cast<long>(begin) * cols, m.begin() + static_cast<long>(end) * cols};
}

// Parameters after `steps` steps of one solver over the whole batch.
std::vector<std::vector<float>> one_solver(int batch, int steps) {
  ScopedEnv no_replicas("CORUN_REPLICAS", nullptr);
  ScopedEnv no_numa("CORUN_NUMA", nullptr);
  const auto cfg = lstm(batch, true);
  models::Lstm m(cfg);
  m.init_params();
  const models::SequenceTask task(cfg);
  Engine eng(test_config("eager"));
  std::vector<std::vector<float>> xs;
  std::vector<float> targets;
  for (int it = 0; it < steps; ++it) {
    task.make_batch(static_cast<uint64_t>(it), xs, targets);
    for (int t = 0; t < cfg.seq; ++t) eng.write(m.graph, m.x[static_cast<size_t>(t)], xs[static_cast<size_t>(t)]);
    eng.write(m.graph, m.targets, targets);
    eng.run(m.graph);
  }
  std::vector<std::vector<float>> out;
  for (Tensor p : m.graph.params()) out.push_back(eng.read(m.graph, p));
  eng.release(m.graph);
  return out;
}

struct ReplicatedRun {
  std::vector<std::vector<std::vector<float>>> params;  // [replica][parameter]
  std::vector<RunStats> steps;
  EngineInfo info;
  double param_bytes = 0;  // one replica's parameters
};

// `steps` steps of `n` replicas (CORUN_REPLICAS=n, or the plan the environment gives when n = 0), each over
// batch / n rows of the same batches.
ReplicatedRun replicated(int batch, int n, int steps, const std::string& policy = "eager") {
  ScopedEnv replicas("CORUN_REPLICAS", n > 0 ? std::to_string(n).c_str() : nullptr);
  std::vector<models::Lstm> models;  // declared first: the engine lets go of the graphs before they die
  Engine eng(test_config(policy));
  const int count = eng.info().replicas;
  EXPECT_TRUE(n == 0 || count == n);
  const auto full = lstm(batch, true);
  const models::SequenceTask task(full);
  models.reserve(static_cast<size_t>(count));
  for (int r = 0; r < count; ++r) {
    models.emplace_back(lstm(batch / count, false));
    models.back().init_params();  // same seed: every replica starts from the same parameters
  }
  std::vector<Graph*> graphs;
  for (auto& m : models) graphs.push_back(&m.graph);
  ReplicatedRun out;
  std::vector<std::vector<float>> xs;
  std::vector<float> targets;
  for (int it = 0; it < steps; ++it) {
    task.make_batch(static_cast<uint64_t>(it), xs, targets);
    for (int r = 0; r < count; ++r) {
      const int b0 = r * batch / count, b1 = (r + 1) * batch / count;
      auto& m = models[static_cast<size_t>(r)];
      for (int t = 0; t < full.seq; ++t)
        eng.write(m.graph, m.x[static_cast<size_t>(t)], rows(xs[static_cast<size_t>(t)], full.input, b0, b1));
      eng.write(m.graph, m.targets, rows(targets, full.classes, b0, b1));
    }
    out.steps.push_back(eng.run_replicated(graphs, kLearningRate));
  }
  for (auto& m : models) {
    out.params.emplace_back();
    for (Tensor p : m.graph.params()) out.params.back().push_back(eng.read(m.graph, p));
  }
  for (const auto& p : out.params[0]) out.param_bytes += static_cast<double>(p.size() * sizeof(float));
  out.info = eng.info();
  for (auto& m : models) eng.release(m.graph);
  return out;
}

void expect_same_update(int n, const std::string& synthetic) {
  ScopedEnv topo("HWLOC_SYNTHETIC", synthetic.empty() ? nullptr : synthetic.c_str());
  ScopedEnv no_numa("CORUN_NUMA", nullptr);
  constexpr int kBatch = 8, kSteps = 2;
  const auto reference = one_solver(kBatch, kSteps);
  const ReplicatedRun run = replicated(kBatch, n, kSteps);
  ASSERT_EQ(run.params.size(), static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) {
    ASSERT_EQ(run.params[r].size(), reference.size());
    for (size_t k = 0; k < reference.size(); ++k) {
      // The copies leave every replica bitwise equal to the root.
      EXPECT_TRUE(same_bits(run.params[r][k], run.params[0][k])) << "replica " << r << " parameter " << k;
      // N = 1 sums nothing: bitwise the one solver. Otherwise the batch's gradient is summed in another order.
      if (n == 1) {
        EXPECT_TRUE(same_bits(run.params[r][k], reference[k])) << "parameter " << k;
      } else {
        EXPECT_LT(relative_error(run.params[r][k], reference[k]), 1e-6) << "replica " << r << " parameter " << k;
      }
    }
  }
  for (const RunStats& s : run.steps) {
    EXPECT_EQ(s.remote_bytes, 0.0) << "one NUMA domain: nothing is remote";
    EXPECT_EQ(s.tasks_outside_replica, 0) << "every task runs on its replica's workers";
  }
}

TEST(Replicas, OneReplicaIsTheOneSolverBitwise) { expect_same_update(1, ""); }
TEST(Replicas, TwoReplicasGiveTheOneSolverUpdate) { expect_same_update(2, ""); }
TEST(Replicas, FourReplicasGiveTheOneSolverUpdate) { expect_same_update(4, "pack:1 numa:1 core:4 pu:1"); }

TEST(Replicas, CpfRunsOneContextPerReplica) {
  ScopedEnv no_numa("CORUN_NUMA", nullptr);
  const auto reference = one_solver(8, 1);
  const ReplicatedRun run = replicated(8, 2, 1, "cpf");
  for (size_t k = 0; k < reference.size(); ++k) EXPECT_LT(relative_error(run.params[1][k], reference[k]), 1e-6);
}

// Two domains of one core (fake): each replica's tensors are homed on its own domain, so the only bytes read
// across domains are the child's gradients (one tree edge) and the root's parameters (one copy).
TEST(Replicas, RemoteBytesAreOnlyTheReductionAndTheCopies) {
  ScopedEnv topo("HWLOC_SYNTHETIC", "pack:2 numa:1 core:1 pu:1");
  ScopedEnv numa("CORUN_NUMA", "replicate");
  ScopedEnv ncpu("STARPU_NCPU", nullptr);
  const ReplicatedRun run = replicated(8, 0, 2);
  ASSERT_EQ(run.info.replicas, 2);
  for (const RunStats& s : run.steps) {
    EXPECT_EQ(s.remote_bytes, 2 * run.param_bytes);  // counted by the memory node each task really ran on
    EXPECT_EQ(s.tasks_outside_replica, 0) << "every task runs on its replica's workers";
  }
}

TEST(Replicas, FourDomainsReduceAlongTheTree) {
  if (STARPU_MAXNUMANODES < 4) GTEST_SKIP() << "this StarPU has STARPU_MAXNUMANODES " << STARPU_MAXNUMANODES;
  ScopedEnv topo("HWLOC_SYNTHETIC", "pack:4 numa:1 core:2 pu:1");
  ScopedEnv numa("CORUN_NUMA", "replicate");
  const ReplicatedRun run = replicated(8, 0, 1);
  ASSERT_EQ(run.info.replicas, 4);
  // Binary tree over 4 replicas: 3 edges, each a gradient read from another domain, and 3 parameter copies.
  for (const RunStats& s : run.steps) {
    EXPECT_EQ(s.remote_bytes, 6 * run.param_bytes);
    EXPECT_EQ(s.tasks_outside_replica, 0) << "every task runs on its replica's workers";
  }
  for (int r = 1; r < 4; ++r)
    for (size_t k = 0; k < run.params[0].size(); ++k) EXPECT_TRUE(same_bits(run.params[r][k], run.params[0][k]));
}

TEST(Replicas, BadUsesAreClearErrors) {
  ScopedEnv no_numa("CORUN_NUMA", nullptr);
  {
    ScopedEnv replicas("CORUN_REPLICAS", "2");
    Engine eng(test_config("eager"));
    models::Lstm with_sgd(lstm(4, true));
    models::Lstm other(lstm(4, false));
    EXPECT_CORUN_ERROR(eng.run(other.graph), Status::invalid_config, "run_replicated");
    EXPECT_CORUN_ERROR(eng.run_replicated({&other.graph}, 0.1f), Status::invalid_argument, "1 graphs for the 2 replicas");
    EXPECT_CORUN_ERROR(eng.run_replicated({&other.graph, &other.graph}, 0.1f), Status::invalid_argument, "same graph");
    EXPECT_CORUN_ERROR(eng.run_replicated({&other.graph, &with_sgd.graph}, 0.1f), Status::invalid_argument,
                       "sgd_update = false");
    models::Lstm second(lstm(4, false));
    EXPECT_CORUN_ERROR(eng.run_replicated({&other.graph, &second.graph}, 0.0f), Status::invalid_argument,
                       "learning rate");
  }
  {
    ScopedEnv replicas("CORUN_REPLICAS", "2");
    EXPECT_CORUN_ERROR(Engine(test_config("pheft")), Status::invalid_config,
                       "does not support one scheduling context per replica");
    models::Lstm a(lstm(4, false)), b(lstm(4, false));
    EXPECT_CORUN_ERROR(Engine(test_config("corun")).run_replicated({&a.graph, &b.graph}, 0.1f), Status::invalid_config,
                       "corun policy");
  }
}

// Bytes every run of `g` reads (the R and RW buffers of its nodes).
// Bytes node i reads (its R and RW buffers), by node index.
std::vector<double> node_reads(Graph& g) {
  const auto& im = g.impl();
  std::vector<double> out;
  for (const auto& node : im.nodes) {
    double bytes = 0;
    for (size_t b = 0; b < node.buffers.size(); ++b)
      if (node.call.modes[b] != codelets::Access::write)
        bytes += static_cast<double>(im.values[static_cast<size_t>(node.buffers[b])].shape.numel()) * sizeof(float);
    out.push_back(bytes);
  }
  return out;
}

double bytes_read(Graph& g) {
  double bytes = 0;
  for (double b : node_reads(g)) bytes += b;
  return bytes;
}

// One solver over `domains` synthetic domains (CORUN_NUMA=off or interleave): the remote bytes of each step.
// `expected_off`, when given: traced runs, and for each step the reads of the tasks the timeline shows on a
// worker of another domain than the main thread's (domain 0 of a fake topology: worker w >= workers / 2 of
// two one-core domains).
std::vector<RunStats> one_solver_steps(const char* mode, const char* synthetic, int steps, double& reads,
                                       int& domains, std::vector<double>* expected_off = nullptr) {
  ScopedEnv topo("HWLOC_SYNTHETIC", synthetic);
  ScopedEnv numa("CORUN_NUMA", mode);
  ScopedEnv no_replicas("CORUN_REPLICAS", nullptr);
  ScopedEnv ncpu("STARPU_NCPU", nullptr);
  const auto cfg = lstm(8, true);
  models::Lstm m(cfg);
  m.init_params();
  const models::SequenceTask task(cfg);
  Engine eng(test_config("eager"));
  domains = eng.info().numa_domains;
  EXPECT_EQ(eng.info().replicas, 1);
  if (expected_off) eng.set_tracing(true);
  const std::vector<double> per_node = node_reads(m.graph);
  std::vector<std::vector<float>> xs;
  std::vector<float> targets;
  std::vector<RunStats> out;
  for (int it = 0; it < steps; ++it) {
    task.make_batch(static_cast<uint64_t>(it), xs, targets);
    for (int t = 0; t < cfg.seq; ++t) eng.write(m.graph, m.x[static_cast<size_t>(t)], xs[static_cast<size_t>(t)]);
    eng.write(m.graph, m.targets, targets);
    out.push_back(eng.run(m.graph));
    if (expected_off) {
      const auto& tasks = eng.trace();  // the last run's tasks, in node order
      EXPECT_EQ(tasks.size(), per_node.size());
      double remote = 0;
      for (size_t i = 0; i < tasks.size() && i < per_node.size(); ++i)
        if (!tasks[i].cores.empty() && tasks[i].cores[0] >= eng.info().workers / 2) remote += per_node[i];
      expected_off->push_back(remote);
    }
  }
  reads = bytes_read(m.graph);
  eng.release(m.graph);
  return out;
}

// Interleaved pages: every read has the chance (D - 1) / D of being remote, whoever runs the task.
TEST(OneSolverNuma, InterleaveCountsTheExpectedRemoteShare) {
  double reads = 0;
  int domains = 0;
  const auto steps = one_solver_steps("interleave", "pack:2 numa:1 core:1 pu:1", 2, reads, domains);
  ASSERT_EQ(domains, 2);
  ASSERT_GT(reads, 0);
  for (const RunStats& s : steps) EXPECT_EQ(s.remote_bytes, reads / 2);
}

// NUMA-oblivious: every tensor lives on the main thread's domain (node 0 of a fake topology), so the reads of
// the tasks a domain-1 worker ran are remote. Which worker runs what is up to the scheduler, so the count is
// checked against the traced timeline (the recorder's path), and the completion-callback path (untraced runs)
// within its bounds: at most every read. On one domain the engine counts nothing.
TEST(OneSolverNuma, OffCountsTheReadsOfTasksRunOnAnotherDomain) {
  double reads = 0;
  int domains = 0;
  std::vector<double> expected;
  const auto traced = one_solver_steps("off", "pack:2 numa:1 core:1 pu:1", 3, reads, domains, &expected);
  ASSERT_EQ(domains, 2);
  ASSERT_EQ(expected.size(), traced.size());
  for (size_t i = 0; i < traced.size(); ++i) EXPECT_EQ(traced[i].remote_bytes, expected[i]) << "step " << i;
  const auto steps = one_solver_steps("off", "pack:2 numa:1 core:1 pu:1", 3, reads, domains);
  for (const RunStats& s : steps) {
    EXPECT_GE(s.remote_bytes, 0);
    EXPECT_LE(s.remote_bytes, reads);
  }
  const auto single = one_solver_steps("off", "pack:1 numa:1 core:2 pu:1", 1, reads, domains);
  EXPECT_EQ(domains, 1);
  EXPECT_EQ(single[0].remote_bytes, 0);
}

}  // namespace
}  // namespace corun::test
