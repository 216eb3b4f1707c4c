#!/usr/bin/env bash
# onnx.models_torch: issue 19's token models, exported by scripts/export-onnx.py from PyTorch at test time:
#   - the transformer encoder (int64 token ids, 2 nn.TransformerEncoderLayer, d_model 64): corun infer --onnx
#     equals PyTorch within 1e-4 relative; one training step's gradients (corun train --dump-grads) equal
#     PyTorch's (the same weights, read back from the file, the same ids and targets from --dump-inputs)
#     within 1e-3 relative; the loss falls over 20 steps of corun train --onnx (generated token ids);
#   - the text similarity model (embedding, shared bidirectional GRU, cosine in the graph; two inputs):
#     corun infer --onnx equals PyTorch within 1e-4 relative, and corun serve-bench --model text-similarity
#     --onnx FILE serves the file (test_onnx_token_models checks that the built-in model computes the same
#     cosines as this export's graph from the same weights).
# One transformer export (batch 8) serves the three transformer checks: the test takes ~10 s alone.
# Exit 77 (skipped) when no Python with torch, onnx and numpy is found.
#   test_onnx_models_torch.sh CORUN_BINARY SOURCE_DIR
set -u
corun=$1
src=$2
. "$(dirname "$0")/torch_test_lib.sh"

# 1. Forward outputs against PyTorch's.
export_model --model transformer --out transformer.onnx --batch 8 --reference ref-tr
"$corun" infer --onnx transformer.onnx --input input=ref-tr/input.npy --output out-tr >/dev/null || fail "infer transformer"
compare transformer out-tr/output.npy ref-tr/output.npy
export_model --model text_similarity --out textsim.onnx --batch 3 --reference ref-ts
"$corun" infer --onnx textsim.onnx --input source_ids=ref-ts/source_ids.npy --input target_ids=ref-ts/target_ids.npy \
  --output out-ts >/dev/null || fail "infer text_similarity"
compare text_similarity out-ts/similarity.npy ref-ts/similarity.npy
"$corun" serve-bench --model text-similarity --onnx textsim.onnx --requests 3 >serve.out 2>serve.err ||
  fail "serve-bench --onnx: $(tail -1 serve.err)"
grep -q "^latency: median .* over 3 requests" serve.out && grep -q "^similarity: [-0-9. ]*$" serve.out ||
  fail "serve-bench --onnx printed: $(cat serve.out)"

# 2. One training step's gradients against PyTorch's: the weights come from the file, by name.
"$corun" train --onnx transformer.onnx --iters 1 --lr 0.01 --dump-inputs in-tr --dump-grads grads-tr >/dev/null \
  2>grad.err || fail "train --dump-grads: $(tail -1 grad.err)"
"$py" - "$src/scripts/export-onnx.py" <<'PY' || fails=$((fails + 1))
import importlib.util, sys, numpy as np, onnx, onnx.numpy_helper, torch
spec = importlib.util.spec_from_file_location("export_onnx", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
model = mod.transformer_model(torch)
weights = {t.name: torch.from_numpy(onnx.numpy_helper.to_array(t).copy()) for t in onnx.load("transformer.onnx").graph.initializer}
params = dict(model.named_parameters())
if set(weights) != set(params):
    sys.exit("FAIL: the file's initializers %s are not the model's parameters %s" % (sorted(weights), sorted(params)))
with torch.no_grad():
    for n, p in params.items():
        p.copy_(weights[n])
ids = torch.from_numpy(np.load("in-tr/input.npy")).long()
targets = torch.from_numpy(np.load("in-tr/targets.npy"))
loss = -(targets * torch.log_softmax(model(ids), dim=1)).sum(1).mean()  # corun's softmax_xent: the rows' mean
loss.backward()
worst = (0.0, "")
for n, p in params.items():
    got, want = np.load("grads-tr/%s.grad.npy" % n), p.grad.numpy()
    rel = np.abs(got - want).max() / max(np.abs(want).max(), 1e-30)
    worst = max(worst, (rel, n))
print("transformer gradients: %d parameters, worst max relative difference to PyTorch %.2e (%s)" % (len(params), *worst))
if not worst[0] <= 1e-3:
    sys.exit("FAIL: the gradient of %s differs from PyTorch's by %.2e relative" % (worst[1], worst[0]))
PY

# 3. Training on generated token ids: the loss falls over 20 steps.
"$corun" train --onnx transformer.onnx --iters 20 --optimizer adam --lr 0.003 --json train.json >/dev/null 2>train.err ||
  fail "train transformer: $(tail -1 train.err)"
"$py" - <<'PY' || fails=$((fails + 1))
import json, sys
loss = json.load(open("train.json"))["loss"]
first, last = sum(loss[:5]) / 5, sum(loss[-5:]) / 5
print("transformer: loss %.4f -> %.4f over %d steps (means of the first and last 5)" % (first, last, len(loss)))
if not (len(loss) == 20 and last < 0.8 * first):
    sys.exit("FAIL: the transformer's loss did not fall: %s" % loss)
PY

[ "$fails" = 0 ] && echo "onnx.models_torch: all checks passed" || { echo "onnx.models_torch: $fails failure(s)"; exit 1; }
