#!/usr/bin/env python3
"""Turns the JSON files of bench/co_tenancy.sh (MODEL.CONFIG.CONDITION.REPEAT.json) into markdown tables headed by
machine info: per model, median ms/iter of each policy in each condition (alone, pair, busy), its ratio to lws
in the same condition (the goal: 1.1x at most) and its slowdown against running alone."""
import argparse
import glob
import json
import os
import statistics

from benchlib import machine_header

GOAL = 1.1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--models", required=True)
    ap.add_argument("--configs", required=True)
    ap.add_argument("--conditions", required=True)
    ap.add_argument("--repeats", type=int, required=True)
    ap.add_argument("--info", default="")
    ap.add_argument("--git", default="unknown")
    ap.add_argument("--command", default="")
    ap.add_argument("--note", action="append", default=[])
    a = ap.parse_args()

    runs = {}
    for path in glob.glob(os.path.join(a.dir, "*.json")):
        model, config, cond, _rep, _ = os.path.basename(path).split(".")
        with open(path) as f:
            runs.setdefault((model, config, cond), []).append(json.load(f)["summary"]["median_ms"])
    if not runs:
        raise SystemExit("no results: every run failed (see the [bench] lines)")
    any_json = json.load(open(glob.glob(os.path.join(a.dir, "*.json"))[0]))
    print(machine_header(
        "Training under co-tenancy: lws, cpf, corun and dmdas alone, beside a second training, beside a busy core",
        a.command, a.git, any_json["machine"], any_json["engine"],
        notes=[f"{a.repeats} runs per cell, interleaved; each run's value is its median ms/iter (first iteration "
               f"excluded); the table shows the median of the runs, its ratio to lws in the same condition "
               f"(goal <= {GOAL}x; over it in bold) and to the same policy alone."] + a.note,
        info=a.info))
    conds = a.conditions.split()
    med = {k: statistics.median(v) for k, v in runs.items()}
    for model in a.models.split():
        print(f"## {model}\n")
        head = "| policy | " + " | ".join(f"{c}: ms/iter | {c} / lws" + ("" if c == "alone" else f" | {c} / alone")
                                         for c in conds) + " |"
        print(head)
        print("|" + "---|" * (head.count("|") - 1))
        for config in a.configs.split():
            cells = []
            for c in conds:
                v = med.get((model, config, c))
                lws = med.get((model, "lws", c))
                alone = med.get((model, config, "alone"))
                if v is None:
                    cells += ["n/a", "n/a"] + ([] if c == "alone" else ["n/a"])
                    continue
                ratio = v / lws if lws else None
                r = "n/a" if ratio is None else (f"**{ratio:.2f}**" if ratio > GOAL else f"{ratio:.2f}")
                cells += [f"{v:.1f}", r] + ([] if c == "alone" else [f"{v / alone:.2f}" if alone else "n/a"])
            print(f"| {config} | " + " | ".join(cells) + " |")
        print()


if __name__ == "__main__":
    main()
