"""Tensors through system shared memory against the same tensors in the message, on `hetnet serve`.

    PYTHONPATH=build/python python3 benchmarks/serving/shm_vs_binary.py [--sizes-kib 64,1024,16384] \
        [--rounds 7] [--requests 20]

The model copies an FP32 input of N elements to its output (Copy), so the time is the transport's:
the request's input and the response's output each cross once. Per size and protocol, one client
(tritonclient, HTTP and gRPC) sends requests one after another, three ways, interleaved in rounds:
- binary: the input in the message (HTTP's binary tensor extension, gRPC's raw_input_contents) and
  the output back in the response;
- shm: input and output in registered system shared memory regions (the message holds only names),
  counting the client's copy of the input into the region and of the output out of it.
The median of each round's median is printed, with the ratio binary / shm. Loopback, one host.
"""
import argparse
import os
import statistics
import sys
import tempfile
import time
import uuid

import numpy as np
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
import tritonclient.utils.shared_memory as shm

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "python", "serving"))
import serving_util as su  # noqa: E402

CONFIG = """
name: "copy"
platform: "caffe2_netdef"
max_batch_size: 0
input [ { name: "x" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "y" data_type: TYPE_FP32 dims: [ -1 ] } ]
"""


def write_repo(root):
    repo = os.path.join(root, "repo")
    os.makedirs(repo)
    net = su._net("copy", [su._op("Copy", ["x"], ["y"])], ["x"], ["y"])
    su.write_model(repo, "copy", net, None, CONFIG)
    return repo


def timed(fn, n):
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes-kib", default="64,1024,16384")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--requests", type=int, default=20, help="requests per way per round")
    args = ap.parse_args()
    root = tempfile.mkdtemp(prefix="hetnet-shm-bench-")
    with su.ServerProcess(write_repo(root), ["--allow-client-shm"]) as server:
        print("hetnet serve, %s, %d cores" % (time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), os.cpu_count()))
        print("| protocol | tensor | binary ms | shm ms | binary / shm |")
        print("|---|---:|---:|---:|---:|")
        for kib in (int(s) for s in args.sizes_kib.split(",")):
            n = kib * 256
            nbytes = n * 4
            x = np.random.RandomState(0).rand(n).astype(np.float32)
            key = "/hetnet_bench_" + uuid.uuid4().hex
            handle = shm.create_shared_memory_region("bench", key, 2 * nbytes)
            try:
                shm.set_shared_memory_region(handle, [x])
                for proto, mod, url in (("http", httpclient, server.http_url), ("grpc", grpcclient, server.grpc_url)):
                    client = mod.InferenceServerClient(url) if proto == "grpc" else \
                        mod.InferenceServerClient(url, connection_timeout=120, network_timeout=120)
                    client.register_system_shared_memory("bench", key, 2 * nbytes)
                    inline_in = mod.InferInput("x", [n], "FP32")
                    if proto == "http":
                        inline_in.set_data_from_numpy(x, binary_data=True)
                        inline_out = [mod.InferRequestedOutput("y", binary_data=True)]
                    else:
                        inline_in.set_data_from_numpy(x)
                        inline_out = [mod.InferRequestedOutput("y")]
                    shm_in = mod.InferInput("x", [n], "FP32")
                    shm_in.set_shared_memory("bench", nbytes)
                    shm_out = mod.InferRequestedOutput("y")
                    shm_out.set_shared_memory("bench", nbytes, offset=nbytes)

                    def binary():
                        r = client.infer("copy", [inline_in], outputs=inline_out)
                        assert r.as_numpy("y").shape == (n,)

                    def shared():  # the client's own copies in and out count too
                        shm.set_shared_memory_region(handle, [x])
                        client.infer("copy", [shm_in], outputs=[shm_out])
                        y = shm.get_contents_as_numpy(handle, np.float32, [n], offset=nbytes).copy()
                        assert y.shape == (n,)

                    binary(), shared()  # warm-up; then check the output landed
                    np.testing.assert_array_equal(shm.get_contents_as_numpy(handle, np.float32, [n], offset=nbytes), x)
                    rounds = {"binary": [], "shm": []}
                    for r in range(args.rounds):
                        order = [("binary", binary), ("shm", shared)]
                        for label, fn in (order if r % 2 == 0 else order[::-1]):
                            rounds[label].append(timed(fn, args.requests))
                    b, s = (1e3 * statistics.median(rounds[k]) for k in ("binary", "shm"))
                    print("| %s | %d KiB | %.3f | %.3f | %.2f |" % (proto, kib, b, s, b / s), flush=True)
                    client.unregister_system_shared_memory()
            finally:
                shm.destroy_shared_memory_region(handle)
        assert server.stop() == 0


if __name__ == "__main__":
    main()
