#!/usr/bin/python3
"""The PyTorch baseline of bench/serve_load.sh (issue 49): the minimal KServe v2 HTTP server a user would write
around the same network corun serves, and the export of the ONNX files both sides serve.

    serve_torch.py serve --model NAME [--image-size N] [--threads T] [--port P] [--host 127.0.0.1]
    serve_torch.py export --model NAME --out FILE.onnx [--image-size N]
    serve_torch.py input --model NAME --out-dir DIR [--image-size N]     # DIR/<input>.npy, batch 1

NAME: a model of scripts/export-onnx.py --list. The network is built by that script's own table with its
seed (0) and its random BatchNorm statistics, so its weights are those of the ONNX file `export-onnx.py
--model NAME` writes: both servers answer the same request with the same numbers (serve_load.sh compares one
answer of each). text_similarity is served batch-first (inputs [B, 7] and [B, 5], transposed inside, the
same bi-GRU and weights): corun serve batches requests along the first axis of every input, and the
exporter's sequence-first inputs have different first dimensions.

`serve`: http.server's ThreadingHTTPServer (a thread per connection, HTTP/1.1 keep-alive), each request run
at once on its own thread under torch.inference_mode() with torch.set_num_threads(T) intra-op threads: what
the PyTorch docs and a user would start from. No batching, no queue: concurrent requests run side by side
and share the cores (pin the process with taskset; serve_load.sh starts one per core group for the pinned
workers of TorchServe's kind). Speaks the subset serve_load.py sends: POST /v2/models/NAME/infer with JSON
data or the binary-data extension (FP32, INT64, INT32 inputs), JSON outputs; GET /v2/health/live|ready and
/v2/models/NAME. Prints "serve_torch.py: listening on http://HOST:PORT" once it accepts requests. Not a test.
"""
import argparse
import http.server
import importlib.util
import json
import os
import socket
import sys

import numpy as np
import torch

EXPORTER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts", "export-onnx.py")
NP_TYPES = {"FP32": np.float32, "INT64": np.int64, "INT32": np.int32}
MAX_BODY = 64 << 20


def exporter_module():
    spec = importlib.util.spec_from_file_location("export_onnx", EXPORTER)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class BatchFirst(torch.nn.Module):
    """A sequence-first model ([len, B] inputs) taking batch-first inputs ([B, len])."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner
        self.input_names, self.output_names = inner.input_names, inner.output_names

    def forward(self, *xs):
        return self.inner(*(x.t() for x in xs))

    def example_inputs(self, batch):
        return tuple(x.t().contiguous() for x in self.inner.example_inputs(batch))


def build(name, image_size):
    """(model in eval mode, [(input name, example batch-1 tensor)], output names), weights as export-onnx.py's."""
    ex = exporter_module()
    table = ex.models(torch)
    if name not in table:
        sys.exit(f"serve_torch.py: unknown model '{name}' (scripts/export-onnx.py --list: {', '.join(table)})")
    ctor, shape, _ = table[name]
    if image_size and len(shape) == 3:
        shape = (shape[0], image_size, image_size)
    torch.manual_seed(0)  # export-onnx.py's default --seed, then the same draws in the same order
    model = ctor().eval()
    ex.randomise_batch_norms(torch, model)
    if name == "text_similarity":
        model = BatchFirst(model).eval()
    xs = model.example_inputs(1) if hasattr(model, "example_inputs") else (torch.randn(1, *shape),)
    names = getattr(model, "input_names", ["input"])
    return model, list(zip(names, xs)), getattr(model, "output_names", ["output"])


def export(a):
    """The ONNX file corun serves: export-onnx.py's settings (opset 13, BatchNorm kept), the batch axis dynamic."""
    model, inputs, outputs = build(a.model, a.image_size)
    names = [n for n, _ in inputs]
    dynamic = {n: {0: "batch"} for n in names + outputs}
    torch.onnx.export(model, tuple(x for _, x in inputs), a.out, opset_version=13, input_names=names,
                      output_names=outputs, dynamic_axes=dynamic,
                      do_constant_folding=getattr(model, "constant_folding", True),
                      training=torch.onnx.TrainingMode.PRESERVE)


def write_inputs(a):
    """Batch-1 inputs as .npy (float32 images, int64 token ids), drawn from a fixed seed."""
    model, inputs, _ = build(a.model, a.image_size)
    vocab = getattr(getattr(model, "inner", model), "vocab", None)  # token models name their table's size
    os.makedirs(a.out_dir, exist_ok=True)
    rng = np.random.default_rng(1)
    for name, x in inputs:
        if x.dtype == torch.int64:
            arr = rng.integers(0, vocab or int(x.max()) + 1, size=tuple(x.shape), dtype=np.int64)
        else:
            arr = rng.standard_normal(tuple(x.shape)).astype(np.float32)
        np.save(os.path.join(a.out_dir, name + ".npy"), arr)
        print(f"{name}={os.path.join(a.out_dir, name + '.npy')}")


class BadRequest(Exception):
    pass


def parse_inputs(body, header_len, specs):
    """{name: tensor} from a KServe v2 infer body (JSON, or JSON then binary tensors); BadRequest names the field."""
    try:
        doc = json.loads(body[:header_len] if header_len is not None else body)
        entries = doc["inputs"]
    except (ValueError, KeyError, TypeError) as e:
        raise BadRequest(f"the body is not a KServe v2 infer request: {e}")
    tail, used, out = body[header_len:] if header_len is not None else b"", 0, {}
    for i, e in enumerate(entries):
        name, shape, dtype = e.get("name"), e.get("shape"), e.get("datatype")
        if name not in specs:
            raise BadRequest(f"inputs[{i}].name: '{name}' is not an input of the model ({', '.join(specs)})")
        if dtype not in NP_TYPES:
            raise BadRequest(f"inputs[{i}].datatype: '{dtype}' (this server takes {', '.join(NP_TYPES)})")
        if not isinstance(shape, list) or list(shape) != list(specs[name]):
            raise BadRequest(f"inputs[{i}].shape: {shape}, the model's is {list(specs[name])} (batch 1 only)")
        size = (e.get("parameters") or {}).get("binary_data_size")
        if size is not None:
            arr = np.frombuffer(tail[used:used + size], dtype=np.dtype(NP_TYPES[dtype]).newbyteorder("<"))
            used += size
        else:
            arr = np.asarray(e.get("data"), dtype=NP_TYPES[dtype])
        if arr.size != int(np.prod(shape)):
            raise BadRequest(f"inputs[{i}]: {arr.size} values for shape {shape}")
        out[name] = torch.from_numpy(arr.astype(NP_TYPES[dtype]).reshape(shape))
    missing = [n for n in specs if n not in out]
    if missing:
        raise BadRequest(f"inputs: missing {', '.join(missing)}")
    return out


def make_handler(name, model, inputs, outputs):
    specs = {n: list(x.shape) for n, x in inputs}
    types = {n: ("INT64" if x.dtype == torch.int64 else "FP32") for n, x in inputs}
    infer_path = f"/v2/models/{name}/infer"

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as serve_load.py's clients expect

        def setup(self):  # headers and body go out in two writes: no Nagle delay between them (40 ms)
            super().setup()
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def log_message(self, *args):  # one line per request would cost more than a small model's run
            pass

        def reply(self, status, doc):
            data = json.dumps(doc, separators=(",", ":")).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if self.path in ("/v2/health/live", "/v2/health/ready"):
                self.reply(200, {})
            elif self.path == f"/v2/models/{name}":
                self.reply(200, {"name": name, "platform": "pytorch", "versions": ["1"],
                                 "inputs": [{"name": n, "datatype": types[n], "shape": specs[n]} for n in specs],
                                 "outputs": [{"name": n, "datatype": "FP32"} for n in outputs]})
            else:
                self.reply(404, {"error": f"no route {self.path}"})

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY:
                self.close_connection = True
                return self.reply(413, {"error": f"body of {length} bytes, over {MAX_BODY}"})
            body = self.rfile.read(length)
            if self.path != infer_path:
                return self.reply(404, {"error": f"no route {self.path}"})
            hl = self.headers.get("Inference-Header-Content-Length")
            try:
                xs = parse_inputs(body, int(hl) if hl else None, specs)
            except (BadRequest, ValueError) as e:
                return self.reply(400, {"error": str(e)})
            with torch.inference_mode():
                ys = model(*(xs[n] for n, _ in inputs))
            ys = ys if isinstance(ys, tuple) else (ys,)
            self.reply(200, {"model_name": name, "outputs": [
                {"name": n, "datatype": "FP32", "shape": list(y.shape), "data": y.reshape(-1).tolist()}
                for n, y in zip(outputs, ys)]})

    return Handler


def serve(a):
    torch.set_num_threads(a.threads)
    model, inputs, outputs = build(a.model, a.image_size)
    with torch.inference_mode():  # the first run allocates and picks kernels: not a request's cost
        model(*(x for _, x in inputs))
    server = http.server.ThreadingHTTPServer((a.host, a.port), make_handler(a.model, model, inputs, outputs))
    server.daemon_threads = True
    host, port = server.server_address[:2]
    print(f"serve_torch.py: listening on http://{host}:{port} (model {a.model}, {a.threads} thread(s))", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    for cmd in ("serve", "export", "input"):
        p = sub.add_parser(cmd)
        p.add_argument("--model", required=True)
        p.add_argument("--image-size", type=int, default=0, help="image models: height and width (default 224)")
    sub.choices["serve"].add_argument("--threads", type=int, default=1)
    sub.choices["serve"].add_argument("--port", type=int, default=0, help="0: a free port (printed)")
    sub.choices["serve"].add_argument("--host", default="127.0.0.1")
    sub.choices["export"].add_argument("--out", required=True)
    sub.choices["input"].add_argument("--out-dir", required=True)
    a = ap.parse_args()
    if a.image_size < 0 or (a.cmd == "serve" and a.threads < 1):
        ap.error("--image-size must be >= 0 and --threads >= 1")
    {"serve": serve, "export": export, "input": write_inputs}[a.cmd](a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
