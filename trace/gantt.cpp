// SVG Gantt chart of an execution trace. Everything is laid out in pixels here; rsvg-convert (or a browser)
// only rasterises.
#include "trace/gantt.hpp"

#include "base/check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <map>
#include <set>

namespace corun::cli {

namespace {

// Ops without a fixed colour (GanttOptions::op_colour) take the spare colours in order of total time.
constexpr const char* kSpare[] = {"#a0cbe8", "#17becf", "#bcbd22", "#9467bd", "#8c564b", "#e377c2",
                                  "#7f7f7f", "#2ca02c", "#ff7f0e", "#1f77b4", "#d62728", "#aec7e8"};
constexpr const char* kOther = "#c8c8c8";
constexpr const char* kCriticalStroke = "#111111";
constexpr const char* kFont = "DejaVu Sans, Helvetica, Arial, sans-serif";

// Layout, in px.
constexpr double kLeft = 118, kRight = 28, kMargin = 18;
constexpr double kMinBoxPx = 1.0;    // narrower tasks are merged per row
constexpr double kMaxMergePx = 3.0;  // a merged run is at most this wide, so colour changes stay visible

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
void put(std::string& out, const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  const int n = std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if (static_cast<size_t>(n) < sizeof buf) {
    out.append(buf, static_cast<size_t>(n));
    return;
  }
  std::string big(static_cast<size_t>(n) + 1, '\0');
  va_start(ap, fmt);
  std::vsnprintf(big.data(), big.size(), fmt, ap);
  va_end(ap);
  out.append(big.data(), static_cast<size_t>(n));
}

std::string xml(const std::string& s) {
  std::string r;
  r.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        r += "&amp;";
        break;
      case '<':
        r += "&lt;";
        break;
      case '>':
        r += "&gt;";
        break;
      case '"':
        r += "&quot;";
        break;
      case '\'':
        r += "&apos;";
        break;
      default:
        if (static_cast<unsigned char>(c) >= 0x20 || c == '\t') r += c;  // control characters are not XML
    }
  }
  return r;
}

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

bool dark(const std::string& hex) {
  unsigned r = 0, g = 0, b = 0;
  if (std::sscanf(hex.c_str(), "#%02x%02x%02x", &r, &g, &b) != 3) return false;
  return 0.299 * r + 0.587 * g + 0.114 * b < 150;
}

// 1, 2 or 5 times a power of ten, about `target` long.
double nice_step(double target) {
  const double p = std::pow(10.0, std::floor(std::log10(target)));
  for (double m : {1.0, 2.0, 5.0})
    if (m * p >= target) return m * p;
  return 10 * p;
}

struct OpStat {
  std::string op;
  double busy_us = 0;  // summed over the cores of each task (core time)
  long tasks = 0;
  std::string fill;
};

struct Small {  // a sub-pixel task on one row
  double x0, x1;
  int op;
  bool critical;
};

}  // namespace

std::string gantt_svg(const TraceFile& trace, const GanttOptions& opt) {
  const TraceMeta& meta = trace.meta;
  std::vector<const TraceTask*> tasks;
  std::set<int> iterations;
  for (const TraceTask& t : trace.tasks) {
    iterations.insert(t.iteration);
    if (opt.iteration < 0 || t.iteration == opt.iteration) tasks.push_back(&t);
  }
  CORUN_CHECK(
      opt.iteration < 0 || !tasks.empty(), Status::invalid_argument,
      "'" << opt.source << "' has no tasks of iteration " << opt.iteration << " (iterations "
          << (iterations.empty() ? std::string("none")
                                 : std::to_string(*iterations.begin()) + ".." + std::to_string(*iterations.rbegin()))
          << ")");

  int rows = std::max(meta.workers, 1);
  double first = INFINITY, last = -INFINITY;
  for (const TraceTask* t : tasks) {
    for (int c : t->cores) rows = std::max(rows, c + 1);
    first = std::min(first, t->start_us);
    last = std::max(last, t->end_us);
  }
  if (tasks.empty()) first = last = 0;
  // Times relative to the run start (what the engine writes) get an axis from 0, so a late first task
  // shows; anything else (an absolute clock) starts at the first task.
  double t0 = first, t1 = last;
  if (opt.iteration < 0 && first >= 0 && last <= meta.makespan_us * 1.000001) {
    t0 = 0;
    t1 = std::max(last, meta.makespan_us);
  }
  if (!(t1 > t0)) t1 = t0 + 1;  // one empty or zero-length chart still gets an axis

  // Op statistics and colours: fixed colours first, spare ones by total time.
  std::map<std::string, int> op_index;
  std::vector<OpStat> ops;
  for (const TraceTask* t : tasks) {
    auto [it, inserted] = op_index.emplace(t->op, static_cast<int>(ops.size()));
    if (inserted) ops.push_back(OpStat{t->op, 0, 0, ""});
    OpStat& s = ops[static_cast<size_t>(it->second)];
    s.busy_us += (t->end_us - t->start_us) * t->width;
    ++s.tasks;
  }
  std::vector<size_t> by_time(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) by_time[i] = i;
  std::stable_sort(by_time.begin(), by_time.end(), [&](size_t a, size_t b) { return ops[a].busy_us > ops[b].busy_us; });
  size_t spare = 0;
  for (size_t i : by_time) {
    if (opt.op_colour) ops[i].fill = opt.op_colour(ops[i].op);
    if (ops[i].fill.empty()) ops[i].fill = spare < std::size(kSpare) ? kSpare[spare++] : kOther;
  }

  const double W = opt.width_px;

  // Header: what ran, and how far from the physical limit it was. Each line is a list of parts, wrapped
  // at part boundaries when the image is too narrow for it.
  std::string header;
  double header_bottom = 0;
  {
    std::vector<std::string> title = {"corun trace"};
    if (!meta.policy.empty()) title[0] += ": policy " + meta.policy;
    if (!meta.layout.empty()) title.push_back("layout " + meta.layout);
    title.push_back(std::to_string(meta.workers) + " worker" + (meta.workers == 1 ? "" : "s"));
    title.push_back(std::to_string(tasks.size()) + " task" + (tasks.size() == 1 ? "" : "s"));
    if (opt.iteration >= 0)
      title.push_back("iteration " + std::to_string(opt.iteration));
    else if (iterations.size() > 1)
      title.push_back(std::to_string(iterations.size()) + " iterations");

    std::vector<std::string> stats;
    const double makespan = meta.makespan_us > 0 ? meta.makespan_us : last - first;
    if (opt.iteration >= 0) stats.push_back("this iteration " + ms(last - first));
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
    for (const Line& line :
         {Line{title, ", ", 19, "font-weight=\"bold\" fill=\"#222\""}, Line{stats, "   |   ", 14, "fill=\"#222\""},
          Line{source, "   |   ", 12, "fill=\"#666\""}}) {
      std::string text;
      for (size_t i = 0; i < line.parts.size(); ++i) {
        const std::string next = text.empty() ? line.parts[i] : text + line.sep + line.parts[i];
        if (!text.empty() && text_px(next, line.font) > W - 2 * kMargin) {
          y += line.font * 1.3;
          put(header, "<text x=\"%.0f\" y=\"%.1f\" font-size=\"%.0f\" %s>%s</text>\n", kMargin, y, line.font,
              line.style, xml(text).c_str());
          text = line.parts[i];
        } else {
          text = next;
        }
      }
      if (text.empty()) continue;
      y += line.font * 1.3;
      put(header, "<text x=\"%.0f\" y=\"%.1f\" font-size=\"%.0f\" %s>%s</text>\n", kMargin, y, line.font, line.style,
          xml(text).c_str());
    }
    header_bottom = y;
  }

  // Geometry.
  const double plot_w = W - kLeft - kRight;
  const double scale = plot_w / (t1 - t0);
  const double row_h = rows <= 8 ? std::min(56.0, 400.0 / rows) : std::max(4.0, std::min(24.0, 720.0 / rows));
  const double chart_h = row_h * rows;
  const double chart_top = header_bottom + 26;  // room for the iteration labels
  const double chart_bottom = chart_top + chart_h;
  auto x_of = [&](double us) { return kLeft + (us - t0) * scale; };
  auto row_y = [&](int r) { return chart_top + r * row_h; };
  const double pad = row_h >= 16 ? 3 : row_h >= 8 ? 1 : 0;

  // Legend layout (needed for the height): one entry per op, then the two markers.
  struct Entry {
    std::string fill, text;
    bool critical_marker = false;
  };
  std::vector<Entry> legend;
  double total_busy = 0;
  for (const OpStat& s : ops) total_busy += s.busy_us;
  for (size_t i : by_time) {
    char b[160];
    std::snprintf(b, sizeof b, "%s: %s, %ld task%s (%.0f%%)", ops[i].op.c_str(), ms(ops[i].busy_us).c_str(),
                  ops[i].tasks, ops[i].tasks == 1 ? "" : "s",
                  total_busy > 0 ? 100.0 * ops[i].busy_us / total_busy : 0.0);
    legend.push_back({ops[i].fill, b});
  }
  long critical_tasks = 0;
  double critical_us = 0;
  for (const TraceTask* t : tasks)
    if (t->critical) {
      ++critical_tasks;
      critical_us += t->end_us - t->start_us;
    }
  legend.push_back({"#ffffff",
                    "critical path: " + std::to_string(critical_tasks) + " tasks, " + ms(critical_us) + " run time",
                    true});
  legend.push_back({"", "a box across rows is one task run by a team of cores"});
  const double legend_top = chart_bottom + 58, legend_line = 20;
  std::vector<std::pair<double, double>> legend_pos;  // x, y of each entry
  {
    double x = kMargin, y = legend_top;
    for (const Entry& e : legend) {
      const double w = (e.fill.empty() ? 0 : 18) + text_px(e.text, 12) + 26;
      if (x + w > W - kMargin && x > kMargin) {
        x = kMargin;
        y += legend_line;
      }
      legend_pos.push_back({x, y});
      x += w;
    }
  }
  const double H = std::ceil((legend_pos.empty() ? legend_top : legend_pos.back().second) + legend_line + 8);

  std::string out;
  out.reserve(1 << 16);
  put(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
  put(out,
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
      "font-family=\"%s\">\n",
      W, H, W, H, kFont);
  put(out, "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n");

  out += header;

  // Rows: background bands, labels with each worker's busy share.
  std::vector<double> row_busy(static_cast<size_t>(rows), 0.0);
  for (const TraceTask* t : tasks)
    for (int c : t->cores) row_busy[static_cast<size_t>(c)] += t->end_us - t->start_us;
  const int label_every = row_h >= 11 ? 1 : static_cast<int>(std::ceil(11.0 / row_h));
  for (int r = 0; r < rows; ++r) {
    put(out, "<rect x=\"%.0f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"/>\n", kLeft, row_y(r), plot_w,
        row_h, r % 2 ? "#f3f3f3" : "#fafafa");
    if (r % label_every) continue;
    const double font = std::min(13.0, std::max(8.0, row_h - 3));
    const double pct = 100.0 * row_busy[static_cast<size_t>(r)] / (t1 - t0);
    if (row_h >= 30) {
      put(out, "<text x=\"%.0f\" y=\"%.2f\" font-size=\"13\" text-anchor=\"end\" fill=\"#222\">worker %d</text>\n",
          kLeft - 8, row_y(r) + row_h / 2 - 2, r);
      put(out, "<text x=\"%.0f\" y=\"%.2f\" font-size=\"11\" text-anchor=\"end\" fill=\"#666\">%.0f%% busy</text>\n",
          kLeft - 8, row_y(r) + row_h / 2 + 12, pct);
    } else {
      put(out,
          "<text x=\"%.0f\" y=\"%.2f\" font-size=\"%.0f\" text-anchor=\"end\" fill=\"#222\">worker %d  %.0f%%</text>\n",
          kLeft - 8, row_y(r) + row_h / 2 + font * 0.35, font, r, pct);
    }
  }

  // Time axis: grid lines behind the boxes, labels below.
  const double step_ms = nice_step((t1 - t0) / 1000.0 / std::max(2.0, plot_w / 80.0));
  const int decimals = std::max(0, static_cast<int>(-std::floor(std::log10(step_ms) + 1e-9)));
  std::string axis;
  for (double v = std::ceil(t0 / 1000.0 / step_ms) * step_ms; v * 1000.0 <= t1 + 1e-9; v += step_ms) {
    const double x = x_of(v * 1000.0);
    put(out, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#dddddd\" stroke-width=\"1\"/>\n", x,
        chart_top, x, chart_bottom);
    put(axis, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#444\" stroke-width=\"1\"/>\n", x,
        chart_bottom, x, chart_bottom + 5);
    put(axis, "<text x=\"%.2f\" y=\"%.2f\" font-size=\"12\" text-anchor=\"middle\" fill=\"#333\">%.*f</text>\n", x,
        chart_bottom + 19, decimals, v);
  }
  put(axis, "<line x1=\"%.0f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#444\" stroke-width=\"1\"/>\n", kLeft,
      chart_bottom, kLeft + plot_w, chart_bottom);
  put(axis, "<text x=\"%.2f\" y=\"%.2f\" font-size=\"13\" text-anchor=\"middle\" fill=\"#333\">time (ms)</text>\n",
      kLeft + plot_w / 2, chart_bottom + 38);

  // Tasks: wide ones one box each (one tall box across the rows of a team of consecutive cores), narrow
  // ones merged per row. Critical-path tasks get a dark bar along their top edge, drawn after every box:
  // bars of consecutive critical tasks join into a line that follows the path from row to row, visible
  // at any zoom (an outline alone turns sub-pixel tasks into black smudges). Critical boxes wide enough
  // to show it are outlined as well.
  const double bar_h = row_h >= 16 ? 4 : std::max(1.0, row_h * 0.25);
  std::vector<std::vector<Small>> smalls(static_cast<size_t>(rows));
  std::string boxes, outlines, bars, labels;
  auto bar = [&](double x0, double x1, double y) {
    put(bars, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"/>\n", x0, y,
        std::max(x1 - x0, kMinBoxPx), bar_h, kCriticalStroke);
  };
  for (const TraceTask* t : tasks) {
    const double x0 = x_of(t->start_us), x1 = x_of(t->end_us);
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
    const std::string& fill = ops[static_cast<size_t>(op)].fill;
    for (const auto& [r0, r1] : spans) {
      const double y = row_y(r0) + pad, h = row_y(r1) + row_h - pad - y;
      if (x1 - x0 >= 4)  // a hairline gap between back-to-back boxes of one colour
        put(boxes,
            "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\" stroke=\"#ffffff\" "
            "stroke-width=\"0.6\"/>\n",
            x0, y, x1 - x0, h, fill.c_str());
      else
        put(boxes, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"/>\n", x0, y, x1 - x0, h,
            fill.c_str());
      if (t->critical) {
        bar(x0, x1, y);
        if (x1 - x0 >= 6)
          put(outlines,
              "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"none\" stroke=\"%s\" "
              "stroke-width=\"1.4\"/>\n",
              x0 + 0.7, y + 0.7, x1 - x0 - 1.4, h - 1.4, kCriticalStroke);
      }
      const double font = std::min(11.0, h - 4 - (t->critical ? bar_h : 0));
      if (font >= 8 && text_px(t->op, font) + 6 <= x1 - x0)
        put(labels, "<text x=\"%.2f\" y=\"%.2f\" font-size=\"%.0f\" text-anchor=\"middle\" fill=\"%s\">%s</text>\n",
            (x0 + x1) / 2, y + (t->critical ? bar_h : 0) + (h - (t->critical ? bar_h : 0)) / 2 + font * 0.35, font,
            dark(fill) ? "#ffffff" : "#222222", xml(t->op).c_str());
    }
  }
  std::string merged;
  for (int r = 0; r < rows; ++r) {
    auto& v = smalls[static_cast<size_t>(r)];
    std::sort(v.begin(), v.end(), [](const Small& a, const Small& b) { return a.x0 < b.x0; });
    const double y = row_y(r) + pad, h = row_h - 2 * pad;
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
      const double opacity = std::clamp(busy / w, 0.35, 1.0);
      put(merged, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"", x0, y, w, h,
          ops[static_cast<size_t>(dominant)].fill.c_str());
      if (opacity < 0.995) put(merged, " fill-opacity=\"%.2f\"", opacity);
      put(merged, "/>\n");
      if (crit1 >= crit0) bar(crit0, crit1, y);
    }
  }
  out += merged;
  out += boxes;
  out += bars;
  out += outlines;
  out += labels;

  // Iteration boundaries (the engine waits for all tasks between runs).
  if (opt.iteration < 0 && iterations.size() > 1 && iterations.size() <= 200) {
    std::map<int, double> starts;
    for (const TraceTask* t : tasks) {
      auto [it, inserted] = starts.emplace(t->iteration, t->start_us);
      if (!inserted) it->second = std::min(it->second, t->start_us);
    }
    double last_label = -1e9;
    for (const auto& [i, s] : starts) {
      const double x = x_of(s) - 0.5;
      if (i != starts.begin()->first)
        put(out,
            "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#555\" stroke-width=\"1\" "
            "stroke-dasharray=\"4 3\"/>\n",
            x, chart_top - 14, x, chart_bottom);
      if (x - last_label >= 48) {
        put(out, "<text x=\"%.2f\" y=\"%.2f\" font-size=\"11\" fill=\"#555\">iter %d</text>\n", x + 3, chart_top - 4,
            i);
        last_label = x;
      }
    }
  }
  out += axis;

  // Legend.
  for (size_t i = 0; i < legend.size(); ++i) {
    const Entry& e = legend[i];
    const auto [x, y] = legend_pos[i];
    double tx = x;
    if (!e.fill.empty()) {
      put(out, "<rect x=\"%.2f\" y=\"%.2f\" width=\"13\" height=\"13\" fill=\"%s\"%s/>\n", x, y - 11, e.fill.c_str(),
          e.critical_marker ? " stroke=\"#111111\" stroke-width=\"1.4\"" : "");
      if (e.critical_marker)
        put(out, "<rect x=\"%.2f\" y=\"%.2f\" width=\"13\" height=\"4\" fill=\"#111111\"/>\n", x, y - 11);
      tx += 18;
    }
    put(out, "<text x=\"%.2f\" y=\"%.2f\" font-size=\"12\" fill=\"%s\">%s</text>\n", tx, y,
        e.fill.empty() ? "#666" : "#222", xml(e.text).c_str());
  }
  out += "</svg>\n";
  return out;
}

}  // namespace corun::cli
