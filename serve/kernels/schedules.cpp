#include "serve/kernels/schedules.hpp"

#include "base/check.hpp"

#include <algorithm>
#include <bit>
#include <map>
#include <functional>
#include <tuple>

namespace corun::serve {

StepDag StepDag::independent(int gates) {
  StepDag d;
  d.gates = gates;
  d.deps.assign(static_cast<size_t>(2 * gates), 0u);
  return d;
}

uint32_t PhasedSchedule::hoisted_gates(int gates) const {
  uint32_t mask = 0;
  for (int p = 0; p < time_independent; ++p) mask |= phases[static_cast<size_t>(p)] & ((1u << gates) - 1u);
  return mask;
}

std::vector<FusedMM> PhasedSchedule::fused(int phase, int gates) const {
  const uint32_t m = phases[static_cast<size_t>(phase)];
  const uint32_t all = (1u << gates) - 1u;
  std::vector<FusedMM> out;
  if (m & all) out.push_back(FusedMM{false, m & all});
  if ((m >> gates) & all) out.push_back(FusedMM{true, (m >> gates) & all});
  return out;
}

std::string PhasedSchedule::str(const char* letters) const {
  std::string s;
  int gates = 0;
  while (letters[gates] != '\0') ++gates;
  for (size_t p = 0; p < phases.size(); ++p) {
    s += static_cast<int>(p) < time_independent ? "T{" : "{";
    bool first = true;
    for (const FusedMM& f : fused(static_cast<int>(p), gates)) {
      if (!first) s += ' ';
      first = false;
      s += f.recurrent ? "h:" : "x:";
      bool comma = false;
      for (int g = 0; g < gates; ++g)
        if (f.gates & (1u << g)) {
          if (comma) s += ',';
          s += letters[g];
          comma = true;
        }
    }
    s += '}';
  }
  return s;
}

namespace {

bool depends(const StepDag& dag, uint32_t earlier, uint32_t later) {
  for (int m = 0; m < dag.mms(); ++m)
    if ((later & (1u << m)) && (dag.deps[static_cast<size_t>(m)] & earlier)) return true;
  return false;
}

bool time_dependent(const StepDag& dag, uint32_t phase) { return (phase >> dag.gates) != 0; }

}  // namespace

std::vector<PhasedSchedule> enumerate_schedules(const StepDag& dag, ScheduleCounts* counts) {
  CORUN_CHECK(dag.gates >= 1 && dag.mms() <= 16 && static_cast<int>(dag.deps.size()) == dag.mms(),
              Status::invalid_argument, "schedule enumeration: 1 to 8 gates with one dependency mask per MM");
  ScheduleCounts n;
  std::vector<PhasedSchedule> out;
  std::vector<uint32_t> phases;
  const uint32_t all = (1u << dag.mms()) - 1u;

  std::function<void(uint32_t, uint32_t, bool)> rec = [&](uint32_t done, uint32_t remaining, bool valid) {
    if (remaining == 0) {
      ++n.ordered_partitions;
      if (!valid) return;
      ++n.valid;
      // Rule (ii), within the step and across the boundary to the next step (last phase -> first phase;
      // recurrent MMs of step t+1 read h_t, which needs every MM of step t).
      const size_t np = phases.size();
      for (size_t p = 0; p + 1 < np; ++p) {
        const bool same = time_dependent(dag, phases[p]) == time_dependent(dag, phases[p + 1]);
        if (same && !depends(dag, phases[p], phases[p + 1])) return;
      }
      ++n.rule_ii;
      // Rule (iii): every time-independent phase before the first time-dependent one.
      int ti = 0;
      while (ti < static_cast<int>(np) && !time_dependent(dag, phases[static_cast<size_t>(ti)])) ++ti;
      for (size_t p = static_cast<size_t>(ti); p < np; ++p)
        if (!time_dependent(dag, phases[p])) return;
      ++n.rule_iii;
      out.push_back(PhasedSchedule{phases, ti});
      return;
    }
    // Next phase: any non-empty subset of the remaining MMs (enumerated as submasks).
    for (uint32_t s = remaining; s != 0; s = (s - 1) & remaining) {
      bool ok = valid;
      for (int m = 0; ok && m < dag.mms(); ++m)
        if ((s & (1u << m)) && (dag.deps[static_cast<size_t>(m)] & ~done)) ok = false;
      phases.push_back(s);
      rec(done | s, remaining & ~s, ok);
      phases.pop_back();
    }
  };
  rec(0u, all, true);
  if (counts != nullptr) *counts = n;
  return out;
}

std::vector<PhasedSchedule> distinct_by_shape(const std::vector<PhasedSchedule>& schedules, int gates) {
  // Shape signature: per phase, (time-independent?, per fused MM: recurrent?, gate count).
  std::map<std::vector<int>, PhasedSchedule> best;
  for (const PhasedSchedule& s : schedules) {
    std::vector<int> sig;
    for (size_t p = 0; p < s.phases.size(); ++p) {
      sig.push_back(static_cast<int>(p) < s.time_independent ? -1 : -2);
      for (const FusedMM& f : s.fused(static_cast<int>(p), gates)) {
        sig.push_back(f.recurrent ? 1 : 0);
        sig.push_back(std::popcount(f.gates));
      }
    }
    auto it = best.find(sig);
    if (it == best.end() || s.hoisted_gates(gates) < it->second.hoisted_gates(gates)) best[sig] = s;
  }
  std::vector<PhasedSchedule> out;
  for (auto& [sig, s] : best) out.push_back(s);
  std::sort(out.begin(), out.end(), [gates](const PhasedSchedule& a, const PhasedSchedule& b) {
    return std::popcount(a.hoisted_gates(gates)) > std::popcount(b.hoisted_gates(gates));
  });
  return out;
}

}  // namespace corun::serve
