#!/usr/bin/env python3
"""Turns the JSON files of bench/co_tenancy.sh (MODEL.CONFIG.CONDITION.REPEAT.json) into markdown tables headed by
machine info: per model, median ms/iter of each policy in each condition (alone, pair, trio, busy), its ratio to lws
in the same condition (the goal: 1.1x at most) and its slowdown against running alone."""
import statistics

from benchlib import interleaved_runs_note, load_runs, machine_header, summary_arguments

GOAL = 1.1


def main():
    a = summary_arguments("--conditions")
    runs = load_runs(a.dir)
    any_json = next(iter(runs.values()))[0]
    print(machine_header(
        "Training under co-tenancy: lws, cpf, corun and dmdas alone, beside one or two other trainings, beside a busy core",
        a.command, a.git, any_json["machine"], any_json["engine"],
        notes=[interleaved_runs_note(a.repeats, f"the median of the runs, its ratio to lws in the same condition "
                                                f"(goal <= {GOAL}x; over it in bold) and to the same policy alone")]
        + a.note,
        info=a.info))
    conds = a.conditions.split()
    med = {k: statistics.median(r["summary"]["median_ms"] for r in rs) for k, rs in runs.items()}
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
