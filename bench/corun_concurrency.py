#!/usr/bin/env python3
"""Co-running ops over time (the co-run paper's Figure 4) from corun traces.

  corun_concurrency.py --svg OUT.svg LABEL=TRACE.json [LABEL=TRACE.json ...]

For every trace: the number of tasks running at each moment of the traced iteration (a team task counts
once), drawn as a step plot, one panel per trace, and a markdown table of the time-weighted mean and the
maximum number of co-running ops and the mean number of busy cores. Plain SVG (no plotting library);
rasterise with rsvg-convert.
"""
import argparse
import json


def intervals(path):
    with open(path) as f:
        doc = json.load(f)
    ev = [e for e in doc["traceEvents"] if e.get("ph") == "X" and e["args"]["team_rank"] == 0]
    return [(e["ts"], e["ts"] + e["dur"], e["args"]["width"]) for e in ev]


def profile(iv, weight):
    """Step function [(t, value)] of the sum of weight(width) over the intervals active from t on."""
    deltas = {}
    for s, e, w in iv:
        deltas[s] = deltas.get(s, 0) + weight(w)
        deltas[e] = deltas.get(e, 0) - weight(w)
    steps, level = [], 0
    for t in sorted(deltas):
        level += deltas[t]
        steps.append((t, level))
    return steps


def mean(steps):
    if len(steps) < 2:
        return 0.0
    area = sum((steps[i + 1][0] - steps[i][0]) * steps[i][1] for i in range(len(steps) - 1))
    span = steps[-1][0] - steps[0][0]
    return area / span if span > 0 else 0.0


def svg(panels, path):
    w, h, pad = 900, 140, 40
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{len(panels) * h + pad}" '
           f'font-family="sans-serif" font-size="12"><rect width="100%" height="100%" fill="white"/>']
    top = max(max((v for _, v in st), default=1) for _, st in panels) or 1
    for k, (label, st) in enumerate(panels):
        y0 = pad / 2 + k * h
        t0, t1 = st[0][0], st[-1][0]
        sx = (w - 2 * pad) / max(t1 - t0, 1e-9)
        sy = (h - 30) / top
        pts = []
        for i, (t, v) in enumerate(st):
            x = pad + (t - t0) * sx
            y = y0 + h - 20 - v * sy
            if i:
                pts.append(f"{x:.1f},{pts[-1].split(',')[1]}")
            pts.append(f"{x:.1f},{y:.1f}")
        out.append(f'<text x="{pad}" y="{y0 + 8}">{label}: ops running over one iteration '
                   f'({(t1 - t0) / 1000:.1f} ms; mean {mean(st):.2f})</text>')
        out.append(f'<line x1="{pad}" y1="{y0 + h - 20}" x2="{w - pad}" y2="{y0 + h - 20}" stroke="#888"/>')
        for v in range(top + 1):
            yy = y0 + h - 20 - v * sy
            out.append(f'<text x="{pad - 15}" y="{yy + 4:.1f}">{v}</text>')
        out.append(f'<polyline fill="none" stroke="#1f77b4" points="{" ".join(pts)}"/>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--svg", required=True)
    ap.add_argument("traces", nargs="+", help="LABEL=TRACE.json")
    a = ap.parse_args()
    panels = []
    print("| configuration | mean co-running ops | max co-running ops | mean busy cores |")
    print("|---|---:|---:|---:|")
    for spec in a.traces:
        label, path = spec.split("=", 1)
        iv = intervals(path)
        ops = profile(iv, lambda w: 1)
        cores = profile(iv, lambda w: w)
        panels.append((label, ops))
        print(f"| {label} | {mean(ops):.2f} | {max(v for _, v in ops)} | {mean(cores):.2f} |")
    svg(panels, a.svg)


if __name__ == "__main__":
    main()
