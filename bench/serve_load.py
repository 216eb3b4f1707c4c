#!/usr/bin/python3
"""A bounded load generator for KServe v2 / Triton HTTP endpoints (bench/serve_load.sh, issue 49): one model,
batch-1 requests of fixed inputs, against one or more servers (the clients are spread over them round-robin:
fixed streams run one server process per core group). One JSON line of results on stdout.

    serve_load.py --url http://127.0.0.1:8000 [--url ...] --model NAME --input NAME=FILE.npy [--input ...]
                  (--concurrency C | --rate R [--max-outstanding N]) [--duration S] [--warmup S]
                  [--max-requests N] [--timeout S] [--binary auto|on|off] [--meta JSON]
    serve_load.py --url ... --model NAME --input ... --probe OUT.npz [--reference DIR]   # one request

Closed loop (--concurrency C): C clients, each one keep-alive connection sending its next request as soon as the
previous answer arrives. Open loop (--rate R): requests are due every 1/R s whatever the answers; up to
--max-outstanding are in flight (a request due while all are busy waits in the client and its latency counts
from when it was due, so a saturated server is not hidden: no coordinated omission); what is still due when the
run ends is counted as "not sent". Every loop is bounded: the run stops after --warmup + --duration seconds or
--max-requests requests, whichever comes first, and each request after --timeout seconds.

Only requests that finish inside the measured window (after the warm-up) count. Throughput = 200 answers in the
window / its length; latency percentiles (nearest rank) over those answers, from the first byte sent to the
last byte read. 503s (overload, Retry-After), other statuses and connection errors are counted apart; a client
that gets a 503 waits Retry-After (capped at 50 ms) before its next request, so that it does not spin.

Inputs are .npy files (float32 -> FP32, int64/int32 -> INT64/INT32), shape [1, ...] or any batch the server
takes. The body is built once: JSON "data", or with --binary (auto: inputs over 16 KiB) the binary-data
extension (raw little-endian bytes after the JSON, Inference-Header-Content-Length), which spares both the
client and the server the text of 12 288 (64 px) to 150 528 (224 px) floats. Responses are JSON, read whole but parsed only by --probe.

Why Python threads and http.client rather than wrk (Debian's, also installed): wrk stops on time only (no
request bound), folds every non-2xx into one count (503s are what overload looks like here), and spreading the
clients over several servers or an open-loop rate needs Lua scripts as long as this file; its advantage, less
client CPU, is measured here instead: "client_cpu_s" is this process's CPU time, reported next to the results
so that a reader can see what the load generator took from the 2 cores. The GIL is released while a thread
waits on its socket, which is where a client spends its time against a server of milliseconds per request.
"""
import argparse
import http.client
import json
import os
import queue
import socket
import sys
import threading
import time
import urllib.parse

import numpy as np

DATATYPES = {np.dtype(np.float32): "FP32", np.dtype(np.int64): "INT64", np.dtype(np.int32): "INT32"}
BINARY_AUTO_BYTES = 16 << 10
RETRY_AFTER_CAP_S = 0.05


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--url", action="append", required=True, help="http://HOST:PORT of a server (repeatable)")
    ap.add_argument("--model", required=True)
    ap.add_argument("--input", action="append", required=True, help="NAME=FILE.npy (repeatable, model order)")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--concurrency", type=int, help="closed loop: clients, each one request at a time")
    mode.add_argument("--rate", type=float, help="open loop: requests per second")
    ap.add_argument("--max-outstanding", type=int, default=64, help="open loop: requests in flight at most")
    ap.add_argument("--duration", type=float, default=5.0, help="seconds measured (after the warm-up)")
    ap.add_argument("--warmup", type=float, default=1.0, help="seconds of load before the measured window")
    ap.add_argument("--max-requests", type=int, default=100000, help="requests sent at most (all clients)")
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds one request may take")
    ap.add_argument("--binary", choices=("auto", "on", "off"), default="auto")
    ap.add_argument("--meta", default="{}", help="a JSON object whose members are copied into the JSON line")
    ap.add_argument("--probe", help="send one request, save its outputs to this .npz and exit")
    ap.add_argument("--reference", help="--probe: a folder of <output>.npy; prints the largest difference to them")
    a = ap.parse_args()
    if a.probe is None and a.concurrency is None and a.rate is None:
        ap.error("give --concurrency C or --rate R (or --probe FILE)")
    for name, v in (("--concurrency", a.concurrency), ("--rate", a.rate), ("--max-outstanding", a.max_outstanding),
                    ("--duration", a.duration), ("--max-requests", a.max_requests), ("--timeout", a.timeout)):
        if v is not None and v <= 0:
            ap.error(f"{name} must be positive, got {v}")
    if a.warmup < 0:
        ap.error("--warmup must be >= 0")
    try:
        a.meta = json.loads(a.meta)
        assert isinstance(a.meta, dict)
    except (ValueError, AssertionError):
        ap.error(f"--meta wants a JSON object, got {a.meta!r}")
    return a


def read_inputs(specs):
    """[(name, array)] from NAME=FILE.npy; exits naming the input whose file or dtype is wrong."""
    out = []
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            sys.exit(f"serve_load.py: --input wants NAME=FILE.npy, got '{spec}'")
        try:
            arr = np.load(path)
        except (OSError, ValueError) as e:
            sys.exit(f"serve_load.py: --input {name}: cannot read {path}: {e}")
        if arr.dtype not in DATATYPES:
            sys.exit(f"serve_load.py: --input {name}: dtype {arr.dtype} (the load generator sends float32, int64, int32)")
        out.append((name, np.ascontiguousarray(arr)))
    return out


def request_body(inputs, binary):
    """(body bytes, extra headers) of one infer request, built once and sent by every client."""
    use_binary = binary == "on" or (binary == "auto" and sum(a.nbytes for _, a in inputs) > BINARY_AUTO_BYTES)
    entries, tail = [], b""
    for name, arr in inputs:
        e = {"name": name, "shape": list(arr.shape), "datatype": DATATYPES[arr.dtype]}
        if use_binary:
            raw = arr.astype(arr.dtype.newbyteorder("<"), copy=False).tobytes()
            e["parameters"] = {"binary_data_size": len(raw)}
            tail += raw
        else:
            e["data"] = arr.reshape(-1).tolist()
        entries.append(e)
    header = json.dumps({"inputs": entries}, separators=(",", ":")).encode()
    headers = {"Content-Type": "application/json"}
    if use_binary:
        headers = {"Content-Type": "application/octet-stream", "Inference-Header-Content-Length": str(len(header))}
    return header + tail, headers, use_binary


class Connection(http.client.HTTPConnection):
    """http.client sends a request's headers and body in two writes: with Nagle's algorithm on, the second
    waits for the server's delayed ACK (40 ms on Linux), which would swamp a millisecond model. No delay."""

    def connect(self):
        super().connect()
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class Target:
    """One server: host, port and the infer path of the model."""

    def __init__(self, url, model):
        u = urllib.parse.urlsplit(url)
        if u.scheme != "http" or not u.hostname or not u.port:
            sys.exit(f"serve_load.py: --url wants http://HOST:PORT, got '{url}'")
        self.host, self.port = u.hostname, u.port
        self.path = f"/v2/models/{urllib.parse.quote(model)}/infer"

    def connect(self, timeout):
        return Connection(self.host, self.port, timeout=timeout)


class Tally:
    """What the clients saw, merged under a lock when each client ends (no lock per request)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.latencies, self.statuses, self.errors, self.sent, self.not_sent = [], {}, {}, 0, 0

    def merge(self, part):
        with self.lock:
            self.latencies += part.latencies
            self.sent += part.sent
            self.not_sent += part.not_sent
            for src, dst in ((part.statuses, self.statuses), (part.errors, self.errors)):
                for k, v in src.items():
                    dst[k] = dst.get(k, 0) + v


class Budget:
    """The shared request bound: take() is False once --max-requests were handed out."""

    def __init__(self, n):
        self.left, self.lock = n, threading.Lock()

    def take(self):
        with self.lock:
            if self.left <= 0:
                return False
            self.left -= 1
            return True


def send_one(conn, target, body, headers):
    """(status, retry_after_s or None, body) of one request on `conn`; raises OSError/HTTPException."""
    conn.request("POST", target.path, body=body, headers=headers)
    r = conn.getresponse()
    data = r.read()
    retry = r.getheader("Retry-After")
    return r.status, (float(retry) if retry and retry.replace(".", "", 1).isdigit() else None), data


class Client:
    """One keep-alive connection to one server; records each request that ends inside [t_start, t_end]."""

    def __init__(self, target, body, headers, timeout, window):
        self.target, self.body, self.headers, self.timeout = target, body, headers, timeout
        self.t_start, self.t_end = window
        self.conn = target.connect(timeout)
        self.part = Tally()

    def request(self, due):
        """Sends one request (its latency counted from `due`); returns the seconds to wait before the next."""
        self.part.sent += 1
        wait = 0.0
        try:
            status, retry, _ = send_one(self.conn, self.target, self.body, self.headers)
        except (OSError, http.client.HTTPException) as e:
            self.conn.close()  # the next request opens a new connection
            self.conn = self.target.connect(self.timeout)
            status, retry = None, None
            kind = type(e).__name__
        done = time.perf_counter()
        if status == 503:
            wait = min(retry if retry is not None else RETRY_AFTER_CAP_S, RETRY_AFTER_CAP_S)
        if self.t_start <= done <= self.t_end:
            if status is None:
                self.part.errors[kind] = self.part.errors.get(kind, 0) + 1
            else:
                self.part.statuses[str(status)] = self.part.statuses.get(str(status), 0) + 1
                if status == 200:
                    self.part.latencies.append(done - due)
        return wait

    def close(self):
        self.conn.close()


def closed_loop(targets, body, headers, a, tally, window, stop_at, budget):
    def run(i):
        c = Client(targets[i % len(targets)], body, headers, a.timeout, window)
        while time.perf_counter() < stop_at and budget.take():
            wait = c.request(time.perf_counter())
            if wait:
                time.sleep(wait)
        c.close()
        tally.merge(c.part)

    return [threading.Thread(target=run, args=(i,), daemon=True) for i in range(a.concurrency)]


def open_loop(targets, body, headers, a, tally, window, stop_at, budget):
    due_times = queue.Queue()
    t0 = time.perf_counter()

    def schedule():  # puts each request's due time when it is due; None tells the senders to stop
        k = 0
        while True:
            due = t0 + k / a.rate
            if due >= stop_at or not budget.take():
                break
            time.sleep(max(0.0, due - time.perf_counter()))
            due_times.put(due)
            k += 1
        for _ in range(a.max_outstanding):
            due_times.put(None)

    def run(i):
        c = Client(targets[i % len(targets)], body, headers, a.timeout, window)
        while True:
            due = due_times.get()
            if due is None:
                break
            if time.perf_counter() >= stop_at:
                c.part.not_sent += 1  # due before the end, never sent: the server could not keep up
                continue
            c.request(due)
        c.close()
        tally.merge(c.part)

    return [threading.Thread(target=schedule, daemon=True)] + \
           [threading.Thread(target=run, args=(i,), daemon=True) for i in range(a.max_outstanding)]


def percentile(sorted_values, q):
    """Nearest-rank percentile of an ascending list, None when empty."""
    if not sorted_values:
        return None
    k = max(0, min(len(sorted_values) - 1, int(-(-q * len(sorted_values) // 100)) - 1))
    return sorted_values[k]


def run_load(a, targets, body, headers, use_binary):
    tally, budget = Tally(), Budget(a.max_requests)
    start = time.perf_counter()
    window = (start + a.warmup, start + a.warmup + a.duration)
    stop_at = window[1]
    cpu0 = os.times()
    make = closed_loop if a.concurrency else open_loop
    threads = make(targets, body, headers, a, tally, window, stop_at, budget)
    for t in threads:
        t.start()
    for t in threads:  # a request started before stop_at ends within --timeout (then it is an error)
        t.join(timeout=max(0.0, stop_at - time.perf_counter()) + a.timeout + 1.0)
    hung = sum(t.is_alive() for t in threads)
    cpu1 = os.times()
    # When --max-requests ended the run early, the window is the time until the last answer.
    measured = max(1e-9, min(window[1], time.perf_counter()) - window[0])
    lat = sorted(tally.latencies)
    ms = lambda v: None if v is None else round(v * 1e3, 3)
    return {
        **a.meta, "model": a.model, "urls": a.url, "mode": "closed" if a.concurrency else "open",
        "concurrency": a.concurrency, "rate": a.rate, "binary": use_binary, "window_s": round(measured, 3),
        "ok": len(lat), "throughput_rps": round(len(lat) / measured, 3),
        "p50_ms": ms(percentile(lat, 50)), "p90_ms": ms(percentile(lat, 90)), "p99_ms": ms(percentile(lat, 99)),
        "mean_ms": ms(sum(lat) / len(lat) if lat else None), "max_ms": ms(lat[-1] if lat else None),
        "statuses": tally.statuses, "status_503": tally.statuses.get("503", 0),
        "errors": tally.errors, "sent": tally.sent, "not_sent": tally.not_sent, "hung_threads": hung,
        "client_cpu_s": round((cpu1.user - cpu0.user) + (cpu1.system - cpu0.system), 3),
        "elapsed_s": round(time.perf_counter() - start, 3),
    }


def probe(a, target, body, headers):
    """One request; its outputs (JSON data) saved as arrays in an .npz under their names."""
    conn = target.connect(a.timeout)
    try:
        status, _, data = send_one(conn, target, body, headers)
    except (OSError, http.client.HTTPException) as e:
        sys.exit(f"serve_load.py: probe of {a.url[0]}: {type(e).__name__}: {e}")
    finally:
        conn.close()
    if status != 200:
        sys.exit(f"serve_load.py: probe of {a.url[0]}: HTTP {status}: {data[:300]!r}")
    outs = {o["name"]: np.asarray(o["data"], dtype=np.float64).reshape(o["shape"]) for o in json.loads(data)["outputs"]}
    np.savez(a.probe, **outs)
    if a.reference:
        diff = 0.0
        for name, y in outs.items():
            path = os.path.join(a.reference, name + ".npy")
            if not os.path.exists(path):
                sys.exit(f"serve_load.py: --reference: {path} does not exist (outputs: {', '.join(outs)})")
            ref = np.load(path)
            if ref.size != y.size:
                sys.exit(f"serve_load.py: output {name}: {y.shape} but the reference is {ref.shape}")
            diff = max(diff, float(np.max(np.abs(y.reshape(-1) - ref.reshape(-1).astype(np.float64)))))
        print(json.dumps({**a.meta, "max_abs_diff": diff}))


def main():
    a = parse_args()
    inputs = read_inputs(a.input)
    body, headers, use_binary = request_body(inputs, a.binary)
    targets = [Target(u, a.model) for u in a.url]
    if a.probe:
        probe(a, targets[0], body, headers)
        return 0
    result = run_load(a, targets, body, headers, use_binary)
    print(json.dumps(result))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
