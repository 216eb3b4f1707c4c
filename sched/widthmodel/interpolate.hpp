// sched/widthmodel/interpolate.hpp — per-width times from the widths that were measured (plain C++).
#pragma once

#include <vector>

namespace corun::sched {

/// `by_width[w - 1]` is the time at width w, NaN where no model exists. Fills every NaN that lies between
/// two measured widths by linear interpolation in w (design.md: "widths never measured are linearly
/// interpolated"). Widths below the narrowest or above the widest measured one stay NaN: extrapolating a
/// speed-up curve is guesswork, and the planner treats NaN as "no prediction".
void interpolate_widths(std::vector<double>& by_width);

/// The value at the nearest measured width (ties: the narrower), NaN when nothing is measured. Used where
/// a number is needed anyway (levels, the lower bound).
double nearest_measured(const std::vector<double>& by_width, int width);

}  // namespace corun::sched
