#include "serve/runtime/plan_search.hpp"

#include "base/check.hpp"
#include "serve/kernels/executor.hpp"
#include "serve/kernels/pcp.hpp"
#include "serve/kernels/schedules.hpp"
#include "serve/kernels/step_gemm.hpp"
#include "serve/runtime/team_runner.hpp"

#include <hwloc.h>

#include <algorithm>
#include <chrono>
#include <random>

namespace corun::serve {

CacheSizes cache_sizes() {
  CacheSizes c;
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) return c;
  if (hwloc_topology_load(topo) == 0) {
    if (hwloc_obj_t o = hwloc_get_obj_by_type(topo, HWLOC_OBJ_L2CACHE, 0)) c.l2 = static_cast<int64_t>(o->attr->cache.size);
    if (hwloc_obj_t o = hwloc_get_obj_by_type(topo, HWLOC_OBJ_L3CACHE, 0)) c.l3 = static_cast<int64_t>(o->attr->cache.size);
  }
  hwloc_topology_destroy(topo);
  if (c.l2 == 0) c.l2 = 512 * 1024;  // hwloc saw no L2 (some VMs): a common private L2 size
  return c;
}

std::vector<Plan> candidate_plans(const ModelSpec& spec, int batch, int seq, int max_workers, int64_t l2_bytes) {
  const int g = gate_count(spec.cell);
  const std::vector<PhasedSchedule> schedules = distinct_by_shape(enumerate_schedules(StepDag::independent(g)), g);
  // The recurrent MM of one direction: C[B, G*H] = h[B, H] W_hh^T[H, G*H]; J is split by hidden units.
  const MatmulShape mm{batch, static_cast<int64_t>(g) * spec.hidden, spec.hidden};
  std::vector<Plan> out;
  for (const PhasedSchedule& s : schedules)  // distinct_by_shape puts "everything hoisted" first
    for (int p = max_workers; p >= 1; --p)
      for (int groups = 1; groups <= spec.directions(); ++groups) {
        if (p % groups != 0) continue;
        const int per_dir = p / groups;
        if (per_dir > static_cast<int64_t>(batch) * spec.hidden) continue;
        const Partition part = choose_partition(mm, per_dir, seq, l2_bytes, spec.hidden);
        Plan plan;
        plan.hoisted_gates = s.hoisted_gates(g);
        plan.workers = p;
        plan.direction_groups = groups;
        plan.xi = part.xi;
        plan.xj = part.xj;
        out.push_back(plan);
        // PCP models the recurrent MM alone; a schedule that keeps input MMs in the step adds their weights
        // to each member's working set, which can tip a batch split (each member reads all weights) over
        // the L2. So when PCP splits the batch, the hidden-unit split is calibrated too.
        if (part.xi > 1 && per_dir <= spec.hidden) {
          plan.xi = 1;
          plan.xj = per_dir;
          out.push_back(plan);
        }
      }
  return out;
}

namespace {

// `runs` request times in ms (after one warm-up request: page faults, weights into the caches).
std::vector<double> time_plan(const Model& model, int batch, int seq, const Plan& plan, int runs) {
  std::vector<float> x(static_cast<size_t>(seq) * batch * model.spec().input);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (float& v : x) v = u(rng);
  Executor exec(model, batch, seq, plan);
  TeamRunner runner(plan.workers);
  exec.set_input(x.data(), seq);
  runner.run(exec, plan.mode);
  std::vector<double> ms;
  for (int r = 0; r < runs; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    runner.run(exec, plan.mode);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return ms;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Candidates are timed in interleaved rounds (each round visits every candidate), so a noisy period on a
// shared machine hits all of them instead of deciding the winner; each one's score is the median of its
// samples from every round.
constexpr int kRounds = 3;

void calibrate_interleaved(const Model& model, int batch, int seq, std::vector<Plan>& plans, int runs) {
  const int per_round = std::max(1, (runs + kRounds - 1) / kRounds);
  std::vector<std::vector<double>> samples(plans.size());
  for (int r = 0; r < kRounds; ++r)
    for (size_t i = 0; i < plans.size(); ++i) {
      const std::vector<double> t = time_plan(model, batch, seq, plans[i], per_round);
      samples[i].insert(samples[i].end(), t.begin(), t.end());
    }
  for (size_t i = 0; i < plans.size(); ++i) plans[i].calibrated_ms = median(samples[i]);
}

}  // namespace

double calibrate_plan(const Model& model, int batch, int seq, const Plan& plan, int runs) {
  return median(time_plan(model, batch, seq, plan, runs));
}

Plan search_plan(const Model& model, int batch, int seq, int max_workers, int runs, std::vector<Plan>* timed) {
  std::vector<Plan> cands = candidate_plans(model.spec(), batch, seq, max_workers, cache_sizes().l2);
  CORUN_CHECK(!cands.empty(), Status::invalid_argument, "serve: no plan fits " << model.spec().str());
  calibrate_interleaved(model, batch, seq, cands, runs);
  Plan best = *std::min_element(cands.begin(), cands.end(),
                                [](const Plan& a, const Plan& b) { return a.calibrated_ms < b.calibrated_ms; });
  // The execution modes, timed again side by side: for the winning schedule and partition, WCS against one
  // task per phase and against a resident team (no StarPU round trip per request); and the best plan of one
  // worker run inline on the calling thread (no task at all), which wins when a request is too short to
  // pay for a round trip or a second core.
  std::vector<Plan> modes = {best, best, best};
  modes[1].mode = ExecMode::per_step;
  modes[2].mode = ExecMode::resident;
  const Plan* solo = nullptr;
  for (const Plan& c : cands)
    if (c.workers == 1 && (solo == nullptr || c.calibrated_ms < solo->calibrated_ms)) solo = &c;
  if (solo != nullptr) {
    modes.push_back(*solo);
    modes.back().mode = ExecMode::on_caller;
  }
  // The step kernel, timed too: the candidates ran the shape rule (automatic), which picks libxsmm's JIT
  // kernels for small batches; the winner under OpenBLAS alone is the check that the rule did not lose here.
  if (have_libxsmm() && batch >= 2) {
    modes.push_back(best);
    modes.back().step_gemm = StepGemmKernel::openblas;
  }
  calibrate_interleaved(model, batch, seq, modes, runs);
  if (timed != nullptr) {
    *timed = cands;
    timed->insert(timed->end(), modes.begin(), modes.end());
  }
  // Ties keep the earlier mode (wcs first: it holds no worker between requests).
  return *std::min_element(modes.begin(), modes.end(),
                           [](const Plan& a, const Plan& b) { return a.calibrated_ms < b.calibrated_ms; });
}

}  // namespace corun::serve
