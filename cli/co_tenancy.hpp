// cli/co_tenancy.hpp — `corun train` notices, while it runs, other StarPU or corun processes on its cores
// (issue 21 item 7). Teams of width > 1 then wait for members whose cores are busy elsewhere, and an
// iteration can take several times its quiet time; `corun info` already warned, `corun train` said nothing.
//
//   CoTenancyWatch watch(machine::allocation(cfg.cgroup_root).usable);   // before the engine starts
//   watch.check();                     // after each iteration: rescans /proc at most every few seconds
//
// One warning line on stderr, the first time another process shares the allocation's CPUs, naming it.
// Degrading to narrower teams is not done here (the policies would have to re-plan mid-run).
#pragma once

#include <chrono>
#include <utility>
#include <vector>

namespace corun::cli {

class CoTenancyWatch {
 public:
  explicit CoTenancyWatch(std::vector<int> usable_cpus) : usable_(std::move(usable_cpus)) {}
  /// Scans for co-tenants when the last scan is `kInterval` old (the first call always scans); prints the
  /// warning once. Returns true when the warning has been printed (now or before).
  bool check();

  static constexpr std::chrono::seconds kInterval{5};

 private:
  std::vector<int> usable_;
  bool warned_ = false;
  bool scanned_ = false;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace corun::cli
