#include "sched/toolbox/workers.hpp"

#include "base/check.hpp"

#include <starpu.h>

#include <algorithm>

namespace corun::sched {

std::vector<int> ordered_cpu_workers(const int* ids, unsigned n, const char* policy) {
  std::vector<int> cpus;
  for (unsigned i = 0; i < n; ++i)
    if (starpu_worker_get_type(ids[i]) == STARPU_CPU_WORKER) cpus.push_back(ids[i]);
  CORUN_CHECK(!cpus.empty(), Status::runtime_error, "the " << policy << " policy needs at least one CPU worker");
  std::stable_sort(cpus.begin(), cpus.end(),
                   [](int a, int b) { return starpu_worker_get_bindid(a) < starpu_worker_get_bindid(b); });
  return cpus;
}

int create_team(const std::vector<int>& members, const char* context) {
  const int total = static_cast<int>(starpu_worker_get_count()) + static_cast<int>(starpu_combined_worker_get_count());
  CORUN_CHECK(total < STARPU_NMAXWORKERS, Status::runtime_error,
              "StarPU was built with room for " << STARPU_NMAXWORKERS << " workers and teams, too few for " << context
                                                << "; rebuild it with scripts/build-starpu.sh");
  std::vector<int> ids = members;  // StarPU sorts its argument in place
  const int id = starpu_combined_worker_assign_workerid(static_cast<int>(ids.size()), ids.data());
  CORUN_CHECK(id >= 0, Status::runtime_error, "StarPU refused a team of " << ids.size() << " workers (" << id << ")");
  return id;
}

void push_to_workers(starpu_task* task, int team, const int* workers, int width, starpu_task** expected) {
  if (width == 1) {
    expected[0] = task;
    const int ret = starpu_push_local_task(workers[0], task, 0);
    if (ret != 0) CORUN_ABORT("starpu_push_local_task failed (" << ret << ")");
    return;
  }
  starpu_parallel_task_barrier_init(task, team);
  starpu_push_task_end(task);  // before any alias can run and finish the job
  for (int m = 0; m < width; ++m) {
    starpu_task* alias = starpu_task_dup(task);
    alias->destroy = 1;
    expected[m] = alias;
    const int ret = starpu_push_local_task(workers[m], alias, 0);
    if (ret != 0) CORUN_ABORT("starpu_push_local_task failed (" << ret << ")");
  }
}

}  // namespace corun::sched
