#include "engine/task_observers.hpp"

#include "base/check.hpp"
#include "codelets/starpu/codelets.hpp"
#include "engine/engine_impl.hpp"

#include <starpu.h>

#include <algorithm>

namespace corun {

// The list changes with no run in flight: a task of a run never sees it change (task_observers.hpp).
void Engine::add_observer(std::shared_ptr<TaskObserver> observer) {
  CORUN_CHECK(observer != nullptr, Status::invalid_argument,
              "Engine::add_observer: the observer is null; pass a std::make_shared of a corun::TaskObserver");
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->wait_until_no_run_in_flight();
  CORUN_CHECK(impl_->observers.add(std::move(observer), impl_->info.workers), Status::invalid_argument,
              "Engine::add_observer: this observer is attached already; it sees every task once as it is "
              "(remove_observer detaches it)");
}

void Engine::remove_observer(const std::shared_ptr<TaskObserver>& observer) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->wait_until_no_run_in_flight();
  CORUN_CHECK(impl_->observers.remove(observer.get()), Status::invalid_argument,
              "Engine::remove_observer: this observer is not attached to this engine (add_observer attaches one)");
}

namespace engine {

TaskObservers::~TaskObservers() {
  if (!calls_.empty()) codelets::set_task_entry_hook(nullptr);
}

bool TaskObservers::add(std::shared_ptr<TaskObserver> observer, int workers) {
  if (std::find(calls_.begin(), calls_.end(), observer.get()) != calls_.end()) return false;
  observer->set_up(workers);
  calls_.push_back(observer.get());
  owned_.push_back(std::move(observer));
  list_changed();
  return true;
}

bool TaskObservers::remove(const TaskObserver* observer) {
  const auto owned = std::find_if(owned_.begin(), owned_.end(), [&](const auto& o) { return o.get() == observer; });
  if (owned == owned_.end()) return false;
  calls_.erase(std::find(calls_.begin(), calls_.end(), observer));
  owned_.erase(owned);
  list_changed();
  return true;
}

void TaskObservers::attach(TaskObserver* observer) {
  calls_.push_back(observer);
  list_changed();
}

void TaskObservers::detach(TaskObserver* observer) {
  const auto it = std::find(calls_.begin(), calls_.end(), observer);
  if (it != calls_.end()) calls_.erase(it);
  list_changed();
}

void TaskObservers::list_changed() {
  codelets::set_task_entry_hook(calls_.empty() ? nullptr : &TaskObservers::entered);
}

void TaskObservers::watch(starpu_task* task, Record& record, int node, uint64_t run) const {
  record.task = ObservedTask{task->name != nullptr ? task->name : "", node, run, 1};
  record.observers = this;
  record.then = task->callback_func;
  record.then_arg = task->callback_arg;
  record.entered = false;
  task->callback_func = &TaskObservers::exited;
  task->callback_arg = &record;
}

// Rank 0 of the task, in the trampoline before the kernel: the team has met, so its width is final. Tasks
// nobody watches (serving runtime's, or submitted before the first observer) are left alone.
void TaskObservers::entered(starpu_task* task) {
  if (task == nullptr || task->callback_func != &TaskObservers::exited) return;
  auto* record = static_cast<Record*>(task->callback_arg);
  record->task.width = starpu_combined_worker_get_size();
  record->entered = true;
  const int worker = starpu_worker_get_id();
  for (TaskObserver* o : record->observers->calls_) o->on_entry(worker, record->task);
}

// The task's callback, on rank 0's worker after every member ended (StarPU 1.3 runs it from the job's
// termination there; starpu-1.3-notes.md (f)). The task's own callback comes last: it may end the run, after
// which the record may be gone and the list may change.
void TaskObservers::exited(void* arg) {
  auto* record = static_cast<Record*>(arg);
  const int worker = starpu_worker_get_id();
#ifdef STARPU_SIMGRID
  if (!record->entered) {  // a simulated StarPU runs no kernel, so no trampoline: the start is now
    record->task.width = starpu_combined_worker_get_size();
    for (TaskObserver* o : record->observers->calls_) o->on_entry(worker, record->task);
  }
#endif
  for (TaskObserver* o : record->observers->calls_) o->on_exit(worker, record->task);
  if (record->then != nullptr) record->then(record->then_arg);
}

}  // namespace engine
}  // namespace corun
