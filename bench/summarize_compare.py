#!/usr/bin/env python3
"""The table of bench/compare_builds.sh: per workload and policy, both builds' median ms/iter and after/before."""
import argparse
import glob
import json
import os
import statistics

from benchlib import machine_header


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--workloads", required=True)
    ap.add_argument("--policies", required=True)
    ap.add_argument("--label-before", default="before")
    ap.add_argument("--label-after", default="after")
    ap.add_argument("--info", default="")
    ap.add_argument("--git", default="unknown")
    ap.add_argument("--command", default="")
    a = ap.parse_args()

    runs = {}
    for path in glob.glob(os.path.join(a.dir, "*.json")):
        workload, policy, build, _ = os.path.basename(path)[: -len(".json")].split(".")
        with open(path) as f:
            runs.setdefault((workload, policy, build), []).append(json.load(f))
    any_run = next(iter(runs.values()))[0]
    print(machine_header("corun: two builds side by side", a.command, a.git, any_run["machine"], any_run["engine"],
                         notes=[f"before = {a.label_before}", f"after = {a.label_after}",
                                "runs interleaved (the builds alternate); each run's value is its median ms/iter "
                                "(first iteration excluded); the table shows the median of the runs and their min-max"],
                         info=a.info))
    print("| workload | policy | before ms/iter | min-max | after ms/iter | min-max | after / before |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for w in a.workloads.split():
        name = w.replace(":", "-")
        for p in a.policies.split():
            cells = []
            meds = {}
            for b in ("before", "after"):
                vals = [r["summary"]["median_ms"] for r in runs.get((name, p, b), [])]
                if not vals:
                    cells += ["n/a", "n/a"]
                    continue
                meds[b] = statistics.median(vals)
                cells += [f"{meds[b]:.2f}", f"{min(vals):.2f}-{max(vals):.2f}"]
            ratio = f"{meds['after'] / meds['before']:.3f}" if len(meds) == 2 else "n/a"
            print(f"| {w} | {p} | " + " | ".join(cells) + f" | {ratio} |")


if __name__ == "__main__":
    main()
