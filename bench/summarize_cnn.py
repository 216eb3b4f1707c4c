#!/usr/bin/env python3
"""Turns the JSON files of bench/cnn_models.sh (MODEL.CONFIG.PASS.REPEAT.json, PASS = on|off for CORUN_PARALLEL_OPS)
into markdown tables headed by machine info: per model and configuration, median ms/iter with the parallel-op pass
on and off side by side, the ratio to the fastest cell, and the tasks per iteration before and after the pass."""
import statistics

from benchlib import interleaved_runs_note, load_runs, machine_header, summary_arguments


def main():
    a = summary_arguments("--builtins", "the configurations that are StarPU built-ins")
    runs = load_runs(a.dir)
    any_run = next(iter(runs.values()))[0]
    print(machine_header(
        "CNN training step: sequential, cpf, corun and StarPU built-ins", a.command, a.git, any_run["machine"],
        any_run["engine"],
        notes=[interleaved_runs_note(a.repeats, "the median of the runs and their min-max")] + a.note,
        info=a.info))
    configs = a.configs.split()
    builtins = set(a.builtins.split())
    def cell(rs):
        return statistics.median(r["summary"]["median_ms"] for r in rs) if rs else None

    def fmt(rs):
        if not rs:
            return "n/a"
        meds = [r["summary"]["median_ms"] for r in rs]
        return f"{cell(rs):.1f} ({min(meds):.1f}-{max(meds):.1f})"

    for model in a.models.split():
        rows = {(c, p): runs[(model, c, p)] for c in configs for p in ("on", "off") if (model, c, p) in runs}
        if not rows:
            continue
        cfg = next(iter(rows.values()))[0]["config"]
        print(f"## {model}: {cfg['model']} ({cfg['size']}), batch {cfg['batch']}, image {cfg['image']}x{cfg['image']}"
              f"x{cfg['channels']}, {cfg['iters']} iterations per run\n")
        med = {k: cell(rs) for k, rs in rows.items()}
        best = min(med.values())
        best_builtin = min((c for (c, p) in med if c in builtins and p == "on"), key=lambda c: med[(c, "on")],
                           default=None)
        print("| configuration | pass on: ms/iter (min-max) | pass off: ms/iter (min-max) | off / on | on / fastest | "
              "tasks/iter on | tasks/iter off | final loss |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for c in configs:
            on, off = rows.get((c, "on")), rows.get((c, "off"))
            if not on and not off:
                print(f"| {c} | n/a | n/a | | | | | |")
                continue
            ratio = f"{cell(off) / cell(on):.2f}" if on and off else "n/a"
            to_best = f"{cell(on) / best:.2f}" if on else "n/a"
            tasks_on = on[0]["summary"]["tasks_per_iter"] if on else "n/a"
            tasks_off = off[0]["summary"]["tasks_per_iter"] if off else "n/a"
            losses = sorted({round(r["summary"]["final_loss"], 6) for r in (on or []) + (off or [])})
            label = c + (" (best built-in)" if c == best_builtin else "")
            print(f"| {label} | {fmt(on)} | {fmt(off)} | {ratio} | {to_best} | {tasks_on} | {tasks_off} | "
                  f"{', '.join(f'{x:.4f}' for x in losses)} |")
        print()


if __name__ == "__main__":
    main()
