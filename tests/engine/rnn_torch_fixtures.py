#!/usr/bin/python3
"""Writes the fixtures of test_rnn_torch into the folder given as argv[1]: PyTorch's nn.GRU and nn.LSTM
(2 layers, bidirectional, and one-layer cases without biases or initial states) with their weights
converted to ONNX's layouts, as torch.onnx.export writes them, plus the outputs and the gradients of a
fixed linear loss. Exits 77 when torch (python3-torch) or numpy is missing, so CTest reports a skip.

ONNX layouts: W [dirs, G*H, input], R [dirs, G*H, H], B [dirs, 2*G*H] (Wb then Rb), initial_h [dirs, batch,
H]. Gate blocks: PyTorch's GRU r, z, n -> ONNX z, r, h; PyTorch's LSTM i, f, g, o -> ONNX i, o, f, c.
Y is compared in ONNX's [seq, dirs, batch, H]; the test stacks layer 2 on layer 1's Y (directions joined
along the features), as PyTorch does.

Files: <case>.<name>.npy, float32. Per layer l: W<l>, R<l>, B<l> (when biased), h0_<l>, c0_<l> (when the
case has initial states), their gradients dW<l>, ... ; x, dx, wy (the loss weights of Y), wh (of Y_h),
wc (of Y_c, LSTM), y, y_h, y_c. loss = sum(Y * wy) + sum(Y_h * wh) [+ sum(Y_c * wc)], Y the last layer's,
Y_h / Y_c over every layer as PyTorch's h_n: [layers*dirs, batch, H].
"""
import os
import sys

try:
    import numpy as np
    import torch
except ImportError as e:
    print(f"rnn_torch_fixtures: {e}: python3-torch and python3-numpy are needed (skipping)")
    sys.exit(77)

OUT = sys.argv[1]
torch.manual_seed(2026)
torch.set_default_dtype(torch.float64)  # the reference in double; corun runs f32


def save(case, name, t):
    np.save(os.path.join(OUT, f"{case}.{name}.npy"), np.ascontiguousarray(t.detach().numpy(), dtype="<f4"))


def to_onnx(t, kind, H):
    """PyTorch gate blocks (rows of a weight, entries of a bias) in ONNX's order."""
    b = [t[k * H:(k + 1) * H] for k in range(len(t) // H)]
    return torch.cat([b[1], b[0], b[2]] if kind == "gru" else [b[0], b[3], b[1], b[2]])


def run_case(case, kind, seq, batch, inp, H, layers, bidirectional, bias, with_state, reverse=False):
    dirs = 2 if bidirectional else 1
    G = 3 if kind == "gru" else 4
    cls = torch.nn.GRU if kind == "gru" else torch.nn.LSTM
    net = cls(inp, H, num_layers=layers, bias=bias, bidirectional=bidirectional)
    # f32-representable weights and inputs: corun reads them as f32.
    for p in net.parameters():
        p.data = p.data.float().double()
    x = torch.rand(seq, batch, inp).float().double() * 2 - 1
    x.requires_grad_(True)
    h0 = (torch.rand(layers * dirs, batch, H).float().double() * 2 - 1).requires_grad_(True)
    c0 = (torch.rand(layers * dirs, batch, H).float().double() * 2 - 1).requires_grad_(True)
    xin = torch.flip(x, [0]) if reverse else x  # ONNX reverse = a forward pass over the flipped sequence
    if kind == "gru":
        y, hn = net(xin, h0) if with_state else net(xin)
        cn = None
    else:
        y, (hn, cn) = net(xin, (h0, c0)) if with_state else net(xin)
    if reverse:
        y = torch.flip(y, [0])
    y_onnx = y.reshape(seq, batch, dirs, H).permute(0, 2, 1, 3)  # [seq, dirs, batch, H]
    wy = torch.rand(seq, dirs, batch, H).float().double() * 2 - 1
    wh = torch.rand(layers * dirs, batch, H).float().double() * 2 - 1
    wc = torch.rand(layers * dirs, batch, H).float().double() * 2 - 1
    loss = (y_onnx * wy).sum() + (hn * wh).sum()
    if cn is not None:
        loss = loss + (cn * wc).sum()
    loss.backward()
    save(case, "x", x), save(case, "dx", x.grad)
    save(case, "wy", wy), save(case, "wh", wh), save(case, "y", y_onnx), save(case, "y_h", hn)
    if cn is not None:
        save(case, "wc", wc), save(case, "y_c", cn)
    for l in range(layers):
        sfx = [f"_l{l}"] + ([f"_l{l}_reverse"] if bidirectional else [])
        tensors = {"W": ("weight_ih", None), "R": ("weight_hh", None)}
        for name, (attr, _) in tensors.items():
            ps = [getattr(net, attr + s) for s in sfx]
            save(case, f"{name}{l}", torch.stack([to_onnx(p, kind, H) for p in ps]))
            save(case, f"d{name}{l}", torch.stack([to_onnx(p.grad, kind, H) for p in ps]))
        if bias:
            for grad in (False, True):
                rows = []
                for s in sfx:
                    bi, bh = getattr(net, "bias_ih" + s), getattr(net, "bias_hh" + s)
                    bi, bh = (bi.grad, bh.grad) if grad else (bi, bh)
                    rows.append(torch.cat([to_onnx(bi, kind, H), to_onnx(bh, kind, H)]))
                save(case, f"{'d' if grad else ''}B{l}", torch.stack(rows))
        if with_state:
            part = slice(l * dirs, (l + 1) * dirs)
            save(case, f"h0_{l}", h0[part]), save(case, f"dh0_{l}", h0.grad[part])
            if kind == "lstm":
                save(case, f"c0_{l}", c0[part]), save(case, f"dc0_{l}", c0.grad[part])
    with open(os.path.join(OUT, f"{case}.meta"), "w") as f:
        f.write(f"{kind} {seq} {batch} {inp} {H} {layers} {dirs} {int(bias)} {int(with_state)} {int(reverse)}\n")


os.makedirs(OUT, exist_ok=True)
run_case("gru_bi2", "gru", 5, 3, 4, 6, 2, True, True, True)
run_case("lstm_bi2", "lstm", 5, 3, 4, 6, 2, True, True, True)
run_case("gru_reverse_plain", "gru", 4, 2, 3, 5, 1, False, False, False, reverse=True)
run_case("lstm_forward_plain", "lstm", 4, 2, 3, 5, 1, False, False, False)
