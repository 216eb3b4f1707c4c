#!/usr/bin/env python3
"""Ships an ONNX model to a machine without a registry (the 16-core device machine: bench/device/README.md)
as its graph and shapes only, and refills the weights there.

    onnx_skeleton.py strip IN.onnx OUT.onnx   # float initializers of more than --keep elements lose their data
    onnx_skeleton.py fill IN.onnx OUT.onnx    # those initializers get random data again (seeded, He-scaled)

Random weights are what bench/onnx_models.sh measures anyway (scripts/export-onnx.py draws them too); a
ResNet-50 at 64 px is 100 MB of them, which would not fit the device's 64 MiB transfer, while its skeleton
is a few hundred kB. Small initializers keep their data: BatchNorm's running variances must stay positive,
and shape constants (Reshape's int64 targets) must stay exact. Stripped ones are marked in their
doc_string, so that `fill` refills exactly those and fails on a file that holds none. Needs numpy and onnx.
"""
import argparse
import sys

import numpy as np
import onnx
from onnx import numpy_helper

MARK = "corun-skeleton: data stripped"


def strip(model, keep):
    n = 0
    for t in model.graph.initializer:
        size = int(np.prod(t.dims)) if t.dims else 1
        if t.data_type == onnx.TensorProto.FLOAT and size > keep and not t.external_data:
            t.ClearField("raw_data")
            t.ClearField("float_data")
            t.doc_string = MARK
            n += 1
    return n


def fill(model, seed):
    rng = np.random.default_rng(seed)
    n = 0
    for i, t in enumerate(model.graph.initializer):
        if t.doc_string != MARK:
            continue
        dims = list(t.dims)
        fan_in = int(np.prod(dims[1:])) if len(dims) > 1 else dims[0]
        data = (rng.standard_normal(dims) * np.sqrt(2.0 / max(fan_in, 1))).astype(np.float32)
        filled = numpy_helper.from_array(data, t.name)
        t.CopyFrom(filled)
        n += 1
    return n


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("action", choices=("strip", "fill"))
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("--keep", type=int, default=4096, help="strip: float initializers up to this many elements keep their data")
    ap.add_argument("--seed", type=int, default=0, help="fill: the seed of the random weights")
    a = ap.parse_args()
    try:
        model = onnx.load(a.src)
    except Exception as e:  # protobuf's DecodeError and OSError alike: say which file
        sys.exit(f"onnx_skeleton.py: cannot read {a.src} as ONNX: {e}")
    n = strip(model, a.keep) if a.action == "strip" else fill(model, a.seed)
    if a.action == "fill" and n == 0:
        sys.exit(f"onnx_skeleton.py: {a.src} has no stripped initializer (not written by 'strip'?)")
    onnx.save(model, a.dst)
    print(f"onnx_skeleton.py: {a.action}: {n} initializers, {a.dst}", file=sys.stderr)


if __name__ == "__main__":
    main()
