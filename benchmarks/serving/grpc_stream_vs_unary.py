"""gRPC requests per second on one client: unary calls one after another, unary calls kept N in
flight (async_infer), and one ModelStreamInfer stream with every request sent at once.

    PYTHONPATH=build/python python3 benchmarks/serving/grpc_stream_vs_unary.py [--requests 3000] [--inflight 16]

Model: Triton's "simple" (INT32 [16] add/sub). Client: tritonclient.grpc, one process, loopback.
"""
import argparse
import os
import queue
import sys
import tempfile
import threading
import time

import numpy as np
import tritonclient.grpc as grpcclient

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "python", "serving"))
import serving_util as su  # noqa: E402


def inputs():
    a = np.arange(16, dtype=np.int32).reshape(1, 16)
    i0, i1 = grpcclient.InferInput("INPUT0", [1, 16], "INT32"), grpcclient.InferInput("INPUT1", [1, 16], "INT32")
    i0.set_data_from_numpy(a)
    i1.set_data_from_numpy(a)
    return i0, i1


def sequential(client, n):
    ins = list(inputs())
    t0 = time.perf_counter()
    for _ in range(n):
        client.infer("simple", ins)
    return n / (time.perf_counter() - t0)


def async_unary(client, n, inflight):
    ins = list(inputs())
    slots = threading.Semaphore(inflight)
    done = threading.Event()
    left = [n]
    lock = threading.Lock()

    def callback(result, error):
        assert error is None, error
        slots.release()
        with lock:
            left[0] -= 1
            if left[0] == 0:
                done.set()

    t0 = time.perf_counter()
    for _ in range(n):
        slots.acquire()
        client.async_infer("simple", ins, callback)
    done.wait(120)
    return n / (time.perf_counter() - t0)


def stream(client, n):
    ins = list(inputs())
    answers = queue.Queue()
    client.start_stream(callback=lambda result, error: answers.put(error))
    t0 = time.perf_counter()
    for i in range(n):
        client.async_stream_infer("simple", ins, request_id=str(i))
    for _ in range(n):
        assert answers.get(timeout=120) is None
    rate = n / (time.perf_counter() - t0)
    client.stop_stream()
    return rate


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--requests", type=int, default=3000)
    ap.add_argument("--inflight", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    root = tempfile.mkdtemp(prefix="hetnet-stream-bench-")
    repo = os.path.join(root, "repo")
    os.makedirs(repo)
    su.write_simple_model(repo)
    with su.ServerProcess(repo) as server:
        client = grpcclient.InferenceServerClient(server.grpc_url)
        rates = {"unary, one at a time": [], "unary, %d in flight" % args.inflight: [], "one stream": []}
        for _ in range(args.rounds):  # interleaved rounds
            rates["unary, one at a time"].append(sequential(client, args.requests))
            rates["unary, %d in flight" % args.inflight].append(async_unary(client, args.requests, args.inflight))
            rates["one stream"].append(stream(client, args.requests))
        print("hetnet serve, %s, %d cores, %d requests per round, median of %d rounds" % (
            time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), os.cpu_count(), args.requests, args.rounds))
        print("| client | requests/s |")
        print("|---|---:|")
        for k, v in rates.items():
            print("| %s | %.0f |" % (k, sorted(v)[len(v) // 2]))
        assert server.stop() == 0


if __name__ == "__main__":
    main()
