#!/usr/bin/python3
"""Writes tests/codelets/numpy_fixtures/: inputs and expected outputs of the conv, pooling and cross-entropy
ops (and, appended, transpose, softmax / log_softmax and batched matmul), computed with NumPy from the
textbook definitions, so that a convention the fast and the reference kernels share (padding, stride, which max gets a tie's gradient, what an average over padding divides by,
the softmax cross-entropy's reductions) is checked against an outside source (test_numpy_fixtures.cpp).
Run once: `/usr/bin/python3 tests/codelets/make_numpy_fixtures.py` (python3-numpy); the files are committed.

The conventions written down here are PyTorch's: conv2d is a cross-correlation with zero padding (weights
[K, C, R, S], bias [K]); max pooling ignores padding and gives the gradient to the first maximum of a window
in row-major order; average pooling divides by the taps inside the image (count_include_pad=False); the
softmax cross-entropy of row b is L[b] = -sum_c T[b, c] log softmax(Z[b])_c, and its gradient (P - T) * dL[b].
"""
import os

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "numpy_fixtures")
rng = np.random.default_rng(2026)


def save(case, name, a):
    os.makedirs(OUT, exist_ok=True)
    np.save(os.path.join(OUT, f"{case}.{name}.npy"), np.ascontiguousarray(a, dtype="<f4"))


def rand(*shape):
    return rng.uniform(-1.0, 1.0, size=shape).astype(np.float32)


def out_extent(n, window, stride, pad):
    return (n + 2 * pad - window) // stride + 1


def conv2d(x, w, b, stride, pad):
    n, c, h, wd = x.shape
    k, _, r, s = w.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = out_extent(h, r, stride, pad), out_extent(wd, s, stride, pad)
    y = np.zeros((n, k, oh, ow))
    for i in range(oh):
        for j in range(ow):
            patch = xp[:, :, i * stride:i * stride + r, j * stride:j * stride + s]  # [N, C, R, S]
            y[:, :, i, j] = np.einsum("ncrs,kcrs->nk", patch, w.astype(np.float64))
    return y + b.astype(np.float64)[None, :, None, None]


def conv2d_grads(x, w, dy, stride, pad):
    n, c, h, wd = x.shape
    k, _, r, s = w.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    dxp = np.zeros_like(xp)
    dw = np.zeros(w.shape)
    for i in range(dy.shape[2]):
        for j in range(dy.shape[3]):
            patch = xp[:, :, i * stride:i * stride + r, j * stride:j * stride + s]
            g = dy[:, :, i, j].astype(np.float64)  # [N, K]
            dw += np.einsum("nk,ncrs->kcrs", g, patch)
            dxp[:, :, i * stride:i * stride + r, j * stride:j * stride + s] += np.einsum("nk,kcrs->ncrs", g, w)
    dx = dxp[:, :, pad:pad + h, pad:pad + wd]
    return dx, dw, dy.astype(np.float64).sum(axis=(0, 2, 3))


def windows(h, w, kernel, stride, pad):
    """(oh, ow, [(ih, iw) inside the image, row-major])."""
    for i in range(out_extent(h, kernel, stride, pad)):
        for j in range(out_extent(w, kernel, stride, pad)):
            taps = [(i * stride - pad + r, j * stride - pad + s) for r in range(kernel) for s in range(kernel)]
            yield i, j, [(a, b) for a, b in taps if 0 <= a < h and 0 <= b < w]


def pools(x, dy_max, dy_avg, kernel, stride, pad):
    n, c, h, w = x.shape
    oh, ow = out_extent(h, kernel, stride, pad), out_extent(w, kernel, stride, pad)
    ymax, yavg = np.zeros((n, c, oh, ow)), np.zeros((n, c, oh, ow))
    dxmax, dxavg = np.zeros(x.shape), np.zeros(x.shape)
    for i, j, taps in windows(h, w, kernel, stride, pad):
        vals = np.stack([x[:, :, a, b] for a, b in taps], axis=-1).astype(np.float64)  # [N, C, taps]
        first = np.argmax(vals, axis=-1)  # NumPy's argmax: the first maximum
        ymax[:, :, i, j] = vals.max(axis=-1)
        yavg[:, :, i, j] = vals.mean(axis=-1)
        for t, (a, b) in enumerate(taps):
            dxmax[:, :, a, b] += np.where(first == t, dy_max[:, :, i, j], 0.0)
            dxavg[:, :, a, b] += dy_avg[:, :, i, j] / len(taps)
    return ymax, dxmax, yavg, dxavg


# conv2d: stride 2 and padding 1 on an odd-sized image; stride 1, padding 2 and a 1-row batch.
for case, (n, c, h, w, k, r, stride, pad) in {"conv_s2p1": (2, 3, 7, 6, 4, 3, 2, 1),
                                               "conv_s1p2": (1, 2, 5, 5, 3, 3, 1, 2)}.items():
    x, wt, b = rand(n, c, h, w), rand(k, c, r, r), rand(k)
    y = conv2d(x, wt, b, stride, pad)
    dy = rand(*y.shape)
    dx, dw, db = conv2d_grads(x, wt, dy, stride, pad)
    for name, a in {"x": x, "w": wt, "b": b, "y": y, "dy": dy, "dx": dx, "dw": dw, "db": db}.items():
        save(case, name, a)

# Pooling: overlapping 3x3 windows, stride 2, padding 1 (windows that are part padding), and 2x2 tiles.
for case, (n, c, h, w, kernel, stride, pad) in {"pool_k3s2p1": (2, 2, 7, 6, 3, 2, 1),
                                                 "pool_k2s2p0": (1, 3, 4, 6, 2, 2, 0)}.items():
    x = rand(n, c, h, w)
    oh, ow = out_extent(h, kernel, stride, pad), out_extent(w, kernel, stride, pad)
    dy_max, dy_avg = rand(n, c, oh, ow), rand(n, c, oh, ow)
    ymax, dxmax, yavg, dxavg = pools(x, dy_max, dy_avg, kernel, stride, pad)
    for name, a in {"x": x, "ymax": ymax, "dymax": dy_max, "dxmax": dxmax, "yavg": yavg, "dyavg": dy_avg,
                    "dxavg": dxavg}.items():
        save(case, name, a)

# Softmax cross-entropy with soft targets (rows of T sum to 1) and a large logit (the max is subtracted).
z = rand(4, 5) * 3.0
z[2, 1] = 40.0
t = rng.uniform(0.0, 1.0, size=(4, 5))
t /= t.sum(axis=1, keepdims=True)
zd = z.astype(np.float64)
logp = zd - zd.max(axis=1, keepdims=True)
logp -= np.log(np.exp(logp).sum(axis=1, keepdims=True))
p = np.exp(logp)
loss = -(t * logp).sum(axis=1)
dl = rand(4)
dz = (p - t) * dl[:, None]
for name, a in {"z": z, "t": t, "p": p, "loss": loss, "dl": dl, "dz": dz}.items():
    save("xent", name, a)

# Issue 19 shape ops (appended after the others, so their random draws and files are unchanged).
# Transpose: numpy's transpose(x, perm) is ONNX Transpose (Y dim d = X dim perm[d]).
x = rand(2, 3, 4, 5)
for case, perm in {"transpose_p0231": (0, 2, 3, 1), "transpose_p0132": (0, 1, 3, 2)}.items():
    save(case, "x", x)
    save(case, "y", np.transpose(x, perm))

# Softmax / LogSoftmax along axis 1 of a 3-D tensor (opset 13: one axis), one logit far above the rest;
# the gradients from the textbook: softmax dX = Y (dY - sum(dY Y)), log_softmax dX = dY - softmax * sum(dY).
x = rand(3, 4, 5) * 3.0
x[1, 2, 3] = 50.0
xd = x.astype(np.float64)
shifted = xd - xd.max(axis=1, keepdims=True)
logsm = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
sm = np.exp(logsm)
dy = rand(3, 4, 5)
for name, a in {"x": x, "y": sm, "logy": logsm, "dy": dy,
                "dx": sm * (dy - (dy * sm).sum(axis=1, keepdims=True)),
                "dlogx": dy - sm * dy.sum(axis=1, keepdims=True)}.items():
    save("softmax_a1", name, a)

# Batched matmul with broadcast batch dims (np.matmul semantics): A [2, 1, 3, 4] x B [3, 4, 5] -> C
# [2, 3, 3, 5]; each operand's gradient sums the products over the batch dims it was broadcast along.
a, b = rand(2, 1, 3, 4), rand(3, 4, 5)
dc = rand(2, 3, 3, 5)
ad, bd, dcd = a.astype(np.float64), b.astype(np.float64), dc.astype(np.float64)
da = np.matmul(dcd, np.swapaxes(bd, -1, -2)).sum(axis=1, keepdims=True)
db = np.matmul(np.swapaxes(ad, -1, -2), dcd).sum(axis=0)
for name, arr in {"a": a, "b": b, "c": np.matmul(ad, bd), "dc": dc, "da": da, "db": db}.items():
    save("bmm_bcast", name, arr)
