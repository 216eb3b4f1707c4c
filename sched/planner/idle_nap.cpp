#include "sched/planner/idle_nap.hpp"

#include <algorithm>
#include <cmath>

namespace corun::sched {

double IdleNapRule::nap_us(bool shared, double idle_us) const {
  if (mode_ == IdleNaps::off || (mode_ == IdleNaps::when_shared && !shared)) return 0.0;
  if (!(idle_us >= kSpinUs)) return 0.0;  // NaN (never ran a task yet counts as just idle): spin
  return std::clamp(idle_us, kMinNapUs, kMaxNapUs);
}

const char* idle_naps_name(IdleNaps mode) {
  switch (mode) {
    case IdleNaps::off: return "off";
    case IdleNaps::when_shared: return "auto";
    case IdleNaps::always: return "always";
  }
  return "?";
}

}  // namespace corun::sched
