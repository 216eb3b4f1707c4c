#include "cli/co_tenancy.hpp"

#include "cli/shared_machine.hpp"

namespace corun::cli {

bool CoTenancyWatch::check() {
  if (warned_) return true;
  const auto now = std::chrono::steady_clock::now();
  if (scanned_ && now - last_ < kInterval) return false;  // /proc scans cost ~1 ms: not after every iteration
  scanned_ = true;
  last_ = now;
  warned_ = warn_if_shared(command_, allocation_, false);
  return warned_;
}

}  // namespace corun::cli
