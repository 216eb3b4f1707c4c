#!/usr/bin/env python3
"""Turns the JSON lines of bench/vs_pytorch.sh into its markdown results: machine info, sgemm's rate, the
corun-vs-PyTorch table (median over rounds; ratio = PyTorch's best time / corun's best, > 1 = corun faster)
and the parallel-op pass against the same run with the pass off, per policy."""
import argparse
import json
import statistics
import sys
from collections import defaultdict

sys.path.insert(0, __import__("os").path.dirname(__file__))
from benchlib import fmt, machine_header  # noqa: E402

LABELS = {
    "pathnet": "PathNet small training, ms/iter",
    "googlenet": "GoogLeNet small (64 px, batch 32) training, ms/iter",
    "cifar-quick": "CIFAR-quick (Fashion-MNIST, batch 128) training, ms/iter",
    "lstm-small": "LSTM small training, ms/iter",
    "lstm-medium": "LSTM medium training, ms/iter",
    "serve-256-256-10-100": "LSTM serving 256/256 batch 10, seq 100, us",
    "serve-64-64-1-100": "LSTM serving batch 1, E=H=64, seq 100, us",
    "serve-256-256-1-100": "LSTM serving batch 1, E=H=256, seq 100, us",
    "serve-1024-1024-1-100": "LSTM serving batch 1, E=H=1024, seq 100, us",
    "wide-deep": "wide&deep batch-1 inference (corun inline), us",
}
CIFAR_STEPS_PER_EPOCH = 60000 // 128


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--results", required=True)
    ap.add_argument("--machine", required=True)
    ap.add_argument("--command", required=True)
    ap.add_argument("--git", required=True)
    ap.add_argument("--info", default="")
    ap.add_argument("--sgemm", action="append", default=[])
    ap.add_argument("--torch", default="")
    ap.add_argument("--cifar-iters", type=int, required=True)
    ap.add_argument("--allocators", default="default", help="PyTorch's allocators run: 'default' and/or 'tcmalloc'")
    ap.add_argument("--load", action="append", default=[], help="load averages at the start and at the end")
    a = ap.parse_args()
    runs = defaultdict(list)
    order = []
    with open(a.results) as f:
        for line in f:
            r = json.loads(line)
            key = (r["workload"], r["impl"], r["policy"], r["pass"], r["threads"])
            runs[key].append(float(r["value"]))
            if r["workload"] not in order:
                order.append(r["workload"])
    med = {k: statistics.median(v) for k, v in runs.items()}
    rounds = max(len(v) for v in runs.values())
    policies = []
    passes = []
    for (_, impl, pol, ps, _) in med:
        if impl == "corun" and pol != "-" and pol not in policies:
            policies.append(pol)
        if impl == "corun" and ps != "-" and ps not in passes:
            passes.append(ps)

    m = json.load(open(a.machine))
    tcm = "tcmalloc" in a.allocators.split()
    notes = [f"PyTorch {a.torch} (Debian python3-torch), torch.set_num_threads 1 and 2, "
             + ("each with glibc malloc and with tcmalloc (LD_PRELOAD libtcmalloc.so.4); a PyTorch cell is the faster "
                "of the two, marked t when tcmalloc's" if tcm else "glibc malloc only (tcmalloc not installed)"),
             f"medians of {rounds} interleaved round(s), each run's own median"]
    for s in a.sgemm:
        j = json.loads(s)
        notes.append(f"OpenBLAS sgemm {j['n']}^3 at {j['threads']} thread(s): {j['gflops_median']} GF/s median, "
                     f"{j['gflops_best']} best (bench/sgemm_rate)")
    if a.load:
        notes.append("load average (1/5/15 min) at the start: " + a.load[0]
                     + (f"; at the end: {a.load[-1]}" if len(a.load) > 1 else "")
                     + " (the VM is shared: above 2, read the ratios, not the ms)")
    if a.cifar_iters < CIFAR_STEPS_PER_EPOCH:
        notes.append(f"CIFAR-quick epoch shortened: {a.cifar_iters} steps timed, an epoch ({CIFAR_STEPS_PER_EPOCH} "
                     "steps) estimated as median step x steps")
    notes.append("pass: CORUN_PARALLEL_OPS (off; auto = corun train's default, groups only where the per-width "
                 "models predict a gain; on = every group)")
    print(machine_header("corun vs PyTorch on the same cores (issue 18)", a.command, a.git, m["machine"], m["engine"],
                         notes, a.info))

    head = ["workload", "pass"] + policies + ["corun best", "PyTorch 1 thr", "PyTorch 2 thr", "corun vs PyTorch"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * 2 + "---:|" * (len(head) - 2))
    epoch = {}
    for w in order:
        def torch_at(t):  # the faster allocator at t threads: (value, "t" when tcmalloc's)
            plain, tc = med.get((w, "pytorch", "-", "-", t)), med.get((w, "pytorch-tcmalloc", "-", "-", t))
            if tc is not None and (plain is None or tc < plain):
                return tc, " t"
            return plain, ""
        (torch1, mark1), (torch2, mark2) = torch_at(1), torch_at(2)
        tbest = min(v for v in (torch1, torch2) if v is not None)
        rows = passes if any(k[0] == w and k[2] != "-" for k in med) else ["-"]
        for ps in rows:
            if ps == "-":
                cells = ["-"] * len(policies)
                best = min(v for k, v in med.items() if k[0] == w and k[1] == "corun")
            else:
                vals = [med.get((w, "corun", p, ps, 2)) for p in policies]
                cells = [fmt(v) for v in vals]
                best = min(v for v in vals if v is not None)
            if w == "cifar-quick":
                epoch[ps] = (best * CIFAR_STEPS_PER_EPOCH / 1e3, tbest * CIFAR_STEPS_PER_EPOCH / 1e3)
            print(f"| {LABELS.get(w, w)} | {ps} | " + " | ".join(cells) +
                  f" | {fmt(best)} | {fmt(torch1)}{mark1} | {fmt(torch2)}{mark2} | {tbest / best:.2f}x |")
    for ps, (c, t) in epoch.items():
        print(f"\nCIFAR-quick epoch (pass {ps}): corun {c:.1f} s, PyTorch {t:.1f} s (median step x {CIFAR_STEPS_PER_EPOCH}).")

    if len(passes) > 1 and "off" in passes:
        print("\n## The parallel-op pass against the same run with it off (off ms / pass ms; < 1 = the pass slows it; "
              "tasks per iteration off -> with the pass; where the pass formed no group both ran the same graph "
              "and the ratio is run-to-run noise)\n")
        others = [p for p in passes if p != "off"]
        print("| workload | pass | " + " | ".join(policies) + " |")
        print("|---|---|" + "---:|" * len(policies))
        for w in order:
            for ps in others:
                cells = []
                for p in policies:
                    on, off = med.get((w, "corun", p, ps, 2)), med.get((w, "corun", p, "off", 2))
                    if on is None or off is None:
                        continue
                    r = off / on
                    t_on, t_off = med.get((w, "corun-tasks", p, ps, 2)), med.get((w, "corun-tasks", p, "off", 2))
                    tasks = f" ({t_off:.0f} -> {t_on:.0f} tasks)" if t_on is not None and t_off is not None else ""
                    if t_on is not None and t_on == t_off:
                        # No group formed: both runs ran the same graph, so the ratio is run-to-run noise.
                        cells.append(f"{r:.2f} (no group formed: same graph, {t_off:.0f} tasks)")
                    else:
                        cells.append(f"{r:.2f}" + (" **slower**" if r < 0.95 else "") + tasks)
                if cells:
                    print(f"| {w} | {ps} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
