#!/usr/bin/python3
"""Writes the seed corpora of the reader fuzzer (tests/fuzz/seeds/<reader>/), once; the files are committed.

Every seed is a valid input the reader accepts (the mutations then explore the inputs near it), except the
regress_* seeds: inputs that once broke a reader. Rerun only to change the seeds: `/usr/bin/python3 tests/fuzz/make_seeds.py` (the system Python has
NumPy: python3-numpy).
"""
import json
import os
import struct

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SEEDS = os.path.join(HERE, "seeds")


def write(reader, name, data):
    d = os.path.join(SEEDS, reader)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)


def npy_bytes(array, version=None):
    import io
    buf = io.BytesIO()
    if version is None:
        np.save(buf, array)
    else:
        np.lib.format.write_array(buf, array, version=version)
    return buf.getvalue()


def fnv1a64(array):
    h = 1469598103934665603
    for b in np.ascontiguousarray(array, dtype="<f4").tobytes():
        h = ((h ^ b) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return "%016x" % h


rng = np.random.default_rng(21)
# npy: the shapes corun writes (vectors to 4-d), the three format versions, an empty tensor.
write("npy", "matrix.npy", npy_bytes(rng.standard_normal((3, 4)).astype("<f4")))
write("npy", "vector.npy", npy_bytes(np.arange(5, dtype="<f4")))
write("npy", "scalar_1.npy", npy_bytes(np.array([1.5], dtype="<f4")))
write("npy", "conv_4d.npy", npy_bytes(rng.standard_normal((2, 1, 3, 3)).astype("<f4")))
write("npy", "empty.npy", npy_bytes(np.zeros((0, 3), dtype="<f4")))
write("npy", "v2.npy", npy_bytes(np.ones((2, 2), dtype="<f4"), version=(2, 0)))
write("npy", "v3.npy", npy_bytes(np.ones((2, 3), dtype="<f4"), version=(3, 0)))

# JSON: the features of the strict grammar (escapes, surrogate pairs, exponents, nesting, empty containers).
write("json", "trace_like.json", json.dumps({
    "traceEvents": [{"name": "matmul", "ph": "X", "ts": 0, "dur": 12.5, "pid": 0, "tid": 1,
                     "args": {"node": 3, "width": 2}},
                    {"name": "add", "ph": "X", "ts": 13, "dur": 1e-3, "pid": 0, "tid": 0}],
    "otherData": {"format": "corun-trace", "version": 1, "makespan_us": 25}}))
write("json", "scalars.json", '[0, -0, 1.5e+300, -2E-5, true, false, null, "", "a\\"b\\\\c\\/\\b\\f\\n\\r\\t",'
      ' "\\u00e9\\ud83d\\ude00", "\u00e9 \u4e2d"]')
write("json", "nested.json", '{"a": {"b": [[], {}, [1, [2, [3]]]]}, "c": {"d": {"e": "f"}}}')
write("json", "results.json", json.dumps({"model": "lstm", "policy": "corun", "iters": 3,
                                          "ms_per_iter": [12.25, 11.5, 11.75], "loss": [2.3, 2.1, 1.9]},
                                         indent=2))

# Profiles: JSON as `corun profile` writes it, and the text format of earlier versions.
profile = {"format": "corun-profile", "version": 1, "machine_key": "corun-0123456789ab", "cpu": "Fuzz CPU",
           "workers": 2, "model": "lstm", "size": "small", "layout": "2x1",
           "tried": [{"layout": "2x1", "median_ms": 40.1, "min_ms": 39.0, "runs": 5},
                     {"layout": "1x2", "median_ms": 44.9, "min_ms": 43.2, "runs": 5}]}
write("profile", "profile.json", json.dumps(profile, indent=2) + "\n")
write("profile", "profile_v1.txt", "# corun profile v1\nmachine_key=corun-0123456789ab\ncpu=Fuzz CPU\nworkers=2\n"
      "model=lstm\nsize=small\nlayout=2x1\nconfig=2x1 median_ms=40.1 min_ms=39 runs=5\n"
      "config=1x2 median_ms=44.9 min_ms=43.2 runs=5\n")

# Schedules (CORUN_SCHEDULE): JSON and the old text format.
write("schedule", "schedule.json", json.dumps({"format": "corun-schedule", "version": 1,
                                               "graph": "9c1d2e3f4a5b6c7d", "nodes": 3, "cores": 4,
                                               "blocks": [[0, 2], [2, 2], [0, 4]]}) + "\n")
# A regression seed (found by the fuzzer): a node count the file does not hold made the reader allocate 2 GB.
write("schedule", "regress_nodes_count.txt", "# corun schedule v1\ngraph 9c1d2e3f4a5b6c7d nodes 268435456 cores 4\n0 2\n")
write("schedule", "schedule_v1.txt", "# corun schedule v1\ngraph 9c1d2e3f4a5b6c7d nodes 3 cores 4\n0 2\n2 2\n0 4\n")

# Serving plans: the key the fuzzer asks for is "fuzz lstm key" (tests/fuzz/test_fuzz_readers.cpp).
key = "fuzz lstm key"
write("plan", "plan.json", json.dumps({"format": "corun-serve-plan", "version": 1, "key": key, "hoisted_gates": 15,
                                       "workers": 2, "direction_groups": 1, "xi": 1, "xj": 2, "mode": "wcs",
                                       "calibrated_ms": 1.234}) + "\n")
write("plan", "plan_v1.txt", "# corun serving plan\nkey " + key + "\nhoisted_gates 15\nworkers 2\ndirection_groups 1\n"
      "xi 1\nxj 2\nmode per-step\ncalibrated_ms 0.5\n")

# Checkpoints: one ckpt-000000002 directory of the fuzzer's graph (parameters w [2, 3] and b [3]); the fuzzer
# mutates its manifest or one of its .npy files.
w = rng.standard_normal((2, 3)).astype("<f4")
b = np.array([0.5, -1.0, 2.0], dtype="<f4")
write("checkpoint", "w.npy", npy_bytes(w))
write("checkpoint", "b.npy", npy_bytes(b))
manifest = {"format": "corun-checkpoint", "version": 1, "iteration": 2,
            "config": {"model": "fuzz", "seed": "7"},
            "data": {"generator": "fuzz", "seed": 7, "next_batch": 2},
            "optimizer": {"kind": "sgd", "learning_rate": 0.1, "state": []},
            "params": [{"name": "w", "file": "w.npy", "fnv1a64": fnv1a64(w)},
                       {"name": "b", "file": "b.npy", "fnv1a64": fnv1a64(b)}],
            "losses": [2.5, 2.25], "ms_per_iter": [10.5, 9.75]}
write("checkpoint", "manifest.json", json.dumps(manifest) + "\n")
