#!/usr/bin/env python3
"""ONNX import coverage of torchvision's classification models (issue 51 item 4), one row per model:

  export   torch.onnx.export at opset 13, the model's own (default) initialisation, 10 classes, a dynamic batch
           axis, the input at --image-size px (64) or the model's minimum where it needs more;
  imports  `corun infer --onnx` on PyTorch's reference input (batch 2, taken from the input file);
  error    the largest absolute difference of corun's logits from PyTorch's (and relative to their largest);
  trains   one `corun train --onnx` step (batch 2) ends with a finite loss.

A step that fails gives its message (corun's last line: the node it refused). Not a test (the table is a
record, bench/results/); run it niced: each model takes seconds to minutes on 2 cores.

    bench/onnx_coverage.py CORUN OUT.md [--models "a b ..."] [--image-size N] [--timeout S] [--note TEXT]
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time

# Models that refuse 64 px: their smallest input (ViT and MaxViT take a fixed size; Inception-v3 needs 75).
MIN_SIZE = {"inception_v3": 75, "vit_b_16": 224, "vit_b_32": 224, "vit_l_16": 224, "vit_l_32": 224,
            "vit_h_14": 224, "maxvit_t": 224}
# Keyword arguments beyond num_classes (no auxiliary heads: one output, as corun's training loss needs).
EXTRA = {"googlenet": {"aux_logits": False, "init_weights": True}, "inception_v3": {"aux_logits": False}}


def export(torch, models, name, size, path, ref_dir):
    """Exports `name` and writes PyTorch's input and output next to it; returns (input file, output array)."""
    import numpy as np
    torch.manual_seed(0)
    model = getattr(models, name)(weights=None, num_classes=10, **EXTRA.get(name, {})).eval()
    x = torch.randn(2, 3, size, size)
    torch.onnx.export(model, (x,), path, opset_version=13, input_names=["input"], output_names=["output"],
                      dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}},
                      training=torch.onnx.TrainingMode.PRESERVE)
    with torch.no_grad():
        y = model(x).numpy()
    np.save(os.path.join(ref_dir, "input.npy"), x.numpy())
    return os.path.join(ref_dir, "input.npy"), y


def last_line(text):
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][:400] if lines else "(no message)"


def run(cmd, timeout, env):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return None


def check_model(corun, name, size, timeout, work):
    """One row: a dict with the model's results (the first failing step's message in 'note')."""
    import numpy as np
    import torch
    import torchvision.models as models
    row = {"model": name, "size": size, "imports": "no", "max_abs": None, "max_rel": None, "trains": "no", "note": ""}
    env = dict(os.environ, CORUN_QUIET="1", STARPU_SILENT="1")
    onnx_file = os.path.join(work, name + ".onnx")
    t0 = time.time()
    try:
        x_file, want = export(torch, models, name, size, onnx_file, work)
    except Exception as e:  # noqa: BLE001 (the exporter's own refusal is a row of the table)
        row["note"] = "export failed: %s" % last_line(str(e))
        return row
    out = os.path.join(work, "out")
    r = run([corun, "infer", "--onnx", onnx_file, "--input", "input=" + x_file, "--output", out], timeout, env)
    if r is None or r.returncode != 0:
        row["note"] = "infer: " + ("over %d s" % timeout if r is None else last_line(r.stderr))
        return row
    got = np.load(os.path.join(out, "output.npy"))
    row["imports"] = "yes"
    row["max_abs"] = float(np.abs(got - want).max())
    row["max_rel"] = row["max_abs"] / max(float(np.abs(want).max()), 1e-30)
    js = os.path.join(work, "train.json")
    r = run([corun, "train", "--onnx", onnx_file, "--batch", "2", "--iters", "1", "--json", js], timeout, env)
    if r is None or r.returncode != 0:
        row["note"] = "train: " + ("over %d s" % timeout if r is None else last_line(r.stderr))
        return row
    loss = json.load(open(js))["loss"][0]
    row["trains"] = "yes (loss %.3f)" % loss if math.isfinite(loss) else "no (loss %s)" % loss
    row["seconds"] = round(time.time() - t0, 1)
    return row


def table(rows):
    lines = ["| model | px | imports | max abs error vs PyTorch | relative | trains (one step) | note |",
             "|---|---:|---|---:|---:|---|---|"]
    for r in rows:
        err = "%.2e" % r["max_abs"] if r["max_abs"] is not None else "-"
        rel = "%.2e" % r["max_rel"] if r["max_rel"] is not None else "-"
        note = r["note"].replace("|", "\\|")
        lines.append("| %s | %d | %s | %s | %s | %s | %s |" % (r["model"], r["size"], r["imports"], err, rel,
                                                              r["trains"], note))
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("corun")
    p.add_argument("out")
    p.add_argument("--models", default="", help="space-separated names (default: every classification model)")
    p.add_argument("--image-size", type=int, default=64)
    p.add_argument("--timeout", type=int, default=900, help="seconds per corun command")
    p.add_argument("--header", default="", help="lines written above the table (machine, revision)")
    a = p.parse_args()
    import torchvision
    names = a.models.split() or torchvision.models.list_models(module=torchvision.models)
    rows = []
    for name in names:
        work = tempfile.mkdtemp(prefix="onnx-coverage-")
        try:
            row = check_model(a.corun, name, max(a.image_size, MIN_SIZE.get(name, 0)), a.timeout, work)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        print(json.dumps(row), flush=True)
        rows.append(row)
        with open(a.out + ".tmp", "w") as f:  # rewritten after each model: a stopped run keeps what finished
            f.write(a.header + "\n" + table(rows) + "\n")
        os.replace(a.out + ".tmp", a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
