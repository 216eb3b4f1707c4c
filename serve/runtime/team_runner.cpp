#include "serve/runtime/team_runner.hpp"

#include "core/base/check.hpp"
#include "sched/toolbox/workers.hpp"

#include <starpu.h>

#include <algorithm>
#include <exception>
#include <mutex>
#include <string>
#include <vector>

namespace corun::serve {
namespace {

// What one SPMD task runs: the whole request (wcs) or phases [first, last).
struct TaskArgs {
  Executor* exec = nullptr;
  SpinBarrier* barrier = nullptr;  // wcs only
  int first = 0, last = 0;
  std::string* error = nullptr;    // first failure, written under error_mutex
};

std::mutex error_mutex;

void serve_kernel(void** /*buffers*/, void* cl_arg) {
  auto* a = static_cast<TaskArgs*>(cl_arg);
  const int rank = starpu_combined_worker_get_rank();
  try {
    if (a->barrier != nullptr) {
      a->exec->run_all(rank, *a->barrier);
    } else {
      for (int p = a->first; p < a->last; ++p) a->exec->run_phase(rank, p);
    }
  } catch (const std::exception& e) {
    // Exceptions must not cross StarPU's C frames; Server rethrows after the wait. (A failing member in wcs
    // mode would leave the others at the barrier: the executor checks everything at plan time instead.)
    std::lock_guard<std::mutex> lock(error_mutex);
    if (a->error->empty()) *a->error = e.what();
  }
}

starpu_codelet* serve_codelet() {
  static starpu_codelet cl;
  static std::once_flag once;
  std::call_once(once, [] {
    starpu_codelet_init(&cl);
    cl.type = STARPU_SPMD;
    cl.max_parallelism = STARPU_NMAXWORKERS;
    cl.cpu_funcs[0] = serve_kernel;
    cl.cpu_funcs_name[0] = "corun_serve_rnn";
    cl.nbuffers = 0;
    cl.name = "corun_serve_rnn";
  });
  return &cl;
}

}  // namespace

int starpu_cpu_workers() { return static_cast<int>(starpu_cpu_worker_get_count()); }

struct TeamRunner::Impl {
  int width = 1;
  int target = -1;  // basic worker id (width 1) or combined worker id
  SpinBarrier barrier;
  std::string error;
  std::vector<TaskArgs> args;
  std::vector<starpu_task> tasks;
  std::vector<bool> submitted;
  explicit Impl(int w) : width(w), barrier(w) {}
};

TeamRunner::TeamRunner(int width) : impl_(std::make_unique<Impl>(width)) {
  const int n = starpu_cpu_workers();
  CORUN_CHECK(width >= 1 && width <= n, Status::invalid_argument,
              "serve: a team of " << width << " workers, but StarPU runs " << n << " CPU workers");
  std::vector<int> ids(static_cast<size_t>(starpu_worker_get_count()));
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int>(i);
  const std::vector<int> cpus = sched::ordered_cpu_workers(ids.data(), static_cast<unsigned>(ids.size()), "serve");
  const std::vector<int> members(cpus.begin(), cpus.begin() + width);
  if (width == 1) {
    impl_->target = members[0];
    return;
  }
  // Reuse a combined worker over exactly these members (a policy or an earlier server may have made it).
  const int ncombined = static_cast<int>(starpu_combined_worker_get_count());
  const int nbasic = static_cast<int>(starpu_worker_get_count());
  for (int c = nbasic; c < nbasic + ncombined; ++c) {
    int size = 0;
    int* ws = nullptr;
    if (starpu_combined_worker_get_description(c, &size, &ws) != 0 || size != width) continue;
    std::vector<int> have(ws, ws + size), want = members;
    std::sort(have.begin(), have.end());
    std::sort(want.begin(), want.end());
    if (have == want) {
      impl_->target = c;
      return;
    }
  }
  impl_->target = sched::create_team(members, "the serving team");
}

TeamRunner::~TeamRunner() {
  for (size_t i = 0; i < impl_->tasks.size(); ++i)
    if (impl_->submitted[i]) starpu_task_clean(&impl_->tasks[i]);
}

int TeamRunner::width() const { return impl_->width; }

void TeamRunner::reserve(int ntasks) {
  Impl& s = *impl_;
  if (static_cast<int>(s.tasks.size()) >= ntasks) return;
  for (size_t i = 0; i < s.tasks.size(); ++i)
    if (s.submitted[i]) starpu_task_clean(&s.tasks[i]);
  s.tasks.assign(static_cast<size_t>(ntasks), starpu_task{});
  s.args.assign(static_cast<size_t>(ntasks), TaskArgs{});
  s.submitted.assign(static_cast<size_t>(ntasks), false);
  for (starpu_task& t : s.tasks) starpu_task_init(&t);
}

void TeamRunner::run(Executor& exec, ExecMode mode) {
  Impl& s = *impl_;
  CORUN_CHECK(exec.width() == s.width, Status::invalid_argument,
              "serve: an executor planned for " << exec.width() << " workers on a team of " << s.width);
  const int ntasks = mode == ExecMode::wcs ? 1 : exec.phases();
  reserve(ntasks);  // no-op after the server's reserve() for its longest request
  s.error.clear();
  for (int i = 0; i < ntasks; ++i) {
    starpu_task* t = &s.tasks[static_cast<size_t>(i)];
    if (s.submitted[static_cast<size_t>(i)]) {
      // starpu_task_clean frees StarPU's job and clears the task's magic; init makes it submittable again.
      starpu_task_clean(t);
      starpu_task_init(t);
      s.submitted[static_cast<size_t>(i)] = false;
    }
    TaskArgs& a = s.args[static_cast<size_t>(i)];
    a.exec = &exec;
    a.error = &s.error;
    if (mode == ExecMode::wcs) {
      a.barrier = &s.barrier;
      a.first = 0;
      a.last = exec.phases();
    } else {
      a.barrier = nullptr;
      a.first = i;
      a.last = i + 1;
    }
    t->cl = serve_codelet();
    t->cl_arg = &a;
    t->cl_arg_size = sizeof a;
    t->destroy = 0;
    t->detach = 0;
    t->execute_on_a_specific_worker = 1;
    t->workerid = static_cast<unsigned>(s.target);
    if (i > 0) {
      starpu_task* prev = &s.tasks[static_cast<size_t>(i - 1)];
      starpu_task_declare_deps_array(t, 1, &prev);
    }
  }
  for (int i = 0; i < ntasks; ++i) {
    const int ret = starpu_task_submit(&s.tasks[static_cast<size_t>(i)]);
    CORUN_CHECK(ret == 0, Status::runtime_error, "serve: starpu_task_submit failed (" << ret << ")");
    s.submitted[static_cast<size_t>(i)] = true;
  }
  for (int i = 0; i < ntasks; ++i) {
    const int ret = starpu_task_wait(&s.tasks[static_cast<size_t>(i)]);
    CORUN_CHECK(ret == 0, Status::runtime_error, "serve: starpu_task_wait failed (" << ret << ")");
  }
  CORUN_CHECK(s.error.empty(), Status::runtime_error, "serve: a team member failed: " << s.error);
}

}  // namespace corun::serve
