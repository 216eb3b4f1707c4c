// sched/toolbox/workers.hpp — mechanics shared by corun's StarPU policies: worker order, teams, and
// handing a (possibly parallel) task to exact workers. No decisions here; the planners make them.
#pragma once

#include <vector>

struct starpu_task;

namespace corun::sched {

/// The CPU workers among `ids`, in hwloc logical order of their bound PUs: consecutive workers share
/// caches and NUMA nodes, so contiguous blocks of this list are good teams. Throws corun::Error when
/// there is none (`policy` names the caller in the message).
std::vector<int> ordered_cpu_workers(const int* ids, unsigned n, const char* policy);

/// A StarPU combined worker over `members` (basic worker ids); throws corun::Error with the fix when
/// StarPU's worker id space (maxcpus) is full or StarPU refuses the team.
int create_team(const std::vector<int>& members, const char* context);

/// Pushes `task` to `workers[0..width)` with starpu_push_local_task, which wakes them. Width 1: the task
/// itself. Width > 1: the parallel barrier of `team` (a combined worker of that size), then one alias per
/// member; expected[m] receives what member m was given (to match completions by pointer in
/// post_exec_hook: an alias's job may be freed by rank 0 before the alias's own hook runs).
/// Call with the policy's lock held, and only on idle workers, so members see team tasks in one order.
void push_to_workers(starpu_task* task, int team, const int* workers, int width, starpu_task** expected);

}  // namespace corun::sched
