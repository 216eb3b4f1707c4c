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
    a = ap.parse_args()

    runs = {}
    for path in glob.glob(os.path.join(a.dir, "*.json")):
        size, policy, _rep, _ = os.path.basename(path).split(".")
        with open(path) as f:
            runs.setdefault((size, policy), []).append(json.load(f))
    any_run = next(iter(runs.values()))[0]
    m, e = any_run["machine"], any_run["engine"]

    print(machine_header(
        "LSTM training: policies side by side", a.command, a.git, m, e,
        notes=[f"{a.repeats} runs per cell, interleaved; each run's value is its median ms/iter "
               f"(first iteration excluded); the table shows the median of the runs and their min-max."],
        info=a.info))

    policies = a.policies.split()
    for size in a.sizes.split():
        cfg = runs[(size, policies[0])][0]["config"]
        print(f"## {size}: layers {cfg['layers']}, batch {cfg['batch']}, seq {cfg['seq']}, hidden {cfg['hidden']}, "
              f"{cfg['iters']} iterations per run\n")
        print(f"| policy | median ms/iter | min-max of runs | ratio to {policies[0]} | tasks/iter | final loss |")
        print("|---|---:|---:|---:|---:|---:|")
        base = None
        for p in policies:
            rs = runs.get((size, p), [])
            if not rs:
                print(f"| {p} | n/a | | | | |")
                continue
            meds = [r["summary"]["median_ms"] for r in rs]
            med = statistics.median(meds)
            base = base or med
            losses = {round(r["summary"]["final_loss"], 6) for r in rs}
            print(f"| {p} | {med:.1f} | {min(meds):.1f}-{max(meds):.1f} | {med / base:.2f} | "
                  f"{rs[0]['summary']['tasks_per_iter']} | {', '.join(f'{x:.4f}' for x in sorted(losses))} |")
        print()


if __name__ == "__main__":
    main()
