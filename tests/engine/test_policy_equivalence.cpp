// Scheduling policies change where and when tasks run, never what they compute: dependencies come from
// access modes in node order, gradient sums have a fixed order, and kernels split outputs (never
// reductions) over a team, so every policy, with or without combined workers, gives the same bits.
//
// Also: the LSTM actually learns the synthetic task under every policy (the training loss falls).
#include "engine_test_util.hpp"
#include "lstm_training.hpp"

#include <corun/engine.hpp>
#include <corun/models/lstm.hpp>

#include "policy_lists.hpp"
#include "sched/registry.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

namespace corun {
namespace {

using models::LstmConfig;

using Trace = test::LstmRun;

// `iters` training steps under `policy` with `ncpus` workers (-1: STARPU_NCPU or all cores).
Trace train(const std::string& policy, const LstmConfig& cfg, int iters, int ncpus = -1) {
  Config conf = test::test_config(policy);
  conf.ncpus = ncpus;
  return test::train_lstm(conf, cfg, iters);
}

using test::same_bits;

// Small enough for an oversubscribed run (STARPU_NCPU=8 on 2 cores: ~200 tasks per step), with enough
// rows and columns (batch 8, 4 * hidden = 64 gate columns) that teams of up to 8 members all get work.
LstmConfig equivalence_config() {
  LstmConfig cfg;
  cfg.layers = 2, cfg.batch = 8, cfg.seq = 3, cfg.hidden = 16, cfg.input = 16, cfg.classes = 10;
  cfg.seed = 42;
  return cfg;
}

constexpr int kEquivalenceIters = 3;

// Training runs many more tasks than the equivalence check, and oversubscribed runs of the perfmodel and
// parallel policies cost milliseconds per task (measured with 3-4 workers on 2 cores: dmdas ~1.5 ms,
// pheft ~3 ms, peager ~5 ms per task, against ~20 us with one worker per core). So the learning test uses
// at most one worker per core (Config::ncpus beats STARPU_NCPU): it checks learning, not oversubscription.
// The equivalence check oversubscribes only the policies policy_lists.hpp allows to.
using test::one_per_core_workers;
using test::policy_workers;

class PolicyEquivalence : public ::testing::TestWithParam<std::string> {};

// Each policy against eager in the same process (engines one after another), so every test is
// self-contained when ctest runs it alone.
TEST_P(PolicyEquivalence, SameBitsAsEager) {
  const LstmConfig cfg = equivalence_config();
  const int workers = policy_workers(GetParam());
  const Trace ref = train("eager", cfg, kEquivalenceIters, workers);
  const Trace got = train(GetParam(), cfg, kEquivalenceIters, workers);
  EXPECT_EQ(got.info.policy, GetParam());
  ASSERT_EQ(ref.losses.size(), got.losses.size());
  for (size_t i = 0; i < ref.losses.size(); ++i) {
    EXPECT_TRUE(std::isfinite(ref.losses[i]));
    EXPECT_TRUE(same_bits({ref.losses[i]}, {got.losses[i]}))
        << "loss of step " << i << ": eager " << ref.losses[i] << ", " << GetParam() << " " << got.losses[i];
  }
  ASSERT_EQ(ref.params.size(), got.params.size());
  for (size_t p = 0; p < ref.params.size(); ++p) EXPECT_TRUE(same_bits(ref.params[p], got.params[p])) << "parameter #" << p;
  // The parameters did move (the comparison is not between two untouched initialisations).
  const Trace untrained = train("eager", cfg, 0);
  EXPECT_FALSE(same_bits(untrained.params[0], ref.params[0]));
  std::printf("  %s: %d workers, %d combined workers\n", got.info.policy.c_str(), got.info.workers,
              got.info.combined_workers);
}

// The excluded built-ins and their reasons: test::kBrokenBuiltins in policy_lists.hpp.
using test::builtin_names;
using test::kBrokenBuiltins;

TEST(KnownBrokenBuiltins, AreStillBuiltins) {
  // An exclusion only makes sense for a policy the library has; drop entries StarPU no longer ships.
  for (const auto& broken : kBrokenBuiltins) {
    bool found = false;
    for (const auto& [name, description] : sched::builtin_policies()) found = found || name == broken;
    EXPECT_TRUE(found) << broken << " is not a StarPU built-in any more: remove it from kBrokenBuiltins";
    std::printf("  excluded from the per-policy tests: %s\n", broken.c_str());
  }
}

INSTANTIATE_TEST_SUITE_P(Builtins, PolicyEquivalence, ::testing::ValuesIn(builtin_names(false)),
                         test::policy_test_name);

TEST(PolicyEquivalenceTeams, ParallelPoliciesFormTeams) {
  // pheft and peager only exercise the SPMD split when StarPU builds combined workers; on one core there
  // is nothing to check.
  const Trace tr = train("pheft", equivalence_config(), 1);
  if (tr.info.workers < 2) GTEST_SKIP() << "one CPU worker: no combined workers";
  EXPECT_GE(tr.info.combined_workers, 1) << "pheft with " << tr.info.workers << " workers built no team";
}

// ---- the loss falls under every policy ----

class LossFalls : public ::testing::TestWithParam<std::string> {};

TEST_P(LossFalls, UnderPolicy) {
  LstmConfig cfg;  // default learning rate and task; a reduced model
  cfg.layers = 2, cfg.batch = 16, cfg.seq = 8, cfg.hidden = 32, cfg.input = 32;
  constexpr int kIters = 40;
  const Trace tr = train(GetParam(), cfg, kIters, one_per_core_workers());
  ASSERT_EQ(tr.losses.size(), static_cast<size_t>(kIters));
  for (float l : tr.losses) ASSERT_TRUE(std::isfinite(l));
  const double first = std::accumulate(tr.losses.begin(), tr.losses.begin() + 5, 0.0) / 5.0;
  const double last = std::accumulate(tr.losses.end() - 5, tr.losses.end(), 0.0) / 5.0;
  std::printf("  %s: mean loss of the first 5 steps %.3f, of the last 5 %.3f\n", GetParam().c_str(), first, last);
  // Chance level for 10 classes is ln(10) = 2.30; a model that learns ends well below it.
  EXPECT_LT(last, 0.6 * first) << "the loss did not fall under " << GetParam();
}

INSTANTIATE_TEST_SUITE_P(Builtins, LossFalls, ::testing::ValuesIn(builtin_names(true)), test::policy_test_name);

}  // namespace
}  // namespace corun
