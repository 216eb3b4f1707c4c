#!/usr/bin/env bash
# onnx.torch: models exported by scripts/export-onnx.py from PyTorch at test time, run by corun.
#   - corun infer --onnx: every output equals PyTorch's on the same input and weights within 1e-4 relative
#     (an MLP with a fixed batch, a CNN with a dynamic batch whose view() is folded shape arithmetic, and
#     torchvision's ResNet-18 at batch 2 on 64x64 images: BatchNormalization with random running statistics,
#     broadcasting Add of the residuals, GlobalAveragePool; ~4 s), with its BatchNormalizations folded into
#     the convolutions and with --keep-batch-norm; the ReLUs fused into the convolutions, bitwise as with
#     --keep-activations, and with the blocked layouts between convolutions bitwise as with --keep-layouts;
#   - corun infer --onnx of ReflectionPad2d + ReplicationPad2d + Conv within 1e-4 of PyTorch;
#   - corun train --onnx: the loss falls over 20 steps under lws, cpf and corun;
#   - bad files (truncated, not ONNX, unsupported opset, unsupported op, a --batch the --input file disagrees with,
#     missing external data): each exit 1 with a message naming the problem, and nothing written.
# Exit 77 (skipped) when no Python with torch, onnx and numpy is found.
#   test_onnx_torch.sh CORUN_BINARY SOURCE_DIR
set -u
corun=$1
src=$2
. "$(dirname "$0")/torch_test_lib.sh"

export_model --model mlp --out mlp.onnx --batch 4 --reference ref-mlp
export_model --model cnn --out cnn.onnx --batch 3 --dynamic-batch --reference ref-cnn

# 1. Forward outputs against PyTorch's.
"$corun" infer --onnx mlp.onnx --input input=ref-mlp/input.npy --output out-mlp >/dev/null || fail "infer mlp"
compare mlp out-mlp/output.npy ref-mlp/output.npy
"$corun" infer --onnx cnn.onnx --batch 3 --input input=ref-cnn/input.npy --output out-cnn --json cnn.json >/dev/null ||
  fail "infer cnn"
compare cnn out-cnn/output.npy ref-cnn/output.npy
[ -s cnn.json ] || fail "infer --json wrote nothing"
export_model --model resnet18 --out resnet18.onnx --batch 2 --image-size 64 --reference ref-resnet18
# Its 20 BatchNormalization nodes are folded into the (bias-less) convolutions before them; --keep-batch-norm
# runs them as ops of their own. Both within 1e-4 of PyTorch. --trace writes the last run's timeline. The
# first run of a graph is cold (oneDNN compiles its kernels) and says nothing about co-tenancy: one run on
# 2-wide teams gives no "cores look shared" warning.
CORUN_SCHED=cpf CORUN_EXECUTORS=1x2 "$corun" infer --onnx resnet18.onnx --input input=ref-resnet18/input.npy \
  --output out-resnet18 --json resnet18.json --trace resnet18.trace.json >/dev/null 2>resnet18.err ||
  fail "infer resnet18: $(tail -1 resnet18.err)"
compare resnet18 out-resnet18/output.npy ref-resnet18/output.npy
"$py" -c "
import json, sys
config = json.load(open('resnet18.json'))['config']
n, f = config['folded_batch_norms'], config['fused_activations']
ops = [e['args']['op'] for e in json.load(open('resnet18.trace.json'))['traceEvents'] if e.get('ph') == 'X']
# 9 of its 17 ReLUs follow a convolution (and its folded BatchNorm) alone; the other 8 follow a residual Add.
sys.exit(0 if n == 20 and f == 9 and 'conv2d' in ops and 'batch_norm' not in ops else
         'FAIL: resnet18: %s folded BatchNorms (want 20), %s fused activations (want 9), traced ops %s'
         % (n, f, sorted(set(ops))))" || fails=$((fails + 1))
grep -q "cores look shared" resnet18.err && fail "infer resnet18: a cold first run was taken for co-tenancy: $(cat resnet18.err)"
"$corun" infer --onnx resnet18.onnx --input input=ref-resnet18/input.npy --output out-resnet18-bn --keep-batch-norm \
  --json resnet18-bn.json >/dev/null || fail "infer resnet18 --keep-batch-norm"
compare resnet18-keep-batch-norm out-resnet18-bn/output.npy ref-resnet18/output.npy
grep -q '"folded_batch_norms":0' resnet18-bn.json || fail "--keep-batch-norm folded: $(cat resnet18-bn.json)"
# --keep-activations runs the ReLUs as ops of their own: the fused convolutions compute the same bits.
"$corun" infer --onnx resnet18.onnx --input input=ref-resnet18/input.npy --output out-resnet18-act --keep-activations \
  --json resnet18-act.json >/dev/null || fail "infer resnet18 --keep-activations"
grep -q '"fused_activations":0' resnet18-act.json || fail "--keep-activations fused: $(cat resnet18-act.json)"
"$py" -c "
import numpy as np, sys
a, b = np.load('out-resnet18/output.npy'), np.load('out-resnet18-act/output.npy')
sys.exit(0 if np.array_equal(a, b) else 'FAIL: resnet18 fused activations differ from --keep-activations by %g'
         % np.abs(a - b).max())" || fails=$((fails + 1))
# --keep-layouts keeps every tensor NCHW: the blocked layouts between convolutions give the same bits.
"$corun" infer --onnx resnet18.onnx --input input=ref-resnet18/input.npy --output out-resnet18-nchw --keep-layouts \
  --json resnet18-nchw.json >/dev/null || fail "infer resnet18 --keep-layouts"
grep -q '"blocked_tensors":0' resnet18-nchw.json || fail "--keep-layouts blocked: $(cat resnet18-nchw.json)"
"$py" -c "
import json, numpy as np, sys
blocked = json.load(open('resnet18.json'))['config']['blocked_tensors']
want = int(sys.argv[1] or 0)
a, b = np.load('out-resnet18/output.npy'), np.load('out-resnet18-nchw/output.npy')
if (blocked > 0) != (want > 0):
    sys.exit('FAIL: resnet18 blocked %s tensors; oneDNN channel block on this CPU: %s' % (blocked, want))
sys.exit(0 if np.array_equal(a, b) else 'FAIL: resnet18 with blocked layouts differs from --keep-layouts by %g'
         % np.abs(a - b).max())" "$("$corun" info 2>/dev/null | sed -n 's/^convolution .*activations nChw\([0-9]*\)c.*/\1/p' | head -1)" \
  || fails=$((fails + 1))

# --exec inline runs every kernel on the calling thread without StarPU (blocked layouts, folded BatchNorms
# and fused activations included): the same bits as the StarPU run; --trace needs StarPU's tasks.
"$corun" infer --onnx resnet18.onnx --input input=ref-resnet18/input.npy --output out-resnet18-inline --exec inline \
  --iters 2 --json resnet18-inline.json >/dev/null || fail "infer resnet18 --exec inline"
grep -q '"exec":"inline"' resnet18-inline.json || fail "--exec inline: $(cat resnet18-inline.json)"
"$py" -c "
import numpy as np, sys
a, b = np.load('out-resnet18/output.npy'), np.load('out-resnet18-inline/output.npy')
sys.exit(0 if np.array_equal(a, b) else 'FAIL: resnet18 --exec inline differs from the StarPU run by %g'
         % np.abs(a - b).max())" || fails=$((fails + 1))
"$corun" infer --onnx mlp.onnx --input input=ref-mlp/input.npy --output out-inline-trace --exec inline \
  --trace t.json >/dev/null 2>inline-trace.err
[ $? = 2 ] && grep -q "an --exec inline run may have none" inline-trace.err && [ ! -e out-inline-trace ] ||
  fail "--exec inline --trace: $(cat inline-trace.err)"
# --exec auto times both paths and runs the faster: the same bits as --exec starpu either way.
"$corun" infer --onnx mlp.onnx --input input=ref-mlp/input.npy --output out-mlp-auto --exec auto --iters 3 \
  --json mlp-auto.json >/dev/null 2>mlp-auto.err || fail "infer mlp --exec auto: $(cat mlp-auto.err)"
grep -q "exec auto: inline .* ms, StarPU .* ms" mlp-auto.err || fail "--exec auto said nothing: $(cat mlp-auto.err)"
"$py" -c "
import json, numpy as np, sys
d = json.load(open('mlp-auto.json'))
ok = d['config']['exec'] in ('inline', 'starpu') and d['config']['exec_requested'] == 'auto' and \
     d['exec_auto']['inline_ms'] > 0 and d['exec_auto']['starpu_ms'] > 0
same = np.array_equal(np.load('out-mlp/output.npy'), np.load('out-mlp-auto/output.npy'))
sys.exit(0 if ok and same else 'FAIL: --exec auto: %s, outputs equal to the StarPU run: %s' % (d, same))" ||
  fails=$((fails + 1))
"$corun" infer --onnx mlp.onnx --input input=ref-mlp/input.npy --output out-bad-exec --exec threads >/dev/null 2>bad-exec.err
[ $? = 2 ] && grep -q "starpu, inline or auto" bad-exec.err || fail "--exec threads: $(cat bad-exec.err)"

# nn.ReflectionPad2d and nn.ReplicationPad2d: Pad modes reflect and edge, whose pads PyTorch computes with
# ConstantOfShape, a step -1 Slice and Transpose on constants (folded at import).
"$py" - <<'PY' || fails=$((fails + 1))
import numpy as np, torch
class Pads(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.reflect, self.edge = torch.nn.ReflectionPad2d((1, 2, 2, 1)), torch.nn.ReplicationPad2d((1, 1, 0, 3))
        self.conv = torch.nn.Conv2d(3, 4, 3)
    def forward(self, x):
        return self.conv(self.edge(self.reflect(x)))
torch.manual_seed(0)
m, x = Pads().eval(), torch.randn(2, 3, 5, 6)
torch.onnx.export(m, x, "pads.onnx", opset_version=13, input_names=["input"], output_names=["output"])
np.save("pads-input.npy", x.numpy())
np.save("pads-output.npy", m(x).detach().numpy())
PY
"$corun" infer --onnx pads.onnx --input input=pads-input.npy --output out-pads >/dev/null || fail "infer pads"
compare pads out-pads/output.npy pads-output.npy

# 2. Training: the loss falls over 20 steps under lws and the co-run policies, with the same numbers.
export_model --model mlp --out mlp-dynamic.onnx --batch 4 --dynamic-batch
for policy in lws cpf corun; do
  CORUN_SCHED=$policy "$corun" train --onnx mlp-dynamic.onnx --batch 32 --lr 0.2 --iters 20 --json "train-$policy.json" \
    --dump-inputs "in-$policy" >/dev/null 2>"train-$policy.err" || { fail "train $policy: $(tail -1 "train-$policy.err")"; continue; }
  "$py" - "train-$policy.json" "$policy" <<'PY' || fails=$((fails + 1))
import json, sys
loss = json.load(open(sys.argv[1]))["loss"]
first, last = sum(loss[:5]) / 5, sum(loss[-5:]) / 5
print("%s: loss %.4f -> %.4f over %d steps (means of the first and last 5)" % (sys.argv[2], first, last, len(loss)))
if not (len(loss) == 20 and last < 0.8 * first):
    sys.exit("FAIL: %s: the loss did not fall: %s" % (sys.argv[2], loss))
PY
  [ -s "in-$policy/input.npy" ] && [ -s "in-$policy/targets.npy" ] || fail "--dump-inputs $policy"
done
"$py" -c "
import json, sys
l = [json.load(open('train-%s.json' % p))['loss'] for p in ('lws', 'cpf', 'corun')]
sys.exit(0 if l[0] == l[1] == l[2] else 'FAIL: the policies computed different losses: %s' % l)" || fails=$((fails + 1))

# 3. Bad files: exit 1, the message names the problem, no output directory appears.
bad() {  # what expected-text model [extra flags]
  local what=$1 text=$2 model=$3
  shift 3
  "$corun" infer --onnx "$model" --input input=ref-mlp/input.npy --output "out-$what" "$@" >/dev/null 2>"$what.err"
  local rc=$?
  [ "$rc" = 1 ] || fail "$what: exit $rc, not 1"
  grep -q -- "$text" "$what.err" || fail "$what: no '$text' in: $(cat "$what.err")"
  [ ! -e "out-$what" ] || fail "$what: an output directory was written"
}
head -c 300 mlp.onnx >truncated.onnx
bad truncated "truncated.onnx" truncated.onnx
echo "not a model" >text.onnx
bad not-onnx "not a valid ONNX" text.onnx
export_model --model mlp --out opset9.onnx --batch 4 --opset 9
bad opset "opset 9" opset9.onnx
"$py" - <<'PY' || fails=$((fails + 1))
import torch
class Soft(torch.nn.Module):
    def forward(self, x):
        return torch.nn.functional.softplus(x)
torch.onnx.export(Soft(), torch.randn(4, 64), "softplus.onnx", opset_version=13, input_names=["input"])
PY
bad unsupported-op "op_type Softplus" softplus.onnx
# A dynamic batch axis takes its size from the --input file (issue 51); a --batch that disagrees is refused.
bad dynamic-disagree "holds a batch of 4, but --batch is 5" mlp-dynamic.onnx --batch 5
"$corun" infer --onnx mlp-dynamic.onnx --input input=ref-mlp/input.npy --output out-dynamic >/dev/null 2>dynamic.err \
  && [ -e out-dynamic ] || fail "dynamic batch from --input: $(cat dynamic.err)"
"$py" - <<'PY' || fails=$((fails + 1))
import onnx
m = onnx.load("mlp.onnx")
onnx.save_model(m, "external.onnx", save_as_external_data=True, all_tensors_to_one_file=True,
                location="external.bin", size_threshold=0)
PY
rm -f external.bin
bad external "external.bin" external.onnx
"$corun" train --onnx mlp-dynamic.onnx --iters 2 --save saved >/dev/null 2>dyn-train.err
[ $? = 1 ] && grep -q -- "--batch" dyn-train.err && [ ! -e saved ] || fail "train without --batch: $(cat dyn-train.err)"

[ "$fails" = 0 ] && echo "onnx.torch: all checks passed" || { echo "onnx.torch: $fails failure(s)"; exit 1; }
