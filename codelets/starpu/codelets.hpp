// codelets/starpu/codelets.hpp — one StarPU codelet per op kind, built from the kernel table.
//
// Every codelet is STARPU_SPMD with max_parallelism = the op's max width, one CPU implementation (a
// trampoline that calls the fast or the reference kernel with the member's rank and the team size), and a
// history-based perfmodel with the stable symbol "corun_<op>" and a footprint computed from the shapes in
// the task's OpCall. One implementation only: a policy choosing between kernels could change the numbers.
#pragma once

#include "codelets/op.hpp"

#include <string>

struct starpu_codelet;
struct starpu_task;

namespace corun::codelets {

/// The codelet of `kind` (built once, lives until exit). The task's cl_arg must point to its OpCall.
starpu_codelet* codelet(OpKind kind);

/// The same codelet without a performance model: StarPU records no sample of a task that runs it. A graph's
/// first run on an engine under corun's policies runs these (engine/submit.cpp): every kernel's first call on a thread pays for
/// what it makes once (oneDNN's per-thread primitives and their JIT, OpenBLAS buffers, first-touch page
/// faults), up to 20x its steady time, and StarPU's history keeps every sample in its mean: one process's
/// cold width-2 samples made ResNet-18's width-2 convolutions look 2.5x slower than width 1 in every later
/// process.
starpu_codelet* unmodelled_codelet(OpKind kind);

/// Called by rank 0 of every task of these codelets right before its kernel (a team's members have met by
/// then): where the engine's task observers see a task start (engine/task_observers.hpp). nullptr, the default:
/// the trampoline calls nothing. Set only while no task runs (the engine changes it with no run in flight).
using TaskEntryHook = void (*)(starpu_task* task);
void set_task_entry_hook(TaskEntryHook hook);

/// Selects the kernel every codelet runs from now on (default: fast).
void set_kernel_choice(KernelChoice choice);
KernelChoice kernel_choice();

/// Footprint of a call: a hash of the op kind, every buffer shape, the integer attributes and the ew_chain
/// program, so two calls share a perfmodel entry exactly when they do the same work.
uint32_t footprint(const OpCall& call);

/// An exception escaped a kernel since the last call: returns its message and clears it ("" if none).
/// Kernels run inside StarPU's C callbacks, where exceptions must not propagate.
std::string take_kernel_error();

}  // namespace corun::codelets
