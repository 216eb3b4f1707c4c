// Strategies 1-2 on hand-made measurements: which widths the climb proposes, when it stops, the curve.
#include "sched/planner/width_search.hpp"

#include <corun/error.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace corun::sched {
namespace {

// Feeds `times` (by width) until the climb stops; returns the widths it asked for.
std::vector<int> climb(WidthSearch& s, const std::vector<double>& times) {
  std::vector<int> asked;
  while (!s.done()) {
    const int w = s.next();
    asked.push_back(w);
    s.record(w, times[static_cast<size_t>(w - 1)]);
  }
  return asked;
}

TEST(WidthSearch, StepsByTheIntervalAndStopsWhenTheTimeRises) {
  WidthSearch s(16, 4);
  std::vector<double> t(16, 100.0);
  t[0] = 10, t[4] = 4, t[8] = 3, t[12] = 3.5;
  EXPECT_EQ(climb(s, t), (std::vector<int>{1, 5, 9, 13}));  // 13 is slower than 9: stop, 16 never tried
  EXPECT_EQ(s.stable_width(), 9);
  EXPECT_DOUBLE_EQ(s.best_time(), 3);
  const auto c = s.curve();
  ASSERT_EQ(c.size(), 16u);
  EXPECT_DOUBLE_EQ(c[0], 10);
  EXPECT_DOUBLE_EQ(c[2], 7);     // width 3: halfway between 1 (10) and 5 (4)
  EXPECT_DOUBLE_EQ(c[10], 3.25); // width 11: halfway between 9 and 13
  EXPECT_TRUE(std::isnan(c[13]));  // beyond the last measured width: no prediction
}

TEST(WidthSearch, StopsWhenAllCoresAreUsedAndClampsTheLastStep) {
  WidthSearch s(10, 4);
  const std::vector<double> t = {10, 9, 8, 7, 6, 5, 4, 3, 2, 1};
  EXPECT_EQ(climb(s, t), (std::vector<int>{1, 5, 9, 10}));  // 13 would exceed the machine: 10 instead
  EXPECT_EQ(s.stable_width(), 10);
  EXPECT_EQ(s.next(), 0);
}

TEST(WidthSearch, ClimbWidthsAreEveryWidthAClimbMayMeasure) {
  EXPECT_EQ(climb_widths(2, 1), (std::vector<int>{1, 2}));
  EXPECT_EQ(climb_widths(16, 1).size(), 16u);
  EXPECT_EQ(climb_widths(10, 4), (std::vector<int>{1, 5, 9, 10}));  // the last step clamped to the machine
  EXPECT_EQ(climb_widths(1, 3), (std::vector<int>{1}));
}

TEST(WidthSearch, PaperInterpolationExample) {
  // "if we measure one and four threads (x = 3), two and three are interpolated".
  WidthSearch s(4, 3);
  EXPECT_EQ(climb(s, {8, NAN, NAN, 2}), (std::vector<int>{1, 4}));
  const auto c = s.curve();
  EXPECT_DOUBLE_EQ(c[1], 6);
  EXPECT_DOUBLE_EQ(c[2], 4);
}

TEST(WidthSearch, EqualTimeIsNotARiseAndTiesKeepTheNarrowerWidth) {
  WidthSearch s(7, 2);
  EXPECT_EQ(climb(s, {5, 0, 3, 0, 3, 0, 4}), (std::vector<int>{1, 3, 5, 7}));
  EXPECT_EQ(s.stable_width(), 3);
}

TEST(WidthSearch, OneCoreMachineMeasuresOnce) {
  WidthSearch s(1, 4);
  EXPECT_EQ(climb(s, {2}), (std::vector<int>{1}));
  EXPECT_EQ(s.stable_width(), 1);
}

TEST(WidthSearch, InvalidUseThrows) {
  EXPECT_THROW(WidthSearch(0, 1), corun::Error);
  EXPECT_THROW(WidthSearch(4, 0), corun::Error);
  WidthSearch s(4, 2);
  EXPECT_THROW(s.record(2, 1.0), corun::Error);  // 1 was proposed
  EXPECT_THROW(s.record(1, -1.0), corun::Error);
  EXPECT_THROW(s.record(1, NAN), corun::Error);
  s.record(1, 1.0);
  s.record(3, 2.0);  // rose: done
  EXPECT_TRUE(s.done());
  EXPECT_THROW(s.record(4, 1.0), corun::Error);
}

// Issue 21 item 7: the co-tenancy governor kept the tuning run's teams narrower than the width under test.
TEST(WidthSearch, StopKeepsTheBestWidthSoFarAndLeavesTheRestUnknown) {
  WidthSearch s(4, 1);
  s.record(1, 10.0);
  s.record(2, 6.0);
  s.stop();
  EXPECT_TRUE(s.done());
  EXPECT_EQ(s.stable_width(), 2);
  const std::vector<double> c = s.curve();
  EXPECT_DOUBLE_EQ(c[1], 6.0);
  EXPECT_TRUE(std::isnan(c[2]) && std::isnan(c[3]));  // never measured: no prediction
  EXPECT_THROW(s.stop(), corun::Error);                // already stopped
  WidthSearch fresh(2, 1);
  EXPECT_THROW(fresh.stop(), corun::Error);  // nothing measured: no best width to keep
}

TEST(StableWidthForKind, TheLargestInstanceDecides) {
  EXPECT_EQ(stable_width_for_kind({{10, 2}, {1000, 8}, {100, 4}}), 8);
  EXPECT_EQ(stable_width_for_kind({{5, 3}, {5, 6}}), 3);  // ties: the first listed
  EXPECT_THROW(stable_width_for_kind({}), corun::Error);
  EXPECT_THROW(stable_width_for_kind({{1, 0}}), corun::Error);
}

}  // namespace
}  // namespace corun::sched
