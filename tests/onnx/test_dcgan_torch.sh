#!/usr/bin/env bash
# onnx.dcgan: the DCGAN of `corun train --model dcgan` exported from PyTorch by scripts/export-onnx.py
# (dcgan_generator: ConvTranspose + BatchNormalization + Relu + Tanh; dcgan_discriminator: Conv + LeakyRelu +
# BatchNormalization, the logit viewed as [B, 1]), imported by `corun infer --onnx`: every output equals
# PyTorch's on the same input and weights within 1e-4 relative (batch norms with random running statistics);
# and corun's built-in `--model dcgan` discriminator, given PyTorch's weights by --load, scores a batch as
# PyTorch does. Exit 77 (skipped) when no Python with torch, onnx and numpy is found. About 40 s on the
# loaded 2-core VM, most of it starting Python with torch four times.
#   test_dcgan_torch.sh CORUN_BINARY SOURCE_DIR
set -u
corun=$1
src=$2
. "$(dirname "$0")/torch_test_lib.sh"
for model in dcgan_generator dcgan_discriminator; do
  "$py" "$src/scripts/export-onnx.py" --model "$model" --out "$model.onnx" --batch 5 --seed 3 --reference "ref-$model" \
    >/dev/null || { echo "FAIL: export $model"; fails=$((fails + 1)); continue; }
  "$corun" infer --onnx "$model.onnx" --input "input=ref-$model/input.npy" --output "out-$model" >/dev/null ||
    { echo "FAIL: corun infer $model"; fails=$((fails + 1)); continue; }
  "$py" - "$model" "out-$model/output.npy" "ref-$model/output.npy" <<'PY' || fails=$((fails + 1))
import sys, numpy as np
name, got, want = sys.argv[1], np.load(sys.argv[2]), np.load(sys.argv[3])
if got.shape != want.shape:
    sys.exit("FAIL: %s: shape %s, PyTorch %s" % (name, got.shape, want.shape))
rel = np.abs(got - want).max() / max(np.abs(want).max(), 1e-30)
print("%s: output %s, max relative difference to PyTorch %.2e" % (name, got.shape, rel))
if not rel <= 1e-4:
    sys.exit("FAIL: %s differs from PyTorch by %.2e relative" % (name, rel))
PY
done
# 2. corun's own `--model dcgan` computes PyTorch's discriminator: PyTorch's weights saved under corun's names
# and --load'ed, a synthetic data set of exactly one batch (8 images), and the mean sigmoid(D(real)) of the
# first D step ("d_real" in --json; a mean over the batch, so the shuffle's order does not matter, and batch
# norm in training mode uses the batch's statistics, as PyTorch's train()).
"$py" - "$src/scripts/export-onnx.py" <<'PY' || fails=$((fails + 1))
import gzip, importlib.util, os, struct, sys
import numpy as np, torch
spec = importlib.util.spec_from_file_location("export_onnx", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
G, D = mod.dcgan_models(torch)
torch.manual_seed(5)
g, d = G(), D()
mod.randomise_batch_norms(torch, g)
mod.randomise_batch_norms(torch, d)
os.makedirs("weights", exist_ok=True)
def save(module, names):
    for key, value in module.state_dict().items():
        layer, field = key.split(".")[1:]
        if field == "num_batches_tracked":
            continue
        base = names[int(layer)]
        name = base + ".w" if field == "weight" and "conv" in base else base + "." + {"weight": "scale"}.get(field, field)
        np.save("weights/%s.npy" % name, value.detach().numpy().astype(np.float32))
save(g, {0: "g.convt0", 1: "g.bn0", 3: "g.convt1", 4: "g.bn1", 6: "g.convt2", 7: "g.bn2", 9: "g.convt3"})
save(d, {0: "d.conv0", 2: "d.conv1", 3: "d.bn1", 5: "d.conv2", 6: "d.bn2", 8: "d.conv3"})
rng = np.random.default_rng(7)
pixels = rng.integers(0, 256, size=(8, 28, 28), dtype=np.uint8)
os.makedirs("data", exist_ok=True)
for prefix in ("train", "t10k"):
    with gzip.open("data/%s-images-idx3-ubyte.gz" % prefix, "wb") as f:
        f.write(struct.pack(">IIII", 0x803, 8, 28, 28) + pixels.tobytes())
    with gzip.open("data/%s-labels-idx1-ubyte.gz" % prefix, "wb") as f:
        f.write(struct.pack(">II", 0x801, 8) + bytes(range(8)))
x = -np.ones((8, 1, 32, 32), dtype=np.float32)
x[:, 0, 2:30, 2:30] = pixels.astype(np.float32) / 127.5 - 1.0
d.train()
with torch.no_grad():
    want = torch.sigmoid(d(torch.from_numpy(x))).mean().item()
open("d_real.txt", "w").write(repr(want))
PY
"$corun" train --model dcgan --data data --batch 8 --iters 1 --load weights --json own.json >/dev/null 2>own.err ||
  { echo "FAIL: corun train --model dcgan --load: $(tail -1 own.err)"; fails=$((fails + 1)); }
"$py" - <<'PY' || fails=$((fails + 1))
import json, sys
got, want = json.load(open("own.json"))["d_real"][0], float(open("d_real.txt").read())
print("dcgan (corun --model dcgan, PyTorch's weights): mean sigmoid(D(real)) %.7f, PyTorch %.7f" % (got, want))
if not abs(got - want) <= 1e-4 * abs(want):
    sys.exit("FAIL: corun's discriminator differs from PyTorch's: %r vs %r" % (got, want))
PY
[ "$fails" = 0 ] && echo "onnx.dcgan: all checks passed" || { echo "onnx.dcgan: $fails failure(s)"; exit 1; }
