// Engine::add_observer (corun/observer.hpp): an observer sees every task of every run entered, then exited,
// exactly once, on a valid worker, under corun's policies (teams) and StarPU's (lws, eager), with Engine::run
// and with runs in flight together (submit/wait); the numbers stay bitwise those of an unobserved run; a traced
// run (the trace recorder is an observer too) still gives its whole trace beside a user's observer; and a
// detached observer gets no call. Misuse (a null observer, one attached twice, detaching one never attached)
// is an error that says what to do.
#include "engine_test_util.hpp"

#include <corun/engine.hpp>
#include <corun/observer.hpp>

#include "policy_lists.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace corun {
namespace {

// Every call, in the order they came (one sequence number across all workers).
class EventLog : public TaskObserver {
 public:
  struct Event {
    bool entry = false;
    int worker = -1;
    ObservedTask task;
    std::string name;
    uint64_t seq = 0;
  };

  void set_up(int num_workers) override {
    ++set_ups;
    workers = num_workers;
  }
  void on_entry(int worker, const ObservedTask& task) override { log(true, worker, task); }
  void on_exit(int worker, const ObservedTask& task) override { log(false, worker, task); }

  std::vector<Event> events() {
    std::lock_guard<std::mutex> lock(mu_);
    return events_;
  }

  int set_ups = 0;
  int workers = 0;

 private:
  void log(bool entry, int worker, const ObservedTask& task) {
    std::lock_guard<std::mutex> lock(mu_);
    events_.push_back(Event{entry, worker, task, task.name, events_.size()});
  }
  std::mutex mu_;
  std::vector<Event> events_;
};

// A training step of a small MLP (forward, backward, SGD updates: the updated weights depend on every task).
struct Mlp {
  Graph g;
  Tensor w1, loss;
};

Mlp make_mlp(uint64_t seed) {
  Mlp m;
  const Tensor x = m.g.input("x", {32, 40});
  const Tensor t = m.g.input("t", {32, 10});
  m.w1 = m.g.param("w1", {40, 64});
  const Tensor w2 = m.g.param("w2", {64, 10});
  m.loss = m.g.softmax_xent(m.g.matmul(m.g.relu(m.g.matmul(x, m.w1)), w2), t, "loss");
  m.g.backward(m.loss, {.learning_rate = 0.05f});
  std::mt19937_64 rng(seed);
  for (Tensor v : {x, t, m.w1, w2}) test::fill_uniform(m.g, v, rng);
  return m;
}

constexpr int kRuns = 3;

// The MLP's weights after kRuns steps.
std::vector<float> trained_w1(Engine& e, Mlp& m) {
  for (int r = 0; r < kRuns; ++r) e.run(m.g);
  return e.read(m.g, m.w1);
}

// Every task of each of `runs` runs of a graph of `nodes` nodes: entered once, then exited once, on the same
// valid worker, with its node index and a team width >= 1. Returns the runs' numbers.
std::vector<uint64_t> expect_each_task_entered_then_exited(const std::vector<EventLog::Event>& events, int nodes,
                                                           size_t runs, int workers) {
  std::map<std::pair<uint64_t, int>, std::vector<const EventLog::Event*>> by_task;
  for (const auto& e : events) by_task[{e.task.run, e.task.node}].push_back(&e);
  std::map<uint64_t, int> tasks_of_run;
  for (const auto& [key, calls] : by_task) {
    const std::string what = "run " + std::to_string(key.first) + ", node " + std::to_string(key.second);
    ++tasks_of_run[key.first];
    EXPECT_GE(key.second, 0) << what;
    EXPECT_LT(key.second, nodes) << what;
    EXPECT_EQ(calls.size(), 2u) << what << ": one entry and one exit";
    if (calls.size() != 2) continue;
    EXPECT_TRUE(calls[0]->entry) << what << ": entered first";
    EXPECT_FALSE(calls[1]->entry) << what << ": then exited";
    EXPECT_LT(calls[0]->seq, calls[1]->seq) << what;
    for (const auto* c : calls) {
      EXPECT_GE(c->worker, 0) << what;
      EXPECT_LT(c->worker, workers) << what;
      EXPECT_GE(c->task.width, 1) << what;
      EXPECT_FALSE(c->name.empty()) << what;
    }
    EXPECT_EQ(calls[0]->worker, calls[1]->worker) << what << ": exit on the worker that entered";
    EXPECT_EQ(calls[0]->name, calls[1]->name) << what;
  }
  std::vector<uint64_t> numbers;
  for (const auto& [run, count] : tasks_of_run) {
    EXPECT_EQ(count, nodes) << "run " << run << ": every node's task once";
    numbers.push_back(run);
  }
  EXPECT_EQ(numbers.size(), runs);
  return numbers;
}

class Observer : public ::testing::TestWithParam<std::string> {
 protected:
  Config config() const {
    Config c = test::test_config(GetParam());
    c.ncpus = test::policy_workers(GetParam());
    return c;
  }
};

TEST_P(Observer, SeesEveryTaskEnteredThenExitedOnceAndChangesNoBit) {
  Mlp plain = make_mlp(7), watched = make_mlp(7), after = make_mlp(7);
  Engine e(config());
  const std::vector<float> expected = trained_w1(e, plain);

  auto log = std::make_shared<EventLog>();
  e.add_observer(log);
  EXPECT_EQ(log->set_ups, 1);
  EXPECT_EQ(log->workers, e.info().workers);
  const std::vector<float> got = trained_w1(e, watched);
  EXPECT_TRUE(test::same_bits(expected, got)) << "an observed run computed other numbers";
  const auto events = log->events();
  const auto runs = expect_each_task_entered_then_exited(events, watched.g.num_nodes(), kRuns, e.info().workers);
  for (size_t i = 1; i < runs.size(); ++i) EXPECT_GT(runs[i], runs[i - 1]);

  e.remove_observer(log);
  EXPECT_TRUE(test::same_bits(expected, trained_w1(e, after)));
  EXPECT_EQ(log->events().size(), events.size()) << "a detached observer was called";
}

TEST_P(Observer, SeesTheTasksOfRunsInFlightTogether) {
  std::vector<Mlp> alone, together;
  for (uint64_t s = 0; s < 3; ++s) {
    alone.push_back(make_mlp(20 + s));
    together.push_back(make_mlp(20 + s));
  }
  Engine e(config());
  std::vector<std::vector<float>> expected;
  for (Mlp& m : alone) {
    e.run(m.g);
    expected.push_back(e.read(m.g, m.w1));
  }
  auto log = std::make_shared<EventLog>();
  e.add_observer(log);
  std::vector<RunTicket> tickets;
  for (Mlp& m : together) tickets.push_back(e.submit(m.g));
  for (RunTicket& t : tickets) e.wait(t);
  for (size_t i = 0; i < together.size(); ++i)
    EXPECT_TRUE(test::same_bits(expected[i], e.read(together[i].g, together[i].w1))) << "graph " << i;
  expect_each_task_entered_then_exited(log->events(), together[0].g.num_nodes(), together.size(), e.info().workers);
}

// The recorder of a traced run is an observer beside the user's: both see the whole run.
TEST_P(Observer, ATracedRunKeepsItsWholeTraceBesideAnObserver) {
  Mlp m = make_mlp(3);
  Engine e(config());
  e.run(m.g);  // the graph's first run is cold (no model samples); trace the second
  auto log = std::make_shared<EventLog>();
  e.add_observer(log);
  e.set_tracing(true);
  e.run(m.g);
  e.set_tracing(false);
  const std::vector<TraceTask>& trace = e.trace();
  ASSERT_EQ(trace.size(), static_cast<size_t>(m.g.num_nodes()));
  for (const TraceTask& t : trace) {
    EXPECT_FALSE(t.cores.empty()) << t.node;
    EXPECT_LE(t.start_us, t.end_us) << t.node;
  }
  expect_each_task_entered_then_exited(log->events(), m.g.num_nodes(), 1, e.info().workers);
  for (const auto& ev : log->events()) EXPECT_EQ(ev.name, trace[static_cast<size_t>(ev.task.node)].node);
}

INSTANTIATE_TEST_SUITE_P(Policies, Observer, ::testing::Values("lws", "eager", "cpf", "corun"),
                         test::policy_test_name);

TEST(ObserverErrors, NullTwiceAndUnknownObserversAreErrorsThatSayWhatToDo) {
  Engine e(test::test_config("eager"));
  EXPECT_CORUN_ERROR(e.add_observer(nullptr), Status::invalid_argument, "the observer is null", "make_shared");
  auto log = std::make_shared<EventLog>();
  e.add_observer(log);
  EXPECT_CORUN_ERROR(e.add_observer(log), Status::invalid_argument, "attached already", "remove_observer");
  EXPECT_EQ(log->set_ups, 1) << "a refused observer is not set up again";
  e.remove_observer(log);
  EXPECT_CORUN_ERROR(e.remove_observer(log), Status::invalid_argument, "not attached to this engine",
                     "add_observer attaches one");
}

}  // namespace
}  // namespace corun
