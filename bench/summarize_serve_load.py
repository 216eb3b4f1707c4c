"""Turns the JSON lines of bench/serve_load.sh into its markdown results: the machine, a summary per model against
issue 49's goals (at saturation, corun adaptive >= 1.3x the best fixed stream setting and >= 1.5x the best
PyTorch server; at 1 client, its p50 within 10% of `corun infer` alone), then one table per model: requests/s
and p50 / p99 latency per configuration and number of clients, medians over rounds.

Lines (kind): "load" (serve_load.py's result of one level of one session), "infer" (corun infer's median ms),
"check" (the largest difference between one answer of a configuration and corun infer's outputs), "unserved"
(a configuration whose servers did not start, with the reason)."""
import argparse
import json
import os
import statistics
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(__file__))
from benchlib import fmt, markdown_table  # noqa: E402

FAMILIES = ("corun-adaptive", "corun-fixed", "torch")


def load(path):
    rows = defaultdict(list)
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            rows[r.get("kind")].append(r)
    if not rows["load"] and not rows["unserved"]:
        raise SystemExit("summarize_serve_load.py: no results (every server failed to start, or no level ran)")
    return rows


def info_fields(info):
    """{key: value} of `corun info`'s "key   value" lines."""
    out = {}
    for line in info.splitlines():
        if line and not line.startswith(" "):
            key, _, value = line.partition(" ")
            out.setdefault(key, value.strip())
    return out


def header(a):
    i = info_fields(a.info)
    lines = ["# corun serve under load: adaptive placement against fixed streams and PyTorch (issue 49)\n",
             f"- command: `{a.command}`", f"- git: {a.git}"]
    for key in ("cpu", "topology", "affinity", "starpu", "policy", "workers", "blas"):
        if key in i:
            lines.append(f"- {key}: {i[key]}")
    lines += [f"- {n}" for n in a.note]
    lines += ["- closed loop: C clients, each with one keep-alive connection and one batch-1 request at a time "
              "(bench/serve_load.py, Python threads on the same cores as the servers: its CPU time is in the "
              "table); clients spread round-robin over a configuration's servers",
              "- req/s: 200 answers in the measured window / its length; p50 / p99: nearest-rank latency of "
              "those answers, from the first byte sent to the last read; medians over rounds",
              "- saturation: a configuration's highest req/s over the levels; ratios > 1: corun adaptive better "
              "(p50 / infer: < 1.10 meets the goal)\n"]
    if a.info:
        lines.append("<details><summary>corun info</summary>\n\n```\n" + a.info.strip() + "\n```\n</details>\n")
    return "\n".join(lines)


class Model:
    """One model's medians: cells[(config, clients)] = {rps, p50, p99, non200, cpu}."""

    def __init__(self, name, rows):
        self.name, self.configs, self.family, self.unserved = name, [], {}, {}
        runs = defaultdict(list)
        self.servers, self.startup = {}, defaultdict(list)
        for r in rows["load"]:
            if r["model"] != name:
                continue
            if r["config"] not in self.configs:
                self.configs.append(r["config"])
            self.family[r["config"]] = r["family"]
            self.servers[r["config"]] = r["servers"]
            self.startup[r["config"]].append(r["startup_s"])
            runs[(r["config"], r["concurrency"])].append(r)
        for r in rows["unserved"]:
            if r["model"] == name:
                self.unserved.setdefault(r["config"], r["reason"])
                self.family.setdefault(r["config"], r["family"])
                if r["config"] not in self.configs:
                    self.configs.append(r["config"])
        self.cells = {k: self.medians(v) for k, v in runs.items()}
        infer = [r["ms"] for r in rows["infer"] if r["model"] == name]
        self.infer_ms = statistics.median(infer) if infer else None
        self.diff = {r["config"]: r["max_abs_diff"] for r in rows["check"] if r["model"] == name}

    @staticmethod
    def medians(runs):
        med = lambda key: statistics.median([r[key] for r in runs if r.get(key) is not None]) \
            if any(r.get(key) is not None for r in runs) else None
        non200 = sum(sum(v for k, v in r["statuses"].items() if k != "200") + sum(r["errors"].values())
                     + r.get("hung_threads", 0) for r in runs)
        return {"rps": med("throughput_rps"), "p50": med("p50_ms"), "p99": med("p99_ms"), "non200": non200,
                "cpu": med("client_cpu_s"), "elapsed": med("elapsed_s")}

    def peak(self, config, levels):
        """(highest median req/s over the levels, its level), or (None, None)."""
        cands = [(self.cells[(config, c)]["rps"], c) for c in levels if (config, c) in self.cells
                 and self.cells[(config, c)]["rps"]]
        return max(cands) if cands else (None, None)

    def best(self, family, levels):
        """(peak, level, config) of the family's best configuration."""
        cands = [self.peak(c, levels) + (c,) for c in self.configs if self.family.get(c) == family
                 and self.peak(c, levels)[0]]
        return max(cands) if cands else (None, None, None)


def ratio(a, b):
    return a / b if a and b else None


def summary(models, levels):
    head = ["model", "corun adaptive: req/s at saturation", "best fixed streams", "adaptive / fixed (goal >= 1.3)",
            "best PyTorch", "adaptive / PyTorch (goal >= 1.5)", "adaptive p50 at 1 client ms", "corun infer ms",
            "p50 / infer (goal <= 1.10)"]
    rows = []
    for m in models:
        fixed, torch = m.best("corun-fixed", levels), m.best("torch", levels)
        for cfg in (c for c in m.configs if m.family.get(c) == "corun-adaptive"):
            if cfg in m.unserved:
                rows.append([m.name, f"not served: {m.unserved[cfg]}"] + ["-"] * (len(head) - 2))
                continue
            peak, at = m.peak(cfg, levels)
            low = m.cells.get((cfg, levels[0]), {}).get("p50")
            label = m.name if cfg == "corun adaptive" else f"{m.name}, {cfg}"
            rows.append([label, f"{fmt(peak)} ({at} clients)" if peak else "-",
                         f"{fmt(fixed[0])} ({fixed[2]}, {fixed[1]} clients)" if fixed[0] else "-",
                         fmt(ratio(peak, fixed[0])),
                         f"{fmt(torch[0])} ({torch[2]}, {torch[1]} clients)" if torch[0] else "-",
                         fmt(ratio(peak, torch[0])), fmt(low), fmt(m.infer_ms), fmt(ratio(low, m.infer_ms))])
    return "## Summary\n\n" + markdown_table(head, rows) + \
        f"\np50 at 1 client is measured at the lowest level ({levels[0]} client(s)).\n"


def model_table(m, levels):
    head = ["configuration"]
    for c in levels:
        head += [f"{c} cl. req/s", f"{c} cl. p50 / p99 ms"]
    head += ["non-200", "servers", "start s", "client CPU s", "max abs diff"]
    rows = []
    for cfg in m.configs:
        if cfg in m.unserved and not any((cfg, c) in m.cells for c in levels):
            rows.append([cfg, f"not served: {m.unserved[cfg]}"] + [""] * (len(head) - 2))
            continue
        row, non200, cpu = [cfg], 0, []
        for c in levels:
            cell = m.cells.get((cfg, c))
            if not cell:
                row += ["-", "-"]
                continue
            row += [fmt(cell["rps"]), f"{fmt(cell['p50'])} / {fmt(cell['p99'])}"]
            non200 += cell["non200"]
            cpu.append(cell["cpu"] / cell["elapsed"] if cell["cpu"] is not None and cell["elapsed"] else 0.0)
        diff = m.diff.get(cfg)
        row += [non200, m.servers.get(cfg, "-"), fmt(statistics.median(m.startup[cfg])) if m.startup[cfg] else "-",
                f"{max(cpu):.2f}/s" if cpu else "-", f"{diff:.2g}" if diff is not None else "-"]
        rows.append(row)
    infer = f"`corun infer --batch 1` alone: {fmt(m.infer_ms)} ms (median of its runs' medians)." if m.infer_ms else ""
    return f"## {m.name}\n\n{infer}\n\n" + markdown_table(head, rows)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--results", required=True)
    ap.add_argument("--command", required=True)
    ap.add_argument("--git", required=True)
    ap.add_argument("--levels", required=True, help="the client counts, in table order")
    ap.add_argument("--info", default="")
    ap.add_argument("--note", action="append", default=[])
    a = ap.parse_args()
    rows = load(a.results)
    levels = [int(c) for c in a.levels.split()]
    names = []
    for r in rows["load"] + rows["unserved"] + rows["infer"]:
        if r["model"] not in names:
            names.append(r["model"])
    models = [Model(n, rows) for n in names]
    parts = [header(a), summary(models, levels)]
    parts += [model_table(m, levels) for m in models]
    parts.append("non-200: 503s, other statuses, connection errors and hung clients over every level and round; "
                 "client CPU s: the load generator's CPU seconds per second of its run, the highest over the levels "
                 "(1.00/s = one core); max abs diff: one answer of the configuration against `corun infer`'s "
                 "outputs on the same input (round 1).\n")
    print("\n".join(parts))


if __name__ == "__main__":
    main()
