// trace/gantt_layout.hpp — the Gantt chart as plain geometry, between its two steps: layout_gantt()
// (gantt.cpp) places everything in pixels, emit_svg() (gantt_svg.cpp) writes it. Internal to trace/.
#pragma once

#include "trace/gantt.hpp"

#include <string>
#include <vector>

namespace corun::trace::gantt {

/// One op kind of the drawn tasks; boxes, runs and labels refer to it by index.
struct OpStat {
  std::string op;
  double busy_us = 0;  // summed over the cores of each task (core time)
  long tasks = 0;
  std::string fill;
};

struct HeaderLine {  // one line of the title block, at x = margin
  double y, font;
  const char* style;
  std::string text;
};

struct Row {  // one worker: a background band and, unless rows are too thin, its label
  double y;
  bool labelled;
  double busy_pct;
};

struct Tick {  // a time-axis tick: grid line, tick mark and value
  double x;
  double value_ms;
};

struct Box {  // a task at least one pixel wide, on one row or one block of consecutive rows
  double x, y, w, h;
  int op;
};

struct Run {  // sub-pixel tasks of one row merged, drawn in the dominant op's colour
  double x, y, w, h;
  int op;
  double opacity;
};

struct Bar {  // the critical-path bar along a box's or run's top edge (height: Chart::bar_h)
  double x, y, w;
};

struct Outline {  // the outline of a critical box wide enough to show it
  double x, y, w, h;
};

struct Label {  // an op name inside its box
  double x, y, font;
  int op;
  std::string text;
};

struct IterationMark {  // where an iteration starts: a dashed line (not for the first) and a label
  int iteration;
  double x;
  bool line, label;
};

struct LegendEntry {
  std::string fill, text;  // no fill: a text-only note
  bool critical_marker = false;
  double x = 0, y = 0;
};

struct Chart {  // the plot area
  double left, width, top, bottom;
  double row_h, row_font, bar_h;
};

struct GanttLayout {
  double width = 0, height = 0, margin = 0;
  std::vector<HeaderLine> header;
  std::vector<OpStat> ops;
  Chart chart{};
  std::vector<Row> rows;
  std::vector<Tick> ticks;
  int tick_decimals = 0;
  // Drawn in this order: runs, boxes, bars, outlines, labels (bars above every box).
  std::vector<Run> runs;
  std::vector<Box> boxes;
  std::vector<Bar> bars;
  std::vector<Outline> outlines;
  std::vector<Label> labels;
  std::vector<IterationMark> iterations;
  std::vector<LegendEntry> legend;
};

/// Everything in pixels. Throws corun::Error when `options.iteration` selects no task.
GanttLayout layout_gantt(const TraceFile& trace, const GanttOptions& options);

/// The layout as a standalone SVG document.
std::string emit_svg(const GanttLayout& layout);

}  // namespace corun::trace::gantt
