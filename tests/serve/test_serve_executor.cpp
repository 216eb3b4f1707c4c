// The executor of one plan, without StarPU: every member on its own std::thread (the test's threads,
// standing in for a StarPU team) against the plain-loop reference, for LSTM and GRU, single, stacked and
// bidirectional models and plans that cover every executor path (hoisted gate subsets, batch and hidden
// splits, idle members, direction groups, requests shorter than max_seq).
#include "serve/kernels/baselines.hpp"
#include "serve/kernels/executor.hpp"

#include "serve/rnn_reference.hpp"

#include <corun/error.hpp>

#include <gtest/gtest.h>

#include <random>
#include <thread>

namespace corun::serve {
namespace {

std::vector<float> random_input(int seq, int batch, int input, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(seq) * batch * input);
  for (float& v : x) v = u(rng);
  return x;
}

std::vector<float> run_threads(Executor& e) {
  SpinBarrier barrier(e.width());
  std::vector<std::thread> members;
  for (int r = 0; r < e.width(); ++r) members.emplace_back([&e, &barrier, r] { e.run_all(r, barrier); });
  for (std::thread& t : members) t.join();
  return std::vector<float>(e.output(), e.output() + e.output_size());
}

Plan make_plan(uint32_t hoisted, int workers, int groups, int xi, int xj) {
  Plan p;
  p.hoisted_gates = hoisted;
  p.workers = workers;
  p.direction_groups = groups;
  p.xi = xi;
  p.xj = xj;
  return p;
}

struct Case {
  ModelSpec spec;
  Plan plan;
};

void check(const Case& c, int batch, int seq, int max_seq) {
  const Model m = Model::random(c.spec, 11);
  Executor e(m, batch, max_seq, c.plan);
  const std::vector<float> x = random_input(seq, batch, c.spec.input, 5);
  e.set_input(x.data(), seq);
  const std::vector<float> got = run_threads(e);
  const std::vector<float> want = test::rnn_reference(m, x, batch, seq);
  ASSERT_EQ(got.size(), want.size());
  EXPECT_LE(test::normwise_rel(got, want), 1e-5)
      << c.spec.str() << " batch " << batch << " seq " << seq << " plan " << c.plan.str(c.spec.cell);
  // A second request on the same executor (state from the first must not leak into it).
  e.set_input(x.data(), seq);
  EXPECT_EQ(run_threads(e), got);
}

TEST(ServeExecutor, LstmPlansMatchTheReference) {
  const ModelSpec lstm{Cell::lstm, 12, 20, 1, false};
  for (const Plan& p : {make_plan(0xF, 1, 1, 1, 1), make_plan(0x0, 1, 1, 1, 1), make_plan(0x5, 2, 1, 1, 2),
                        make_plan(0xF, 3, 1, 1, 3), make_plan(0xF, 3, 1, 1, 2)})
    for (int batch : {1, 10})
      for (int seq : {1, 10, 100}) check({lstm, p}, batch, seq, 100);
  check({lstm, make_plan(0xF, 4, 1, 2, 2)}, 10, 10, 10);  // batch and hidden split
  check({lstm, make_plan(0x3, 2, 1, 2, 1)}, 10, 7, 12);   // batch split, partial hoist, seq < max_seq
}

TEST(ServeExecutor, GruPlansMatchTheReference) {
  const ModelSpec gru{Cell::gru, 12, 20, 1, false};
  for (const Plan& p : {make_plan(0x7, 1, 1, 1, 1), make_plan(0x0, 2, 1, 1, 2), make_plan(0x4, 3, 1, 1, 3)})
    for (int batch : {1, 10})
      for (int seq : {1, 10, 100}) check({gru, p}, batch, seq, 100);
  for (int seq : {1, 10, 100}) check({gru, make_plan(0x4, 2, 1, 2, 1)}, 10, seq, 100);  // batch split
}

TEST(ServeExecutor, StackedAndBidirectionalMatchTheReference) {
  for (Cell cell : {Cell::lstm, Cell::gru}) {
    const int all = (1 << gate_count(cell)) - 1;
    const ModelSpec stacked{cell, 9, 16, 3, false};
    const ModelSpec bi{cell, 9, 16, 2, true};
    for (int batch : {1, 10})
      for (int seq : {1, 10, 100}) {
        check({stacked, make_plan(static_cast<uint32_t>(all), 2, 1, 1, 2)}, batch, seq, 100);
        check({bi, make_plan(static_cast<uint32_t>(all), 2, 1, 1, 2)}, batch, seq, 100);
        check({bi, make_plan(1u, 2, 2, 1, 1)}, batch, seq, 100);  // one direction per member
      }
  }
}

// The step products under each kernel (serve/kernels/step_gemm.hpp): the recurrent one, and the input one
// of the gates a partial hoist keeps in the step; with a batch split (3 and 2 rows per member), stacked
// layers reading H * 2 features, and batch 1 (OpenBLAS's GEMV whatever the plan asks).
TEST(ServeExecutor, EveryStepKernelMatchesTheReference) {
  for (StepGemmKernel k : {StepGemmKernel::openblas, StepGemmKernel::libxsmm, StepGemmKernel::automatic})
    for (Cell cell : {Cell::lstm, Cell::gru}) {
      const int all = (1 << gate_count(cell)) - 1;
      std::vector<Plan> plans = {make_plan(static_cast<uint32_t>(all), 2, 1, 1, 2), make_plan(0x1, 2, 1, 1, 2),
                                 make_plan(0x0, 2, 1, 2, 1)};
      for (Plan& p : plans) p.step_gemm = k;
      for (const Plan& p : plans)
        for (int batch : {1, 5, 10}) {
          if (p.xi > batch) continue;
          check({ModelSpec{cell, 12, 20, 1, false}, p}, batch, 30, 30);
          check({ModelSpec{cell, 9, 16, 2, true}, p}, batch, 12, 20);
        }
    }
}

TEST(ServeExecutor, RejectsPlansThatDoNotFit) {
  const Model m = Model::random(ModelSpec{Cell::lstm, 4, 3, 1, false}, 1);
  EXPECT_THROW(Executor(m, 1, 5, make_plan(0xF, 2, 1, 1, 4)), Error);  // more blocks than hidden units
  EXPECT_THROW(Executor(m, 1, 5, make_plan(0xF, 2, 1, 2, 1)), Error);  // batch 1 cannot split in 2
  EXPECT_THROW(Executor(m, 1, 5, make_plan(0xF, 2, 2, 1, 1)), Error);  // direction groups, unidirectional
  EXPECT_THROW(Executor(m, 1, 5, make_plan(0x1F, 1, 1, 1, 1)), Error); // a fifth gate
  Executor e(m, 1, 5, make_plan(0xF, 1, 1, 1, 1));
  std::vector<float> x(6 * 4);
  EXPECT_THROW(e.set_input(x.data(), 6), Error);  // longer than planned
  EXPECT_THROW(Model::random(ModelSpec{Cell::gru, 0, 3, 1, false}, 1), Error);
}

}  // namespace
}  // namespace corun::serve

namespace corun::serve {
namespace {

TEST(ServeBaselines, SeparateAndFusedGemmsMatchTheReference) {
  for (Cell cell : {Cell::lstm, Cell::gru})
    for (const ModelSpec& spec : {ModelSpec{cell, 7, 10, 1, false}, ModelSpec{cell, 7, 10, 2, true}})
      for (BaselineKind kind : {BaselineKind::gemms, BaselineKind::fused})
        for (int batch : {1, 3}) {
          const Model m = Model::random(spec, 2);
          BaselineRunner r(m, batch, 20, kind);
          const std::vector<float> x = random_input(20, batch, spec.input, 8);
          r.run(x.data(), 20);
          const std::vector<float> want = test::rnn_reference(m, x, batch, 20);
          const std::vector<float> got(r.output(), r.output() + want.size());
          EXPECT_LE(test::normwise_rel(got, want), 1e-5) << spec.str() << " batch " << batch;
        }
}

}  // namespace
}  // namespace corun::serve
