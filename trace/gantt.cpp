// SVG Gantt chart of an execution trace, step 1: the layout. Everything is placed in pixels here (plain
// structs, trace/gantt_layout.hpp); gantt_svg.cpp writes them, and rsvg-convert (or a browser) only
// rasterises.
#include "trace/gantt.hpp"

#include "base/check.hpp"
#include "trace/gantt_layout.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

namespace corun::trace {

namespace {

// Ops without a fixed colour (GanttOptions::op_colour) take the spare colours in order of total time.
constexpr const char* kSpare[] = {"#a0cbe8", "#17becf", "#bcbd22", "#9467bd", "#8c564b", "#e377c2",
                                  "#7f7f7f", "#2ca02c", "#ff7f0e", "#1f77b4", "#d62728", "#aec7e8"};
constexpr const char* kOther = "#c8c8c8";

// Layout, in px.
constexpr double kLeft = 118, kRight = 28, kMargin = 18;
constexpr double kMinBoxPx = 1.0;    // narrower tasks are merged per row
constexpr double kMaxMergePx = 3.0;  // a merged run is at most this wide, so colour changes stay visible

// "12.3 ms" with a precision that suits the magnitude.
std::string ms(double us) {
  char b[48];
  const double v = us / 1000.0;
  std::snprintf(b, sizeof b, v >= 100 ? "%.1f ms" : v >= 1 ? "%.2f ms" : "%.3f ms", v);
  return b;
}

// Rough text width of DejaVu Sans (average advance ~0.6 em): enough to decide whether a label fits.
double text_px(const std::string& s, double font) {
  return 0.6 * font * static_cast<double>(s.size());
}

// 1, 2 or 5 times a power of ten, about `target` long.
double nice_step(double target) {
  const double p = std::pow(10.0, std::floor(std::log10(target)));
  for (double m : {1.0, 2.0, 5.0})
    if (m * p >= target) return m * p;
  return 10 * p;
}

using gantt::GanttLayout;
using gantt::OpStat;

// The tasks drawn and every iteration of the trace.
struct Selection {
  std::vector<const TraceTask*> tasks;
  std::set<int> iterations;
  double first = INFINITY, last = -INFINITY;  // earliest start, latest end of the drawn tasks
  int rows = 1;
};

Selection select_tasks(const TraceFile& trace, const GanttOptions& opt) {
  Selection sel;
  for (const TraceTask& t : trace.tasks) {
    sel.iterations.insert(t.iteration);
    if (opt.iteration < 0 || t.iteration == opt.iteration) sel.tasks.push_back(&t);
  }
  CORUN_CHECK(opt.iteration < 0 || !sel.tasks.empty(), Status::invalid_argument,
              "'" << opt.source << "' has no tasks of iteration " << opt.iteration << " (iterations "
                  << (sel.iterations.empty()
                          ? std::string("none")
                          : std::to_string(*sel.iterations.begin()) + ".." + std::to_string(*sel.iterations.rbegin()))
                  << ")");
  sel.rows = std::max(trace.meta.workers, 1);
  for (const TraceTask* t : sel.tasks) {
    for (int c : t->cores) sel.rows = std::max(sel.rows, c + 1);
    sel.first = std::min(sel.first, t->start_us);
    sel.last = std::max(sel.last, t->end_us);
  }
  if (sel.tasks.empty()) sel.first = sel.last = 0;
  return sel;
}

// Fixed colours first (the op's registered colour, through GanttOptions::op_colour), then the spare ones
// in order of total time (`by_time`), then grey.
void assign_colours(std::vector<OpStat>& ops, const std::vector<size_t>& by_time, const GanttOptions& opt) {
  size_t spare = 0;
  for (size_t i : by_time) {
    if (opt.op_colour) ops[i].fill = opt.op_colour(ops[i].op);
    if (ops[i].fill.empty()) ops[i].fill = spare < std::size(kSpare) ? kSpare[spare++] : kOther;
  }
}

// Per op kind, in order of first appearance: core time and task count; `index` maps the op to its entry.
std::vector<OpStat> op_stats(const std::vector<const TraceTask*>& tasks, std::map<std::string, int>& index) {
  std::vector<OpStat> ops;
  for (const TraceTask* t : tasks) {
    auto [it, inserted] = index.emplace(t->op, static_cast<int>(ops.size()));
    if (inserted) ops.push_back(OpStat{t->op, 0, 0, ""});
    OpStat& s = ops[static_cast<size_t>(it->second)];
    s.busy_us += (t->end_us - t->start_us) * t->width;
    ++s.tasks;
  }
  return ops;
}

// Indices of `ops`, most core time first (ties: first appearance).
std::vector<size_t> by_total_time(const std::vector<OpStat>& ops) {
  std::vector<size_t> order(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return ops[a].busy_us > ops[b].busy_us; });
  return order;
}

// Header: what ran, and how far from the physical limit it was. Each line is a list of parts, wrapped at
// part boundaries when the image is too narrow for it. Returns the baseline of the last line.
double lay_out_header(const TraceMeta& meta, const GanttOptions& opt, const Selection& sel, GanttLayout& g) {
  std::vector<std::string> title = {"corun trace"};
  if (!meta.policy.empty()) title[0] += ": policy " + meta.policy;
  if (!meta.layout.empty()) title.push_back("layout " + meta.layout);
  title.push_back(std::to_string(meta.workers) + " worker" + (meta.workers == 1 ? "" : "s"));
  title.push_back(std::to_string(sel.tasks.size()) + " task" + (sel.tasks.size() == 1 ? "" : "s"));
  if (opt.iteration >= 0)
    title.push_back("iteration " + std::to_string(opt.iteration));
  else if (sel.iterations.size() > 1)
    title.push_back(std::to_string(sel.iterations.size()) + " iterations");

  std::vector<std::string> stats;
  const double makespan = meta.makespan_us > 0 ? meta.makespan_us : sel.last - sel.first;
  if (opt.iteration >= 0) stats.push_back("this iteration " + ms(sel.last - sel.first));
  stats.push_back((opt.iteration >= 0 ? "whole trace: makespan " : "makespan ") + ms(makespan));
  if (std::isfinite(meta.lower_bound_us) && meta.lower_bound_us > 0) {
    char b[64];
    std::snprintf(b, sizeof b, " (makespan / bound = %.2f)", makespan / meta.lower_bound_us);
    stats.push_back("lower bound " + ms(meta.lower_bound_us) + b);
  }
  if (std::isfinite(meta.critical_path_us)) stats.push_back("critical path " + ms(meta.critical_path_us));
  if (std::isfinite(meta.total_work_us)) stats.push_back("total work " + ms(meta.total_work_us));

  std::vector<std::string> source;
  if (!meta.machine.empty()) source.push_back(meta.machine);
  if (!opt.source.empty()) source.push_back(opt.source);

  struct Line {
    const std::vector<std::string>& parts;
    const char* sep;
    double font;
    const char* style;
  };
  double y = 10;
  for (const Line& line : {Line{title, ", ", 19, "font-weight=\"bold\" fill=\"#222\""},
                           Line{stats, "   |   ", 14, "fill=\"#222\""}, Line{source, "   |   ", 12, "fill=\"#666\""}}) {
    std::string text;
    for (size_t i = 0; i < line.parts.size(); ++i) {
      const std::string next = text.empty() ? line.parts[i] : text + line.sep + line.parts[i];
      if (!text.empty() && text_px(next, line.font) > g.width - 2 * kMargin) {
        y += line.font * 1.3;
        g.header.push_back({y, line.font, line.style, text});
        text = line.parts[i];
      } else {
        text = next;
      }
    }
    if (text.empty()) continue;
    y += line.font * 1.3;
    g.header.push_back({y, line.font, line.style, text});
  }
  return y;
}

// Legend: one entry per op (most time first), then the two markers, wrapped to the image width. Returns
// the image height, which it decides.
double lay_out_legend(const Selection& sel, const std::vector<size_t>& by_time, GanttLayout& g) {
  double total_busy = 0;
  for (const OpStat& s : g.ops) total_busy += s.busy_us;
  for (size_t i : by_time) {
    const OpStat& s = g.ops[i];
    char b[160];
    std::snprintf(b, sizeof b, "%s: %s, %ld task%s (%.0f%%)", s.op.c_str(), ms(s.busy_us).c_str(), s.tasks,
                  s.tasks == 1 ? "" : "s", total_busy > 0 ? 100.0 * s.busy_us / total_busy : 0.0);
    g.legend.push_back({s.fill, b});
  }
  long critical_tasks = 0;
  double critical_us = 0;
  for (const TraceTask* t : sel.tasks)
    if (t->critical) {
      ++critical_tasks;
      critical_us += t->end_us - t->start_us;
    }
  g.legend.push_back({"#ffffff",
                      "critical path: " + std::to_string(critical_tasks) + " tasks, " + ms(critical_us) + " run time",
                      true});
  g.legend.push_back({"", "a box across rows is one task run by a team of cores"});
  const double legend_top = g.chart.bottom + 58, legend_line = 20;
  double x = kMargin, y = legend_top;
  for (gantt::LegendEntry& e : g.legend) {
    const double w = (e.fill.empty() ? 0 : 18) + text_px(e.text, 12) + 26;
    if (x + w > g.width - kMargin && x > kMargin) {
      x = kMargin;
      y += legend_line;
    }
    e.x = x;
    e.y = y;
    x += w;
  }
  return std::ceil((g.legend.empty() ? legend_top : g.legend.back().y) + legend_line + 8);
}

// Time to x, and row to y.
struct Scale {
  double t0, t1, px_per_us, top, row_h;
  double x(double us) const { return kLeft + (us - t0) * px_per_us; }
  double y(int row) const { return top + row * row_h; }
};

// Rows: each worker's busy share; labels on every row, or every few rows when they are thin.
void lay_out_rows(const Selection& sel, const Scale& s, GanttLayout& g) {
  std::vector<double> row_busy(static_cast<size_t>(sel.rows), 0.0);
  for (const TraceTask* t : sel.tasks)
    for (int c : t->cores) row_busy[static_cast<size_t>(c)] += t->end_us - t->start_us;
  const int label_every = s.row_h >= 11 ? 1 : static_cast<int>(std::ceil(11.0 / s.row_h));
  for (int r = 0; r < sel.rows; ++r)
    g.rows.push_back({s.y(r), r % label_every == 0, 100.0 * row_busy[static_cast<size_t>(r)] / (s.t1 - s.t0)});
}

// Time axis: a tick every 1, 2 or 5 times a power of ten ms, about 80 px apart.
void lay_out_ticks(const Scale& s, GanttLayout& g) {
  const double step_ms = nice_step((s.t1 - s.t0) / 1000.0 / std::max(2.0, g.chart.width / 80.0));
  g.tick_decimals = std::max(0, static_cast<int>(-std::floor(std::log10(step_ms) + 1e-9)));
  for (double v = std::ceil(s.t0 / 1000.0 / step_ms) * step_ms; v * 1000.0 <= s.t1 + 1e-9; v += step_ms)
    g.ticks.push_back({s.x(v * 1000.0), v});
}

struct Small {  // a sub-pixel task on one row
  double x0, x1;
  int op;
  bool critical;
};

// Wide tasks: one box each (one tall box across the rows of a team of consecutive cores). Critical-path
// tasks get a dark bar along their top edge, drawn after every box: bars of consecutive critical tasks
// join into a line that follows the path from row to row, visible at any zoom (an outline alone turns
// sub-pixel tasks into black smudges). Critical boxes wide enough to show it are outlined as well.
// Narrow tasks are left in `smalls`, per row, for merge_small_tasks().
void lay_out_tasks(const Selection& sel, const std::map<std::string, int>& op_index, const Scale& s, double pad,
                   GanttLayout& g, std::vector<std::vector<Small>>& smalls) {
  const double bar_h = g.chart.bar_h;
  for (const TraceTask* t : sel.tasks) {
    const double x0 = s.x(t->start_us), x1 = s.x(t->end_us);
    const int op = op_index.at(t->op);
    if (x1 - x0 < kMinBoxPx) {
      for (int c : t->cores) smalls[static_cast<size_t>(c)].push_back({x0, x1, op, t->critical});
      continue;
    }
    std::vector<int> cores = t->cores;
    std::sort(cores.begin(), cores.end());
    const bool contiguous = cores.back() - cores.front() + 1 == static_cast<int>(cores.size());
    std::vector<std::pair<int, int>> spans;  // row ranges [first, last]
    if (contiguous)
      spans.push_back({cores.front(), cores.back()});
    else
      for (int c : cores) spans.push_back({c, c});
    for (const auto& [r0, r1] : spans) {
      const double y = s.y(r0) + pad, h = s.y(r1) + s.row_h - pad - y;
      g.boxes.push_back({x0, y, x1 - x0, h, op});
      if (t->critical) {
        g.bars.push_back({x0, y, std::max(x1 - x0, kMinBoxPx)});
        if (x1 - x0 >= 6) g.outlines.push_back({x0 + 0.7, y + 0.7, x1 - x0 - 1.4, h - 1.4});
      }
      const double font = std::min(11.0, h - 4 - (t->critical ? bar_h : 0));
      if (font >= 8 && text_px(t->op, font) + 6 <= x1 - x0)
        g.labels.push_back({(x0 + x1) / 2,
                            y + (t->critical ? bar_h : 0) + (h - (t->critical ? bar_h : 0)) / 2 + font * 0.35, font, op,
                            t->op});
    }
  }
}

// Sub-pixel tasks of each row merged into runs of at most kMaxMergePx: the dominant op's colour, opacity =
// busy share, a critical bar over the critical part. Their bars follow the wide boxes' bars.
void merge_small_tasks(std::vector<std::vector<Small>>& smalls, const Scale& s, double pad, GanttLayout& g) {
  for (int r = 0; r < static_cast<int>(smalls.size()); ++r) {
    auto& v = smalls[static_cast<size_t>(r)];
    std::sort(v.begin(), v.end(), [](const Small& a, const Small& b) { return a.x0 < b.x0; });
    const double y = s.y(r) + pad, h = s.row_h - 2 * pad;
    for (size_t i = 0; i < v.size();) {
      const double x0 = v[i].x0;
      double x1 = v[i].x1, busy = 0, crit0 = INFINITY, crit1 = -INFINITY;
      std::map<int, double> per_op;
      size_t j = i;  // v[i] itself always joins: it is narrower than kMinBoxPx
      for (; j < v.size() && v[j].x0 <= x1 + kMinBoxPx && v[j].x1 - x0 <= kMaxMergePx; ++j) {
        x1 = std::max(x1, v[j].x1);
        busy += v[j].x1 - v[j].x0;
        per_op[v[j].op] += v[j].x1 - v[j].x0;
        if (v[j].critical) {
          crit0 = std::min(crit0, v[j].x0);
          crit1 = std::max(crit1, v[j].x1);
        }
      }
      i = j;
      int dominant = per_op.begin()->first;
      for (const auto& [o, px] : per_op)
        if (px > per_op[dominant]) dominant = o;
      const double w = std::max(x1 - x0, kMinBoxPx);
      g.runs.push_back({x0, y, w, h, dominant, std::clamp(busy / w, 0.35, 1.0)});
      if (crit1 >= crit0) g.bars.push_back({crit0, y, std::max(crit1 - crit0, kMinBoxPx)});
    }
  }
}

// Iteration boundaries (the engine waits for all tasks between runs), when the whole trace is drawn.
void lay_out_iterations(const Selection& sel, const GanttOptions& opt, const Scale& s, GanttLayout& g) {
  if (opt.iteration >= 0 || sel.iterations.size() <= 1 || sel.iterations.size() > 200) return;
  std::map<int, double> starts;
  for (const TraceTask* t : sel.tasks) {
    auto [it, inserted] = starts.emplace(t->iteration, t->start_us);
    if (!inserted) it->second = std::min(it->second, t->start_us);
  }
  double last_label = -1e9;
  for (const auto& [i, start] : starts) {
    const double x = s.x(start) - 0.5;
    const bool label = x - last_label >= 48;
    if (label) last_label = x;
    g.iterations.push_back({i, x, i != starts.begin()->first, label});
  }
}

}  // namespace

namespace gantt {

GanttLayout layout_gantt(const TraceFile& trace, const GanttOptions& opt) {
  const TraceMeta& meta = trace.meta;
  const Selection sel = select_tasks(trace, opt);
  // Times relative to the run start (what the engine writes) get an axis from 0, so a late first task
  // shows; anything else (an absolute clock) starts at the first task.
  double t0 = sel.first, t1 = sel.last;
  if (opt.iteration < 0 && sel.first >= 0 && sel.last <= meta.makespan_us * 1.000001) {
    t0 = 0;
    t1 = std::max(sel.last, meta.makespan_us);
  }
  if (!(t1 > t0)) t1 = t0 + 1;  // one empty or zero-length chart still gets an axis

  GanttLayout g;
  g.width = opt.width_px;
  g.margin = kMargin;
  std::map<std::string, int> op_index;
  g.ops = op_stats(sel.tasks, op_index);
  const std::vector<size_t> by_time = by_total_time(g.ops);
  assign_colours(g.ops, by_time, opt);

  const double header_bottom = lay_out_header(meta, opt, sel, g);
  const int rows = sel.rows;
  Chart& c = g.chart;
  c.left = kLeft;
  c.width = g.width - kLeft - kRight;
  c.row_h = rows <= 8 ? std::min(56.0, 400.0 / rows) : std::max(4.0, std::min(24.0, 720.0 / rows));
  c.top = header_bottom + 26;  // room for the iteration labels
  c.bottom = c.top + c.row_h * rows;
  c.row_font = std::min(13.0, std::max(8.0, c.row_h - 3));
  c.bar_h = c.row_h >= 16 ? 4 : std::max(1.0, c.row_h * 0.25);
  const Scale scale{t0, t1, c.width / (t1 - t0), c.top, c.row_h};
  const double pad = c.row_h >= 16 ? 3 : c.row_h >= 8 ? 1 : 0;

  g.height = lay_out_legend(sel, by_time, g);
  lay_out_rows(sel, scale, g);
  lay_out_ticks(scale, g);
  std::vector<std::vector<Small>> smalls(static_cast<size_t>(rows));
  lay_out_tasks(sel, op_index, scale, pad, g, smalls);
  merge_small_tasks(smalls, scale, pad, g);
  lay_out_iterations(sel, opt, scale, g);
  return g;
}

}  // namespace gantt

std::string gantt_svg(const TraceFile& trace, const GanttOptions& options) {
  return gantt::emit_svg(gantt::layout_gantt(trace, options));
}

}  // namespace corun::trace
