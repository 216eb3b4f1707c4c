// IdleNapRule (issue 52 item 8): when an idle worker sleeps instead of spinning, and for how long at most.
// No StarPU: the rule only; the napping itself is tested through the engine (OwnPolicy variants *_naps).
#include "sched/planner/idle_nap.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace corun::sched {
namespace {

using R = IdleNapRule;

TEST(IdleNapRule, OffAlwaysSpins) {
  const R r(IdleNaps::off);
  EXPECT_EQ(r.nap_us(true, 1e6), 0.0);
  EXPECT_EQ(r.nap_us(false, 1e6), 0.0);
}

TEST(IdleNapRule, WhenSharedNapsOnlyOnSharedCores) {
  const R r(IdleNaps::when_shared);
  EXPECT_EQ(r.nap_us(false, 1e6), 0.0);  // alone: StarPU's spinning, no wake-up latency
  EXPECT_GT(r.nap_us(true, 1e6), 0.0);
}

TEST(IdleNapRule, AlwaysNapsOnQuietCoresToo) {
  const R r(IdleNaps::always);
  EXPECT_GT(r.nap_us(false, 1e6), 0.0);
  EXPECT_GT(r.nap_us(true, 1e6), 0.0);
}

// Successors arrive within microseconds of a task's end: the first kSpinUs of idleness are spun.
TEST(IdleNapRule, SpinsRightAfterATask) {
  const R r(IdleNaps::always);
  EXPECT_EQ(r.nap_us(true, 0.0), 0.0);
  EXPECT_EQ(r.nap_us(true, R::kSpinUs - 1), 0.0);
  EXPECT_EQ(r.nap_us(true, NAN), 0.0);  // an unknown idle time is no evidence
  EXPECT_EQ(r.nap_us(true, R::kSpinUs), std::max(R::kSpinUs, R::kMinNapUs));
}

// The longer a worker has been idle, the longer it naps (exponential back-off), up to kMaxNapUs: a missed
// wake-up never costs more than that.
TEST(IdleNapRule, NapsGrowWithIdlenessUpToTheBound) {
  const R r(IdleNaps::when_shared);
  double last = 0.0;
  for (double idle = R::kSpinUs; idle < 100 * R::kMaxNapUs; idle *= 2) {
    const double nap = r.nap_us(true, idle);
    EXPECT_GE(nap, R::kMinNapUs) << idle;
    EXPECT_LE(nap, R::kMaxNapUs) << idle;
    EXPECT_GE(nap, last) << idle;
    last = nap;
  }
  EXPECT_EQ(last, R::kMaxNapUs);
  EXPECT_LT(R::kMaxNapUs, 3000.0);  // under one CFS time slice
}

TEST(IdleNapRule, NamesAreTheEnvironmentValues) {
  EXPECT_EQ(parse_idle_naps("off"), IdleNaps::off);
  EXPECT_EQ(parse_idle_naps("auto"), IdleNaps::when_shared);
  EXPECT_EQ(parse_idle_naps("always"), IdleNaps::always);
}

}  // namespace
}  // namespace corun::sched
