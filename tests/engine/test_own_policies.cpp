// corun's own policies (cpf, fifo) under several executor layouts: the contract every policy must keep
// (every node runs once, after its predecessors, on a team no wider than allowed, with the same bits as
// eager), plus what only our policies have: layouts, per-width models, the lower bound and model files.
#include "engine_test_util.hpp"
#include "lstm_training.hpp"
#include "policy_lists.hpp"

#include <corun/engine.hpp>
#include <corun/machine.hpp>
#include <corun/models/lstm.hpp>

#include "codelets/work_items.hpp"
#include "graphs/passes/levels.hpp"
#include "sched/planner/cpf_planner.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace corun {
namespace {

using test::ScopedEnv;

struct Variant {
  std::string name, policy, executors;
  int fixed_width = 0;
  std::string idle_naps = "auto";  // "always": idle workers nap whenever idle (sched/planner/idle_nap.hpp)
};

// ctest shows the parameter: print the variant, not its bytes.
void PrintTo(const Variant& v, std::ostream* os) {
  *os << v.policy << " executors=" << (v.executors.empty() ? "default" : v.executors) << " fixed_width=" << v.fixed_width
      << " idle_naps=" << v.idle_naps;
}

std::vector<Variant> variants() {
  const int w = std::max(1, test::expected_workers(-1));
  const std::string all = "1x" + std::to_string(w);
  std::vector<Variant> v = {
      {"cpf_default", "cpf", "", 0},           // one executor per core
      {"cpf_one_team", "cpf", all, 0},         // one executor of all cores: teams, model-chosen widths
      {"cpf_all_wide", "cpf", all, w},         // every op at full width ("sequential" in the benchmark)
      {"fifo_default", "fifo", "", 0},
      {"fifo_one_team_wide", "fifo", all, w},
      {"corun_default", "corun", "", 0},       // width search, then packing at per-op widths
      {"corun_all_wide", "corun", "", w},      // every op at full width
      // Idle workers that sleep instead of spinning (as on shared cores, issue 52 item 8): every task still
      // runs, woken by its placement, with the same bits.
      {"cpf_naps", "cpf", "", 0, "always"},
      {"cpf_one_team_naps", "cpf", all, 0, "always"},
      {"corun_naps", "corun", "", 0, "always"},
  };
  if (w >= 4 && w % 2 == 0) v.push_back({"cpf_pairs_wide", "cpf", std::to_string(w / 2) + "x2", 2});
  return v;
}

models::LstmConfig small_config() {
  models::LstmConfig cfg;
  cfg.layers = 2, cfg.batch = 8, cfg.seq = 3, cfg.hidden = 16, cfg.input = 16, cfg.classes = 10;
  return cfg;
}

using Result = test::LstmRun;

Result run(const Config& conf, const models::LstmConfig& cfg, int iters, bool trace_last) {
  return test::train_lstm(conf, cfg, iters, trace_last);
}

Config config_of(const Variant& v) {
  Config c = test::test_config(v.policy);
  c.executors = v.executors;
  c.fixed_width = v.fixed_width;
  c.idle_naps = v.idle_naps;
  return c;
}

using test::same_bits;

class OwnPolicy : public ::testing::TestWithParam<Variant> {};

TEST_P(OwnPolicy, KeepsTheContractAndComputesEagersBits) {
  const Variant& v = GetParam();
  const auto cfg = small_config();
  const Result ref = run(test::test_config("eager"), cfg, 3, false);
  const Result got = run(config_of(v), cfg, 3, true);
  EXPECT_EQ(got.info.policy, v.policy);
  ASSERT_EQ(got.losses.size(), ref.losses.size());
  for (size_t i = 0; i < ref.losses.size(); ++i) EXPECT_TRUE(same_bits({ref.losses[i]}, {got.losses[i]})) << "step " << i;
  for (size_t p = 0; p < ref.params.size(); ++p) EXPECT_TRUE(same_bits(ref.params[p], got.params[p])) << "param " << p;

  // The timeline of the last step: one entry per node, each run on a team of distinct workers.
  models::Lstm shape(cfg, true);
  const auto& nodes = shape.graph.impl().nodes;
  ASSERT_EQ(got.trace.size(), nodes.size());
  // corun forms teams from all cores; the others from their executors.
  const int layout_width = v.policy == "corun"       ? got.info.workers
                           : v.executors.empty() ? 1
                                                 : std::stoi(v.executors.substr(v.executors.find('x') + 1));
  int wide = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const TraceTask& t = got.trace[i];
    EXPECT_EQ(t.node, nodes[i].name);
    ASSERT_EQ(static_cast<int>(t.cores.size()), t.width) << t.node;
    EXPECT_EQ(std::set<int>(t.cores.begin(), t.cores.end()).size(), t.cores.size()) << t.node;
    // cpf gives a lone task on an idle machine merged executors from executor 0 (CORUN_CPF_MERGE): whole
    // executors, at most every worker; every other task stays in its executor.
    if (v.policy == "cpf" && v.fixed_width == 0 && t.width > layout_width) {
      EXPECT_EQ(t.executor, 0) << t.node;
      EXPECT_EQ(t.width % layout_width, 0) << t.node;
      EXPECT_LE(t.width, got.info.workers) << t.node;
    } else {
      EXPECT_LE(t.width, layout_width) << t.node;
    }
    // Never wider than the op allows nor than its call has work items (codelets/work_items.hpp).
    const int usable = codelets::useful_width(nodes[i].call, codelets::op_info(nodes[i].call.kind).max_width);
    EXPECT_LE(t.width, usable) << t.node;
    EXPECT_GE(t.executor, 0) << t.node;
    EXPECT_LE(t.start_us, t.end_us) << t.node;
    if (v.fixed_width > 0) {
      const int want = std::min(v.fixed_width, usable);
      // The widest team width the executor offers that is not above `want`.
      int offered = 1;
      for (int w : sched::team_widths_of(layout_width))
        if (w <= want) offered = w;
      EXPECT_EQ(t.width, offered) << t.node;
    }
    wide += t.width > 1;
  }
  if (v.fixed_width > 1) {
    EXPECT_GT(wide, 0) << "no task ran on a team";
  }
  // Every dependency StarPU derives from the access modes was respected.
  const auto deps = graphs::dependencies(shape.graph.impl());
  for (size_t i = 0; i < nodes.size(); ++i)
    for (int32_t s : deps.successors[i])
      EXPECT_LE(got.trace[i].end_us, got.trace[static_cast<size_t>(s)].start_us)
          << nodes[i].name << " -> " << nodes[static_cast<size_t>(s)].name;
}

INSTANTIATE_TEST_SUITE_P(Variants, OwnPolicy, ::testing::ValuesIn(variants()),
                         [](const auto& p) { return p.param.name; });

TEST(OwnPolicyModels, CalibrateAndGiveALowerBound) {
  // History models need 10 samples per (op, shape, width) and drop the first: 20 steps calibrate every
  // node at width 1 (the default layout), including the ops that occur once per step.
  const Result r = run(test::test_config("cpf"), small_config(), 20, true);
  EXPECT_EQ(r.last.uncalibrated, 0);
  ASSERT_TRUE(std::isfinite(r.last.lower_bound_ms));
  EXPECT_GT(r.last.critical_path_ms, 0.0);
  EXPECT_LE(r.last.critical_path_ms, r.last.total_work_ms * (1 + 1e-9));
  EXPECT_DOUBLE_EQ(r.last.lower_bound_ms,
                   std::max(r.last.critical_path_ms, r.last.total_work_ms / r.last.bound_cores));
  int critical = 0;
  for (const auto& t : r.trace) {
    EXPECT_TRUE(std::isfinite(t.predicted_us)) << t.node;
    EXPECT_TRUE(std::isfinite(t.level_us)) << t.node;
    critical += t.critical;
  }
  EXPECT_GT(critical, 0);
}

TEST(OwnPolicyModels, CorruptModelFileIsMovedAsideNotFatal) {
  // The private STARPU_HOME of this process (engine_test_util.hpp); the key is the engine's default.
  const char* home = std::getenv("STARPU_HOME");
  ASSERT_NE(home, nullptr);
  const auto dir = std::filesystem::path(home) / ".starpu" / "sampling" / "codelets" / "45";
  std::filesystem::create_directories(dir);
  const auto bad = dir / ("corun_add." + machine::machine_key());
  std::ofstream(bad) << "##################\n# Performance Model Version\n45\n\ntruncated here";
  const Result r = run(test::test_config("cpf"), small_config(), 2, false);
  EXPECT_TRUE(std::isfinite(r.losses.back()));
  EXPECT_TRUE(std::filesystem::exists(bad.string() + ".corrupt"));
}

class OwnPolicyErrors : public ::testing::Test {
 protected:
  ScopedEnv corun_sched_{"CORUN_SCHED", nullptr};
  ScopedEnv starpu_sched_{"STARPU_SCHED", nullptr};
};

TEST_F(OwnPolicyErrors, LayoutSettingsNeedOneOfOurPolicies) {
  Config c = test::test_config("lws");
  c.executors = "1x1";
  EXPECT_CORUN_ERROR(Engine{c}, Status::invalid_config, "CORUN_EXECUTORS", "lws", "CORUN_SCHED=cpf");
  c.executors.clear();
  c.fixed_width = 2;
  EXPECT_CORUN_ERROR(Engine{c}, Status::invalid_config, "CORUN_FIXED_WIDTH");
}

TEST_F(OwnPolicyErrors, BadLayoutAndMissingProfile) {
  Config c = test::test_config("cpf");
  c.executors = "2by1";
  EXPECT_CORUN_ERROR(Engine{c}, Status::invalid_config, "CORUN_EXECUTORS='2by1'", "NxK");
  c.executors.clear();
  c.profile = "/nonexistent/corun-profile.txt";
  EXPECT_CORUN_ERROR(Engine{c}, Status::io_error, "/nonexistent/corun-profile.txt", "corun profile");
}

TEST_F(OwnPolicyErrors, StarpuSchedNamingABuiltinConflictsWithCpf) {
  ScopedEnv starpu("STARPU_SCHED", "eager");
  EXPECT_CORUN_ERROR(Engine{test::test_config("cpf")}, Status::invalid_config, "STARPU_SCHED", "cpf");
}

TEST_F(OwnPolicyErrors, LayoutWiderThanTheMachineIsClamped) {
  Config c = test::test_config("cpf");
  c.executors = "64x64";
  Engine e(c);
  const int w = e.info().workers;
  EXPECT_EQ(e.info().layout, "1x" + std::to_string(w));
  EXPECT_EQ(e.info().layout_source, "CORUN_EXECUTORS");
}

}  // namespace
}  // namespace corun
