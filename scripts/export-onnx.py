#!/usr/bin/env python3
"""Exports a PyTorch model to ONNX for `corun train --onnx` / `corun infer --onnx` (docs/onnx.md).

Random initialisation from --seed, no downloads (Debian's python3-torch and python3-torchvision). With
--reference DIR it also writes, from PyTorch, a random input and the model's outputs on it, as .npy under
the ONNX names (DIR/<input>.npy, DIR/<output>.npy), so that corun's outputs can be compared with PyTorch's.

    scripts/export-onnx.py --model cnn --out cnn.onnx --batch 8
    scripts/export-onnx.py --model mlp --out mlp.onnx --dynamic-batch --reference ref/ --batch 4
    scripts/export-onnx.py --model resnet18 --out resnet18.onnx --batch 2 --image-size 64 --reference ref/
    scripts/export-onnx.py --model transformer --out transformer.onnx --batch 4 --reference ref/
    scripts/export-onnx.py --list

BatchNormalization layers stay nodes (not folded into the convolutions), so that `corun train --onnx`
trains them with batch statistics; their running statistics and affine parameters are drawn at random from
--seed, so that inference exercises them, and a convolution bias that is all zeros (torchvision's MobileNetV3
initialises its squeeze-excitation biases so) is drawn at random too. --default-init keeps the model's own
initialisation instead: PyTorch's exporter then writes equal initializers once, behind one Identity node per
duplicate, which the importer unties (each Identity output a parameter of its own, as in PyTorch).

Exit codes: 0 done, 1 an error (nothing is written), 2 usage error, 77 torch is not installed.
"""
import argparse
import os
import sys
import tempfile
import warnings


def import_torch():
    try:
        import torch  # noqa: F401
    except ImportError:
        print("export-onnx.py: python3-torch is not installed (apt-get install python3-torch python3-torchvision)",
              file=sys.stderr)
        sys.exit(77)
    import torch
    return torch


def small_models(torch):
    nn = torch.nn

    class Mlp(nn.Module):
        """Linear layers with ReLU, GELU (exported as Div/Erf/Add/Mul/Mul) and Tanh: Gemm and activations."""

        def __init__(self):
            super().__init__()
            self.fc1, self.fc2 = nn.Linear(64, 48), nn.Linear(48, 32)
            self.fc3, self.fc4 = nn.Linear(32, 32), nn.Linear(32, 10)
            self.gelu = nn.GELU()

        def forward(self, x):
            return self.fc4(torch.tanh(self.fc3(self.gelu(self.fc2(torch.relu(self.fc1(x)))))))

    class Cnn(nn.Module):
        """Conv + ReLU + MaxPool twice, x.view(x.size(0), -1) (Shape/Gather/Unsqueeze/Concat/Reshape), Gemm."""

        def __init__(self):
            super().__init__()
            self.conv1, self.conv2 = nn.Conv2d(3, 8, 3, padding=1), nn.Conv2d(8, 16, 3, padding=1)
            self.pool = nn.MaxPool2d(2)
            self.fc = nn.Linear(16 * 4 * 4, 10)

        def forward(self, x):
            x = self.pool(torch.relu(self.conv1(x)))
            x = self.pool(torch.relu(self.conv2(x)))
            return self.fc(x.view(x.size(0), -1))

    return Mlp, Cnn


def transformer_model(torch):
    """A small transformer encoder classifier over token ids (issue 19): token embedding + learned positional
    embedding, nn.TransformerEncoder of 2 post-norm layers (d_model 64, 4 heads, ff 128, batch_first), the mean
    over the sequence, a Linear head. Input int64 token ids [B, 16] in 0..99, output logits [B, 10]. Exported
    without constant folding, so that every initializer keeps its PyTorch name (the transposed in_proj and
    linear weights stay Transpose nodes): corun's --dump-grads files match named_parameters() one to one."""
    nn = torch.nn

    class TransformerClassifier(nn.Module):
        vocab, seq, d_model, classes = 100, 16, 64, 10
        input_names, output_names, constant_folding = ["input"], ["output"], False

        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(self.vocab, self.d_model)
            self.pos = nn.Parameter(torch.zeros(self.seq, self.d_model))
            layer = nn.TransformerEncoderLayer(self.d_model, 4, 128, dropout=0.0, batch_first=True)
            self.enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
            self.head = nn.Linear(self.d_model, self.classes)
            # The encoder's layers are deep copies of one layer and LayerNorm starts at (1, 0): draw every
            # parameter afresh, so that no two initializers are equal (the exporter would tie them).
            with torch.no_grad():
                for name, p in self.named_parameters():
                    if "norm" in name:
                        p.uniform_(0.8, 1.2) if name.endswith("weight") else p.uniform_(-0.1, 0.1)
                    elif p.dim() == 1:
                        p.uniform_(-0.1, 0.1)
                    else:
                        bound = 1.0 / p.shape[-1] ** 0.5
                        p.uniform_(-bound, bound)

        def forward(self, ids):
            return self.head(self.enc(self.tok(ids) + self.pos).mean(dim=1))

        def example_inputs(self, batch):
            return (torch.randint(0, self.vocab, (batch, self.seq)),)

    return TransformerClassifier()


def text_similarity_model(torch):
    """DeepCPU's text similarity (seed 002; include/corun/models/text_similarity.hpp at a small size): two
    sentences of token ids [len, B] (int64, sequence first), one embedding and one shared bidirectional GRU,
    each sentence's encoding the two directions' last states side by side [B, 2H], and their cosine
    a.b / sqrt(a.a * b.b) [B]. Vocabulary 50, embedding 16, hidden 24, lengths 7 and 5."""
    nn = torch.nn

    class TextSimilarity(nn.Module):
        vocab, embed, hidden, source_len, target_len = 50, 16, 24, 7, 5
        input_names, output_names, constant_folding = ["source_ids", "target_ids"], ["similarity"], True

        def __init__(self):
            super().__init__()
            self.embedding = nn.Embedding(self.vocab, self.embed)
            self.gru = nn.GRU(self.embed, self.hidden, bidirectional=True)

        def encode(self, ids):
            _, h = self.gru(self.embedding(ids))
            return torch.cat([h[0], h[1]], dim=1)

        def forward(self, source_ids, target_ids):
            a, b = self.encode(source_ids), self.encode(target_ids)
            return (a * b).sum(1) / torch.sqrt((a * a).sum(1) * (b * b).sum(1))

        def example_inputs(self, batch):
            return (torch.randint(0, self.vocab, (self.source_len, batch)),
                    torch.randint(0, self.vocab, (self.target_len, batch)))

    return TextSimilarity()


def dcgan_models(torch, latent=100, filters=64, channels=1):
    """The DCGAN of corun's include/corun/models/dcgan.hpp (Radford et al. 2016 at 32x32): no convolution
    biases, BatchNorm after every hidden layer but D's first, LeakyReLU(0.2) in D, tanh on G's output; D ends
    with its logit [B, 1] (corun trains it with the logistic cross-entropy, PyTorch's BCEWithLogitsLoss)."""
    nn = torch.nn

    class DcganGenerator(nn.Module):
        def __init__(self):
            super().__init__()
            f = filters
            self.net = nn.Sequential(
                nn.ConvTranspose2d(latent, 4 * f, 4, 1, 0, bias=False), nn.BatchNorm2d(4 * f), nn.ReLU(),
                nn.ConvTranspose2d(4 * f, 2 * f, 4, 2, 1, bias=False), nn.BatchNorm2d(2 * f), nn.ReLU(),
                nn.ConvTranspose2d(2 * f, f, 4, 2, 1, bias=False), nn.BatchNorm2d(f), nn.ReLU(),
                nn.ConvTranspose2d(f, channels, 4, 2, 1, bias=False), nn.Tanh())

        def forward(self, z):
            return self.net(z)

    class DcganDiscriminator(nn.Module):
        def __init__(self):
            super().__init__()
            f = filters
            self.net = nn.Sequential(
                nn.Conv2d(channels, f, 4, 2, 1, bias=False), nn.LeakyReLU(0.2),
                nn.Conv2d(f, 2 * f, 4, 2, 1, bias=False), nn.BatchNorm2d(2 * f), nn.LeakyReLU(0.2),
                nn.Conv2d(2 * f, 4 * f, 4, 2, 1, bias=False), nn.BatchNorm2d(4 * f), nn.LeakyReLU(0.2),
                nn.Conv2d(4 * f, 1, 4, 1, 0, bias=False))

        def forward(self, x):
            return self.net(x).view(-1, 1)

    return DcganGenerator, DcganDiscriminator


def models(torch, num_classes=0):
    """name -> (constructor, input shape without the batch, what it needs). Adding a model is one line."""
    Mlp, Cnn = small_models(torch)
    tv = None
    try:
        import torchvision
        tv = torchvision.models
    except ImportError:
        pass

    def vision(name, **kw):
        if tv is None:
            raise SystemExit("export-onnx.py: --model %s needs python3-torchvision" % name)
        if num_classes:
            kw["num_classes"] = num_classes
        return getattr(tv, name)(weights=None, **kw)

    return {
        "mlp": (Mlp, (64,), "imports today"),
        "cnn": (Cnn, (3, 16, 16), "imports today"),
        # torchvision, random weights (weights=None: nothing is downloaded). Those with a "needs" note import
        # once what it names lands (docs/onnx.md); until then corun names the first unsupported node.
        "resnet18": (lambda: vision("resnet18"), (3, 224, 224), "imports today"),
        "resnet50": (lambda: vision("resnet50"), (3, 224, 224), "imports today"),
        "mobilenet_v2": (lambda: vision("mobilenet_v2"), (3, 224, 224), "imports today"),
        # HardSwish / HardSigmoid (exported at opset 13 as HardSigmoid and x * HardSigmoid(x)), squeeze-excitation.
        "mobilenet_v3_small": (lambda: vision("mobilenet_v3_small"), (3, 224, 224), "imports today"),
        "mobilenet_v3_large": (lambda: vision("mobilenet_v3_large"), (3, 224, 224), "imports today"),
        "googlenet": (lambda: vision("googlenet", aux_logits=False, transform_input=False, init_weights=True),
                      (3, 224, 224), "imports today"),
        # Its padded AvgPool2d exports as Pad + AveragePool; at least 75 px (e.g. --image-size 128).
        "inception_v3": (lambda: vision("inception_v3", aux_logits=False, init_weights=True), (3, 299, 299),
                         "imports today"),
        # With --default-init (torchvision's own initialisation) its BatchNorm statistics and parameters are
        # exported once behind Identity nodes, which the importer unties (docs/onnx.md).
        "densenet121": (lambda: vision("densenet121"), (3, 224, 224), "imports today"),
        # Token ids in, int64 (model.example_inputs); see the functions above.
        "transformer": (lambda: transformer_model(torch), (16,), "imports today (int64 token ids)"),
        "text_similarity": (lambda: text_similarity_model(torch), (7,), "imports today (two int64 inputs: source [7, B], target [5, B])"),
        # corun train --model dcgan's networks (docs/models.md#dcgan): z [B, 100, 1, 1] -> image; image -> logit.
        "dcgan_generator": (lambda: dcgan_models(torch)[0](), (100, 1, 1), "imports today"),
        "dcgan_discriminator": (lambda: dcgan_models(torch)[1](), (1, 32, 32), "imports today"),
    }


def randomise_batch_norms(torch, model):
    """Random running statistics and affine parameters for every BatchNorm layer, and random values for every
    all-zero convolution bias (see the docstring)."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.Conv2d) and m.bias is not None and not m.bias.any():
                m.bias.uniform_(-0.1, 0.1)
            if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 2.0)
                if m.affine:
                    m.weight.uniform_(0.5, 1.5)
                    m.bias.uniform_(-0.5, 0.5)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", help="model name (--list shows them)")
    p.add_argument("--out", help="the .onnx file to write")
    p.add_argument("--batch", type=int, default=8, help="batch size of the export (and of --reference)")
    p.add_argument("--dynamic-batch", action="store_true", help="export the batch dimension as symbolic")
    p.add_argument("--opset", type=int, default=13, help="ONNX opset (default 13)")
    p.add_argument("--seed", type=int, default=0, help="seed of the weights and the reference input")
    p.add_argument("--num-classes", type=int, default=0,
                   help="the classes of a torchvision model's output (default: its own, 1000)")
    p.add_argument("--image-size", type=int, default=0,
                   help="the height and width of an image model's input (default: the model's own, e.g. 224)")
    p.add_argument("--default-init", action="store_true",
                   help="keep the model's own initialisation (equal initializers: the exporter writes them once, "
                        "behind Identity nodes) instead of random BatchNorm statistics and biases")
    p.add_argument("--reference", help="also write the input and PyTorch's outputs as .npy into this directory")
    p.add_argument("--list", action="store_true", help="list the models and exit")
    a = p.parse_args()
    torch = import_torch()
    if a.num_classes < 0:
        p.error("--num-classes must be positive")
    table = models(torch, a.num_classes)
    if a.list:
        for name, (_, shape, note) in table.items():
            print("%-13s input [B, %s]  %s" % (name, ", ".join(map(str, shape)), note))
        return 0
    if not a.model or not a.out:
        p.error("--model and --out are required")
    if a.model not in table:
        p.error("unknown model '%s' (available: %s)" % (a.model, ", ".join(table)))
    if a.batch < 1:
        p.error("--batch must be positive")
    ctor, shape, _ = table[a.model]
    if a.num_classes and a.model in ("mlp", "cnn", "transformer", "text_similarity"):
        p.error("--num-classes applies to the torchvision models only")
    if a.image_size:
        if len(shape) != 3 or a.image_size < 1:
            p.error("--image-size needs an image model ([B, C, H, W] input) and a positive size")
        shape = (shape[0], a.image_size, a.image_size)
    torch.manual_seed(a.seed)
    model = ctor().eval()
    if not a.default_init:
        randomise_batch_norms(torch, model)
    # A model with token inputs says how to draw them and names its inputs/outputs (transformer_model).
    xs = model.example_inputs(a.batch) if hasattr(model, "example_inputs") else (torch.randn(a.batch, *shape),)
    in_names, out_names = getattr(model, "input_names", ["input"]), getattr(model, "output_names", ["output"])
    if a.dynamic_batch and hasattr(model, "example_inputs"):
        p.error("--dynamic-batch applies to the models with one float input only")
    dynamic = {"input": {0: "batch"}, "output": {0: "batch"}} if a.dynamic_batch else None
    out_dir = os.path.dirname(os.path.abspath(a.out))
    # Written next to the target and renamed: an interrupted export never leaves a partial .onnx.
    fd, tmp = tempfile.mkstemp(prefix=".export-", suffix=".onnx", dir=out_dir)
    os.close(fd)
    try:
        # PRESERVE: an eval-mode model exports BatchNormalization in inference form, as a node of its own
        # (its warning about constant folding concerns train-mode models).
        warnings.filterwarnings("ignore", message="It is recommended that constant folding be turned off")
        torch.onnx.export(model, xs, tmp, opset_version=a.opset, input_names=in_names, output_names=out_names,
                          dynamic_axes=dynamic, do_constant_folding=getattr(model, "constant_folding", True),
                          training=torch.onnx.TrainingMode.PRESERVE)
        if a.reference:
            import numpy as np
            os.makedirs(a.reference, exist_ok=True)
            with torch.no_grad():
                ys = model(*xs)
            ys = ys if isinstance(ys, tuple) else (ys,)
            # f32 files (corun infer --input reads f32): token ids are exact integers in f32.
            for name, t in list(zip(in_names, xs)) + list(zip(out_names, ys)):
                np.save(os.path.join(a.reference, name + ".npy"), t.numpy().astype(np.float32))
        os.replace(tmp, a.out)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    print("wrote %s (%s, batch %s, opset %d)" % (a.out, a.model, "dynamic" if a.dynamic_batch else a.batch, a.opset))
    return 0


if __name__ == "__main__":
    sys.exit(main())
