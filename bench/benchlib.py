"""Helpers shared by the bench/ summarizers: their command line, the result files of a run (one JSON per
`corun train --json`, named MODEL.CONFIG.VARIANT.REPEAT.json) and the machine-info header of every results file."""
import argparse
import glob
import json
import os


def summary_arguments(extra_flag, extra_help=None):
    """Parses the command line of a summarizer: --dir (the JSON files), --models, --configs and the summarizer's
    own `extra_flag` (--builtins, --conditions, ...) as space-separated labels in table order, --repeats, and the
    header's --info, --git, --command and --note (repeatable)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--models", required=True, help="model labels in table order")
    ap.add_argument("--configs", required=True)
    ap.add_argument(extra_flag, required=True, help=extra_help)
    ap.add_argument("--repeats", type=int, required=True)
    ap.add_argument("--info", default="")
    ap.add_argument("--git", default="unknown")
    ap.add_argument("--command", default="")
    ap.add_argument("--note", action="append", default=[])
    return ap.parse_args()


def load_runs(directory):
    """{(model, config, variant): [result JSON, ...]} from the files MODEL.CONFIG.VARIANT.REPEAT.json in
    `directory`; exits with a message when there are none (every run of the benchmark failed)."""
    runs = {}
    for path in glob.glob(os.path.join(directory, "*.json")):
        model, config, variant, _rep, _ = os.path.basename(path).split(".")
        with open(path) as f:
            runs.setdefault((model, config, variant), []).append(json.load(f))
    if not runs:
        raise SystemExit("no results: every run failed (see the [bench] lines)")
    return runs


def interleaved_runs_note(repeats, shows):
    """The header note of a table of interleaved repeated runs; `shows` says what its cells are."""
    return (f"{repeats} runs per cell, interleaved; each run's value is its median ms/iter (first iteration "
            f"excluded); the table shows {shows}.")


def machine_header(title, command, git, machine, engine, notes=(), info=""):
    """Markdown lines: title, command, git, CPU, topology, StarPU and its caps, BLAS, then `notes` (one bullet
    each) and `corun info` in a collapsed block. `machine` and `engine` are the objects of a result JSON."""
    m, e = machine, engine
    out = [f"# {title}\n",
           f"- command: `{command}`",
           f"- git: {git}",
           f"- cpu: {m['cpu_model']}, nproc {m['nproc']}, affinity {m['affinity']}",
           f"- topology: {m['topology']}",
           f"- StarPU {e['starpu_version']} (STARPU_MAXCPUS {e['starpu_maxcpus']}, "
           f"STARPU_MAXNUMANODES {e['starpu_maxnumanodes']}), workers {e['workers']}",
           f"- BLAS: {e['blas']} (core {e['blas_core']}, {e['blas_threads']} thread per call)"]
    out += [f"- {n}" for n in notes]
    out[-1] += "\n"
    if info:
        out.append("<details><summary>corun info</summary>\n\n```\n" + info.strip() + "\n```\n</details>\n")
    return "\n".join(out)


def fmt(v):
    """A time or ratio for a table cell: 3 significant figures at most, '-' for a missing value."""
    if v is None:
        return "-"
    if v < 0.1:  # microseconds in a column of milliseconds (an inline batch-1 inference): keep two figures
        return f"{v:.2g}"
    return f"{v:.0f}" if v >= 100 else f"{v:.1f}" if v >= 10 else f"{v:.2f}"


def markdown_table(header, rows, align=None):
    """A markdown table: `header` a list of column names, `rows` lists of cells (str() of each);
    `align` one of 'l'/'r' per column (default: the first left, the rest right)."""
    align = align or ["l"] + ["r"] * (len(header) - 1)
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---" if a == "l" else "---:" for a in align) + "|"]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines) + "\n"
