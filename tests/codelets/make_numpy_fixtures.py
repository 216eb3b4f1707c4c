#!/usr/bin/python3
"""Writes tests/codelets/numpy_fixtures/: inputs and expected outputs of the conv, pooling, cross-entropy and
normalisation ops (and, appended, the broadcasting arithmetic, the reductions over axes, the general conv and
pooling forms, transpose, softmax / log_softmax and batched matmul), computed with NumPy from the textbook
definitions, so that a convention the fast and the reference kernels share (padding, stride, which max gets a
tie's gradient, what an average over padding divides by, the softmax cross-entropy's reductions, numpy's
broadcasting) is checked against an outside source (test_numpy_fixtures.cpp).
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

# Every family appended below starts from this generator state (or has a generator of its own), so adding,
# removing or reordering a family never moves another family's random inputs: the committed files stay.
after_square_ops = rng.bit_generator.state

rng.bit_generator.state = after_square_ops
# Normalisation (issue 19), appended so the draws above stay the same. BatchNormalization follows ONNX
# opset 15 and PyTorch: training normalises with the batch mean and biased variance over N * H * W and
# updates running = momentum * running + (1 - momentum) * batch with the unbiased variance (ONNX's
# momentum; PyTorch's is 1 - it); inference uses the running statistics. LayerNormalization (opset 17)
# normalises over the dims from `axis` with the biased variance. The gradients are the textbook ones.
def batch_norm(x, scale, bias, rmean, rvar, eps, momentum, training):
    axes = (0,) + tuple(range(2, x.ndim))
    bshape = (1, -1) + (1,) * (x.ndim - 2)
    xd = x.astype(np.float64)
    if training:
        mean, var = xd.mean(axis=axes), xd.var(axis=axes)
        count = xd.size // xd.shape[1]
        rmean = momentum * rmean + (1 - momentum) * mean
        rvar = momentum * rvar + (1 - momentum) * var * count / (count - 1)
    else:
        mean, var = rmean.astype(np.float64), rvar.astype(np.float64)
    invstd = 1.0 / np.sqrt(var + eps)
    y = scale.reshape(bshape) * (xd - mean.reshape(bshape)) * invstd.reshape(bshape) + bias.reshape(bshape)
    return y, mean, invstd, rmean, rvar


def batch_norm_grad(x, scale, mean, invstd, dy, training):
    axes = (0,) + tuple(range(2, x.ndim))
    bshape = (1, -1) + (1,) * (x.ndim - 2)
    xhat = (x - mean.reshape(bshape)) * invstd.reshape(bshape)
    dyd = dy.astype(np.float64)
    dbias, dscale = dyd.sum(axis=axes), (dyd * xhat).sum(axis=axes)
    k = (scale * invstd).reshape(bshape)
    if not training:
        return k * dyd, dscale, dbias
    m = x.size // x.shape[1]
    return k * (dyd - dbias.reshape(bshape) / m - xhat * dscale.reshape(bshape) / m), dscale, dbias


for case, (shape, training) in {"bn_train4d": ((3, 4, 5, 3), True), "bn_train2d": ((7, 5), True),
                                "bn_infer4d": ((2, 3, 4, 4), False)}.items():
    c = shape[1]
    x = rand(*shape) * 2.0 + 0.5
    scale, bias, rmean = rand(c), rand(c), rand(c)
    rvar = rng.uniform(0.5, 2.0, size=c).astype(np.float32)
    y, mean, invstd, rmean2, rvar2 = batch_norm(x, scale, bias, rmean, rvar, 1e-5, 0.9, training)
    dy = rand(*shape)
    mean32, invstd32 = mean.astype(np.float32), invstd.astype(np.float32)
    dx, dscale, dbias = batch_norm_grad(x.astype(np.float64), scale, mean32.astype(np.float64),
                                        invstd32.astype(np.float64), dy, training)
    for name, a in {"x": x, "scale": scale, "bias": bias, "rmean": rmean, "rvar": rvar, "y": y, "mean": mean,
                    "invstd": invstd, "rmean_after": rmean2, "rvar_after": rvar2, "dy": dy, "dx": dx,
                    "dscale": dscale, "dbias": dbias}.items():
        save(case, name, a)


def layer_norm(x, scale, bias, axis, eps):
    axes = tuple(range(axis, x.ndim))
    xd = x.astype(np.float64)
    mean, var = xd.mean(axis=axes, keepdims=True), xd.var(axis=axes, keepdims=True)
    invstd = 1.0 / np.sqrt(var + eps)
    return (xd - mean) * invstd * scale + bias, mean.reshape(-1), invstd.reshape(-1)


def layer_norm_grad(x, scale, mean, invstd, dy, axis):
    rows = int(np.prod(x.shape[:axis]))
    xd, dyd = x.astype(np.float64).reshape(rows, -1), dy.astype(np.float64).reshape(rows, -1)
    xhat = (xd - mean[:, None]) * invstd[:, None]
    g = dyd * scale.reshape(-1)
    dx = invstd[:, None] * (g - g.mean(axis=1, keepdims=True) - xhat * (g * xhat).mean(axis=1, keepdims=True))
    return dx.reshape(x.shape), (dyd * xhat).sum(axis=0).reshape(scale.shape), dyd.sum(axis=0).reshape(scale.shape)


for case, (shape, axis) in {"ln_axis1": ((3, 4, 5), 1), "ln_last": ((6, 7), 1)}.items():
    x = rand(*shape) * 3.0 - 1.0
    scale, bias = rand(*shape[axis:]), rand(*shape[axis:])
    y, mean, invstd = layer_norm(x, scale, bias, axis, 1e-5)
    dy = rand(*shape)
    dx, dscale, dbias = layer_norm_grad(x, scale, mean.astype(np.float32).astype(np.float64),
                                        invstd.astype(np.float32).astype(np.float64), dy, axis)
    for name, a in {"x": x, "scale": scale, "bias": bias, "y": y, "mean": mean, "invstd": invstd, "dy": dy,
                    "dx": dx, "dscale": dscale, "dbias": dbias}.items():
        save(case, name, a)
# Issue 19's broadcasting family, NumPy's own broadcasting and reductions as the outside source: C = A op B
# with numpy broadcasting, each operand's gradient (dC * dC/dX summed over X's broadcast dims, keepdims), and
# ReduceSum / ReduceMean over axes (keepdims: corun's reduce_axes keeps the kept dims' layout either way).
# A generator of its own, so the fixtures above do not change when this block does.
rng19 = np.random.default_rng(19)


def rand19(*shape, lo=-1.0, hi=1.0):
    return rng19.uniform(lo, hi, size=shape).astype(np.float32)


def unbroadcast(g, shape):
    """Sums g over the dims `shape` was broadcast along (leading ones dropped), back to `shape`."""
    lead = g.ndim - len(shape)
    g = g.sum(axis=tuple(range(lead))) if lead else g
    axes = tuple(d for d, n in enumerate(shape) if n == 1 and g.shape[d] != 1)
    return g.sum(axis=axes, keepdims=True) if axes else g


for case, (op, sa, sb, blo, bhi) in {"bcast_add": ("add", (2, 3, 4), (3, 1), -1.0, 1.0),
                                     "bcast_sub": ("sub", (1,), (5, 7), -1.0, 1.0),
                                     "bcast_mul": ("mul", (4, 1, 6), (1, 5, 1), -1.0, 1.0),
                                     "bcast_div": ("div", (2, 3, 4), (3, 1), 0.5, 2.0),
                                     "bcast_pow": ("pow", (3, 4), (4,), -1.0, 1.5)}.items():
    a = rand19(*sa, lo=0.5 if op == "pow" else -1.0, hi=2.0 if op == "pow" else 1.0)
    b = rand19(*sb, lo=blo, hi=bhi)
    ad, bd = a.astype(np.float64), b.astype(np.float64)
    # Lambdas: only this case's op is evaluated (pow of a negative base would warn).
    c = {"add": lambda: ad + bd, "sub": lambda: ad - bd, "mul": lambda: ad * bd, "div": lambda: ad / bd,
         "pow": lambda: ad ** bd}[op]()
    dc = rand19(*c.shape).astype(np.float64)
    ga = {"add": lambda: dc, "sub": lambda: dc, "mul": lambda: dc * bd, "div": lambda: dc / bd,
          "pow": lambda: dc * bd * ad ** (bd - 1)}[op]()
    gb = {"add": lambda: dc, "sub": lambda: -dc, "mul": lambda: dc * ad, "div": lambda: -dc * ad / bd ** 2,
          "pow": lambda: dc * c * np.log(ad)}[op]()
    for name, arr in {"a": a, "b": b, "c": c, "dc": dc, "da": unbroadcast(ga, sa), "db": unbroadcast(gb, sb)}.items():
        save(case, name, arr)

x = rand19(2, 3, 4, 5)
xd = x.astype(np.float64)
save("reduce", "x", x)
for name, arr in {"mean23": xd.mean(axis=(2, 3), keepdims=True), "sum03": xd.sum(axis=(0, 3), keepdims=True),
                  "meanall": xd.mean(keepdims=True), "sum1": xd.sum(axis=1, keepdims=True)}.items():
    save("reduce", name, arr)
    dy = rand19(*arr.shape)
    scale = arr.size / x.size if name.startswith("mean") else 1.0
    save("reduce", "d" + name, dy)
    save("reduce", "dx" + name, np.broadcast_to(dy.astype(np.float64) * scale, x.shape))

rng.bit_generator.state = after_square_ops
# ---- issue 19: the general forms (appended after the square ones so their random inputs do not move) ----
# Conventions (ONNX Conv / ConvTranspose / MaxPool / AveragePool, PyTorch's equivalents): pads are
# (top, left, bottom, right); output channel k of a grouped convolution reads the input channels of group
# k // (K / G); a transposed convolution scatters X[n, ci, i, j] * W[ci, co, r, s] onto output row
# i * stride - pad_top + r * dilation (likewise columns), group by group, then adds the bias; ceil_mode keeps
# a last window only when it starts inside the input or its leading padding; count_include_pad divides by the
# window's positions inside the padded input.
def conv_general(x, w, b, strides, pads, dil, groups):
    n, c, h, wd = x.shape
    k, cg, r, s = w.shape
    (sh, sw), (pt, pl, pb, pr), (dh, dw) = strides, pads, dil
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pt, pb), (pl, pr)))
    oh = (h + pt + pb - dh * (r - 1) - 1) // sh + 1
    ow = (wd + pl + pr - dw * (s - 1) - 1) // sw + 1
    kg = k // groups
    y = np.zeros((n, k, oh, ow))
    for g in range(groups):
        xg, wg = xp[:, g * cg:(g + 1) * cg], w[g * kg:(g + 1) * kg].astype(np.float64)
        for i in range(oh):
            for j in range(ow):
                patch = xg[:, :, i * sh:i * sh + dh * (r - 1) + 1:dh, j * sw:j * sw + dw * (s - 1) + 1:dw]
                y[:, g * kg:(g + 1) * kg, i, j] = np.einsum("ncrs,kcrs->nk", patch, wg)
    return y if b is None else y + b.astype(np.float64)[None, :, None, None]


def conv_general_grads(x, w, dy, strides, pads, dil, groups):
    """dX, dW of conv_general by the chain rule through the padded input, written out tap by tap."""
    n, c, h, wd = x.shape
    k, cg, r, s = w.shape
    (sh, sw), (pt, pl, pb, pr), (dh, dw) = strides, pads, dil
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pt, pb), (pl, pr)))
    dxp, dwt = np.zeros_like(xp), np.zeros(w.shape)
    kg = k // groups
    for g in range(groups):
        cs, ks = slice(g * cg, (g + 1) * cg), slice(g * kg, (g + 1) * kg)
        for i in range(dy.shape[2]):
            for j in range(dy.shape[3]):
                rows = slice(i * sh, i * sh + dh * (r - 1) + 1, dh)
                cols = slice(j * sw, j * sw + dw * (s - 1) + 1, dw)
                gk = dy[:, ks, i, j].astype(np.float64)
                dwt[ks] += np.einsum("nk,ncrs->kcrs", gk, xp[:, cs, rows, cols])
                dxp[:, cs, rows, cols] += np.einsum("nk,kcrs->ncrs", gk, w[ks].astype(np.float64))
    return dxp[:, :, pt:pt + h, pl:pl + wd], dwt


def conv_transpose(x, w, b, strides, pads, dil, groups, out_pad):
    n, ci, h, wd = x.shape
    _, cog, r, s = w.shape
    (sh, sw), (pt, pl, pb, pr), (dh, dw) = strides, pads, dil
    oh = (h - 1) * sh - pt - pb + dh * (r - 1) + out_pad[0] + 1
    ow = (wd - 1) * sw - pl - pr + dw * (s - 1) + out_pad[1] + 1
    cig = ci // groups
    full = np.zeros((n, cog * groups, oh + pt + pb + sh + dh * r, ow + pl + pr + sw + dw * s))
    for g in range(groups):
        for i in range(h):
            for j in range(wd):
                for a in range(r):
                    for e in range(s):
                        full[:, g * cog:(g + 1) * cog, i * sh + a * dh, j * sw + e * dw] += np.einsum(
                            "nc,cd->nd", x[:, g * cig:(g + 1) * cig, i, j].astype(np.float64),
                            w[g * cig:(g + 1) * cig, :, a, e].astype(np.float64))
    y = full[:, :, pt:pt + oh, pl:pl + ow]
    return y if b is None else y + b.astype(np.float64)[None, :, None, None]


def pool_extent(n, k, stride, pb, pe, ceil):
    if not ceil:
        return (n + pb + pe - k) // stride + 1
    out = -(-(n + pb + pe - k) // stride) + 1
    return out - 1 if (out - 1) * stride >= n + pb else out


def pools_general(x, dy_max, dy_avg, kernel, strides, pads, ceil, include_pad):
    n, c, h, w = x.shape
    (kh, kw), (sh, sw), (pt, pl, pb, pr) = kernel, strides, pads
    oh, ow = pool_extent(h, kh, sh, pt, pb, ceil), pool_extent(w, kw, sw, pl, pr, ceil)
    ymax, yavg, dxmax, dxavg = np.zeros((n, c, oh, ow)), np.zeros((n, c, oh, ow)), np.zeros(x.shape), np.zeros(x.shape)
    for i in range(oh):
        for j in range(ow):
            taps = [(i * sh - pt + a, j * sw - pl + e) for a in range(kh) for e in range(kw)]
            inside = [(a, e) for a, e in taps if 0 <= a < h and 0 <= e < w]
            padded = [(a, e) for a, e in taps if -pt <= a < h + pb and -pl <= e < w + pr]
            divisor = len(padded) if include_pad else len(inside)
            vals = np.stack([x[:, :, a, e] for a, e in inside], axis=-1).astype(np.float64)
            first = np.argmax(vals, axis=-1)
            ymax[:, :, i, j] = vals.max(axis=-1)
            yavg[:, :, i, j] = vals.sum(axis=-1) / divisor
            for t, (a, e) in enumerate(inside):
                dxmax[:, :, a, e] += np.where(first == t, dy_max[:, :, i, j], 0.0)
                dxavg[:, :, a, e] += dy_avg[:, :, i, j] / divisor
    return ymax, dxmax, yavg, dxavg


# Grouped, dilated, per-axis strided, asymmetrically padded; depthwise with a channel multiplier, no bias.
for case, (n, c, h, w, k, r, s, strides, pads, dil, groups, bias) in {
        "convg_g2_d2x1_s2x1": (2, 4, 7, 6, 6, 3, 2, (2, 1), (1, 0, 2, 1), (2, 1), 2, True),
        "convg_dw_mult2": (2, 3, 6, 5, 6, 3, 3, (1, 2), (1, 1, 0, 2), (1, 2), 3, False)}.items():
    x, wt = rand(n, c, h, w), rand(k, c // groups, r, s)
    b = rand(k) if bias else None
    y = conv_general(x, wt, b, strides, pads, dil, groups)
    dy = rand(*y.shape)
    dx, dw = conv_general_grads(x, wt, dy, strides, pads, dil, groups)
    arrays = {"x": x, "w": wt, "y": y, "dy": dy, "dx": dx, "dw": dw}
    if bias:
        arrays.update({"b": b, "db": dy.astype(np.float64).sum(axis=(0, 2, 3))})
    for name, a in arrays.items():
        save(case, name, a)

# Transposed convolution (DCGAN's kernel 4, stride 2, padding 1; and grouped, dilated, output padding).
for case, (n, ci, h, w, co, r, s, strides, pads, dil, groups, out_pad, bias) in {
        "convt_k4s2p1": (2, 3, 3, 4, 2, 4, 4, (2, 2), (1, 1, 1, 1), (1, 1), 1, (0, 0), True),
        "convt_g2_d2_op1": (1, 4, 3, 3, 6, 2, 3, (2, 1), (0, 1, 1, 0), (2, 1), 2, (1, 0), False)}.items():
    x, wt = rand(n, ci, h, w), rand(ci, co // groups, r, s)
    b = rand(co) if bias else None
    y = conv_transpose(x, wt, b, strides, pads, dil, groups, out_pad)
    dy = rand(*y.shape)
    arrays = {"x": x, "w": wt, "y": y, "dy": dy}
    if bias:
        arrays.update({"b": b, "db": dy.astype(np.float64).sum(axis=(0, 2, 3))})
    for name, a in arrays.items():
        save(case, name, a)

# Ceil-mode pools: asymmetric windows and pads, count_include_pad on (PyTorch's default) and off. Heights get
# one window more than the floor (the last one part padding or past it), widths hit the dropped-window rule.
for case, (n, c, h, w, kernel, strides, pads, include_pad) in {
        "poolg_ceil_k3x2_include": (2, 2, 6, 6, (3, 2), (2, 2), (1, 0, 1, 1), True),
        "poolg_ceil_k3_exclude": (1, 3, 8, 5, (3, 3), (2, 3), (0, 1, 0, 1), False)}.items():
    x = rand(n, c, h, w)
    oh = pool_extent(h, kernel[0], strides[0], pads[0], pads[2], True)
    ow = pool_extent(w, kernel[1], strides[1], pads[1], pads[3], True)
    dy_max, dy_avg = rand(n, c, oh, ow), rand(n, c, oh, ow)
    ymax, dxmax, yavg, dxavg = pools_general(x, dy_max, dy_avg, kernel, strides, pads, True, include_pad)
    for name, a in {"x": x, "ymax": ymax, "dymax": dy_max, "dxmax": dxmax, "yavg": yavg, "dyavg": dy_avg,
                    "dxavg": dxavg}.items():
        save(case, name, a)
rng.bit_generator.state = after_square_ops
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
