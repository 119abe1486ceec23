"""Helpers for the serving tests: build Triton-style model repositories from Caffe2 NetDefs and start
a real `hetnet serve` process on free loopback ports (the tests talk to it with tritonclient)."""
import os
import signal
import socket
import subprocess
import time
import urllib.request

import numpy as np

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def hetnet_binary():
    path = os.environ.get("HETNET_BIN") or os.path.join(REPO_ROOT, "build", "bin", "hetnet")
    assert os.path.exists(path), "hetnet binary not found at %s (set HETNET_BIN)" % path
    return path


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _op(type_, inputs, outputs, **args):
    from hetnet.proto import caffe2_pb2
    op = caffe2_pb2.OperatorDef()
    op.type = type_
    op.input.extend(inputs)
    op.output.extend(outputs)
    for k, v in args.items():
        a = op.arg.add()
        a.name = k
        if isinstance(v, (list, tuple)):
            if all(isinstance(x, int) for x in v):
                a.ints.extend(v)
            else:
                a.floats.extend(float(x) for x in v)
        elif isinstance(v, int):
            a.i = v
        elif isinstance(v, float):
            a.f = v
        else:
            a.s = v.encode() if isinstance(v, str) else v
    return op


def _net(name, ops, inputs, outputs):
    from hetnet.proto import caffe2_pb2
    net = caffe2_pb2.NetDef()
    net.name = name
    net.op.extend(ops)
    net.external_input.extend(inputs)
    net.external_output.extend(outputs)
    return net


def write_model(repo, name, predict, init=None, config=None, version=1,
                predict_file="model.netdef", init_file="init_model.netdef"):
    """Writes <repo>/<name>/config.pbtxt (when given) and <repo>/<name>/<version>/{model,init_model}.netdef."""
    vdir = os.path.join(str(repo), name, str(version))
    os.makedirs(vdir, exist_ok=True)
    with open(os.path.join(vdir, predict_file), "wb") as f:
        f.write(predict.SerializeToString())
    if init is not None:
        with open(os.path.join(vdir, init_file), "wb") as f:
            f.write(init.SerializeToString())
    if config is not None:
        with open(os.path.join(str(repo), name, "config.pbtxt"), "w") as f:
            f.write(config)
    return os.path.join(str(repo), name)


SIMPLE_CONFIG = """
name: "simple"
platform: "caffe2_netdef"
max_batch_size: 8
input [
  { name: "INPUT0" data_type: TYPE_INT32 dims: [ 16 ] },
  { name: "INPUT1" data_type: TYPE_INT32 dims: [ 16 ] }
]
output [
  { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 16 ] },
  { name: "OUTPUT1" data_type: TYPE_INT32 dims: [ 16 ] }
]
"""


def write_simple_model(repo, name="simple", config=SIMPLE_CONFIG, version=1):
    """Triton's "simple" example as a NetDef: OUTPUT0 = INPUT0 + INPUT1, OUTPUT1 = INPUT0 - INPUT1 (INT32 [16])."""
    predict = _net(name, [_op("Add", ["INPUT0", "INPUT1"], ["OUTPUT0"]),
                          _op("Sub", ["INPUT0", "INPUT1"], ["OUTPUT1"])],
                   ["INPUT0", "INPUT1"], ["OUTPUT0", "OUTPUT1"])
    if config is not None and name != "simple":
        config = config.replace('name: "simple"', 'name: "%s"' % name)
    return write_model(repo, name, predict, None, config, version)


def mlp_weights(sizes=(784, 64, 10), seed=0):
    rng = np.random.RandomState(seed)
    ws = []
    for i in range(len(sizes) - 1):
        w = (rng.randn(sizes[i + 1], sizes[i]) / np.sqrt(sizes[i])).astype(np.float32)
        b = (rng.randn(sizes[i + 1]) * 0.1).astype(np.float32)
        ws.append((w, b))
    return ws


def mlp_reference(x, weights):
    h = x.astype(np.float64)
    for i, (w, b) in enumerate(weights):
        h = h @ w.T.astype(np.float64) + b
        if i < len(weights) - 1:
            h = np.maximum(h, 0)
    e = np.exp(h - h.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def write_mlp_model(repo, name="mlp", sizes=(784, 64, 10), config=None, gpu_ops=False, version=1, seed=0):
    """An FC/Relu/Softmax MLP with its weights in the init net. gpu_ops=True places the FC ops on
    CUDA GPU 0 (the Relu and Softmax stay on CPU), so the runtime inserts copies."""
    from hetnet.proto import caffe2_pb2
    weights = mlp_weights(sizes, seed)
    init_ops, ops = [], []
    x = "data"
    for i, (w, b) in enumerate(weights):
        init_ops.append(_op("GivenTensorFill", [], ["fc%d_w" % i], shape=list(w.shape), values=w.ravel().tolist()))
        init_ops.append(_op("GivenTensorFill", [], ["fc%d_b" % i], shape=list(b.shape), values=b.ravel().tolist()))
        fc = _op("FC", [x, "fc%d_w" % i, "fc%d_b" % i], ["fc%d" % i])
        if gpu_ops:
            fc.device_option.device_type = caffe2_pb2.CUDA
            fc.device_option.device_id = 0
        ops.append(fc)
        x = "fc%d" % i
        if i < len(weights) - 1:
            ops.append(_op("Relu", [x], ["relu%d" % i]))
            x = "relu%d" % i
    ops.append(_op("Softmax", [x], ["prob"]))
    init = _net(name + "_init", init_ops, [], ["fc%d_%s" % (i, s) for i in range(len(weights)) for s in "wb"])
    predict = _net(name, ops, ["data"] + ["fc%d_%s" % (i, s) for i in range(len(weights)) for s in "wb"], ["prob"])
    if config is None:
        config = """
name: "%s"
platform: "caffe2_netdef"
max_batch_size: 64
input [ { name: "data" data_type: TYPE_FP32 dims: [ %d ] } ]
output [ { name: "prob" data_type: TYPE_FP32 dims: [ %d ] } ]
dynamic_batching { max_queue_delay_microseconds: 2000 }
""" % (name, sizes[0], sizes[-1])
    write_model(repo, name, predict, init, config, version)
    return weights


class ServerProcess:
    """A running `hetnet serve`; stop() sends SIGTERM and returns the exit code."""

    def __init__(self, repo, extra_args=(), wait_ready=True, timeout=60):
        # free_port() only finds ports free a moment ago: another test running beside this one
        # (ctest -j) may take one before the server binds it. Then the server exits saying so, and
        # it starts again on other ports (3 tries).
        # wait_ready="bound" (a server whose health endpoints need a token) waits until the ports
        # are bound: the line "; ready" / "; not ready" comes after every bind. False: no wait.
        for attempt in range(3):
            self._start(repo, extra_args)
            if wait_ready is False:
                return
            try:
                if wait_ready == "bound":
                    self.wait_bound(timeout)
                else:
                    self.wait_live(timeout)
                return
            except AssertionError:
                if attempt == 2 or self.proc.poll() is None or "Address already in use" not in self.output():
                    raise
                self.log.close()

    def _start(self, repo, extra_args):
        self.http_port, self.grpc_port, self.metrics_port = free_port(), free_port(), free_port()
        self.args = [hetnet_binary(), "serve", "--model-repository", str(repo),
                     "--http-port", str(self.http_port), "--grpc-port", str(self.grpc_port),
                     "--metrics-port", str(self.metrics_port)] + list(extra_args)
        self.log_path = os.path.join(str(repo), "..", "server-%d.log" % self.http_port)
        self.log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(self.args, stdout=self.log, stderr=subprocess.STDOUT)
        self.http_url = "127.0.0.1:%d" % self.http_port
        self.grpc_url = "127.0.0.1:%d" % self.grpc_port

    def wait_live(self, timeout=60):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError("hetnet serve exited with %s:\n%s" % (self.proc.returncode, self.output()))
            try:
                with urllib.request.urlopen("http://%s/v2/health/live" % self.http_url, timeout=1) as r:
                    if r.status == 200:
                        # gRPC listens too (started after HTTP when both are on).
                        if "--allow-grpc=false" in self.args:
                            return
                        socket.create_connection(("127.0.0.1", self.grpc_port), timeout=1).close()
                        return
            except Exception:
                time.sleep(0.05)
        raise AssertionError("hetnet serve did not become live in %ss:\n%s" % (timeout, self.output()))

    def wait_bound(self, timeout=60):
        deadline = time.time() + timeout
        while time.time() < deadline:
            out = self.output()
            if "; ready" in out or "; not ready" in out:
                return
            if self.proc.poll() is not None:
                raise AssertionError("hetnet serve exited with %s:\n%s" % (self.proc.returncode, out))
            time.sleep(0.05)
        raise AssertionError("hetnet serve did not bind its ports in %ss:\n%s" % (timeout, self.output()))

    def output(self):
        if not self.log.closed:
            self.log.flush()
        with open(self.log_path, "rb") as f:
            return f.read().decode(errors="replace")

    def stop(self, sig=signal.SIGTERM, timeout=30):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise AssertionError("hetnet serve did not exit within %ss of signal %s" % (timeout, sig))
        self.log.close()
        return self.proc.returncode

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if not self.log.closed:
            self.log.close()
