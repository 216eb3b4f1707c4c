#include "sched/planner/idle_nap.hpp"

#include <algorithm>
#include <cmath>

namespace corun::sched {

double IdleNapRule::nap_us(bool shared, double idle_us) const {
  if (mode_ == IdleNaps::off || (mode_ == IdleNaps::when_shared && !shared)) return 0.0;
  if (!(idle_us >= kSpinUs)) return 0.0;  // NaN (never ran a task yet counts as just idle): spin
  return std::clamp(idle_us, kMinNapUs, kMaxNapUs);
}

IdleNaps parse_idle_naps(const std::string& value) {
  return value == "off" ? IdleNaps::off : value == "always" ? IdleNaps::always : IdleNaps::when_shared;
}

}  // namespace corun::sched
