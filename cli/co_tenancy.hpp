// cli/co_tenancy.hpp — `corun train` notices, while it runs, other StarPU or corun processes on its cores
// (issue 21 item 7). Teams of width > 1 then wait for members whose cores are busy elsewhere, and an
// iteration can take several times its quiet time; `corun info` already warned, `corun train` said nothing.
//
//   CoTenancyWatch watch("train", machine::allocation(cfg.cgroup_root), cfg.quiet);  // before the engine starts
//   watch.check();                     // before the first iteration and after each: rescans every few seconds
//
// One warning line on stderr (cli/shared_machine's, the same as serve-bench's), the first time another process
// shares the allocation's CPUs, whether it was there at the start or came later. CORUN_QUIET=1 silences it.
// Narrower teams are the policies' part: they measure teams waiting on busy cores and narrow them, with their
// own warning line (sched/planner/co_tenancy.hpp, CORUN_COTENANCY).
#pragma once

#include <corun/machine.hpp>

#include <chrono>
#include <string>
#include <utility>

namespace corun::cli {

class CoTenancyWatch {
 public:
  CoTenancyWatch(std::string command, machine::Allocation allocation, bool quiet)
      : command_(std::move(command)), allocation_(std::move(allocation)), warned_(quiet) {}
  /// Scans for co-tenants when the last scan is `kInterval` old (the first call always scans); prints the
  /// warning once. Returns true when the warning has been printed (now or before), or when quiet.
  bool check();

  static constexpr std::chrono::seconds kInterval{5};

 private:
  std::string command_;
  machine::Allocation allocation_;
  bool warned_;
  bool scanned_ = false;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace corun::cli
