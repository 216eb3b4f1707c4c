#include "serve/runtime/team_runner.hpp"

#include <corun/machine.hpp>

#include "base/check.hpp"
#include "sched/toolbox/workers.hpp"

#include <starpu.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <immintrin.h>
#include <mutex>
#include <sched.h>
#include <string>
#include <vector>

namespace corun::serve {
namespace {

// How long a resident team waits for the next request before it leaves the workers (so other StarPU tasks,
// other servers' teams and the engine's graphs get them back; the next request resubmits it).
constexpr auto kResidentIdle = std::chrono::milliseconds(1);
// Pause iterations before a waiter also yields the CPU: on oversubscribed cores a pure spin would hold the
// core for whole time slices while the thread it waits for cannot run.
constexpr int kSpinsBeforeYield = 2000;
// How long the caller of a resident request spins before it sleeps, when the team leaves a core free.
// A team on every allocated core makes the caller a third thread on the members' cores: there it sleeps
// at once (measured, 256x256 LSTM, 10 steps on 2 members: 0.18 ms sleeping at once, 0.26-0.29 ms after
// ~2000 pauses, 0.8 ms after ~20000), and the last member wakes it. A team of one on 2 cores leaves the
// caller a core: spinning saves the wake-up (1 step: 0.017 ms against 0.04-0.05 ms sleeping at once).
constexpr auto kCallerSpin = std::chrono::microseconds(50);

// The mailbox of a resident team. `word` = requests posted << 1 | closed bit: the caller posts by adding 2
// (a CAS, so it cannot post into a team that is leaving), rank 0 closes after kResidentIdle without a
// request (a CAS from the value it last served, so it cannot close over a fresh request), and the server
// closes it on shutdown. `done` counts the members finished with the current request.
struct Mailbox {
  alignas(64) std::atomic<uint64_t> word{0};
  alignas(64) std::atomic<int> done{0};
  std::mutex m;                // the caller sleeps on cv when the request outlasts its spin
  std::condition_variable cv;
};

// What one SPMD task runs: the whole request (wcs), phases [first, last) (per_step), or requests from the
// mailbox until it closes (resident).
struct TaskArgs {
  Executor* exec = nullptr;
  SpinBarrier* barrier = nullptr;  // wcs and resident
  Mailbox* mailbox = nullptr;      // resident only
  int first = 0, last = 0;
  std::string* error = nullptr;    // first failure, written under error_mutex
};

std::mutex error_mutex;

void record_error(TaskArgs* a, const std::exception& e) {
  // Exceptions must not cross StarPU's C frames; Server rethrows after the wait. (A failing member in wcs
  // mode would leave the others at the barrier: the executor checks everything at plan time instead.)
  std::lock_guard<std::mutex> lock(error_mutex);
  if (a->error->empty()) *a->error = e.what();
}

// Waits until the mailbox word differs from `seen` and returns it. Rank 0 also closes the team after
// kResidentIdle without a request when all `width` members have finished the last one (then the returned
// word has the closed bit).
uint64_t next_request(Mailbox& mb, uint64_t seen, int rank, int width) {
  const auto idle_since = std::chrono::steady_clock::now();
  for (int spins = 0;; ++spins) {
    uint64_t w = mb.word.load(std::memory_order_acquire);
    if (w != seen) return w;
    if (spins < kSpinsBeforeYield) {
      _mm_pause();
    } else {
      sched_yield();
    }
    // Only once every member is done with the last request: a member that has not started it yet (a slow
    // or descheduled thread) would otherwise see the closed bit instead of the request and never run it.
    if (rank == 0 && (spins & 255) == 255 && std::chrono::steady_clock::now() - idle_since > kResidentIdle &&
        mb.done.load(std::memory_order_acquire) == width) {
      if (mb.word.compare_exchange_strong(w, seen | 1, std::memory_order_acq_rel)) return seen | 1;
      return w;  // a request arrived meanwhile
    }
  }
}

void resident_loop(TaskArgs* a, int rank) {
  Mailbox& mb = *a->mailbox;
  const int width = a->barrier->members();
  uint64_t seen = 0;  // a fresh task starts with word = 2: request 1 is posted
  for (;;) {
    seen = next_request(mb, seen, rank, width);
    if (seen & 1) return;
    try {
      a->exec->run_all(rank, *a->barrier);
    } catch (const std::exception& e) {
      record_error(a, e);
    }
    // The last member wakes the caller; the lock orders the wake after the caller's check of `done`.
    if (mb.done.fetch_add(1, std::memory_order_acq_rel) + 1 == width) {
      { std::lock_guard<std::mutex> lock(mb.m); }
      mb.cv.notify_one();
    }
  }
}

void serve_kernel(void** /*buffers*/, void* cl_arg) {
  auto* a = static_cast<TaskArgs*>(cl_arg);
  const int rank = starpu_combined_worker_get_rank();
  if (a->mailbox != nullptr) {
    resident_loop(a, rank);
    return;
  }
  try {
    if (a->barrier != nullptr) {
      a->exec->run_all(rank, *a->barrier);
    } else {
      for (int p = a->first; p < a->last; ++p) a->exec->run_phase(rank, p);
    }
  } catch (const std::exception& e) {
    record_error(a, e);
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

// Readies a reused, caller-owned task to run `args` on the combined worker `target`. One submitted before needs
// starpu_task_clean (frees StarPU's job and clears the task's magic) and init to be submittable again.
void ready_task(starpu_task* t, bool submitted_before, TaskArgs* args, int target) {
  if (submitted_before) {
    starpu_task_clean(t);
    starpu_task_init(t);
  }
  t->cl = serve_codelet();
  t->cl_arg = args;
  t->cl_arg_size = sizeof *args;
  t->destroy = 0;
  t->detach = 0;
  t->execute_on_a_specific_worker = 1;
  t->workerid = static_cast<unsigned>(target);
}

}  // namespace

int starpu_cpu_workers() { return static_cast<int>(starpu_cpu_worker_get_count()); }

struct TeamRunner::Impl {
  int width = 1;
  int target = -1;  // basic worker id (width 1) or combined worker id
  SpinBarrier barrier;
  SpinBarrier solo{1};  // the calling thread's "team" (inline)
  std::string error;
  std::vector<TaskArgs> args;
  std::vector<starpu_task> tasks;
  std::vector<bool> submitted;
  // The resident task (its own structure: per-step requests reuse `tasks`) and whether it may be running
  // (submitted and not yet waited for).
  Mailbox mailbox;
  TaskArgs resident_args;
  starpu_task resident_task{};
  bool resident_used = false;  // resident_task was submitted at least once (needs starpu_task_clean)
  bool resident_live = false;
  bool caller_spins = false;   // the team leaves an allocated core to the caller (kCallerSpin)
  explicit Impl(int w) : width(w), barrier(w) { starpu_task_init(&resident_task); }

  void stop_resident();
  void submit_resident(Executor& exec);
  void run_resident(Executor& exec);
};

void TeamRunner::Impl::stop_resident() {
  if (!resident_live) return;
  uint64_t w = mailbox.word.load(std::memory_order_acquire);
  while (!(w & 1) && !mailbox.word.compare_exchange_weak(w, w | 1, std::memory_order_acq_rel)) {
  }
  resident_live = false;
  const int ret = starpu_task_wait(&resident_task);
  CORUN_CHECK(ret == 0, Status::runtime_error, "serve: starpu_task_wait failed on the resident team (" << ret << ")");
}

// A fresh resident task with request 1 already posted.
void TeamRunner::Impl::submit_resident(Executor& exec) {
  ready_task(&resident_task, resident_used, &resident_args, target);
  mailbox.done.store(0, std::memory_order_release);
  mailbox.word.store(2, std::memory_order_release);  // the submission publishes it to the members too
  resident_args = TaskArgs{};
  resident_args.exec = &exec;
  resident_args.barrier = &barrier;
  resident_args.mailbox = &mailbox;
  resident_args.error = &error;
  const int ret = starpu_task_submit(&resident_task);
  CORUN_CHECK(ret == 0, Status::runtime_error, "serve: starpu_task_submit failed (" << ret << ")");
  resident_used = true;
  resident_live = true;
}

void TeamRunner::Impl::run_resident(Executor& exec) {
  if (resident_live && resident_args.exec != &exec) stop_resident();  // bound to another executor
  bool posted = false;
  if (resident_live) {
    mailbox.done.store(0, std::memory_order_relaxed);  // every member is past its increment of the last request
    uint64_t w = mailbox.word.load(std::memory_order_acquire);
    posted = !(w & 1) && mailbox.word.compare_exchange_strong(w, w + 2, std::memory_order_acq_rel);
    if (!posted) stop_resident();  // rank 0 closed it (idle): wait for it to leave, then start another
  }
  if (!posted) submit_resident(exec);
  if (caller_spins) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int spins = 0;; ++spins) {
      if (mailbox.done.load(std::memory_order_acquire) == width) return;
      _mm_pause();
      if ((spins & 63) == 63 && std::chrono::steady_clock::now() - t0 > kCallerSpin) break;
    }
  }
  std::unique_lock<std::mutex> lock(mailbox.m);
  mailbox.cv.wait(lock, [&] { return mailbox.done.load(std::memory_order_acquire) == width; });
}

TeamRunner::TeamRunner(int width) : impl_(std::make_unique<Impl>(width)) {
  const int n = starpu_cpu_workers();
  CORUN_CHECK(width >= 1 && width <= n, Status::invalid_argument,
              "serve: a team of " << width << " workers, but StarPU runs " << n << " CPU workers");
  std::vector<int> ids(static_cast<size_t>(starpu_worker_get_count()));
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int>(i);
  const std::vector<int> cpus = sched::ordered_cpu_workers(ids.data(), static_cast<unsigned>(ids.size()), "serve");
  const std::vector<int> members(cpus.begin(), cpus.begin() + width);
  impl_->caller_spins = width < machine::allocation().cores;
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
  try {
    impl_->stop_resident();
  } catch (const std::exception&) {
    // starpu_task_wait failed: StarPU is shutting down; nothing left to wait for
  }
  if (impl_->resident_used) starpu_task_clean(&impl_->resident_task);
  for (size_t i = 0; i < impl_->tasks.size(); ++i)
    if (impl_->submitted[i]) starpu_task_clean(&impl_->tasks[i]);
}

void TeamRunner::release() { impl_->stop_resident(); }

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
  s.error.clear();
  if (mode == ExecMode::resident) {
    s.run_resident(exec);
    CORUN_CHECK(s.error.empty(), Status::runtime_error, "serve: a team member failed: " << s.error);
    return;
  }
  s.stop_resident();  // the team's workers must be free for this request's tasks
  if (mode == ExecMode::on_caller) {
    // The same member code as a team of one, on this thread: no StarPU task, no round trip.
    CORUN_CHECK(s.width == 1, Status::invalid_argument, "serve: an inline request runs at width 1, not " << s.width);
    exec.run_all(0, s.solo);
    return;
  }
  const int ntasks = mode == ExecMode::wcs ? 1 : exec.phases();
  reserve(ntasks);  // no-op after the server's reserve() for its longest request
  for (int i = 0; i < ntasks; ++i) {
    starpu_task* t = &s.tasks[static_cast<size_t>(i)];
    TaskArgs& a = s.args[static_cast<size_t>(i)];
    ready_task(t, s.submitted[static_cast<size_t>(i)], &a, s.target);
    s.submitted[static_cast<size_t>(i)] = false;
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
