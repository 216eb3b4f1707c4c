"""Helpers shared by the bench/ summarizers: the machine-info header of every results file."""


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
    return f"{v:.0f}" if v >= 100 else f"{v:.1f}" if v >= 10 else f"{v:.2f}"


def markdown_table(header, rows, align=None):
    """A markdown table: `header` a list of column names, `rows` lists of cells (str() of each);
    `align` one of 'l'/'r' per column (default: the first left, the rest right)."""
    align = align or ["l"] + ["r"] * (len(header) - 1)
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---" if a == "l" else "---:" for a in align) + "|"]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines) + "\n"
