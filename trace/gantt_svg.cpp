// SVG Gantt chart of an execution trace, step 2: writing the layout of gantt.cpp as SVG. No geometry is
// decided here: every position and size comes from the layout, only the styles are chosen.
#include "trace/gantt_layout.hpp"

#include <cstdarg>
#include <cstdio>

namespace corun::trace::gantt {
namespace {

constexpr const char* kCriticalStroke = "#111111";
constexpr const char* kFont = "DejaVu Sans, Helvetica, Arial, sans-serif";

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

bool dark(const std::string& hex) {
  unsigned r = 0, g = 0, b = 0;
  if (std::sscanf(hex.c_str(), "#%02x%02x%02x", &r, &g, &b) != 3) return false;
  return 0.299 * r + 0.587 * g + 0.114 * b < 150;
}

void emit_header(const GanttLayout& g, std::string& out) {
  for (const HeaderLine& l : g.header)
    put(out, "<text x=\"%.0f\" y=\"%.1f\" font-size=\"%.0f\" %s>%s</text>\n", g.margin, l.y, l.font, l.style,
        xml(l.text).c_str());
}

// Background bands and labels with each worker's busy share (two lines when rows are tall enough).
void emit_rows(const GanttLayout& g, std::string& out) {
  const Chart& c = g.chart;
  for (size_t r = 0; r < g.rows.size(); ++r) {
    const Row& row = g.rows[r];
    put(out, "<rect x=\"%.0f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"/>\n", c.left, row.y, c.width,
        c.row_h, r % 2 ? "#f3f3f3" : "#fafafa");
    if (!row.labelled) continue;
    const int worker = static_cast<int>(r);
    if (c.row_h >= 30) {
      put(out, "<text x=\"%.0f\" y=\"%.2f\" font-size=\"13\" text-anchor=\"end\" fill=\"#222\">worker %d</text>\n",
          c.left - 8, row.y + c.row_h / 2 - 2, worker);
      put(out, "<text x=\"%.0f\" y=\"%.2f\" font-size=\"11\" text-anchor=\"end\" fill=\"#666\">%.0f%% busy</text>\n",
          c.left - 8, row.y + c.row_h / 2 + 12, row.busy_pct);
    } else {
      put(out,
          "<text x=\"%.0f\" y=\"%.2f\" font-size=\"%.0f\" text-anchor=\"end\" fill=\"#222\">worker %d  %.0f%%</text>\n",
          c.left - 8, row.y + c.row_h / 2 + c.row_font * 0.35, c.row_font, worker, row.busy_pct);
    }
  }
}

// Grid lines, behind the boxes.
void emit_grid(const GanttLayout& g, std::string& out) {
  for (const Tick& t : g.ticks)
    put(out, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#dddddd\" stroke-width=\"1\"/>\n", t.x,
        g.chart.top, t.x, g.chart.bottom);
}

// Tick marks and values below the chart, the axis line and its title.
void emit_axis(const GanttLayout& g, std::string& out) {
  const Chart& c = g.chart;
  for (const Tick& t : g.ticks) {
    put(out, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#444\" stroke-width=\"1\"/>\n", t.x,
        c.bottom, t.x, c.bottom + 5);
    put(out, "<text x=\"%.2f\" y=\"%.2f\" font-size=\"12\" text-anchor=\"middle\" fill=\"#333\">%.*f</text>\n", t.x,
        c.bottom + 19, g.tick_decimals, t.value_ms);
  }
  put(out, "<line x1=\"%.0f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#444\" stroke-width=\"1\"/>\n", c.left,
      c.bottom, c.left + c.width, c.bottom);
  put(out, "<text x=\"%.2f\" y=\"%.2f\" font-size=\"13\" text-anchor=\"middle\" fill=\"#333\">time (ms)</text>\n",
      c.left + c.width / 2, c.bottom + 38);
}

void emit_tasks(const GanttLayout& g, std::string& out) {
  for (const Run& r : g.runs) {
    put(out, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"", r.x, r.y, r.w, r.h,
        g.ops[static_cast<size_t>(r.op)].fill.c_str());
    if (r.opacity < 0.995) put(out, " fill-opacity=\"%.2f\"", r.opacity);
    put(out, "/>\n");
  }
  for (const Box& b : g.boxes) {
    const char* fill = g.ops[static_cast<size_t>(b.op)].fill.c_str();
    if (b.w >= 4)  // a hairline gap between back-to-back boxes of one colour
      put(out,
          "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\" stroke=\"#ffffff\" "
          "stroke-width=\"0.6\"/>\n",
          b.x, b.y, b.w, b.h, fill);
    else
      put(out, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"/>\n", b.x, b.y, b.w, b.h, fill);
  }
  for (const Bar& b : g.bars)
    put(out, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"/>\n", b.x, b.y, b.w, g.chart.bar_h,
        kCriticalStroke);
  for (const Outline& o : g.outlines)
    put(out,
        "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"none\" stroke=\"%s\" "
        "stroke-width=\"1.4\"/>\n",
        o.x, o.y, o.w, o.h, kCriticalStroke);
  for (const Label& l : g.labels)
    put(out, "<text x=\"%.2f\" y=\"%.2f\" font-size=\"%.0f\" text-anchor=\"middle\" fill=\"%s\">%s</text>\n", l.x, l.y,
        l.font, dark(g.ops[static_cast<size_t>(l.op)].fill) ? "#ffffff" : "#222222", xml(l.text).c_str());
}

void emit_iterations(const GanttLayout& g, std::string& out) {
  for (const IterationMark& m : g.iterations) {
    if (m.line)
      put(out,
          "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#555\" stroke-width=\"1\" "
          "stroke-dasharray=\"4 3\"/>\n",
          m.x, g.chart.top - 14, m.x, g.chart.bottom);
    if (m.label)
      put(out, "<text x=\"%.2f\" y=\"%.2f\" font-size=\"11\" fill=\"#555\">iter %d</text>\n", m.x + 3, g.chart.top - 4,
          m.iteration);
  }
}

void emit_legend(const GanttLayout& g, std::string& out) {
  for (const LegendEntry& e : g.legend) {
    double tx = e.x;
    if (!e.fill.empty()) {
      put(out, "<rect x=\"%.2f\" y=\"%.2f\" width=\"13\" height=\"13\" fill=\"%s\"%s/>\n", e.x, e.y - 11,
          e.fill.c_str(), e.critical_marker ? " stroke=\"#111111\" stroke-width=\"1.4\"" : "");
      if (e.critical_marker)
        put(out, "<rect x=\"%.2f\" y=\"%.2f\" width=\"13\" height=\"4\" fill=\"#111111\"/>\n", e.x, e.y - 11);
      tx += 18;
    }
    put(out, "<text x=\"%.2f\" y=\"%.2f\" font-size=\"12\" fill=\"%s\">%s</text>\n", tx, e.y,
        e.fill.empty() ? "#666" : "#222", xml(e.text).c_str());
  }
}

}  // namespace

std::string emit_svg(const GanttLayout& g) {
  std::string out;
  out.reserve(1 << 16);
  put(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
  put(out,
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
      "font-family=\"%s\">\n",
      g.width, g.height, g.width, g.height, kFont);
  put(out, "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n");
  emit_header(g, out);
  emit_rows(g, out);
  emit_grid(g, out);
  emit_tasks(g, out);
  emit_iterations(g, out);
  emit_axis(g, out);
  emit_legend(g, out);
  out += "</svg>\n";
  return out;
}

}  // namespace corun::trace::gantt
