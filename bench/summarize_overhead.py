#!/usr/bin/env python3
"""Turns the JSON files of bench/task_overhead.sh into a markdown table headed by machine info."""
import argparse
import json
import os

from benchlib import machine_header


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--policies", required=True, help="policies in table order (run or not)")
    ap.add_argument("--widths", required=True)
    ap.add_argument("--skipped", default="", help="'policy: reason' lines of policies not run")
    ap.add_argument("--failed", default="", help="'policy width: reason' lines of runs that failed")
    ap.add_argument("--note", default="", help="an extra line for the header")
    ap.add_argument("--info", default="")
    ap.add_argument("--git", default="unknown")
    ap.add_argument("--command", default="")
    a = ap.parse_args()

    runs = {}
    for name in os.listdir(a.dir):
        if name.endswith(".json"):  # <policy>.w<width>.json
            policy, width, _ = name.rsplit(".", 2)
            with open(os.path.join(a.dir, name)) as f:
                runs[(policy, int(width[1:]))] = json.load(f)
    skipped = [s for s in a.skipped.splitlines() if s.strip()]
    failed = {}
    for line in a.failed.splitlines():
        if line.strip():
            key, reason = line.split(":", 1)
            p, w = key.split()
            failed[(p, int(w))] = reason.strip()
    if not runs:
        raise SystemExit("summarize_overhead: no results in " + a.dir)
    any_run = next(iter(runs.values()))
    cfg = any_run["config"]

    notes = [f"{cfg['tasks']} empty tasks per run, submitted in a loop (starpu_task_create + submit) then "
             f"starpu_task_wait_for_all; µs per task = (end of the wait - first submit) / tasks; median of "
             f"{cfg['runs']} runs in one process per policy and width, after a warm-up run of tasks/10",
             "codelet: STARPU_SPMD, max_parallelism = the width, "
             + ("a history perfmodel (calibrated in the warm-up, fresh STARPU_HOME per process)"
                if cfg["model"] else "no perfmodel"),
             "width 2: corun's policies get a TaskHint fixed_width=2 and CORUN_EXECUTORS=1x2; pheft and peager "
             "choose the team width themselves; the other built-ins never form teams. 'team widths' counts the "
             "tasks of the timed runs by the width they actually ran at (starpu_combined_worker_get_size); "
             "'vs width 1' is the median divided by the same policy's width-1 median"]
    notes += [f"**not run: {s}**" for s in skipped]
    if a.note:
        notes.append(f"**note: {a.note}**")
    print(machine_header("Per-task overhead of the scheduling policies", a.command, a.git, any_run["machine"],
                         any_run["engine"], notes=notes, info=a.info))

    widths = [int(w) for w in a.widths.split()]
    skipped_names = {s.split(":", 1)[0] for s in skipped}
    print("| policy | width | median µs/task | min-max of runs | submit µs/task | team widths | vs width 1 |")
    print("|---|---:|---:|---:|---:|---|---:|")
    for p in a.policies.split():
        if p in skipped_names:
            continue
        for w in widths:
            r = runs.get((p, w))
            if r is None:
                print(f"| {p} | {w} | n/a | | | {failed.get((p, w), 'not run')} | |")
                continue
            s = r["summary"]
            counts = r["tasks_per_team_width"]
            total = sum(counts) or 1
            used = ", ".join(f"{k}: {100.0 * c / total:.0f}%" for k, c in enumerate(counts) if c)
            one = runs.get((p, 1))
            ratio = f"{s['median_us'] / one['summary']['median_us']:.1f}" if one and w != 1 else ""
            layout = f" ({r['config']['executors']})" if r["config"].get("executors") else ""
            print(f"| {p}{layout} | {w} | {s['median_us']:.2f} | {s['min_us']:.2f}-{s['max_us']:.2f} | "
                  f"{s['median_submit_us']:.2f} | {used} | {ratio} |")
    print()


if __name__ == "__main__":
    main()
