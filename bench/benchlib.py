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
