#!/usr/bin/env python3
"""Turns the JSON files of bench/lstm_policies.sh into a markdown table headed by machine info."""
import argparse
import glob
import json
import os
import statistics

from benchlib import machine_header


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--sizes", required=True)
    ap.add_argument("--policies", required=True)
    ap.add_argument("--repeats", type=int, required=True)
    ap.add_argument("--info", default="")
    ap.add_argument("--git", default="unknown")
    ap.add_argument("--command", default="")
    ap.add_argument("--title", default="LSTM training: policies side by side")
    ap.add_argument("--note", action="append", default=[], help="an extra bullet under the machine info")
    ap.add_argument("--bound", action="store_true", help="add the makespan / lower bound column")
    ap.add_argument("--extremes", action="store_true",
                    help="print only the fastest and the slowest policy of the (single) size and exit")
    a = ap.parse_args()

    runs = {}
    for path in glob.glob(os.path.join(a.dir, "*.json")):
        size, policy, _rep, _ = os.path.basename(path).split(".")
        with open(path) as f:
            runs.setdefault((size, policy), []).append(json.load(f))
    policies = a.policies.split()
    if a.extremes:
        size = a.sizes.split()[0]
        med = {p: statistics.median(r["summary"]["median_ms"] for r in runs[(size, p)])
               for p in policies if (size, p) in runs}
        print(min(med, key=med.get), max(med, key=med.get))
        return
    any_run = next(iter(runs.values()))[0]
    m, e = any_run["machine"], any_run["engine"]

    print(machine_header(
        a.title, a.command, a.git, m, e,
        notes=[f"{a.repeats} runs per cell, interleaved; each run's value is its median ms/iter "
               f"(first iteration excluded); the table shows the median of the runs and their min-max."] + a.note,
        info=a.info))

    for size in a.sizes.split():
        cfg = runs[(size, policies[0])][0]["config"]
        print(f"## {size}: layers {cfg['layers']}, batch {cfg['batch']}, seq {cfg['seq']}, hidden {cfg['hidden']}, "
              f"{cfg['iters']} iterations per run\n")
        bound_head = " makespan / bound |" if a.bound else ""
        print(f"| policy | median ms/iter | min-max of runs | ratio to {policies[0]} | tasks/iter | final loss |"
              + bound_head)
        print("|---|---:|---:|---:|---:|---:|" + ("---:|" if a.bound else ""))
        base = None
        for p in policies:
            rs = runs.get((size, p), [])
            if not rs:
                print(f"| {p} | n/a | | | | |" + (" |" if a.bound else ""))
                continue
            meds = [r["summary"]["median_ms"] for r in rs]
            med = statistics.median(meds)
            base = base or med
            losses = {round(r["summary"]["final_loss"], 6) for r in rs}
            bound = ""
            if a.bound:
                ratios = [r["summary"]["last_ms"] / r["summary"]["lower_bound_ms"] for r in rs
                          if r["summary"].get("lower_bound_ms") not in (None, 0)]
                bound = f" {statistics.median(ratios):.2f} |" if ratios else " |"
            print(f"| {p} | {med:.1f} | {min(meds):.1f}-{max(meds):.1f} | {med / base:.2f} | "
                  f"{rs[0]['summary']['tasks_per_iter']} | {', '.join(f'{x:.4f}' for x in sorted(losses))} |" + bound)
        print()


if __name__ == "__main__":
    main()
