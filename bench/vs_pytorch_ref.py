#!/usr/bin/python3
"""The PyTorch side of bench/vs_pytorch.sh: the same workloads as corun's (same shapes, losses and optimisers;
docs/models.md), timed the same way, one JSON line per run on stdout.

    vs_pytorch_ref.py WORKLOAD --threads N [--iters N] [--warmup N] [--data DIR]

WORKLOAD: pathnet | googlenet (small: batch 32, --image-size 64) | cifar-quick | lstm-small | lstm-medium | serve-E-H-B-T (an LSTM inference of batch B,
sequence T, input E, hidden H) | wide-deep (batch-1 inference) | onnx-MODEL (a model of
scripts/export-onnx.py --list, built by that script's own table at --image-size; --mode train: one SGD
step of softmax cross-entropy at --batch, as `corun train --onnx`; --mode infer: eval-mode inference at
--batch, as `corun infer --onnx`; bench/onnx_models.sh). Training workloads print the median
ms per iteration; cifar-quick also the iterations of one epoch at its batch and the test accuracy after the
timed iterations (its epoch time is the median times the epoch's iterations when --iters is shorter);
inference workloads the median latency in µs. Not a test.
"""
import argparse
import gzip
import json
import os
import statistics
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class PathNet(nn.Module):
    """3 layers x 6 modules (conv3x3 -> ReLU -> maxpool 2/2), module outputs summed; dense head."""

    def __init__(self, image=32, channels=3, filters=16, modules=6, layers=3, classes=10):
        super().__init__()
        self.layers = nn.ModuleList()
        c = channels
        for _ in range(layers):
            self.layers.append(nn.ModuleList(nn.Conv2d(c, filters, 3, padding=1) for _ in range(modules)))
            c, image = filters, image // 2
        self.head = nn.Linear(c * image * image, classes)

    def forward(self, x):
        for mods in self.layers:
            x = sum(F.max_pool2d(F.relu(m(x)), 2, 2) for m in mods)
        return self.head(x.flatten(1))


class CifarQuick(nn.Module):
    """conv5x5-32 -> maxpool 3/2 -> ReLU -> conv5x5-32 -> ReLU -> avgpool 3/2 -> conv5x5-64 -> ReLU ->
    avgpool 3/2 -> fc64 -> fc10 (pad 2), on 28x28x1, as graphs/models/cnn.cpp."""

    def __init__(self):
        super().__init__()
        self.c1, self.c2, self.c3 = nn.Conv2d(1, 32, 5, padding=2), nn.Conv2d(32, 32, 5, padding=2), nn.Conv2d(32, 64, 5, padding=2)
        self.fc1, self.fc2 = nn.Linear(64 * 2 * 2, 64), nn.Linear(64, 10)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.c1(x), 3, 2))
        x = F.avg_pool2d(F.relu(self.c2(x)), 3, 2)
        x = F.avg_pool2d(F.relu(self.c3(x)), 3, 2)
        return self.fc2(self.fc1(x.flatten(1)))


class GoogLeNet(nn.Module):
    """corun's `googlenet` (graphs/models/cnn.cpp): stem 7x7/2 conv, 3x3/2 max pool (pad 1), 1x1 and 3x3
    convs, max pool; inception 3a, 3b, max pool, 4a-4e, max pool, 5a, 5b; global average pool; dense head.
    Every conv is followed by a ReLU and padded by kernel // 2; no normalisation layers, no auxiliary heads
    (torchvision's GoogLeNet has both, so it is not the same network)."""

    BLOCKS = (("3a", (64, 96, 128, 16, 32, 32)), ("3b", (128, 128, 192, 32, 96, 64)), "pool",
              ("4a", (192, 96, 208, 16, 48, 64)), ("4b", (160, 112, 224, 24, 64, 64)),
              ("4c", (128, 128, 256, 24, 64, 64)), ("4d", (112, 144, 288, 32, 64, 64)),
              ("4e", (256, 160, 320, 32, 128, 128)), "pool",
              ("5a", (256, 160, 320, 32, 128, 128)), ("5b", (384, 192, 384, 48, 128, 128)))

    class Inception(nn.Module):
        def __init__(self, c, f):
            super().__init__()
            conv = lambda i, o, k: nn.Conv2d(i, o, k, padding=k // 2)
            self.b1 = conv(c, f[0], 1)
            self.b2r, self.b2 = conv(c, f[1], 1), conv(f[1], f[2], 3)
            self.b3r, self.b3 = conv(c, f[3], 1), conv(f[3], f[4], 5)
            self.proj = conv(c, f[5], 1)

        def forward(self, x):
            return torch.cat([F.relu(self.b1(x)), F.relu(self.b2(F.relu(self.b2r(x)))),
                              F.relu(self.b3(F.relu(self.b3r(x)))),
                              F.relu(self.proj(F.max_pool2d(x, 3, 1, 1)))], 1)

    def __init__(self, channels=3, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, 64, 7, stride=2, padding=3)
        self.conv2r, self.conv2 = nn.Conv2d(64, 64, 1), nn.Conv2d(64, 192, 3, padding=1)
        self.blocks, c = nn.ModuleList(), 192
        for b in self.BLOCKS:
            if b == "pool":
                self.blocks.append(nn.MaxPool2d(3, 2, 1))
            else:
                self.blocks.append(self.Inception(c, b[1]))
                c = b[1][0] + b[1][2] + b[1][4] + b[1][5]
        self.head = nn.Linear(c, classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 3, 2, 1)
        x = F.max_pool2d(F.relu(self.conv2(F.relu(self.conv2r(x)))), 3, 2, 1)
        for b in self.blocks:
            x = b(x)
        return self.head(F.adaptive_avg_pool2d(x, 1).flatten(1))


class LstmClassifier(nn.Module):
    def __init__(self, hidden, layers=4, classes=10):
        super().__init__()
        self.lstm = nn.LSTM(hidden, hidden, layers)
        self.out = nn.Linear(hidden, classes)

    def forward(self, x):  # x: [seq, batch, input]
        y, _ = self.lstm(x)
        return self.out(y[-1])


class WideDeep(nn.Module):
    """26 embedding tables of 10000 x 16, fc 256 -> ReLU -> fc 128 -> ReLU -> fc 1, plus a linear wide part."""

    def __init__(self, categorical=26, vocab=10000, dim=16, dense=13, hidden=(256, 128)):
        super().__init__()
        self.tables = nn.ModuleList(nn.Embedding(vocab, dim) for _ in range(categorical))
        widths, layers, inp = list(hidden) + [1], [], categorical * dim
        for w in widths:
            layers.append(nn.Linear(inp, w))
            inp = w
        self.fcs = nn.ModuleList(layers)
        self.wide = nn.Linear(dense, 1, bias=False)

    def forward(self, ids, dense):
        h = torch.cat([t(ids[:, i]) for i, t in enumerate(self.tables)], 1)
        for k, fc in enumerate(self.fcs):
            h = fc(h)
            if k + 1 < len(self.fcs):
                h = F.relu(h)
        return h + self.wide(dense)


def time_loop(step, iters, warmup):
    for _ in range(warmup):
        step()
    times = []
    for _ in range(iters):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    return times


def train_step(model, opt, make_batch):
    def step():
        x, y = make_batch()
        opt.zero_grad(set_to_none=False)
        F.cross_entropy(model(x), y).backward()
        opt.step()
    return step


def read_idx(path):
    """An MNIST idx file, gzipped (as Debian ships Fashion-MNIST) or not."""
    if not os.path.exists(path) and os.path.exists(path + ".gz"):
        path += ".gz"
    with (gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb")) as f:
        data = f.read()
    ndim = data[3]
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def onnx_model_ms(name, a):
    """Median ms of a training step or an inference of scripts/export-onnx.py's model `name` (its own table,
    so that both sides run the same network)."""
    import importlib.util
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts", "export-onnx.py")
    spec = importlib.util.spec_from_file_location("export_onnx", path)
    exporter = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(exporter)
    table = exporter.models(torch)
    if name not in table:
        sys.exit(f"vs_pytorch_ref.py: unknown ONNX model '{name}' (available: {', '.join(table)})")
    ctor, shape, _ = table[name]
    if a.image_size and len(shape) == 3:
        shape = (shape[0], a.image_size, a.image_size)
    b = a.batch or 1
    model = ctor()
    x = torch.randn(b, *shape)
    if a.mode == "infer":
        model.eval()
        with torch.no_grad():
            t = time_loop(lambda: model(x), a.iters, a.warmup)
    else:
        model.train()
        classes = model(x[:2] if b >= 2 else x).shape[1]
        y = torch.randint(0, classes, (b,))
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        t = time_loop(train_step(model, opt, lambda: (x, y)), a.iters, a.warmup)
    return statistics.median(t) * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("workload")
    ap.add_argument("--threads", type=int, required=True)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--batch", type=int, default=0)
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--image-size", type=int, default=0, help="onnx-MODEL, googlenet: the image height and width")
    ap.add_argument("--mode", choices=("train", "infer"), default="train", help="onnx-MODEL: train or infer")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(42)
    w = a.workload
    out = {"workload": w, "threads": a.threads, "torch": torch.__version__}
    if w == "pathnet":
        b = a.batch or 64
        model = PathNet()
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        x, y = torch.randn(b, 3, 32, 32), torch.randint(0, 10, (b,))
        t = time_loop(train_step(model, opt, lambda: (x, y)), a.iters, a.warmup)
        out["ms_per_iter"] = statistics.median(t) * 1e3
    elif w == "googlenet":
        b, image = a.batch or 32, a.image_size or 64
        model = GoogLeNet()
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        x, y = torch.randn(b, 3, image, image), torch.randint(0, 10, (b,))
        t = time_loop(train_step(model, opt, lambda: (x, y)), a.iters, a.warmup)
        out["ms_per_iter"] = statistics.median(t) * 1e3
    elif w == "cifar-quick":
        b = a.batch or 128
        imgs = read_idx(os.path.join(a.data, "train-images-idx3-ubyte"))
        labels = read_idx(os.path.join(a.data, "train-labels-idx1-ubyte"))
        x_all = torch.from_numpy(imgs.astype(np.float32) / 255.0).unsqueeze(1)
        y_all = torch.from_numpy(labels.astype(np.int64))
        model = CifarQuick()
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        per_epoch = x_all.shape[0] // b
        k = [0]

        def batch():
            i = k[0] % per_epoch
            k[0] += 1
            return x_all[i * b:(i + 1) * b], y_all[i * b:(i + 1) * b]
        t = time_loop(train_step(model, opt, batch), a.iters, a.warmup)
        out["ms_per_iter"] = statistics.median(t) * 1e3
        out["iters_per_epoch"] = per_epoch
        out["epoch_s"] = statistics.median(t) * per_epoch
        tx = read_idx(os.path.join(a.data, "t10k-images-idx3-ubyte"))
        ty = read_idx(os.path.join(a.data, "t10k-labels-idx1-ubyte"))
        with torch.no_grad():
            pred = model(torch.from_numpy(tx.astype(np.float32) / 255.0).unsqueeze(1)).argmax(1).numpy()
        out["test_accuracy"] = float((pred == ty).mean())
    elif w in ("lstm-small", "lstm-medium"):
        seq, hidden = (20, 128) if w == "lstm-small" else (30, 512)
        b = a.batch or 64
        model = LstmClassifier(hidden)
        opt = torch.optim.SGD(model.parameters(), lr=0.5)
        x, y = torch.randn(seq, b, hidden), torch.randint(0, 10, (b,))
        t = time_loop(train_step(model, opt, lambda: (x, y)), a.iters, a.warmup)
        out["ms_per_iter"] = statistics.median(t) * 1e3
    elif w.startswith("serve-"):
        e, h, b, s = (int(v) for v in w.split("-")[1:])
        lstm = nn.LSTM(e, h, 1).eval()
        x = torch.randn(s, b, e)
        with torch.no_grad():
            t = time_loop(lambda: lstm(x), a.iters, a.warmup)
        out["us"] = statistics.median(t) * 1e6
    elif w == "wide-deep":
        model = WideDeep().eval()
        ids, dense = torch.randint(0, 10000, (1, 26)), torch.randn(1, 13)
        with torch.no_grad():
            t = time_loop(lambda: model(ids, dense), a.iters, a.warmup)
        out["us"] = statistics.median(t) * 1e6
    elif w.startswith("onnx-"):
        out["ms_per_iter"] = onnx_model_ms(w[5:], a)
    else:
        sys.exit(f"vs_pytorch_ref.py: unknown workload '{w}' (pathnet, googlenet, cifar-quick, lstm-small, lstm-medium, "
                 "serve-E-H-B-T, wide-deep)")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
