// bench/task_overhead: per-task overhead of the scheduling policy in CORUN_SCHED, with empty SPMD codelets.
//
//   task_overhead [--tasks 100000] [--width 1|2] [--runs 5] [--no-model] [--chain] [--alternate] [--json FILE]
//
// One process per policy (StarPU initialises once per process; bench/task_overhead.sh runs them all).
// After a warm-up run (tasks/10, at least 1000; it also calibrates the history model), each run submits
// --tasks empty tasks in a loop (create, submit) and waits for all; its value is the wall time from the first
// submission to the end of the wait, divided by the tasks. The codelet is STARPU_SPMD with max_parallelism
// = --width and a history perfmodel (like corun's op codelets; --no-model drops it). corun's own policies get
// a TaskHint with fixed_width = --width in sched_data; built-ins choose the team width themselves (pheft,
// peager) or never form teams. The kernel counts the team width each task actually ran at
// (starpu_combined_worker_get_size), and the result reports it.
// --chain: every task reads and writes one registered variable, so each waits for the one before: the value is
// then the latency from one task's end to the next one's start (what a graph's critical path pays per task),
// not the throughput of independent tasks. --alternate (corun's policies, with --chain): the hints alternate
// width 1 and --width, as an LSTM step alternates elementwise ops on one core with team GEMMs.
#include <corun/engine.hpp>
#include <corun/error.hpp>
#include <corun/machine.hpp>

#include "base/files.hpp"
#include "base/json.hpp"
#include "base/parse.hpp"
#include "sched/hint.hpp"
#include "sched/layout.hpp"

#include <starpu.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

constexpr int kMaxSize = 64;
std::array<std::atomic<long>, kMaxSize + 1> g_sizes{};  // tasks per team size (counted by rank 0)

void empty_kernel(void** /*buffers*/, void* /*cl_arg*/) {
  if (starpu_combined_worker_get_rank() == 0)
    g_sizes[static_cast<size_t>(std::min(kMaxSize, starpu_combined_worker_get_size()))].fetch_add(1);
}

starpu_perfmodel g_model;
starpu_codelet g_codelet;

void init_codelet(int width, bool model) {
  g_model.type = STARPU_HISTORY_BASED;
  g_model.symbol = "corun_task_overhead";
  starpu_codelet_init(&g_codelet);
  g_codelet.type = STARPU_SPMD;
  g_codelet.max_parallelism = width;
  g_codelet.cpu_funcs[0] = empty_kernel;
  g_codelet.cpu_funcs_name[0] = "empty_kernel";
  g_codelet.nbuffers = STARPU_VARIABLE_NBUFFERS;  // 0, or 1 with --chain (set per task)
  g_codelet.model = model ? &g_model : nullptr;
  g_codelet.name = "corun_task_overhead";
}

struct RunResult {
  double us_per_task = 0.0;         // first submit to end of wait_for_all
  double submit_us_per_task = 0.0;  // first submit to the last submit's return
};

starpu_data_handle_t g_chain = nullptr;  // --chain: the variable every task reads and writes

RunResult run(int ntasks, int width, bool hints, bool alternate) {
  std::vector<corun::sched::TaskHint> h(hints ? static_cast<size_t>(ntasks) : 0);
  for (size_t i = 0; i < h.size(); ++i) {
    h[i].level_us = 0.0;
    h[i].fixed_width = alternate && i % 2 == 0 ? 1 : width;
  }
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < ntasks; ++i) {
    starpu_task* t = starpu_task_create();
    t->cl = &g_codelet;
    if (hints) t->sched_data = &h[static_cast<size_t>(i)];
    if (g_chain != nullptr) {
      t->handles[0] = g_chain;
      t->modes[0] = STARPU_RW;
      t->nbuffers = 1;
    }
    const int ret = starpu_task_submit(t);
    if (ret != 0) {
      std::fprintf(stderr, "task_overhead: starpu_task_submit failed (%d%s)\n", ret,
                   ret == -ENODEV ? ": no worker can run the codelet" : "");
      std::exit(1);
    }
  }
  const auto t1 = std::chrono::steady_clock::now();
  starpu_task_wait_for_all();
  const auto t2 = std::chrono::steady_clock::now();
  RunResult r;
  r.us_per_task = std::chrono::duration<double, std::micro>(t2 - t0).count() / ntasks;
  r.submit_us_per_task = std::chrono::duration<double, std::micro>(t1 - t0).count() / ntasks;
  return r;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? NAN : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int usage(const char* msg) {
  if (msg) std::fprintf(stderr, "task_overhead: %s\n", msg);
  std::fprintf(stderr,
               "usage: task_overhead [--tasks N] [--width 1|2] [--runs R] [--no-model] [--chain] [--alternate] "
               "[--json FILE]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  int ntasks = 100000, width = 1, runs = 5;
  bool model = true, chain = false, alternate = false;
  std::string json_path;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto int_arg = [&](int& out, long lo, long hi) {
      if (i + 1 >= argc) return false;
      const auto v = corun::parse::integer(argv[++i]);
      if (!v || *v < lo || *v > hi) return false;
      out = static_cast<int>(*v);
      return true;
    };
    if (a == "--tasks") {
      if (!int_arg(ntasks, 1, 100'000'000)) return usage("--tasks needs an integer >= 1");
    } else if (a == "--width") {
      if (!int_arg(width, 1, 64)) return usage("--width needs an integer from 1 to 64");
    } else if (a == "--runs") {
      if (!int_arg(runs, 1, 1000)) return usage("--runs needs an integer >= 1");
    } else if (a == "--no-model") {
      model = false;
    } else if (a == "--chain") {
      chain = true;
    } else if (a == "--alternate") {
      alternate = true;
    } else if (a == "--json" && i + 1 < argc) {
      json_path = argv[++i];
    } else {
      return usage(("unknown argument '" + a + "'").c_str());
    }
  }

  try {
    corun::Config conf = corun::Config::from_env();
    corun::Engine engine(conf);
    const corun::EngineInfo& info = engine.info();
    // Measure the policy StarPU runs, not only the one corun resolved: StarPU 1.3 substitutes lws silently
    // for a STARPU_SCHED it cannot find (an empty one included, with a corun build older than the fix).
    const starpu_sched_policy* running = starpu_sched_ctx_get_sched_policy(0);
    const std::string running_name = running && running->policy_name ? running->policy_name : "";
    if (running_name != info.policy) {
      std::fprintf(stderr, "task_overhead: corun resolved policy '%s' but StarPU runs '%s'; unset STARPU_SCHED\n",
                   info.policy.c_str(), running_name.c_str());
      return 1;
    }
    const bool hints = info.own_policy;
    if (alternate && (!chain || !info.own_policy))
      return usage("--alternate needs --chain and one of corun's policies (it sets the hints' widths)");
    init_codelet(width, model);
    float chain_value = 0.0f;
    if (chain) starpu_variable_data_register(&g_chain, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(&chain_value), sizeof(float));

    run(std::max(1000, ntasks / 10), width, hints, alternate);  // warm-up: allocations, lazy init, model calibration
    for (auto& s : g_sizes) s = 0;
    std::vector<double> us, submit_us;
    for (int r = 0; r < runs; ++r) {
      const RunResult res = run(ntasks, width, hints, alternate);
      us.push_back(res.us_per_task);
      submit_us.push_back(res.submit_us_per_task);
    }
    if (g_chain != nullptr) starpu_data_unregister(g_chain);
    const corun::sched::ExecutorLayout layout = corun::sched::effective_layout();

    std::string widths;
    for (size_t s = 1; s < g_sizes.size(); ++s)
      if (g_sizes[s] > 0)
        widths += (widths.empty() ? "" : ", ") + std::to_string(s) + ":" + std::to_string(g_sizes[s]);
    std::printf("policy %s, width %d, %d tasks x %d runs: median %.2f us/task (min %.2f, max %.2f), submit %.2f "
                "us/task, team widths {%s}\n",
                info.policy.c_str(), width, ntasks, runs, median(us), *std::min_element(us.begin(), us.end()),
                *std::max_element(us.begin(), us.end()), median(submit_us), widths.c_str());

    if (!json_path.empty()) {
      std::vector<double> sizes;  // up to the widest team used
      for (size_t s = 0; s < g_sizes.size(); ++s) sizes.push_back(static_cast<double>(g_sizes[s]));
      while (sizes.size() > 2 && sizes.back() == 0.0) sizes.pop_back();
      const corun::json::Value result = {
          {"config",
           {{"tasks", ntasks},
            {"width", width},
            {"runs", runs},
            {"model", model},
            {"chain", chain},
            {"alternate", alternate},
            {"hints", hints},
            {"executors", layout.count > 0 ? layout.str() : std::string()}}},
          {"machine",
           {{"nproc", corun::machine::nproc()},
            {"cpu_model", corun::machine::cpu_model()},
            {"topology", corun::machine::topology_summary()},
            {"affinity", corun::machine::affinity_list()},
            {"git_sha", corun::machine::git_sha()}}},
          {"engine",
           {{"policy", info.policy},
            {"policy_source", info.policy_source},
            {"own_policy", info.own_policy},
            {"workers", info.workers},
            {"combined_workers", static_cast<int>(starpu_combined_worker_get_count())},
            {"starpu_version", info.starpu_version},
            {"starpu_maxcpus", info.starpu_maxcpus},
            {"starpu_maxnumanodes", info.starpu_maxnumanodes},
            {"blas", info.blas},
            {"blas_core", info.blas_core},
            {"blas_threads", info.blas_threads}}},
          {"us_per_task", us},
          {"submit_us_per_task", submit_us},
          {"tasks_per_team_width", sizes},  // index = team width
          {"summary",
           {{"median_us", median(us)},
            {"min_us", *std::min_element(us.begin(), us.end())},
            {"max_us", *std::max_element(us.begin(), us.end())},
            {"median_submit_us", median(submit_us)}}}};
      corun::write_file_atomically(json_path, corun::json::dump(result) + "\n");
    }
  } catch (const corun::Error& e) {
    std::fprintf(stderr, "task_overhead: %s\n", e.what());
    return 1;
  }
  return 0;
}
