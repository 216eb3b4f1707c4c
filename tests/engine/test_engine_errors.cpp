// Engine configuration errors and the rules of binding a graph: every mistake is a corun::Error with the
// right status and a message that says how to fix it.
#include "engine_test_util.hpp"
#include "engine/blas.hpp"

#include <corun/engine.hpp>
#include <corun/graph.hpp>

#include <gtest/gtest.h>
#include <starpu.h>

#include <string>
#include <vector>

namespace corun {
namespace {

using test::contains;
using corun::testing::error_message;
using test::ScopedEnv;
using test::test_config;

// Every test controls the scheduler variables itself.
class EngineErrors : public ::testing::Test {
 protected:
  ScopedEnv corun_sched_{"CORUN_SCHED", nullptr};
  ScopedEnv starpu_sched_{"STARPU_SCHED", nullptr};
};

// A tiny graph: y = x * w + b, loss = mean of y's rows summed.
struct Tiny {
  Graph g;
  Tensor x, w, y, loss;
  Tiny() {
    x = g.input("x", {2, 3});
    w = g.param("w", {3, 2});
    y = g.add(g.matmul(x, w), g.param("b", {2}), "y");
    loss = g.sum(g.sum(y, 1), 0, 0.5f, "loss");
  }
};

TEST_F(EngineErrors, UnknownPolicyListsValidNames) {
  const std::string msg = error_message([] { Engine e(test_config("no-such-policy")); }, Status::invalid_config);
  EXPECT_TRUE(contains(msg, "no-such-policy"));
  for (const char* name : {"eager", "lws", "dmdas", "pheft", "peager"}) EXPECT_TRUE(contains(msg, name));
  EXPECT_TRUE(contains(msg, "CORUN_SCHED"));  // where the bad name came from
  // The failed constructor left no Engine behind: a good one can be created now.
  Engine ok(test_config("eager"));
  EXPECT_EQ(ok.info().policy, "eager");
}

TEST_F(EngineErrors, UnknownPolicyFromEnvironment) {
  ScopedEnv sched("CORUN_SCHED", "bogus");
  const std::string msg = error_message([] { Engine e(test_config()); }, Status::invalid_config);
  EXPECT_TRUE(contains(msg, "bogus"));
  EXPECT_TRUE(contains(msg, "eager"));
}

TEST_F(EngineErrors, UnknownPolicyFromStarpuSched) {
  ScopedEnv sched("STARPU_SCHED", "bogus");
  const std::string msg = error_message([] { Engine e(test_config()); }, Status::invalid_config);
  EXPECT_TRUE(contains(msg, "STARPU_SCHED"));
  EXPECT_TRUE(contains(msg, "bogus"));
}

TEST_F(EngineErrors, ConflictingCorunAndStarpuSched) {
  ScopedEnv starpu("STARPU_SCHED", "eager");
  const std::string msg = error_message([] { Engine e(test_config("lws")); }, Status::invalid_config);
  EXPECT_TRUE(contains(msg, "CORUN_SCHED"));
  EXPECT_TRUE(contains(msg, "STARPU_SCHED"));
  EXPECT_TRUE(contains(msg, "lws"));
  EXPECT_TRUE(contains(msg, "eager"));
}

TEST_F(EngineErrors, ConflictingVariablesBothFromEnvironment) {
  ScopedEnv corun("CORUN_SCHED", "dmdas");
  ScopedEnv starpu("STARPU_SCHED", "eager");
  const std::string msg = error_message([] { Engine e(test_config()); }, Status::invalid_config);
  EXPECT_TRUE(contains(msg, "CORUN_SCHED=dmdas"));
  EXPECT_TRUE(contains(msg, "STARPU_SCHED=eager"));
}

TEST_F(EngineErrors, EqualCorunAndStarpuSchedAreFine) {
  ScopedEnv corun("CORUN_SCHED", "lws");
  ScopedEnv starpu("STARPU_SCHED", "lws");
  Engine e(test_config());
  EXPECT_EQ(e.info().policy, "lws");
  EXPECT_EQ(e.info().policy_source, "CORUN_SCHED");
  EXPECT_FALSE(e.info().own_policy);
}

// An empty STARPU_SCHED counts as unset for corun; StarPU itself would look up the name "" and silently run
// lws while the engine reported the requested policy (bench/lstm_policies.sh set STARPU_SCHED= like this).
TEST_F(EngineErrors, EmptyStarpuSchedRunsTheRequestedPolicy) {
  ScopedEnv corun("CORUN_SCHED", "eager");
  ScopedEnv starpu("STARPU_SCHED", "");
  Engine e(test_config());
  EXPECT_EQ(e.info().policy, "eager");
  const starpu_sched_policy* running = starpu_sched_ctx_get_sched_policy(0);
  ASSERT_NE(running, nullptr);
  EXPECT_STREQ(running->policy_name, "eager") << "StarPU runs another policy than the one the engine reports";
}

TEST_F(EngineErrors, PolicySources) {
  {
    Engine e(test_config());
    EXPECT_EQ(e.info().policy_source, "default");
    EXPECT_FALSE(e.info().policy.empty());
  }
  {
    ScopedEnv starpu("STARPU_SCHED", "eager");
    Engine e(test_config());
    EXPECT_EQ(e.info().policy, "eager");
    EXPECT_EQ(e.info().policy_source, "STARPU_SCHED");
  }
}

TEST_F(EngineErrors, SchedHelpIsAnError) {
  ::testing::internal::CaptureStdout();
  const std::string msg = error_message([] { Engine e(test_config("help")); }, Status::invalid_config);
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_TRUE(contains(msg, "help"));
  EXPECT_TRUE(contains(out, "eager"));  // the list went to stdout
  Engine ok(test_config("eager"));       // and no Engine was left half-alive
}

TEST_F(EngineErrors, SecondLiveEngine) {
  Engine first(test_config("eager"));
  const std::string msg = error_message([] { Engine second(test_config("eager")); }, Status::invalid_config);
  EXPECT_TRUE(contains(msg, "Engine"));
  // The first one is unaffected.
  Tiny t;
  first.run(t.g);
  EXPECT_EQ(first.read(t.g, t.loss).size(), 1u);
  first.release(t.g);
}

TEST_F(EngineErrors, SequentialEnginesInOneProcess) {
  // StarPU is initialised and shut down once per Engine; engines one after another (with different
  // policies) work and compute the same numbers.
  std::vector<float> first;
  for (const char* policy : {"eager", "lws", "dmdas", "eager"}) {
    SCOPED_TRACE(policy);
    Tiny t;
    std::mt19937_64 rng(3);
    for (Tensor v : {t.x, t.w, t.g.find("b")}) test::fill_uniform(t.g, v, rng);
    Engine e(test_config(policy));
    EXPECT_EQ(e.info().policy, policy);
    e.run(t.g);
    const std::vector<float> y = e.read(t.g, t.y);
    if (first.empty()) first = y;
    EXPECT_EQ(y, first);
    e.release(t.g);
  }
}

TEST_F(EngineErrors, ExplicitNcpusBeatsStarpuNcpu) {
  // Config::ncpus >= 0 is the worker count, whatever STARPU_NCPU says (StarPU lets the variable win
  // unless told otherwise).
  ScopedEnv ncpu("STARPU_NCPU", "2");
  Config c = test_config("eager");
  c.ncpus = 1;
  Engine e(c);
  EXPECT_EQ(e.info().workers, 1);
}

TEST_F(EngineErrors, StarpuNcpuUsedByDefault) {
  ScopedEnv ncpu("STARPU_NCPU", "1");
  Engine e(test_config("eager"));  // ncpus = -1
  EXPECT_EQ(e.info().workers, 1);
}

TEST_F(EngineErrors, GraphDataOnBoundGraph) {
  Tiny t;
  Engine e(test_config("eager"));
  e.run(t.g);
  std::string msg = error_message([&] { t.g.data(t.w); }, Status::invalid_argument);
  EXPECT_TRUE(contains(msg, "'w'"));
  EXPECT_TRUE(contains(msg, "Engine::read"));
  const Graph& cg = t.g;
  msg = error_message([&] { cg.data(t.x); }, Status::invalid_argument);
  EXPECT_TRUE(contains(msg, "bound"));
  e.release(t.g);
}

TEST_F(EngineErrors, WriteBindsTheGraph) {  // the first read/write binds, not only run()
  Tiny t;
  Engine e(test_config("eager"));
  e.write(t.g, t.x, std::vector<float>(6, 1.0f));
  (void)error_message([&] { t.g.data(t.x); }, Status::invalid_argument);
  e.release(t.g);
  EXPECT_EQ(t.g.data(t.x)[5], 1.0f);
}

TEST_F(EngineErrors, WriteWithWrongCount) {
  Tiny t;
  Engine e(test_config("eager"));
  std::string msg = error_message([&] { e.write(t.g, t.x, std::vector<float>(5, 1.0f)); }, Status::invalid_argument);
  EXPECT_TRUE(contains(msg, "'x'"));
  EXPECT_TRUE(contains(msg, "5"));
  EXPECT_TRUE(contains(msg, "[2, 3]"));
  const std::vector<float> seven(7, 1.0f);
  msg = error_message([&] { e.write(t.g, t.x, seven.data(), seven.size()); }, Status::invalid_argument);
  EXPECT_TRUE(contains(msg, "7"));
  // Nothing was written.
  EXPECT_EQ(e.read(t.g, t.x), std::vector<float>(6, 0.0f));
  e.release(t.g);
}

TEST_F(EngineErrors, TensorOfAnotherGraph) {
  Tiny a, b;
  Engine e(test_config("eager"));
  (void)error_message([&] { e.read(a.g, b.x); }, Status::invalid_argument);
  (void)error_message([&] { e.write(a.g, Tensor(), std::vector<float>(6)); }, Status::invalid_argument);
  e.release(a.g);
  e.release(b.g);
}

TEST_F(EngineErrors, ReleaseRoundTrip) {
  Tiny t;
  const std::vector<float> x{1, 2, 3, 4, 5, 6};
  const std::vector<float> w{1, 0, 0, 1, 1, 1};  // y = [x0 + x2, x1 + x2] + b
  Engine e(test_config("eager"));
  e.write(t.g, t.x, x);
  e.write(t.g, t.w, w);
  e.run(t.g);
  EXPECT_EQ(e.read(t.g, t.y), (std::vector<float>{4, 5, 10, 11}));
  e.release(t.g);
  e.release(t.g);  // releasing an unbound graph is a no-op

  // Data is back in the graph's buffers and Graph::data works again.
  const float* y = t.g.data(t.y);
  EXPECT_EQ(std::vector<float>(y, y + 4), (std::vector<float>{4, 5, 10, 11}));
  EXPECT_EQ(std::vector<float>(t.g.data(t.x), t.g.data(t.x) + 6), x);
  std::fill_n(t.g.data(t.g.find("b")), 2, 0.5f);
  t.g.data(t.x)[0] = -1.0f;

  // Binding again picks up what was written through Graph::data.
  e.run(t.g);
  EXPECT_EQ(e.read(t.g, t.y), (std::vector<float>{2.5f, 5.5f, 10.5f, 11.5f}));
  EXPECT_EQ(e.read(t.g, t.loss), (std::vector<float>{15.0f}));
  e.release(t.g);
}

TEST_F(EngineErrors, ValuesAddedAfterFirstRunAreRegistered) {
  // backward() on a bound graph after a forward-only run adds values and nodes; the next run registers them.
  Tiny t;
  Engine e(test_config("eager"));
  e.write(t.g, t.x, std::vector<float>{1, 2, 3, 4, 5, 6});
  e.run(t.g);
  t.g.backward(t.loss, {.sgd_update = false});
  e.run(t.g);
  // loss = 0.5 * sum(x w + b): d/dw[k][j] = 0.5 * sum_rows x[r][k].
  EXPECT_EQ(e.read(t.g, t.g.grad(t.w)), (std::vector<float>{2.5f, 2.5f, 3.5f, 3.5f, 4.5f, 4.5f}));
  EXPECT_EQ(e.read(t.g, t.g.grad(t.g.find("b"))), (std::vector<float>{1.0f, 1.0f}));
  e.release(t.g);
}

}  // namespace
}  // namespace corun

// corun info and the start line say when OpenBLAS runs kernels older than the CPU (issue 48 item 5).
namespace corun {
namespace {
TEST(BlasCoreWarning, NamesTheCoreTypeToSetForAnUnknownCpu) {
  const std::string prescott = blas::core_warning("Prescott", /*avx2_fma=*/true, /*avx512=*/true);
  EXPECT_TRUE(test::contains(prescott, "runs its Prescott kernels (no AVX2)"));
  EXPECT_TRUE(test::contains(prescott, "OPENBLAS_CORETYPE=SkylakeX"));
  EXPECT_TRUE(test::contains(blas::core_warning("Core2", true, false), "OPENBLAS_CORETYPE=Haswell"));
  const std::string zen = blas::core_warning("Haswell", true, true);  // a Zen 5 under OpenBLAS 0.3.21
  EXPECT_TRUE(test::contains(zen, "runs its Haswell kernels (AVX2) on a CPU with AVX-512"));
  EXPECT_TRUE(test::contains(zen, "OPENBLAS_CORETYPE=SkylakeX"));
  EXPECT_EQ(blas::core_warning("SkylakeX", true, true), "");
  EXPECT_EQ(blas::core_warning("Zen", true, false), "");       // an AVX2 CPU on its AVX2 kernels
  EXPECT_EQ(blas::core_warning("Prescott", false, false), "");  // an old CPU on its own kernels
}
}  // namespace
}  // namespace corun
