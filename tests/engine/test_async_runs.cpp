// Engine::submit / Engine::wait: several graphs in flight at once, from several threads, give the bits each
// graph gives alone under Engine::run, under every kind of policy (corun's, with teams; StarPU's work
// stealing and its priority-aware one). The misuse errors (a graph submitted twice, a ticket waited twice, a
// graph released while it runs) say what to do instead.
#include "engine_test_util.hpp"

#include <corun/engine.hpp>

#include "policy_lists.hpp"
#include "sched/registry.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <thread>
#include <vector>

namespace corun {
namespace {

// A small MLP, different weights per seed: x [rows, 48] -> 96 -> relu -> 24 (-> the value "y").
struct Mlp {
  Graph g;
  Tensor x, y;
};

Mlp make_mlp(uint64_t seed, int rows) {
  Mlp m;
  m.x = m.g.input("x", {rows, 48});
  const Tensor w1 = m.g.param("w1", {48, 96});
  const Tensor w2 = m.g.param("w2", {96, 24});
  m.y = m.g.matmul(m.g.relu(m.g.matmul(m.x, w1)), w2, false, false, "y");
  m.g.keep(m.y);
  std::mt19937_64 rng(seed);
  test::fill_uniform(m.g, m.x, rng);
  test::fill_uniform(m.g, w1, rng);
  test::fill_uniform(m.g, w2, rng);
  return m;
}

constexpr int kGraphs = 4;
constexpr int kRounds = 5;

// Each graph's output with Engine::run, one graph at a time.
std::vector<std::vector<float>> outputs_alone(Engine& e, std::vector<Mlp>& mlps) {
  std::vector<std::vector<float>> out;
  for (Mlp& m : mlps) {
    e.run(m.g);
    out.push_back(e.read(m.g, m.y));
  }
  return out;
}

class AsyncRuns : public ::testing::TestWithParam<std::string> {};

TEST_P(AsyncRuns, GraphsInFlightTogetherGiveTheBitsOfEachAlone) {
  std::vector<Mlp> mlps;  // before the engine: it lets go of them when it dies
  for (int i = 0; i < kGraphs; ++i) mlps.push_back(make_mlp(100 + static_cast<uint64_t>(i), 8 + 8 * i));
  Config config = test::test_config(GetParam());
  config.ncpus = test::policy_workers(GetParam());
  Engine e(config);
  const auto alone = outputs_alone(e, mlps);

  // One thread per graph, each submitting and waiting kRounds times: up to kGraphs runs in flight.
  std::vector<std::vector<std::vector<float>>> got(kGraphs);
  std::vector<std::thread> threads;
  for (int i = 0; i < kGraphs; ++i)
    threads.emplace_back([&, i] {
      for (int r = 0; r < kRounds; ++r) {
        RunTicket t = e.submit(mlps[static_cast<size_t>(i)].g, {.priority = i == 0});
        const RunStats s = e.wait(t);
        EXPECT_GE(s.wall_ms, 0.0);
        got[static_cast<size_t>(i)].push_back(e.read(mlps[static_cast<size_t>(i)].g, mlps[static_cast<size_t>(i)].y));
      }
    });
  for (auto& t : threads) t.join();
  for (int i = 0; i < kGraphs; ++i)
    for (int r = 0; r < kRounds; ++r)
      EXPECT_TRUE(test::same_bits(alone[static_cast<size_t>(i)], got[static_cast<size_t>(i)][static_cast<size_t>(r)]))
          << "graph " << i << ", round " << r;
  // run() after submitted runs still works, and waits for none of them (none is left).
  e.run(mlps[0].g);
  EXPECT_TRUE(test::same_bits(alone[0], e.read(mlps[0].g, mlps[0].y)));
}

TEST_P(AsyncRuns, SeveralTicketsOfOneThreadWaitInAnyOrder) {
  std::vector<Mlp> mlps;
  for (int i = 0; i < kGraphs; ++i) mlps.push_back(make_mlp(200 + static_cast<uint64_t>(i), 16));
  Config config = test::test_config(GetParam());
  config.ncpus = test::policy_workers(GetParam());
  Engine e(config);
  const auto alone = outputs_alone(e, mlps);
  std::vector<RunTicket> tickets;
  for (Mlp& m : mlps) tickets.push_back(e.submit(m.g));
  for (int i = kGraphs - 1; i >= 0; --i) e.wait(tickets[static_cast<size_t>(i)]);
  for (int i = 0; i < kGraphs; ++i)
    EXPECT_TRUE(test::same_bits(alone[static_cast<size_t>(i)], e.read(mlps[static_cast<size_t>(i)].g, mlps[static_cast<size_t>(i)].y)));
}

std::vector<std::string> async_policies() {
  std::vector<std::string> names;
  for (const auto& p : sched::own_policies()) names.emplace_back(p.name);
  for (const char* builtin : {"lws", "eager", "prio", "dmdas", "peager"}) names.emplace_back(builtin);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Policies, AsyncRuns, ::testing::ValuesIn(async_policies()), test::policy_test_name);

TEST(AsyncRunErrors, ASecondSubmitOfAGraphInFlightSaysToWaitFirst) {
  Mlp m = make_mlp(7, 64);
  Engine e(test::test_config("lws"));
  e.run(m.g);  // bound and planned
  RunTicket first = e.submit(m.g);
  bool refused = false;
  try {
    RunTicket second = e.submit(m.g);
    e.wait(second);  // the first run ended before the second submit: nothing to refuse
  } catch (const Error& err) {
    refused = true;
    EXPECT_TRUE(test::contains(err.what(), "has a run in flight; wait() for it"));
  }
  e.wait(first);
  // Either outcome is legal (the first run may end before the second submit), but a refusal must be the
  // clear one, and the graph runs again afterwards.
  SUCCEED() << (refused ? "refused" : "the first run had ended");
  RunTicket again = e.submit(m.g);
  e.wait(again);
}

TEST(AsyncRunErrors, ATicketWaitedTwiceIsAnError) {
  Mlp m = make_mlp(8, 8);
  Engine e(test::test_config("lws"));
  RunTicket t = e.submit(m.g);
  e.wait(t);
  EXPECT_FALSE(t.valid());
  EXPECT_CORUN_ERROR(e.wait(t), Status::invalid_argument, "the ticket holds no run");
}

TEST(AsyncRunErrors, ADroppedTicketWaitsForItsRun) {
  Mlp m = make_mlp(9, 32);
  Engine e(test::test_config("lws"));
  e.run(m.g);
  const std::vector<float> alone = e.read(m.g, m.y);
  { RunTicket dropped = e.submit(m.g); }  // its destructor waits: the graph is free again
  RunTicket t = e.submit(m.g);
  e.wait(t);
  EXPECT_TRUE(test::same_bits(alone, e.read(m.g, m.y)));
}

}  // namespace
}  // namespace corun
