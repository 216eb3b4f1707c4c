// corun::Config, the one place corun's CORUN_* variables are read: each is parsed strictly into its field
// (a malformed value is corun::Error naming the variable), the NUMA request and the grouping pass are built
// from the fields and the callers' defaults, and the plan step (apply_graph_passes) runs the passes the
// Config asks for, once per graph. No StarPU is started here.
#include <corun/engine.hpp>
#include <corun/models/wide_deep.hpp>

#include "common/error_matchers.hpp"
#include "engine/replicas.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace corun {
namespace {

const char* const kVariables[] = {
    "CORUN_SCHED",       "CORUN_KERNELS",        "CORUN_QUIET",         "CORUN_EXECUTORS",        "CORUN_PROFILE",
    "CORUN_FIXED_WIDTH", "CORUN_WIDTH_INTERVAL", "CORUN_DETERMINISTIC", "CORUN_SCHEDULE",         "CORUN_VERBOSE",
    "CORUN_NUMA",        "CORUN_REPLICAS",       "CORUN_PARALLEL_OPS",  "CORUN_PARALLEL_OPS_MIN", "CORUN_CGROUP_ROOT",
    "CORUN_SERVE_PLANS", "CORUN_TEST_PAUSE_IN_CHECKPOINT", "CORUN_COTENANCY", "CORUN_TEST_GRACE_SECONDS",
    "CORUN_CPF_MERGE",   "STARPU_CALIBRATE"};

// Every test starts and ends with none of Config's variables set.
class ConfigFromEnv : public ::testing::Test {
 protected:
  void SetUp() override { clear(); }
  void TearDown() override { clear(); }
  static void clear() {
    for (const char* v : kVariables) unsetenv(v);
  }
};

TEST_F(ConfigFromEnv, UnsetMeansTheDefaults) {
  const Config c = Config::from_env();
  EXPECT_EQ(c.policy, "");
  EXPECT_FALSE(c.ref_kernels);
  EXPECT_FALSE(c.quiet);
  EXPECT_EQ(c.numa, Config::NumaMode::unset);
  EXPECT_EQ(c.replicas, 0);
  EXPECT_FALSE(c.parallel_ops.has_value());
  EXPECT_EQ(c.parallel_ops_min, 2);
  EXPECT_EQ(c.cgroup_root, "");
  EXPECT_EQ(c.test_pause_in_checkpoint, "");
  EXPECT_FALSE(c.fuse_elementwise);
  EXPECT_FALSE(c.replicate_by_default);
}

TEST_F(ConfigFromEnv, EveryVariableLandsInItsField) {
  setenv("CORUN_SCHED", "cpf", 1);
  setenv("CORUN_KERNELS", "ref", 1);
  setenv("CORUN_QUIET", "1", 1);
  setenv("CORUN_EXECUTORS", "2x1", 1);
  setenv("CORUN_PROFILE", "p.txt", 1);
  setenv("CORUN_FIXED_WIDTH", "2", 1);
  setenv("CORUN_WIDTH_INTERVAL", "3", 1);
  setenv("CORUN_DETERMINISTIC", "1", 1);
  setenv("CORUN_SCHEDULE", "s.sched", 1);
  setenv("CORUN_VERBOSE", "sched", 1);
  setenv("CORUN_NUMA", "replicate", 1);
  setenv("CORUN_REPLICAS", "4", 1);
  setenv("CORUN_PARALLEL_OPS", "off", 1);
  setenv("CORUN_PARALLEL_OPS_MIN", "5", 1);
  setenv("CORUN_CGROUP_ROOT", "/tmp/cg", 1);
  setenv("CORUN_SERVE_PLANS", "/tmp/plans", 1);
  setenv("CORUN_TEST_PAUSE_IN_CHECKPOINT", "prune", 1);
  EXPECT_TRUE(Config::from_env().cotenancy);  // unset: auto
  EXPECT_TRUE(Config::from_env().cpf_merge);  // unset: auto
  EXPECT_EQ(Config::from_env().test_grace_seconds, 0);
  setenv("CORUN_COTENANCY", "off", 1);
  setenv("CORUN_CPF_MERGE", "off", 1);
  setenv("CORUN_TEST_GRACE_SECONDS", "2", 1);
  const Config c = Config::from_env();
  EXPECT_FALSE(c.cotenancy);
  EXPECT_FALSE(c.cpf_merge);
  EXPECT_EQ(c.test_grace_seconds, 2);
  EXPECT_EQ(c.policy, "cpf");
  EXPECT_TRUE(c.ref_kernels);
  EXPECT_TRUE(c.quiet);
  EXPECT_EQ(c.executors, "2x1");
  EXPECT_EQ(c.profile, "p.txt");
  EXPECT_EQ(c.fixed_width, 2);
  EXPECT_EQ(c.width_interval, 3);
  EXPECT_TRUE(c.deterministic);
  EXPECT_EQ(c.schedule, "s.sched");
  EXPECT_TRUE(c.verbose_sched);
  EXPECT_EQ(c.numa, Config::NumaMode::replicate);
  EXPECT_EQ(c.replicas, 4);
  ASSERT_TRUE(c.parallel_ops.has_value());
  EXPECT_FALSE(*c.parallel_ops);
  EXPECT_EQ(c.parallel_ops_min, 5);
  EXPECT_EQ(c.serve_plans, "/tmp/plans");
  EXPECT_EQ(c.cgroup_root, "/tmp/cg");
  EXPECT_EQ(c.test_pause_in_checkpoint, "prune");
  setenv("CORUN_NUMA", "interleave", 1);
  EXPECT_EQ(Config::from_env().numa, Config::NumaMode::interleave);
  setenv("CORUN_NUMA", "off", 1);
  EXPECT_EQ(Config::from_env().numa, Config::NumaMode::off);
}

TEST_F(ConfigFromEnv, MalformedValuesNameTheVariable) {
  const std::vector<std::pair<const char*, const char*>> bad = {
      {"CORUN_NUMA", "auto"},          {"CORUN_REPLICAS", "0"},         {"CORUN_REPLICAS", "2x"},
      {"CORUN_PARALLEL_OPS", "maybe"}, {"CORUN_PARALLEL_OPS_MIN", "1"}, {"CORUN_PARALLEL_OPS_MIN", "two"},
      {"CORUN_KERNELS", "turbo"},      {"CORUN_QUIET", "yes"},          {"CORUN_FIXED_WIDTH", "0"},
      {"CORUN_TEST_PAUSE_IN_CHECKPOINT", "sometimes"}, {"CORUN_COTENANCY", "on"},
      {"CORUN_TEST_GRACE_SECONDS", "0"}, {"CORUN_CPF_MERGE", "on"}};
  for (const auto& [name, value] : bad) {
    setenv(name, value, 1);
    EXPECT_CORUN_ERROR(Config::from_env(), Status::invalid_config, name, value);
    unsetenv(name);
  }
  setenv("CORUN_NUMA", "", 1);  // set but empty counts as unset
  EXPECT_EQ(Config::from_env().numa, Config::NumaMode::unset);
}

TEST_F(ConfigFromEnv, TheVariableBeatsTheCommandsGroupingDefault) {
  Config c = Config::from_env();
  EXPECT_FALSE(c.grouping().enabled);  // the library's default
  c.parallel_ops_by_default = true;    // corun infer's
  EXPECT_TRUE(c.grouping().enabled);
  setenv("CORUN_PARALLEL_OPS", "off", 1);
  setenv("CORUN_PARALLEL_OPS_MIN", "3", 1);
  Config off = Config::from_env();
  off.parallel_ops_by_default = true;
  EXPECT_FALSE(off.grouping().enabled);
  EXPECT_EQ(off.grouping().min_size, 3);
  setenv("CORUN_PARALLEL_OPS", "on", 1);
  EXPECT_TRUE(Config::from_env().grouping().enabled);
}

// CORUN_PARALLEL_OPS=auto, and corun train's default: the pass decides each group by the per-width models;
// a group the models know nothing about gets the command's default. on = every group, off = none.
TEST_F(ConfigFromEnv, AutoGroupingDecidesByTheModels) {
  Config train = Config::from_env();
  train.parallel_ops_auto_by_default = true;
  EXPECT_TRUE(train.grouping().enabled);
  EXPECT_TRUE(train.grouping().by_models);
  EXPECT_FALSE(train.grouping().when_unknown);
  EXPECT_STREQ(train.grouping().mode(), "auto");
  setenv("CORUN_PARALLEL_OPS", "auto", 1);
  Config c = Config::from_env();
  EXPECT_TRUE(c.parallel_ops_auto);
  EXPECT_FALSE(c.parallel_ops.has_value());
  c.parallel_ops_by_default = true;
  EXPECT_TRUE(c.grouping().by_models);
  EXPECT_TRUE(c.grouping().when_unknown);
  setenv("CORUN_PARALLEL_OPS", "on", 1);
  train = Config::from_env();
  train.parallel_ops_auto_by_default = true;
  EXPECT_FALSE(train.grouping().by_models);
  EXPECT_STREQ(train.grouping().mode(), "on");
  setenv("CORUN_PARALLEL_OPS", "off", 1);
  train = Config::from_env();
  train.parallel_ops_auto_by_default = true;
  EXPECT_STREQ(train.grouping().mode(), "off");
  setenv("CORUN_VERBOSE", "passes", 1);
  EXPECT_TRUE(Config::from_env().verbose_passes);
  EXPECT_FALSE(Config::from_env().verbose_sched);
  setenv("CORUN_VERBOSE", "all", 1);
  EXPECT_TRUE(Config::from_env().verbose_passes && Config::from_env().verbose_sched);
}

TEST_F(ConfigFromEnv, NumaRequestComesFromTheFields) {
  Config c;
  numa::Request r = engine::numa_request(c);
  EXPECT_FALSE(r.mode_given);
  EXPECT_EQ(r.replicas, 0);
  EXPECT_FALSE(r.replicate_by_default);
  c.numa = Config::NumaMode::replicate;
  c.replicas = 3;
  c.replicate_by_default = true;
  r = engine::numa_request(c);
  EXPECT_TRUE(r.mode_given);
  EXPECT_EQ(r.mode, numa::Mode::replicate);
  EXPECT_EQ(r.replicas, 3);
  EXPECT_TRUE(r.replicate_by_default);
  c.numa = Config::NumaMode::interleave;
  EXPECT_EQ(engine::numa_request(c).mode, numa::Mode::interleave);
  c.numa = Config::NumaMode::off;
  EXPECT_EQ(engine::numa_request(c).mode, numa::Mode::off);
  EXPECT_TRUE(engine::numa_request(c).mode_given);
}

// The lower layers take what Config says, not the environment: a variable set after from_env() changes
// nothing in the plan made from that Config.
TEST_F(ConfigFromEnv, TheReplicaPlanReadsTheConfigNotTheEnvironment) {
  setenv("HWLOC_SYNTHETIC", "pack:2 numa:1 core:2 pu:1", 1);
  Config c = Config::from_env();
  setenv("CORUN_REPLICAS", "3", 1);
  setenv("CORUN_NUMA", "interleave", 1);
  EXPECT_EQ(engine::plan_numa_only({}, engine::numa_request(c)).replicas.size(), 1u);
  c.replicas = 2;
  EXPECT_EQ(engine::plan_numa_only({}, engine::numa_request(c)).replicas.size(), 2u);
  unsetenv("HWLOC_SYNTHETIC");
}

models::WideDeepConfig small_wide_deep() {
  models::WideDeepConfig cfg;
  cfg.batch = 1;
  cfg.vocab = 100;  // the passes look at the structure only
  return cfg;
}

TEST(PlanStep, GroupsAsConfigSaysOncePerGraph) {
  models::WideDeep m(small_wide_deep(), /*training=*/false);
  Config c;
  c.parallel_ops_by_default = true;
  const GraphPassReport r = apply_graph_passes(m.graph, c);
  EXPECT_TRUE(r.grouping.enabled);
  EXPECT_EQ(r.fused_nodes, 0);
  EXPECT_EQ(r.nodes_before, 38);
  EXPECT_EQ(r.nodes_after, 13);
  EXPECT_EQ(m.graph.num_nodes(), 13);
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_EQ(r.groups[0].kind, "embedding");
  EXPECT_EQ(r.groups[0].pattern, "between");
  EXPECT_EQ(r.groups[0].members, 26);
  EXPECT_FALSE(r.groups[0].first_member.empty());
  // Again (as the engine does when it binds the graph): nothing left to do.
  const GraphPassReport again = apply_graph_passes(m.graph, c);
  EXPECT_TRUE(again.groups.empty());
  EXPECT_EQ(again.nodes_before, 13);
  EXPECT_EQ(again.nodes_after, 13);
}

TEST(PlanStep, NothingAskedNothingDone) {
  models::WideDeep m(small_wide_deep(), /*training=*/false);
  const GraphPassReport r = apply_graph_passes(m.graph, Config{});
  EXPECT_FALSE(r.grouping.enabled);
  EXPECT_TRUE(r.groups.empty());
  EXPECT_EQ(r.nodes_before, 38);
  EXPECT_EQ(r.nodes_after, 38);
}

// Fusion first, then grouping; a fused or grouped graph refuses backward(), a graph the grouping pass found
// nothing in does not.
TEST(PlanStep, FusionThenGroupingAndBackwardAfterwards) {
  Graph g;
  const Tensor w = g.param("w", {2, 4});
  const auto parts = g.split(w, 0, {1, 1});
  const Tensor loss = g.reduce_sum(g.concat({g.relu(parts[0]), g.relu(parts[1])}, 0));
  Config c;
  c.parallel_ops = true;
  c.parallel_ops_min = 3;  // two relus: no group
  EXPECT_TRUE(apply_graph_passes(g, c).groups.empty());
  g.backward(loss);  // still allowed: no pass changed the graph
  Graph h;
  const auto hp = h.split(h.param("w", {2, 4}), 0, {1, 1});
  const Tensor hl = h.reduce_sum(h.concat({h.relu(hp[0]), h.relu(hp[1])}, 0));
  c.parallel_ops_min = 2;
  const GraphPassReport r = apply_graph_passes(h, c);
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_EQ(r.groups[0].kind, "relu");
  EXPECT_THROW(h.backward(hl), Error);

  Graph f;
  const Tensor x = f.input("x", {4, 4});
  const Tensor y = f.relu(f.tanh(f.sigmoid(x)));
  f.keep(y);
  Config fuse;
  fuse.fuse_elementwise = true;
  const GraphPassReport fr = apply_graph_passes(f, fuse);
  EXPECT_EQ(fr.fused_nodes, 2);
  EXPECT_EQ(fr.nodes_before - fr.nodes_after, 2);
  EXPECT_EQ(apply_graph_passes(f, fuse).fused_nodes, 0);  // once per graph
}

// CORUN_CONV_KERNEL (issue 18): the convolutions' fast kernels, auto by default.
TEST_F(ConfigFromEnv, ConvKernelChoice) {
  unsetenv("CORUN_CONV_KERNEL");
  EXPECT_EQ(Config::from_env().conv_kernel, "auto");
  for (const char* v : {"auto", "dnnl", "direct", "im2col"}) {
    setenv("CORUN_CONV_KERNEL", v, 1);
    EXPECT_EQ(Config::from_env().conv_kernel, v);
  }
  setenv("CORUN_CONV_KERNEL", "onednn", 1);
  EXPECT_CORUN_ERROR(Config::from_env(), Status::invalid_config, "CORUN_CONV_KERNEL", "onednn");
  unsetenv("CORUN_CONV_KERNEL");
}

// Issue 52: under load the co-tenancy governor narrowed the width-2 calibration of docs/simulation.md
// (STARPU_CALIBRATE=1 CORUN_SCHED=cpf CORUN_EXECUTORS=1x2) to width 1: calibration keeps its widths.
TEST_F(ConfigFromEnv, CalibrationRunsKeepTheirWidths) {
  setenv("STARPU_CALIBRATE", "0", 1);
  EXPECT_TRUE(Config::from_env().cotenancy);
  for (const char* calibrate : {"1", "2"}) {
    setenv("STARPU_CALIBRATE", calibrate, 1);
    EXPECT_FALSE(Config::from_env().cotenancy) << "STARPU_CALIBRATE=" << calibrate;
    setenv("CORUN_COTENANCY", "auto", 1);
    EXPECT_FALSE(Config::from_env().cotenancy) << "STARPU_CALIBRATE=" << calibrate << " CORUN_COTENANCY=auto";
    unsetenv("CORUN_COTENANCY");
  }
}

}  // namespace
}  // namespace corun
