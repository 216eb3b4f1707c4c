#include "sched/toolbox/idle_napper.hpp"

#include <ctime>

namespace corun::sched {

IdleNapper::~IdleNapper() {
  for (int c = 0; c < cores_; ++c) {
    STARPU_PTHREAD_COND_DESTROY(&sleepers_[static_cast<size_t>(c)].cond);
    STARPU_PTHREAD_MUTEX_DESTROY(&sleepers_[static_cast<size_t>(c)].mutex);
  }
}

void IdleNapper::set_up(int cores) {
  sleepers_ = std::make_unique<Sleeper[]>(static_cast<size_t>(cores));
  cores_ = cores;
  for (int c = 0; c < cores; ++c) {
    STARPU_PTHREAD_MUTEX_INIT(&sleepers_[static_cast<size_t>(c)].mutex, nullptr);
    STARPU_PTHREAD_COND_INIT(&sleepers_[static_cast<size_t>(c)].cond, nullptr);
  }
}

bool IdleNapper::nap(int core, double us) {
#ifndef STARPU_NON_BLOCKING_DRIVERS
  (void)core, (void)us;
  return false;  // StarPU's blocking drivers already sleep when idle
#else
  Sleeper& s = sleepers_[static_cast<size_t>(core)];
  timespec until{};
  clock_gettime(CLOCK_REALTIME, &until);  // the clock of a default condition variable
  const long ns = until.tv_nsec + static_cast<long>(us * 1000.0);
  until.tv_sec += ns / 1000000000L;
  until.tv_nsec = ns % 1000000000L;
  starpu_worker_relax_on();  // pushes to this worker (and StarPU's own state changes) go on meanwhile
  STARPU_PTHREAD_MUTEX_LOCK(&s.mutex);
  s.napping.store(true, std::memory_order_seq_cst);
  // A wake between the policy's check and here set `woken`: no sleep then. The flag is read under the
  // mutex that wake() signals under, so no wake is lost.
  if (!s.woken.exchange(false, std::memory_order_acq_rel)) starpu_pthread_cond_timedwait(&s.cond, &s.mutex, &until);
  s.napping.store(false, std::memory_order_relaxed);
  s.woken.store(false, std::memory_order_relaxed);
  STARPU_PTHREAD_MUTEX_UNLOCK(&s.mutex);
  starpu_worker_relax_off();
  return true;
#endif
}

void IdleNapper::wake(int core) {
  if (cores_ == 0) return;
  Sleeper& s = sleepers_[static_cast<size_t>(core)];
  s.woken.store(true, std::memory_order_seq_cst);
  if (!s.napping.load(std::memory_order_seq_cst)) return;
  STARPU_PTHREAD_MUTEX_LOCK(&s.mutex);
  STARPU_PTHREAD_COND_SIGNAL(&s.cond);
  STARPU_PTHREAD_MUTEX_UNLOCK(&s.mutex);
}

}  // namespace corun::sched
