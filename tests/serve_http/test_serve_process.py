#!/usr/bin/env python3
"""corun serve end to end (label serve-http): the real server on 127.0.0.1, queried by clients the project did
not write (curl, Python requests), every endpoint and the hostile cases. Every loop is bounded in count and time.

usage: test_serve_process.py CORUN_EXE        exit 0 pass, 1 fail, 77 skipped (no requests or onnx module)"""
import concurrent.futures
import json
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    import requests
except ImportError as e:
    print(f"skipped: {e} (apt-get install python3-requests python3-onnx python3-numpy)")
    sys.exit(77)

CORUN = sys.argv[1]
RNG = np.random.default_rng(7)
W = RNG.standard_normal((4, 3)).astype(np.float32)
B = RNG.standard_normal(3).astype(np.float32)


def tiny_model(path):
    """y = relu(x W + b), x [batch, 4]: small enough to serve in a test, made without torch."""
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["xw"]), helper.make_node("Add", ["xw", "B"], ["pre"]),
         helper.make_node("Relu", ["pre"], ["y"])], "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3])],
        [numpy_helper.from_array(W, "W"), numpy_helper.from_array(B, "B")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)


def start(model, *flags):
    proc = subprocess.Popen([CORUN, "serve", "--port", "0", "--onnx", "tiny=" + model, *flags],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()  # the server prints it once it listens (a model import may take a while)
    m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", line)
    if not m:
        proc.kill()
        raise AssertionError(f"no listening line: {line!r} {proc.stderr.read()}")
    return proc, int(m.group(1))


def check(cond, what):
    if not cond:
        raise AssertionError(what)
    print("ok:", what)


def curl(url, *args):
    out = subprocess.run(["curl", "-s", "-o", "-", "-w", "\n%{http_code}", "--max-time", "30", *args, url],
                         capture_output=True, text=True, timeout=60).stdout
    body, _, code = out.rpartition("\n")
    return int(code), body


def infer_json(x, **extra):
    return {"inputs": [{"name": "x", "datatype": "FP32", "shape": list(x.shape), "data": x.ravel().tolist()}], **extra}


def endpoints(base):
    for path in ["/v2/health/live", "/v2/health/ready", "/v2/models/tiny/ready", "/v2/models/tiny/versions/1/ready"]:
        check(curl(base + path)[0] == 200, f"curl {path} is 200")
    code, body = curl(base + "/v2/models/tiny")
    meta = json.loads(body)
    check(code == 200 and meta["inputs"][0]["name"] == "x" and meta["inputs"][0]["shape"] == [-1, 4],
          f"curl /v2/models/tiny describes x [-1,4]: {body}")
    check(json.loads(curl(base + "/v2")[1])["name"] == "corun", "curl /v2 names the server")
    code, body = curl(base + "/v2/models/nope")
    check(code == 404 and "no model named 'nope'" in json.loads(body)["error"], "unknown model is 404 JSON")


def corun_infer(model, x, tmp):
    """What `corun infer --onnx` writes for the input x (batch = its rows)."""
    np.save(os.path.join(tmp, "x.npy"), x)
    out = os.path.join(tmp, f"out{len(x)}")
    run = subprocess.run([CORUN, "infer", "--onnx", model, "--input", "x=" + os.path.join(tmp, "x.npy"), "--output",
                          out, "--batch", str(len(x))], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    return np.load(os.path.join(out, "y.npy"))


def results(base, model, tmp):
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    r = requests.post(base + "/v2/models/tiny/infer", json=infer_json(x, id="r1"), timeout=60)
    check(r.status_code == 200 and r.json()["id"] == "r1", f"requests infer is 200 with the id: {r.text[:200]}")
    y = np.array(r.json()["outputs"][0]["data"], dtype=np.float32).reshape(3, 3)
    check(np.allclose(y, np.maximum(x @ W + B, 0), atol=1e-5), "outputs are relu(x W + b)")
    # A request of 4 rows runs on the 4-row bucket: corun infer --batch 4 on the same rows gives the same bits.
    x4 = RNG.standard_normal((4, 4)).astype(np.float32)
    y4 = np.array(requests.post(base + "/v2/models/tiny/infer", json=infer_json(x4), timeout=60)
                  .json()["outputs"][0]["data"], dtype=np.float32).reshape(4, 3)
    check(np.array_equal(y4, corun_infer(model, x4, tmp)), "a 4-row request gives the bits of corun infer --onnx")
    alone = [np.array(requests.post(base + "/v2/models/tiny/infer", json=infer_json(x[i:i + 1]), timeout=60)
                      .json()["outputs"][0]["data"], dtype=np.float32) for i in range(3)]
    check(np.array_equal(np.stack(alone), y), "each row alone gives the bits it got in a batch of 3")
    header = json.dumps({"inputs": [{"name": "x", "datatype": "FP32", "shape": [3, 4],
                                     "parameters": {"binary_data_size": 48}}],
                         "outputs": [{"name": "y", "parameters": {"binary_data": True}}]}).encode()
    r = requests.post(base + "/v2/models/tiny/infer", data=header + x.tobytes(), timeout=60,
                      headers={"Inference-Header-Content-Length": str(len(header))})
    n = int(r.headers["Inference-Header-Content-Length"])
    check(r.status_code == 200 and np.array_equal(np.frombuffer(r.content[n:], dtype="<f4").reshape(3, 3), y),
          "binary-data extension in and out gives the same bits")
    code, body = curl(base + "/metrics")
    check(code == 200 and re.search(r'corun_requests_total\{model="tiny",status="ok"\} [1-9]', body)
          and "# TYPE corun_batch_rows histogram" in body, "curl /metrics counts the requests")


def bad_requests(base):
    url = base + "/v2/models/tiny/infer"
    cases = [('{"inputs": [{"name": "x"', "invalid JSON"),
             ('{"inputs": [{"name": "x", "datatype": "FP32", "shape": [1000000000000000000, 4], "data": []}]}',
              "inputs[0].shape"),
             ('{"inputs": [{"name": "x", "datatype": "INT8", "shape": [1, 4], "data": [1, 2, 3, 4]}]}',
              "inputs[0].datatype"),
             ('{"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 5], "data": [1, 2, 3, 4, 5]}]}',
              "inputs[0].shape: [1,5] but model input 'x' is [-1,4]"),
             ('{"inputs": []}', "model input 'x'")]
    for body, expected in cases:
        r = requests.post(url, data=body, timeout=30)
        check(r.status_code == 400 and expected in r.json()["error"], f"400 naming {expected}: {r.text[:160]}")
    r = requests.post(url, data=b" " * (2 << 20), timeout=30)
    check(r.status_code == 413, "a body over --max-body-mb 1 is 413")


def hostile_connections(port, base):
    # 10,000 connections in waves of 500 open at once (the soft limit on open files is often 1024), half of
    # them with a request started, all dropped; bounded by 60 s.
    start, opened = time.time(), 0
    while opened < 10000 and time.time() - start < 60:
        wave = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(500)]
        for i, s in enumerate(wave):
            if i % 2:
                s.sendall(b"POST /v2/models/tiny/infer HTTP/1.1\r\n")
        for s in wave:
            s.close()
        opened += len(wave)
    check(requests.get(base + "/v2/health/live", timeout=10).status_code == 200,
          f"{opened} dropped connections later the server answers")
    slow = socket.create_connection(("127.0.0.1", port), timeout=10)
    start, cut = time.time(), False
    for i, byte in enumerate(b"GET /v2/health/live HTTP/1.1\r\nX-Slow: " + b"a" * 20):
        try:
            slow.send(bytes([byte]))
            if i == 1:
                check(requests.get(base + "/v2/health/live", timeout=10).status_code == 200, "others served meanwhile")
            time.sleep(1.0)
            slow.setblocking(False)
            if slow.recv(1) == b"":
                cut = True
                break
        except BlockingIOError:
            slow.setblocking(True)
        except OSError:
            cut = True
            break
    slow.close()
    check(cut and time.time() - start < 8, f"a one-byte-a-second client is cut ({time.time() - start:.1f} s)")


def overload(model):
    proc, port = start(model, "--max-queue", "1", "--max-batch", "1", "--http-threads", "64")
    url = f"http://127.0.0.1:{port}/v2/models/tiny/infer"
    body = infer_json(RNG.standard_normal((1, 4)).astype(np.float32))
    with concurrent.futures.ThreadPoolExecutor(64) as pool:
        rs = list(pool.map(lambda _: requests.post(url, json=body, timeout=60), range(400)))
    codes = {r.status_code for r in rs}
    check(codes <= {200, 503} and 503 in codes and all(r.headers.get("Retry-After") for r in rs
                                                        if r.status_code == 503), f"overload gives 503 + Retry-After: {codes}")
    return proc, port


def builtin_model(tmp):
    """corun serve --model: a built-in model answers with the logits corun infer --model computes."""
    proc = subprocess.Popen([CORUN, "serve", "--port", "0", "--model", "cifar-quick"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        port = int(re.search(r"127\.0\.0\.1:(\d+)", proc.stdout.readline()).group(1))
        meta = requests.get(f"http://127.0.0.1:{port}/v2/models/cifar-quick", timeout=30).json()
        shape = [1] + meta["inputs"][0]["shape"][1:]
        x = RNG.standard_normal(shape).astype(np.float32)
        body = {"inputs": [{"name": "x", "datatype": "FP32", "shape": shape, "data": x.ravel().tolist()}]}
        r = requests.post(f"http://127.0.0.1:{port}/v2/models/cifar-quick/infer", json=body, timeout=60)
        got = np.array(r.json()["outputs"][0]["data"], dtype=np.float32)
        np.save(os.path.join(tmp, "img.npy"), x)
        out = os.path.join(tmp, "builtin")
        run = subprocess.run([CORUN, "infer", "--model", "cifar-quick", "--batch", "1", "--iters", "1", "--warmup", "1",
                              "--input", "x=" + os.path.join(tmp, "img.npy"), "--output", out],
                             capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr
        want = np.load(os.path.join(out, "logits.npy")).ravel()
        check(r.status_code == 200 and np.allclose(got, want, rtol=1e-5, atol=1e-6),
              "corun serve --model cifar-quick answers corun infer --model's logits")
    finally:
        proc.send_signal(signal.SIGTERM)
    check(proc.wait(timeout=60) == 0, "SIGTERM drains --model and exits 0")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "tiny.onnx")
        tiny_model(model)
        proc, port = start(model, "--max-body-mb", "1", "--read-timeout-s", "2")
        base = f"http://127.0.0.1:{port}"
        try:
            endpoints(base)
            results(base, model, tmp)
            bad_requests(base)
            hostile_connections(port, base)
            taken = subprocess.run([CORUN, "serve", "--port", str(port), "--onnx", model], capture_output=True,
                                   text=True, timeout=120)
            check(taken.returncode == 1 and f"127.0.0.1:{port} is in use" in taken.stderr,
                  f"a taken port is exit 1 naming it: {taken.stderr.strip()}")
        finally:
            proc.send_signal(signal.SIGTERM)
        check(proc.wait(timeout=60) == 0, "SIGTERM drains and exits 0")
        builtin_model(tmp)
        proc, _ = overload(model)
        proc.send_signal(signal.SIGTERM)
        check(proc.wait(timeout=60) == 0, "SIGTERM after overload exits 0")
    code = subprocess.run([CORUN, "serve", "--port", "99999", "--onnx", "x.onnx"], capture_output=True).returncode
    check(code == 2, "a bad flag is exit 2")


if __name__ == "__main__":
    main()
