// trace/gantt.hpp — renders an execution trace as an SVG Gantt chart (one row per worker) for
// `corun plot-trace`.
#pragma once

#include "trace/trace.hpp"

#include <functional>
#include <string>

namespace corun::trace {

struct GanttOptions {
  int width_px = 1600;  ///< image width; the height follows from the number of workers and the legend
  std::string source;   ///< file name shown under the title
  int iteration = -1;   ///< draw only this iteration's tasks (-1: all)
  /// The fixed fill of an op ("#rrggbb"), "" for none; ops without one take spare colours in order of total
  /// time. trace/ does not know the ops: `corun plot-trace` passes their registered colours.
  std::function<std::string(const std::string& op)> op_colour;
};

/// The chart as a standalone SVG document: title (policy, layout, makespan, lower bound, their ratio), one
/// row per worker with its busy share, one box per task coloured by op kind (fixed colours for corun's
/// ops, so charts compare side by side), team tasks spanning their workers' rows, critical-path tasks
/// outlined, a time axis in ms and a legend with each op's total time. Boxes narrower than a pixel are
/// merged per row into runs of at most 3 px (dominant op's colour, opacity = busy share), so the number of
/// SVG elements stays proportional to the image width, not to the number of tasks.
std::string gantt_svg(const TraceFile& trace, const GanttOptions& options);

}  // namespace corun::trace
