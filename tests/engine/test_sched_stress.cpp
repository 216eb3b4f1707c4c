// Stress test of every scheduling policy (corun's own and StarPU's built-ins) on random DAGs of raw StarPU
// tasks, independent of corun's graphs and kernels.
//
// A seeded DAG of a few thousand SPMD tasks: fan-in 0-3, each edge either an explicit dependency
// (starpu_task_declare_deps_array) or a data dependency (the successor reads a handle the predecessor
// wrote), 0-200 µs of spinning per task, and a width limit per task (1 .. min(4, workers)) given to our
// policies as a TaskHint (max_width or fixed_width in task->sched_data) and to StarPU's built-ins through
// the codelet's can_execute (which sees combined workers). The kernel records, per task, how often each
// rank of its team ran, on which worker, the team size and the start/end times. Checked afterwards:
//   * every task ran exactly once: its team size is consistent, every rank 0..size-1 ran exactly once, on
//     distinct workers;
//   * every dependency held: a predecessor's last rank ended before the successor's first rank started;
//   * the team was never wider than the task allows; for our policies, a fixed_width that the executor
//     offers is honoured exactly.
// A watchdog thread ends the process with _exit(1) after printing the policy, the seed and the tasks that
// never ran when the DAG does not finish within the deadline, so a scheduler hang fails fast in CI.
//
// CORUN_STRESS_SEED overrides the seed (printed by every test), CORUN_STRESS_TASKS the number of tasks.
#include "engine_test_util.hpp"
#include "policy_lists.hpp"
#include "sched/planner/cpf_planner.hpp"

#include <corun/engine.hpp>

#include "base/env.hpp"
#include "sched/hint.hpp"
#include "sched/layout.hpp"
#include "sched/registry.hpp"

#include <starpu.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <climits>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace corun {
namespace {

constexpr int kMaxWidth = 4;   // widest team any task may ask for (capped by the workers)
constexpr int kMaxRanks = 16;  // rank slots recorded per task; a wider team is reported as an error
constexpr int kMaxFanIn = 3;
constexpr int kMaxDurationUs = 200;
constexpr int kTasks = 3000;               // one worker per core
constexpr int kTasksOversubscribed = 400;  // more workers than cores: team policies take ~10 ms per task
constexpr long kDefaultSeed = 20261123;
constexpr int kDeadlineSeconds = 60;  // for kTasks tasks; scaled up with CORUN_STRESS_TASKS
constexpr int kMaxReported = 10;      // failures printed per kind

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// ---- the DAG ----

enum class HintKind { none, max_width, fixed_width };

struct TaskSpec {
  int duration_us = 0;
  int width = 1;                    // widest team allowed (HintKind::none: the codelet's max_parallelism)
  HintKind hint = HintKind::none;   // what our policies get in sched_data (none: a null sched_data)
  std::vector<int> explicit_preds;  // starpu_task_declare_deps_array
  std::vector<int> data_preds;      // read (STARPU_R) the handle the predecessor wrote
  double level_us = 0.0;            // longest duration path from this task to a sink, itself included
};

struct Dag {
  std::vector<TaskSpec> tasks;
  int explicit_edges = 0;
  int data_edges = 0;
};

// Deterministic for (seed, ntasks, max_width). Predecessors come mostly from a window of recent tasks
// (long chains), sometimes from anywhere before (long-range edges).
Dag make_dag(uint64_t seed, int ntasks, int max_width) {
  std::mt19937_64 rng(seed);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  auto chance = [&](double p) { return std::uniform_real_distribution<double>(0.0, 1.0)(rng) < p; };
  Dag dag;
  dag.tasks.resize(static_cast<size_t>(ntasks));
  for (int i = 0; i < ntasks; ++i) {
    TaskSpec& t = dag.tasks[static_cast<size_t>(i)];
    t.duration_us = chance(0.15) ? 0 : uniform(1, kMaxDurationUs);
    t.width = max_width < 2 || chance(0.4) ? 1 : uniform(2, max_width);
    const int h = uniform(0, 4);
    t.hint = h == 0 ? HintKind::none : h <= 2 ? HintKind::max_width : HintKind::fixed_width;
    if (t.hint == HintKind::none) t.width = max_width;
    const int fanin = std::min(i, uniform(0, kMaxFanIn));
    std::vector<int> preds;
    for (int k = 0, tries = 0; k < fanin && tries < 20; ++tries) {
      const int p = chance(0.8) ? uniform(std::max(0, i - 32), i - 1) : uniform(0, i - 1);
      if (std::find(preds.begin(), preds.end(), p) != preds.end()) continue;
      preds.push_back(p);
      ++k;
      if (chance(0.5)) {
        t.explicit_preds.push_back(p);
        ++dag.explicit_edges;
      } else {
        t.data_preds.push_back(p);
        ++dag.data_edges;
      }
    }
  }
  // Levels, sinks first: every predecessor has a smaller index.
  for (auto& t : dag.tasks) t.level_us = t.duration_us;
  for (int i = ntasks - 1; i >= 0; --i) {
    const TaskSpec& t = dag.tasks[static_cast<size_t>(i)];
    for (const auto* preds : {&t.explicit_preds, &t.data_preds})
      for (int p : *preds) {
        auto& pl = dag.tasks[static_cast<size_t>(p)].level_us;
        pl = std::max(pl, dag.tasks[static_cast<size_t>(p)].duration_us + t.level_us);
      }
  }
  return dag;
}

// ---- what the kernel records ----

struct TaskRecord {
  const TaskSpec* spec = nullptr;
  std::atomic<int> size{0};           // team size seen by the first member to start
  std::atomic<int> size_mismatch{0};  // another member saw a different size
  std::atomic<int> rank_overflow{0};  // a rank outside [0, kMaxRanks)
  std::atomic<int> started{0};        // members that entered the kernel
  std::atomic<int> ended{0};          // members that left it
  std::array<std::atomic<int>, kMaxRanks> rank_runs{};
  std::array<std::atomic<int>, kMaxRanks> rank_worker{};
  std::atomic<int64_t> start_ns{std::numeric_limits<int64_t>::max()};  // earliest member start
  std::atomic<int64_t> end_ns{0};                                      // latest member end
};

void atomic_min(std::atomic<int64_t>& a, int64_t v) {
  int64_t cur = a.load();
  while (v < cur && !a.compare_exchange_weak(cur, v)) {
  }
}
void atomic_max(std::atomic<int64_t>& a, int64_t v) {
  int64_t cur = a.load();
  while (v > cur && !a.compare_exchange_weak(cur, v)) {
  }
}

// Every member spins duration / size: a perfectly parallel task, so the history model sees wider teams
// finish sooner and pheft has a reason to use them.
void stress_kernel(void** /*buffers*/, void* cl_arg) {
  auto* r = static_cast<TaskRecord*>(cl_arg);
  const int64_t t0 = now_ns();
  atomic_min(r->start_ns, t0);
  r->started.fetch_add(1);
  const int size = starpu_combined_worker_get_size();
  const int rank = starpu_combined_worker_get_rank();
  int expected = 0;
  if (!r->size.compare_exchange_strong(expected, size) && expected != size) r->size_mismatch.store(1);
  if (rank < 0 || rank >= kMaxRanks) {
    r->rank_overflow.store(1);
  } else {
    r->rank_runs[static_cast<size_t>(rank)].fetch_add(1);
    r->rank_worker[static_cast<size_t>(rank)].store(starpu_worker_get_id());
  }
  const int64_t spin = static_cast<int64_t>(r->spec->duration_us) * 1000 / std::max(1, size);
  while (now_ns() - t0 < spin) {
  }
  atomic_max(r->end_ns, now_ns());
  r->ended.fetch_add(1);
}

// Built-ins ignore sched_data; they honour the per-task width through this (pheft and peager ask it for
// every combined worker).
int stress_can_execute(unsigned workerid, starpu_task* task, unsigned /*nimpl*/) {
  if (workerid < starpu_worker_get_count()) return 1;
  int size = 0;
  int* members = nullptr;
  if (starpu_combined_worker_get_description(static_cast<int>(workerid), &size, &members) != 0) return 0;
  return size <= static_cast<const TaskRecord*>(task->cl_arg)->spec->width ? 1 : 0;
}

// One history entry per duration (a perfectly regular kernel), so the models can calibrate.
uint32_t stress_footprint(starpu_task* task) {
  const auto* r = static_cast<const TaskRecord*>(task->cl_arg);
  return starpu_hash_crc32c_be(static_cast<uint32_t>(r->spec->duration_us), 0);
}

starpu_codelet* stress_codelet(int max_parallelism) {
  static starpu_perfmodel model;
  static starpu_codelet cl;
  static const bool once = [] {
    model.type = STARPU_HISTORY_BASED;
    model.symbol = "corun_stress";
    model.footprint = stress_footprint;
    starpu_codelet_init(&cl);
    cl.type = STARPU_SPMD;
    cl.cpu_funcs[0] = stress_kernel;
    cl.cpu_funcs_name[0] = "stress_kernel";
    cl.nbuffers = STARPU_VARIABLE_NBUFFERS;
    cl.can_execute = stress_can_execute;
    cl.model = &model;
    cl.name = "corun_stress";
    return true;
  }();
  (void)once;
  cl.max_parallelism = max_parallelism;
  return &cl;
}

// ---- the watchdog ----

// Calls `on_timeout` and ends the process with _exit(1) unless destroyed within `seconds`.
class Watchdog {
 public:
  Watchdog(int seconds, std::function<void()> on_timeout) : on_timeout_(std::move(on_timeout)) {
    thread_ = std::thread([this, seconds] {
      std::unique_lock<std::mutex> lock(mutex_);
      if (cv_.wait_for(lock, std::chrono::seconds(seconds), [this] { return done_; })) return;
      std::fprintf(stderr, "\n[watchdog] not finished after %d s\n", seconds);
      on_timeout_();
      std::fflush(stdout);
      std::fflush(stderr);
      ::_exit(1);
    });
  }
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  std::function<void()> on_timeout_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

// ---- the test ----

// For corun's policies: a layout with teams (CORUN_EXECUTORS=NxK) for the worker count StarPU will start,
// unless the environment sets one: 1 or 2 workers -> 1xW, up to 7 -> (W/2)x2, 8 and more -> (W/4)x4.
std::string executors_for(int workers) {
  const int k = workers >= 8 ? 4 : std::min(2, workers);
  return std::to_string(std::max(1, workers / std::max(1, k))) + "x" + std::to_string(std::max(1, k));
}

// Team widths an executor of `width` cores offers (the cpf planner's rule): 1, powers of two below it, it.
bool offered_width(int w, int executor_width) {
  const auto widths = sched::team_widths_of(executor_width);
  return std::find(widths.begin(), widths.end(), w) != widths.end();
}

const char* hint_name(HintKind k) {
  return k == HintKind::none ? "none" : k == HintKind::max_width ? "max_width" : "fixed_width";
}

class SchedStress : public ::testing::TestWithParam<std::string> {};

TEST_P(SchedStress, RandomDag) {
  const std::string policy = GetParam();
  const bool own = test::is_own_policy(policy);
  const long seed = env::get_int("CORUN_STRESS_SEED", 0, LONG_MAX).value_or(kDefaultSeed);
  const auto tasks_override = env::get_int("CORUN_STRESS_TASKS", 1, 10'000'000);

  // The environment before the Config reads it: the policy is given explicitly (a STARPU_SCHED would conflict
  // with it); corun's policy-only variables are an error with a built-in, and our policies get a layout
  // with teams unless the environment chose one.
  test::ScopedEnv no_starpu_sched("STARPU_SCHED", nullptr);
  std::vector<std::unique_ptr<test::ScopedEnv>> scoped;
  const int ncpus = test::policy_workers(policy);
  if (!own || policy == "corun") {  // corun forms its teams itself: layouts are an error there
    for (const char* v : {"CORUN_EXECUTORS", "CORUN_PROFILE", "CORUN_FIXED_WIDTH"})
      scoped.push_back(std::make_unique<test::ScopedEnv>(v, nullptr));
  }
  if (policy != "corun")
    for (const char* v : {"CORUN_DETERMINISTIC", "CORUN_SCHEDULE", "CORUN_VERBOSE", "CORUN_WIDTH_INTERVAL"})
      scoped.push_back(std::make_unique<test::ScopedEnv>(v, nullptr));
  if (own && policy != "corun" && !env::get("CORUN_EXECUTORS") && !env::get("CORUN_PROFILE")) {
    scoped.push_back(
        std::make_unique<test::ScopedEnv>("CORUN_EXECUTORS", executors_for(test::expected_workers(ncpus)).c_str()));
  }
  Config conf = test::test_config(policy);
  conf.ncpus = ncpus;
  const auto executors = own ? env::get("CORUN_EXECUTORS") : std::nullopt;

  // What the watchdog reads: published once the tasks exist (the records never move after that).
  std::atomic<const TaskRecord*> watched{nullptr};
  std::atomic<int> watched_count{0};
  std::atomic<int> workers{0};
  auto report_unfinished = [&] {
    const TaskRecord* records = watched.load();
    const int n = watched_count.load();
    std::fprintf(stderr, "[watchdog] policy %s, seed %ld, %d workers, %d tasks\n", policy.c_str(), seed, workers.load(),
                 n);
    if (records == nullptr) {
      std::fprintf(stderr,
                   "[watchdog] stuck before any task was submitted (in starpu_init?) or after the checks "
                   "(in starpu_shutdown?)\n");
      return;
    }
    int unfinished = 0, ready = 0, partial = 0;
    for (int i = 0; i < n; ++i) {
      const TaskRecord& r = records[i];
      const int size = r.size.load();
      if (size > 0 && r.ended.load() >= size) continue;
      ++unfinished;
      bool preds_done = true;
      for (const auto* preds : {&r.spec->explicit_preds, &r.spec->data_preds})
        for (int p : *preds) {
          const TaskRecord& pr = records[p];
          preds_done = preds_done && pr.size.load() > 0 && pr.ended.load() >= pr.size.load();
        }
      const bool started = r.started.load() > 0;
      if (started) ++partial;
      if (!started && preds_done) ++ready;
      if ((started || preds_done) && ready + partial <= 2 * kMaxReported)
        std::fprintf(stderr, "[watchdog]   task %d: %s, team size %d, %d started, %d ended, width <= %d (%s), %d us\n",
                     i, started ? "started, not finished (still running, or members missing)" : "ready, never started",
                     size, r.started.load(), r.ended.load(), r.spec->width, hint_name(r.spec->hint),
                     r.spec->duration_us);
    }
    std::fprintf(stderr,
                 "[watchdog] %d of %d tasks not finished: %d ready (all predecessors done) but never started, "
                 "%d started by part of their team; the rest wait for those\n",
                 unfinished, n, ready, partial);
  };
  // Declared before the Engine: it also covers starpu_init and starpu_shutdown.
  const int deadline = kDeadlineSeconds * std::max(1, static_cast<int>(tasks_override.value_or(kTasks) / kTasks));
  Watchdog watchdog(deadline, report_unfinished);

  Engine engine(conf);
  // The policy StarPU actually runs, not only the one the engine resolved (StarPU can silently substitute).
  const starpu_sched_policy* running = starpu_sched_ctx_get_sched_policy(0);
  ASSERT_TRUE(running != nullptr && running->policy_name != nullptr);
  ASSERT_EQ(std::string(running->policy_name), policy) << "StarPU runs another policy than the one requested";
  const int nworkers = static_cast<int>(starpu_cpu_worker_get_count());
  workers = nworkers;
  const bool oversubscribed = nworkers > test::machine_cores();
  const int max_width = std::max(1, std::min(kMaxWidth, nworkers));
  const int ntasks = static_cast<int>(tasks_override.value_or(oversubscribed ? kTasksOversubscribed : kTasks));
  const Dag dag = make_dag(static_cast<uint64_t>(seed), ntasks, max_width);
  std::vector<TaskRecord> records(static_cast<size_t>(ntasks));
  for (int i = 0; i < ntasks; ++i) records[static_cast<size_t>(i)].spec = &dag.tasks[static_cast<size_t>(i)];
  starpu_codelet* cl = stress_codelet(max_width);

  // Hints for our policies: the width limit, the level, and a prediction per width (a few unknown).
  std::vector<sched::TaskHint> hints(static_cast<size_t>(ntasks));
  std::vector<double> predicted(static_cast<size_t>(ntasks) * static_cast<size_t>(max_width));
  for (int i = 0; i < ntasks; ++i) {
    const TaskSpec& s = dag.tasks[static_cast<size_t>(i)];
    sched::TaskHint& h = hints[static_cast<size_t>(i)];
    h.level_us = i % 10 == 3 ? NAN : s.level_us;
    h.max_width = s.hint == HintKind::max_width ? s.width : 0;
    h.fixed_width = s.hint == HintKind::fixed_width ? s.width : 0;
    h.node = i;
    double* p = &predicted[static_cast<size_t>(i) * static_cast<size_t>(max_width)];
    for (int w = 1; w <= max_width; ++w) p[w - 1] = i % 7 == 5 ? NAN : static_cast<double>(s.duration_us) / w;
    h.predicted_us = p;
    h.npredicted = max_width;
  }

  std::vector<starpu_data_handle_t> handles(static_cast<size_t>(ntasks));
  for (auto& h : handles) starpu_void_data_register(&h);

  // All tasks and explicit dependencies exist before the first submission (a declared predecessor must not
  // have completed and been destroyed yet); submission then overlaps execution.
  std::vector<starpu_task*> tasks(static_cast<size_t>(ntasks));
  for (int i = 0; i < ntasks; ++i) {
    const TaskSpec& s = dag.tasks[static_cast<size_t>(i)];
    starpu_task* t = starpu_task_create();
    t->cl = cl;
    t->cl_arg = &records[static_cast<size_t>(i)];
    t->cl_arg_size = 0;
    t->nbuffers = 1 + static_cast<int>(s.data_preds.size());
    STARPU_TASK_SET_HANDLE(t, handles[static_cast<size_t>(i)], 0);
    STARPU_TASK_SET_MODE(t, STARPU_W, 0);
    for (size_t b = 0; b < s.data_preds.size(); ++b) {
      STARPU_TASK_SET_HANDLE(t, handles[static_cast<size_t>(s.data_preds[b])], static_cast<int>(b + 1));
      STARPU_TASK_SET_MODE(t, STARPU_R, static_cast<int>(b + 1));
    }
    if (own && s.hint != HintKind::none) t->sched_data = &hints[static_cast<size_t>(i)];
    if (!s.explicit_preds.empty()) {
      std::vector<starpu_task*> deps;
      for (int p : s.explicit_preds) deps.push_back(tasks[static_cast<size_t>(p)]);
      starpu_task_declare_deps_array(t, static_cast<unsigned>(deps.size()), deps.data());
    }
    tasks[static_cast<size_t>(i)] = t;
  }
  watched_count = ntasks;
  watched = records.data();

  std::printf(
      "  policy %s (%s): %d workers, %d tasks, %d explicit + %d data dependencies, seed %ld "
      "(CORUN_STRESS_SEED overrides)%s%s\n",
      policy.c_str(), own ? "corun" : "StarPU built-in", nworkers, ntasks, dag.explicit_edges, dag.data_edges, seed,
      executors ? ", CORUN_EXECUTORS=" : "", executors ? executors->c_str() : "");
  std::fflush(stdout);

  const int64_t t0 = now_ns();
  for (int i = 0; i < ntasks; ++i) {
    const int ret = starpu_task_submit(tasks[static_cast<size_t>(i)]);
    if (ret != 0) {
      // Successors of an unsubmitted task would wait forever: stop here.
      std::fprintf(stderr, "policy %s: starpu_task_submit of task %d failed (%d%s)\n", policy.c_str(), i, ret,
                   ret == -ENODEV ? ": no worker can run it" : "");
      std::fflush(stderr);
      ::_exit(1);
    }
  }
  starpu_task_wait_for_all();
  const double wall_ms = static_cast<double>(now_ns() - t0) / 1e6;
  for (auto h : handles) starpu_data_unregister(h);
  const int combined = static_cast<int>(starpu_combined_worker_get_count());
  const sched::ExecutorLayout layout = own ? sched::effective_layout() : sched::ExecutorLayout{};

  // ---- checks ----
  int not_once = 0, too_wide = 0, shared_worker = 0, fixed_ignored = 0, order = 0;
  std::vector<int> widths(kMaxRanks + 1, 0);
  for (int i = 0; i < ntasks; ++i) {
    const TaskRecord& r = records[static_cast<size_t>(i)];
    const TaskSpec& s = *r.spec;
    const int size = r.size.load();
    bool once = size >= 1 && size <= kMaxRanks && !r.size_mismatch.load() && !r.rank_overflow.load() &&
                r.started.load() == size && r.ended.load() == size;
    for (int k = 0; k < kMaxRanks; ++k) once = once && r.rank_runs[static_cast<size_t>(k)].load() == (k < size ? 1 : 0);
    if (!once && ++not_once <= kMaxReported)
      ADD_FAILURE() << "task " << i << " did not run exactly once per rank: team size " << size
                    << (r.size_mismatch.load() ? " (members disagree)" : "")
                    << (r.rank_overflow.load() ? " (rank out of range)" : "") << ", " << r.started.load()
                    << " member runs, ranks 0-3 ran " << r.rank_runs[0].load() << "/" << r.rank_runs[1].load() << "/"
                    << r.rank_runs[2].load() << "/" << r.rank_runs[3].load() << " times";
    if (!once) continue;
    ++widths[static_cast<size_t>(size)];
    if (size > s.width && ++too_wide <= kMaxReported)
      ADD_FAILURE() << "task " << i << " ran on a team of " << size << " but allows at most " << s.width << " ("
                    << hint_name(s.hint) << ")";
    for (int a = 0; a < size; ++a)
      for (int b = a + 1; b < size; ++b)
        if (r.rank_worker[static_cast<size_t>(a)].load() == r.rank_worker[static_cast<size_t>(b)].load() &&
            ++shared_worker <= kMaxReported)
          ADD_FAILURE() << "task " << i << ": ranks " << a << " and " << b << " both ran on worker "
                        << r.rank_worker[static_cast<size_t>(a)].load();
    if (own && layout.count > 0 && s.hint == HintKind::fixed_width && offered_width(s.width, layout.width) &&
        size != s.width && ++fixed_ignored <= kMaxReported)
      ADD_FAILURE() << "task " << i << " has fixed_width " << s.width << ", which an executor of " << layout.width
                    << " cores offers, but ran on a team of " << size;
    for (const auto* preds : {&s.explicit_preds, &s.data_preds})
      for (int p : *preds) {
        const TaskRecord& pr = records[static_cast<size_t>(p)];
        if (pr.end_ns.load() > r.start_ns.load() && ++order <= kMaxReported)
          ADD_FAILURE() << "task " << i << " started " << (pr.end_ns.load() - r.start_ns.load()) / 1000
                        << " us before its " << (preds == &s.explicit_preds ? "explicit" : "data") << " predecessor "
                        << p << " ended";
      }
  }
  EXPECT_EQ(not_once, 0) << "tasks that did not run exactly once per rank";
  EXPECT_EQ(too_wide, 0) << "tasks on a team wider than they allow";
  EXPECT_EQ(shared_worker, 0) << "tasks with two ranks on one worker";
  EXPECT_EQ(fixed_ignored, 0) << "tasks whose fixed_width was not honoured";
  EXPECT_EQ(order, 0) << "dependencies violated";

  watched = nullptr;  // the records die before the Engine (starpu_shutdown is still watched)

  std::string used;
  for (size_t w = 1; w < widths.size(); ++w)
    if (widths[w] > 0) used += (used.empty() ? "" : ", ") + std::to_string(w) + ":" + std::to_string(widths[w]);
  std::printf("  policy %s: %.0f ms, %d combined workers%s, tasks per team width {%s}\n", policy.c_str(), wall_ms,
              combined, layout.count > 0 ? (", executors " + layout.str()).c_str() : "", used.c_str());
}

INSTANTIATE_TEST_SUITE_P(Policies, SchedStress, ::testing::ValuesIn(test::all_policy_names()), test::policy_test_name);

}  // namespace
}  // namespace corun
