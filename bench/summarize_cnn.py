#!/usr/bin/env python3
"""Turns the JSON files of bench/cnn_models.sh (MODEL.CONFIG.REPEAT.json) into markdown tables headed by machine
info: per model, median ms/iter of each configuration, the ratio to the best, tasks per iteration."""
import argparse
import glob
import json
import os
import statistics

from benchlib import machine_header


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--models", required=True, help="model labels in table order")
    ap.add_argument("--configs", required=True)
    ap.add_argument("--builtins", required=True, help="the configurations that are StarPU built-ins")
    ap.add_argument("--repeats", type=int, required=True)
    ap.add_argument("--info", default="")
    ap.add_argument("--git", default="unknown")
    ap.add_argument("--command", default="")
    ap.add_argument("--note", action="append", default=[])
    a = ap.parse_args()

    runs = {}
    for path in glob.glob(os.path.join(a.dir, "*.json")):
        model, config, _rep, _ = os.path.basename(path).split(".")
        with open(path) as f:
            runs.setdefault((model, config), []).append(json.load(f))
    any_run = next(iter(runs.values()))[0]
    print(machine_header(
        "CNN training step: sequential, cpf, corun and StarPU built-ins", a.command, a.git, any_run["machine"],
        any_run["engine"],
        notes=[f"{a.repeats} runs per cell, interleaved; each run's value is its median ms/iter (first iteration "
               f"excluded); the table shows the median of the runs and their min-max."] + a.note,
        info=a.info))
    configs = a.configs.split()
    builtins = set(a.builtins.split())
    for model in a.models.split():
        rows = {c: runs[(model, c)] for c in configs if (model, c) in runs}
        if not rows:
            continue
        cfg = next(iter(rows.values()))[0]["config"]
        print(f"## {model}: {cfg['model']} ({cfg['size']}), batch {cfg['batch']}, image {cfg['image']}x{cfg['image']}"
              f"x{cfg['channels']}, {cfg['iters']} iterations per run\n")
        med = {c: statistics.median(r["summary"]["median_ms"] for r in rs) for c, rs in rows.items()}
        best = min(med.values())
        best_builtin = min((c for c in med if c in builtins), key=med.get, default=None)
        print("| configuration | median ms/iter | min-max of runs | ratio to the fastest | tasks/iter | final loss |")
        print("|---|---:|---:|---:|---:|---:|")
        for c in configs:
            if c not in rows:
                print(f"| {c} | n/a | | | | |")
                continue
            meds = [r["summary"]["median_ms"] for r in rows[c]]
            losses = sorted({round(r["summary"]["final_loss"], 6) for r in rows[c]})
            label = c + (" (best built-in)" if c == best_builtin else "")
            print(f"| {label} | {med[c]:.1f} | {min(meds):.1f}-{max(meds):.1f} | {med[c] / best:.2f} | "
                  f"{rows[c][0]['summary']['tasks_per_iter']} | {', '.join(f'{x:.4f}' for x in losses)} |")
        print()


if __name__ == "__main__":
    main()
