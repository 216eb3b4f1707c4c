"""Turns the JSON lines of bench/onnx_models.sh into its markdown results: machine info, then one table per
ONNX model: ms per training step and batch-1 / batch-32 inference latency under every policy and in PyTorch
(the best of its thread counts, 1 and 2 by default, with and without tcmalloc), the ratios to PyTorch's best (> 1: corun faster)
and the mean number of co-running ops per training iteration (bench/corun_concurrency.py on the trace)."""
import argparse
import json
import os
import statistics
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(__file__))
from benchlib import fmt, machine_header, markdown_table  # noqa: E402
from corun_concurrency import intervals, mean, profile  # noqa: E402

KINDS = [("train", "train ms/step"), ("infer1", "infer b1 ms"), ("infer32", "infer b32 ms")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--results", required=True)
    ap.add_argument("--machine", required=True)
    ap.add_argument("--command", required=True)
    ap.add_argument("--git", required=True)
    ap.add_argument("--info", default="")
    ap.add_argument("--torch", default="")
    ap.add_argument("--note", action="append", default=[])
    a = ap.parse_args()
    runs, traces, models, policies, torch_cfgs = defaultdict(list), {}, [], [], []
    with open(a.results) as f:
        for line in f:
            r = json.loads(line)
            if r["model"] not in models:
                models.append(r["model"])
            if r["impl"] == "trace":
                traces[(r["model"], r["policy"])] = r["file"]
                continue
            runs[(r["model"], r["kind"], r["impl"], r["config"])].append(float(r["ms"]))
            if r["impl"] == "corun" and r["config"] not in policies:
                policies.append(r["config"])
            if r["impl"] == "pytorch" and r["config"] not in torch_cfgs:
                torch_cfgs.append(r["config"])
    med = {k: statistics.median(v) for k, v in runs.items()}
    rounds = max(len(v) for v in runs.values())
    notes = [f"PyTorch {a.torch}: {', '.join(torch_cfgs)}; the best is quoted",
             f"medians of {rounds} interleaved round(s), each run's own median; ratio = PyTorch's best / corun "
             "(> 1: corun faster)",
             "co-running ops: time-weighted mean number of tasks running at once over the traced (last) "
             "training iteration, a team task counted once (bench/corun_concurrency.py)"] + a.note
    out = [machine_header("ONNX models: corun vs PyTorch", a.command, a.git, json.load(open(a.machine))["machine"],
                          json.load(open(a.machine))["engine"], notes, a.info)]
    for model in models:
        best = {}
        for kind, _ in KINDS:
            cands = [(med[(model, kind, "pytorch", c)], c) for c in torch_cfgs if (model, kind, "pytorch", c) in med]
            best[kind] = min(cands) if cands else (None, "-")
        rows = []
        for p in policies:
            row = [f"corun {p}"]
            for kind, _ in KINDS:
                v = med.get((model, kind, "corun", p))
                ratio = best[kind][0] / v if v and best[kind][0] else None
                row += [fmt(v), fmt(ratio)]
            trace = traces.get((model, p))
            row.append(f"{mean(profile(intervals(trace), lambda w: 1)):.2f}" if trace and os.path.exists(trace) else "-")
            rows.append(row)
        row = ["PyTorch best"]
        for kind, _ in KINDS:
            row += [f"{fmt(best[kind][0])} ({best[kind][1]})", ""]
        rows.append(row + [""])
        header = ["impl"]
        for _, label in KINDS:
            header += [label, "ratio"]
        out.append(f"## {model}\n\n" + markdown_table(header + ["co-running ops"], rows))
    print("\n".join(out))


if __name__ == "__main__":
    main()
