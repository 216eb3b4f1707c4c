#include "codelets/starpu/codelets.hpp"

#include "codelets/conv2d/conv2d_dnnl.hpp"
#include "codelets/group/group.hpp"
#include "codelets/matmul/gemm_impls.hpp"

#include "base/check.hpp"

#include <starpu.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <climits>
#include <cmath>
#include <exception>
#include <mutex>
#include <string>
#include <vector>

namespace corun::codelets {

namespace {

std::atomic<KernelChoice> g_choice{KernelChoice::fast};
std::atomic<TaskEntryHook> g_entry_hook{nullptr};

std::mutex g_error_mutex;
std::string g_error;  // first error since the last take_kernel_error()

void record_error(const std::string& msg) {
  std::lock_guard<std::mutex> lock(g_error_mutex);
  if (g_error.empty()) g_error = msg;
}

// The CPU implementation of every codelet. StarPU gives a combined-worker member its rank and the team
// size; a plain worker is a team of one. Buffers are registered as vectors of floats.
void trampoline(void* buffers[], void* cl_arg) {
  const auto* call = static_cast<const OpCall*>(cl_arg);
  const int width = starpu_combined_worker_get_size();
  const int rank = starpu_combined_worker_get_rank();
  std::array<float*, 64> small{};
  std::vector<float*> large;
  float** ptrs = small.data();
  const int n = call->nbuffers();
  if (n > static_cast<int>(small.size())) {
    large.resize(static_cast<size_t>(n));
    ptrs = large.data();
  }
  for (int b = 0; b < n; ++b) ptrs[b] = reinterpret_cast<float*>(STARPU_VECTOR_GET_PTR(buffers[b]));
  const OpInfo& info = op_info(call->kind);
  if (rank == 0)
    if (TaskEntryHook hook = g_entry_hook.load(std::memory_order_acquire)) hook(starpu_task_get_current());
  try {
    (g_choice.load(std::memory_order_relaxed) == KernelChoice::ref ? info.ref : info.fast)(*call, ptrs, rank, width);
  } catch (const std::exception& e) {
    record_error(std::string(info.name) + " kernel failed: " + e.what());
  } catch (...) {
    record_error(std::string(info.name) + " kernel failed with an unknown exception");
  }
}

uint32_t footprint_of_task(starpu_task* task) { return footprint(*static_cast<const OpCall*>(task->cl_arg)); }

#ifdef STARPU_SIMGRID
// In simulated time every task sleeps for its model's prediction, and StarPU aborts on a task without one.
// A group the parallel-op pass forms in a simulated run was never run natively at that width (on the 2-core
// machine a group only ever runs at width 2, so no law has a width-1 time to scale), so its history is empty.
// Its model is then what the pass itself assumes (group_time_us, group.hpp) from the members' width-1
// models, which are the (scaled) history of the simulated machine.
double group_cost(starpu_task* task, starpu_perfmodel_arch* arch, unsigned nimpl) {
  const auto* call = static_cast<const OpCall*>(task->cl_arg);
  starpu_perfmodel_device dev{};
  dev.type = STARPU_CPU_WORKER;
  dev.ncores = 1;
  starpu_perfmodel_arch one{};
  one.ndevices = 1;
  one.devices = &dev;
  std::vector<double> member_us;
  for (const OpCall& member : call->members) {
    starpu_task probe;
    starpu_task_init(&probe);
    probe.cl = codelet(member.kind);
    probe.cl_arg = const_cast<OpCall*>(&member);
    const double us = starpu_task_expected_length(&probe, &one, nimpl);
    probe.cl_arg = nullptr;
    starpu_task_clean(&probe);
    if (!(us > 0)) return NAN;  // a member without a model: StarPU's own message names the codelet
    member_us.push_back(us);
  }
  return group_time_us(member_us, std::max(1, arch->devices[0].ncores));
}
#endif

struct Table {
  std::array<starpu_codelet, static_cast<size_t>(OpKind::count_)> cl{};
  std::array<starpu_perfmodel, static_cast<size_t>(OpKind::count_)> model{};
  std::array<std::string, static_cast<size_t>(OpKind::count_)> symbol;
  std::array<starpu_codelet, static_cast<size_t>(OpKind::count_)> unmodelled{};  // cl without their models

  Table() {
    for (int k = 0; k < static_cast<int>(OpKind::count_); ++k) {
      const OpInfo& info = op_info(static_cast<OpKind>(k));
      auto& m = model[static_cast<size_t>(k)];
      symbol[static_cast<size_t>(k)] = std::string("corun_") + info.name;
      // Zero-initialised like StarPU's static models; StarPU initialises it lazily at first use.
      m.type = STARPU_HISTORY_BASED;
      m.symbol = symbol[static_cast<size_t>(k)].c_str();
      m.footprint = footprint_of_task;
#ifdef STARPU_SIMGRID
      if (static_cast<OpKind>(k) == OpKind::group) {
        m.type = STARPU_PER_ARCH;
        m.arch_cost_function = group_cost;
      }
#endif
      auto& c = cl[static_cast<size_t>(k)];
      starpu_codelet_init(&c);
      c.type = STARPU_SPMD;
      c.max_parallelism = info.max_width;
      c.cpu_funcs[0] = trampoline;
      c.cpu_funcs_name[0] = "corun_trampoline";
      c.nbuffers = STARPU_VARIABLE_NBUFFERS;  // modes are set per task (concat/split take any count)
      c.model = &m;
      c.name = info.name;
      unmodelled[static_cast<size_t>(k)] = c;
      unmodelled[static_cast<size_t>(k)].model = nullptr;
    }
  }
};

Table& table() {
  static Table t;
  return t;
}

}  // namespace

starpu_codelet* codelet(OpKind kind) {
  CORUN_ASSERT(kind < OpKind::count_);
  return &table().cl[static_cast<size_t>(kind)];
}

starpu_codelet* unmodelled_codelet(OpKind kind) {
  CORUN_ASSERT(kind < OpKind::count_);
  return &table().unmodelled[static_cast<size_t>(kind)];
}

void set_kernel_choice(KernelChoice choice) { g_choice.store(choice); }
void set_task_entry_hook(TaskEntryHook hook) { g_entry_hook.store(hook, std::memory_order_release); }
KernelChoice kernel_choice() { return g_choice.load(); }

uint32_t footprint(const OpCall& call) {
  uint32_t h = starpu_hash_crc32c_be(static_cast<uint32_t>(call.kind), 0);
  for (const Shape& s : call.shapes) {
    h = starpu_hash_crc32c_be(static_cast<uint32_t>(s.rank), h);
    for (int d = 0; d < s.rank; ++d) h = starpu_hash_crc32c_be_n(&s.dims[static_cast<size_t>(d)], sizeof(int64_t), h);
  }
  h = starpu_hash_crc32c_be_n(call.i.data(), kFootprintBaseAttrs * sizeof(int64_t), h);
  // Attributes past the first four enter the hash only when set: models recorded before kMaxIntAttrs grew
  // keep their footprints.
  bool extra = false;
  for (int a = kFootprintBaseAttrs; a < kMaxIntAttrs; ++a) extra = extra || call.i[static_cast<size_t>(a)] != 0;
  if (extra)
    h = starpu_hash_crc32c_be_n(call.i.data() + kFootprintBaseAttrs, (kMaxIntAttrs - kFootprintBaseAttrs) * sizeof(int64_t), h);
  // ew_chain: chains of the same shape doing different work must not share a model entry.
  if (!call.program.empty()) h = starpu_hash_crc32c_be_n(call.program.data(), call.program.size() * sizeof(int32_t), h);
  // Convolutions on the oneDNN kernels: their own model entries (the im2col ones keep their footprints).
  if (call_uses_dnnl_conv(call)) h = starpu_hash_crc32c_be(0x646e6e6cu /* "dnnl" */, h);
  if (call_uses_winograd_conv(call)) h = starpu_hash_crc32c_be(0x77696e6fu /* "wino" */, h);
  // Products on oneDNN's sgemm: likewise (the OpenBLAS ones keep theirs).
  if (call_uses_onednn_gemm(call)) h = starpu_hash_crc32c_be(0x6f67656du /* "ogem" */, h);
  // group: the members' own footprints, in order.
  for (const OpCall& m : call.members) h = starpu_hash_crc32c_be(footprint(m), h);
  return h;
}

std::string take_kernel_error() {
  std::lock_guard<std::mutex> lock(g_error_mutex);
  std::string e;
  e.swap(g_error);
  return e;
}

}  // namespace corun::codelets
