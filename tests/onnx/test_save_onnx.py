#!/usr/bin/env python3
"""`corun train --onnx IN --save-onnx OUT` against PyTorch (ctest onnx.save_onnx; issue 51 item 3, docs/onnx.md):

  1. a small conv + BatchNorm + ReLU network exported from PyTorch trains 4 steps in corun and is saved as ONNX:
     onnx.checker accepts the file, its nodes, inputs and outputs are IN's, and every initializer holds the
     trained value bit for bit (the .npy files of --save in the same run), parameters and running statistics;
  2. the saved initializers, loaded by name into the PyTorch module the file came from, give an eval-mode
     forward equal to `corun infer --onnx OUT` within 1e-5 (relative to the output's largest magnitude);
  3. after one step the running statistics are PyTorch's: a train-mode forward of the original module on the
     batch corun trained on (--dump-inputs) updates them to the saved values within 1e-5;
  4. with PyTorch's default initialisation (equal initializers, which the exporter merges behind Identity
     nodes and the import trains apart), every PyTorch name is an initializer of the saved file, and 2 holds;
  5. a read-only target file, a read-only folder and --save-onnx without --onnx are refused before the run,
     with the reason, and nothing is written.

    test_save_onnx.py CORUN SOURCE_DIR
Exit 0 passed, 1 a check failed, 77 no torch, onnx or numpy (skipped).
"""
import importlib.util
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import warnings

try:
    import numpy as np
    import onnx
    from onnx import numpy_helper
    import torch
except ImportError as e:
    print("SKIP: %s (apt-get install python3-torch python3-onnx)" % e)
    sys.exit(77)

TOL = 1e-5
TRAIN_BATCH, INFER_BATCH, ITERS = 8, 5, 4
FAILS = []


def fail(msg):
    print("FAIL: " + msg)
    FAILS.append(msg)


class ConvBnNet(torch.nn.Module):
    """Three conv + BatchNorm + ReLU layers (one conv without a bias, as ResNet's), max pooling, a Linear head."""

    def __init__(self):
        super().__init__()
        nn = torch.nn
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
            nn.Conv2d(8, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2))
        self.fc = nn.Linear(16 * 2 * 2, 10)

    def forward(self, x):
        return self.fc(torch.flatten(self.features(x), 1))


def original_module(src):
    """The module as exported: seed 0, BatchNorm statistics and affine parameters drawn by export-onnx.py's
    randomise_batch_norms (equal initializers would be merged by the exporter)."""
    spec = importlib.util.spec_from_file_location("export_onnx", os.path.join(src, "scripts", "export-onnx.py"))
    exporter = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(exporter)
    torch.manual_seed(0)
    m = ConvBnNet().eval()
    exporter.randomise_batch_norms(torch, m)
    return m


def export(module, path):
    warnings.filterwarnings("ignore")
    torch.onnx.export(module, (torch.randn(2, 3, 8, 8),), path, opset_version=13, input_names=["input"],
                      output_names=["output"], dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}},
                      training=torch.onnx.TrainingMode.PRESERVE)


def corun(binary, args, user=None):
    cmd = [binary] + args
    if user is not None:  # root ignores permission bits: the read-only folder is tried as an unprivileged user
        cmd = ["setpriv", "--reuid=%d" % user, "--regid=%d" % user, "--clear-groups"] + cmd
    env = dict(os.environ, CORUN_QUIET="1", STARPU_SILENT="1")
    return subprocess.run(cmd, capture_output=True, text=True, env=env)


def must_succeed(r, what):
    if r.returncode != 0:
        sys.exit("FAIL: %s: exit %d: %s" % (what, r.returncode, r.stderr.strip()[-2000:]))


def relative(got, want):
    return float(np.abs(got - want).max() / max(float(np.abs(want).max()), 1e-30))


def initializers(path):
    return {t.name: numpy_helper.to_array(t) for t in onnx.load(path).graph.initializer}


def check_file(src_path, out_path, params_dir):
    """1: the checker, the graph unchanged, every initializer trained and equal to --save's file."""
    onnx.checker.check_model(out_path, full_check=True)
    src, out = onnx.load(src_path), onnx.load(out_path)
    if [n.SerializeToString() for n in src.graph.node] != [n.SerializeToString() for n in out.graph.node]:
        fail("the saved file's nodes differ from the input's")
    if src.graph.input != out.graph.input or src.graph.output != out.graph.output:
        fail("the saved file's inputs or outputs differ from the input's")
    before, after = initializers(src_path), initializers(out_path)
    if sorted(before) != sorted(after):
        fail("initializer names changed: %s -> %s" % (sorted(before), sorted(after)))
    for name, value in after.items():
        saved = np.load(os.path.join(params_dir, name + ".npy"))  # the names have no '/': corun's are the same
        if value.dtype != np.float32 or not np.array_equal(value, saved.reshape(value.shape)):
            fail("%s: the ONNX file's value is not --save's %s.npy (dtype %s)" % (name, name, value.dtype))
    for name in ("features.1.running_mean", "features.4.running_var", "features.0.weight", "fc.weight"):
        if np.array_equal(before[name], after[name]):
            fail("%s did not change in %d training steps" % (name, ITERS))
    print("saved file: onnx.checker accepts it; %d initializers, each equal to --save's .npy" % len(after))


def load_by_name(module, path):
    """The file's initializers into `module`'s state_dict, by name; every tensor of the module must be in it."""
    state = module.state_dict()
    values = initializers(path)
    for name in state:
        if name.endswith("num_batches_tracked"):
            continue  # not in ONNX; eval-mode BatchNorm does not read it
        if name not in values:
            fail("the module's %s is not an initializer of the saved file" % name)
            continue
        state[name] = torch.from_numpy(values[name].copy())
    module.load_state_dict(state)
    return module.eval()


def check_forward(binary, work, out_path, what="the saved model"):
    """2: PyTorch with the saved weights against corun infer on the saved file."""
    module = load_by_name(ConvBnNet(), out_path)
    x = np.random.RandomState(1).randn(INFER_BATCH, 3, 8, 8).astype(np.float32)
    np.save(os.path.join(work, "x.npy"), x)
    with torch.no_grad():
        want = module(torch.from_numpy(x)).numpy()
    r = corun(binary, ["infer", "--onnx", out_path, "--batch", str(INFER_BATCH), "--input",
                       "input=" + os.path.join(work, "x.npy"), "--output", os.path.join(work, "inferred")])
    must_succeed(r, "corun infer --onnx " + out_path)
    rel = relative(np.load(os.path.join(work, "inferred", "output.npy")), want)
    print("forward of %s: corun infer against PyTorch with its initializers: %.2e relative" % (what, rel))
    if not rel <= TOL:
        fail("corun infer on the saved file differs from PyTorch by %.2e relative (limit %g)" % (rel, TOL))


def check_running_statistics(binary, src, work, in_path):
    """3: one step's running statistics against PyTorch's momentum update on the same batch."""
    out_path, dump = os.path.join(work, "one_step.onnx"), os.path.join(work, "dump")
    must_succeed(corun(binary, ["train", "--onnx", in_path, "--batch", str(TRAIN_BATCH), "--iters", "1",
                                "--save-onnx", out_path, "--dump-inputs", dump]), "corun train --iters 1")
    module = original_module(src).train()
    with torch.no_grad():
        module(torch.from_numpy(np.load(os.path.join(dump, "input.npy"))))
    saved, worst = initializers(out_path), 0.0
    for name, value in module.state_dict().items():
        if "running_" in name:
            worst = max(worst, relative(saved[name], value.numpy()))
    print("running statistics after one step against PyTorch's train-mode update: %.2e relative" % worst)
    if not worst <= TOL:
        fail("the saved running statistics differ from PyTorch's update by %.2e relative (limit %g)" % (worst, TOL))


def check_merged_initializers(binary, work):
    """PyTorch's own initialisation: the exporter writes equal initializers (BatchNorm's 1s and 0s) once,
    behind an Identity per PyTorch name, and the import trains each name apart. Saved, every PyTorch name is an
    initializer of its own again (load_by_name finds them all) and the forward still matches."""
    torch.manual_seed(0)
    in_path, out_path = os.path.join(work, "merged.onnx"), os.path.join(work, "merged_trained.onnx")
    export(ConvBnNet().eval(), in_path)
    identities = sum(n.op_type == "Identity" for n in onnx.load(in_path).graph.node)
    if identities == 0:
        fail("the default-initialised export has no Identity node: this check tests nothing")
    must_succeed(corun(binary, ["train", "--onnx", in_path, "--batch", str(TRAIN_BATCH), "--iters", "2",
                                "--lr", "0.01", "--save-onnx", out_path]), "corun train (merged initializers)")
    onnx.checker.check_model(out_path, full_check=True)
    left = sum(n.op_type == "Identity" for n in onnx.load(out_path).graph.node)
    print("merged initializers: %d Identity nodes in the export, %d after --save-onnx" % (identities, left))
    check_forward(binary, work, out_path, "the saved default-initialised model")


def refused(r, code, says, what):
    last = (r.stderr.strip().splitlines() or [""])[-1]
    if r.returncode != code or says not in last:
        fail("%s: exit %d (want %d), last line %r (want %r)" % (what, r.returncode, code, last, says))
    if "parallel-op pass" in r.stderr:
        fail("%s: the model was built before the refusal" % what)


def check_refusals(binary, work, in_path):
    """5: what cannot be written is refused before the run, naming the flag and the path."""
    target = os.path.join(work, "kept.onnx")
    with open(target, "wb") as f:
        f.write(b"the user's file")
    os.chmod(target, 0o444)
    train = ["train", "--onnx", in_path, "--batch", str(TRAIN_BATCH), "--iters", "1", "--save-onnx"]
    refused(corun(binary, train + [target]), 1, "is a read-only file", "a read-only target")
    with open(target, "rb") as f:
        if f.read() != b"the user's file":
            fail("the read-only target was changed")
    folder = os.path.join(work, "read_only")
    os.makedirs(folder)
    os.chmod(folder, 0o555)
    os.chmod(work, 0o755)  # an unprivileged user must reach the folder (and read the model)
    os.chmod(in_path, 0o644)
    user = None
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            print("note: running as root without setpriv: the read-only folder case is not checked")
            folder = None
        user = 65534  # nobody
    if folder is not None:
        refused(corun(binary, train + [os.path.join(folder, "m.onnx")], user), 1, "cannot write into directory",
                "a read-only folder")
        if os.listdir(folder):
            fail("something was written into the read-only folder: %s" % os.listdir(folder))
    refused(corun(binary, ["train", "--model", "lstm", "--save-onnx", os.path.join(work, "m.onnx")]), 2,
            "--save-onnx needs --onnx", "--save-onnx without --onnx")
    print("refused: a read-only target file, a read-only folder, --save-onnx without --onnx")


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: test_save_onnx.py CORUN SOURCE_DIR")
    binary, src = sys.argv[1], sys.argv[2]
    work = tempfile.mkdtemp(prefix="save-onnx-")
    try:
        in_path, out_path = os.path.join(work, "in.onnx"), os.path.join(work, "trained.onnx")
        export(original_module(src), in_path)
        params = os.path.join(work, "params")
        must_succeed(corun(binary, ["train", "--onnx", in_path, "--batch", str(TRAIN_BATCH), "--iters", str(ITERS),
                                    "--lr", "0.01", "--save-onnx", out_path, "--save", params]), "corun train")
        check_file(in_path, out_path, params)
        check_forward(binary, work, out_path)
        check_running_statistics(binary, src, work, in_path)
        check_merged_initializers(binary, work)
        check_refusals(binary, work, in_path)
    finally:
        for root, dirs, _ in os.walk(work):
            for d in dirs:
                os.chmod(os.path.join(root, d), stat.S_IRWXU)
        shutil.rmtree(work, ignore_errors=True)
    print("FAILED: %d check(s)" % len(FAILS) if FAILS else "passed")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
