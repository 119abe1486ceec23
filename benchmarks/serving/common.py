"""Shared pieces of the serving benchmarks: model repositories (via tests/python/serving/serving_util),
the ONNX twin of the MLP, KServe v2 request bodies, wrk runs and RSS sampling.

Imports only numpy (and onnx inside write_onnx), so the kserve venv can import it too."""
import json
import os
import re
import subprocess
import sys
import time
import urllib.request

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO_ROOT, "tests", "python", "serving"))
import serving_util  # noqa: E402

MLP_SIZES = (784, 512, 512, 10)
SEED = 0


def mlp_config(name, max_batch_size=64, queue_delay_us=None, instances=1):
    """config.pbtxt for the MLP: dynamic batching only when queue_delay_us is not None."""
    text = """name: "%s"
platform: "caffe2_netdef"
max_batch_size: %d
input [ { name: "data" data_type: TYPE_FP32 dims: [ %d ] } ]
output [ { name: "prob" data_type: TYPE_FP32 dims: [ %d ] } ]
instance_group [ { kind: KIND_CPU count: %d } ]
""" % (name, max_batch_size, MLP_SIZES[0], MLP_SIZES[-1], instances)
    if queue_delay_us is not None:
        text += "dynamic_batching { max_queue_delay_microseconds: %d }\n" % queue_delay_us
    return text


def write_mlp_repo(repo, name="mlp", queue_delay_us=None, instances=1):
    """A repository holding one MLP 784-512-512-10 model (weights from serving_util, seed 0)."""
    return serving_util.write_mlp_model(repo, name, sizes=MLP_SIZES, seed=SEED,
                                        config=mlp_config(name, queue_delay_us=queue_delay_us, instances=instances))


# ---- LeNet (Conv/MaxPool/FC), the network of python/examples/train_fashion_mnist.py --arch lenet ----
LENET_INPUT = (1, 28, 28)


def lenet_weights(seed=SEED):
    rng = np.random.RandomState(seed)

    def init(shape, fan_in):
        return (rng.randn(*shape) / np.sqrt(fan_in)).astype(np.float32)
    return {
        "conv1_w": init((20, 1, 5, 5), 25), "conv1_b": (rng.randn(20) * 0.1).astype(np.float32),
        "conv2_w": init((50, 20, 5, 5), 500), "conv2_b": (rng.randn(50) * 0.1).astype(np.float32),
        "fc3_w": init((500, 800), 800), "fc3_b": (rng.randn(500) * 0.1).astype(np.float32),
        "pred_w": init((10, 500), 500), "pred_b": (rng.randn(10) * 0.1).astype(np.float32),
    }


def lenet_config(name, max_batch_size=64, queue_delay_us=None, instances=1):
    text = """name: "%s"
platform: "caffe2_netdef"
max_batch_size: %d
input [ { name: "data" data_type: TYPE_FP32 dims: [ 1, 28, 28 ] } ]
output [ { name: "prob" data_type: TYPE_FP32 dims: [ 10 ] } ]
instance_group [ { kind: KIND_CPU count: %d } ]
""" % (name, max_batch_size, instances)
    if queue_delay_us is not None:
        text += "dynamic_batching { max_queue_delay_microseconds: %d }\n" % queue_delay_us
    return text


def write_lenet_repo(repo, name="lenet", queue_delay_us=None, instances=1):
    """Conv(1->20, 5x5)/MaxPool 2/Conv(20->50, 5x5)/MaxPool 2/FC 800->500/Relu/FC 500->10/Softmax, NCHW."""
    op, net = serving_util._op, serving_util._net
    w = lenet_weights()
    init = net(name + "_init", [op("GivenTensorFill", [], [k], shape=list(v.shape), values=v.ravel().tolist())
                                for k, v in w.items()], [], list(w))
    ops = [op("Conv", ["data", "conv1_w", "conv1_b"], ["conv1"], kernel=5),
           op("MaxPool", ["conv1"], ["pool1"], kernel=2, stride=2),
           op("Conv", ["pool1", "conv2_w", "conv2_b"], ["conv2"], kernel=5),
           op("MaxPool", ["conv2"], ["pool2"], kernel=2, stride=2),
           op("FC", ["pool2", "fc3_w", "fc3_b"], ["fc3"]),
           op("Relu", ["fc3"], ["relu3"]),
           op("FC", ["relu3", "pred_w", "pred_b"], ["pred"]),
           op("Softmax", ["pred"], ["prob"])]
    predict = net(name, ops, ["data"] + list(w), ["prob"])
    serving_util.write_model(repo, name, predict, init,
                             lenet_config(name, queue_delay_us=queue_delay_us, instances=instances))
    return w


def write_lenet_onnx(path):
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    w = lenet_weights()
    inits = [numpy_helper.from_array(v, k) for k, v in w.items()]
    nodes = [helper.make_node("Conv", ["data", "conv1_w", "conv1_b"], ["conv1"], kernel_shape=[5, 5]),
             helper.make_node("MaxPool", ["conv1"], ["pool1"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Conv", ["pool1", "conv2_w", "conv2_b"], ["conv2"], kernel_shape=[5, 5]),
             helper.make_node("MaxPool", ["conv2"], ["pool2"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Flatten", ["pool2"], ["flat"], axis=1),
             helper.make_node("Gemm", ["flat", "fc3_w", "fc3_b"], ["fc3"], transB=1),
             helper.make_node("Relu", ["fc3"], ["relu3"]),
             helper.make_node("Gemm", ["relu3", "pred_w", "pred_b"], ["pred"], transB=1),
             helper.make_node("Softmax", ["pred"], ["prob"], axis=1)]
    graph = helper.make_graph(
        nodes, "lenet", [helper.make_tensor_value_info("data", TensorProto.FLOAT, ["batch", 1, 28, 28])],
        [helper.make_tensor_value_info("prob", TensorProto.FLOAT, ["batch", 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)


class ModelSpec:
    """What the benchmarks need to know about one benchmarked model."""

    def __init__(self, name, write_repo, write_onnx_file, input_shape, reference=None):
        self.name, self.write_repo, self.write_onnx_file = name, write_repo, write_onnx_file
        self.input_shape, self.reference = input_shape, reference

    def sample_input(self, seed=1):
        return np.random.RandomState(seed).rand(1, *self.input_shape).astype(np.float32)


MODELS = {
    "mlp": ModelSpec("mlp", lambda repo, **kw: write_mlp_repo(repo, "mlp", **kw),
                     lambda path: write_onnx(path, serving_util.mlp_weights(MLP_SIZES, SEED)), (MLP_SIZES[0],),
                     lambda x: serving_util.mlp_reference(x, serving_util.mlp_weights(MLP_SIZES, SEED))),
    "lenet": ModelSpec("lenet", lambda repo, **kw: write_lenet_repo(repo, "lenet", **kw), write_lenet_onnx,
                       LENET_INPUT),
}


def write_onnx(path, weights):
    """The same MLP as ONNX: Gemm(transB) + Relu ... Gemm + Softmax(axis=1), dynamic batch."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    nodes, inits = [], []
    x = "data"
    for i, (w, b) in enumerate(weights):
        inits.append(numpy_helper.from_array(np.asarray(w, np.float32), "fc%d_w" % i))
        inits.append(numpy_helper.from_array(np.asarray(b, np.float32), "fc%d_b" % i))
        nodes.append(helper.make_node("Gemm", [x, "fc%d_w" % i, "fc%d_b" % i], ["fc%d" % i], transB=1))
        x = "fc%d" % i
        if i < len(weights) - 1:
            nodes.append(helper.make_node("Relu", [x], ["relu%d" % i]))
            x = "relu%d" % i
    nodes.append(helper.make_node("Softmax", [x], ["prob"], axis=1))
    graph = helper.make_graph(
        nodes, "mlp",
        [helper.make_tensor_value_info("data", TensorProto.FLOAT, ["batch", weights[0][0].shape[1]])],
        [helper.make_tensor_value_info("prob", TensorProto.FLOAT, ["batch", weights[-1][0].shape[0]])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)


def sample_input(seed=1):
    return np.random.RandomState(seed).rand(1, MLP_SIZES[0]).astype(np.float32)


def binary_body(x, input_name="data", output_name="prob"):
    """(body bytes, JSON header length): binary input, binary output requested."""
    header = json.dumps({
        "inputs": [{"name": input_name, "shape": list(x.shape), "datatype": "FP32",
                    "parameters": {"binary_data_size": int(x.nbytes)}}],
        "outputs": [{"name": output_name, "parameters": {"binary_data": True}}],
    }, separators=(",", ":")).encode()
    return header + x.tobytes(), len(header)


def json_body(x, input_name="data", output_name="prob"):
    return json.dumps({
        "inputs": [{"name": input_name, "shape": list(x.shape), "datatype": "FP32",
                    "data": [float(v) for v in x.ravel()]}],
        "outputs": [{"name": output_name}],
    }, separators=(",", ":")).encode()


def parse_infer_response(body, header_len):
    """The first output of a KServe v2 response (binary or JSON) as float32."""
    if header_len is None:
        out = json.loads(body)["outputs"][0]
        return np.asarray(out["data"], np.float32).reshape(out["shape"])
    out = json.loads(body[:header_len])["outputs"][0]
    if "data" in out:
        return np.asarray(out["data"], np.float32).reshape(out["shape"])
    return np.frombuffer(body[header_len:], np.float32).reshape(out["shape"])


def infer_once(url, body, header_len=None, timeout=10):
    headers = {"Content-Type": "application/json"}
    if header_len is not None:
        headers = {"Content-Type": "application/octet-stream", "Inference-Header-Content-Length": str(header_len)}
    req = urllib.request.Request(url, data=body, headers=headers)
    with urllib.request.urlopen(req, timeout=timeout) as r:
        data = r.read()
        h = r.headers.get("Inference-Header-Content-Length")
        return parse_infer_response(data, int(h) if h is not None else None)


def wait_http(url, timeout=60, proc=None):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError("server exited with %s" % proc.returncode)
        try:
            with urllib.request.urlopen(url, timeout=1) as r:
                if r.status == 200:
                    return
        except Exception:
            time.sleep(0.1)
    raise RuntimeError("%s not ready in %ss" % (url, timeout))


def run_wrk(url, body_file, header_len, connections, seconds, threads=1, timeout_s=5):
    """One wrk run (keep-alive HTTP/1.1, `connections` closed-loop clients); returns the WRK_JSON dict."""
    lua = os.path.join(HERE, "wrk_infer.lua")
    cmd = ["wrk", "-t%d" % min(threads, connections), "-c%d" % connections, "-d%ds" % seconds,
           "--timeout", "%ds" % timeout_s, "-s", lua, url, "--", body_file,
           "json" if header_len is None else str(header_len)]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 60)
    m = re.search(r"WRK_JSON (\{.*\})", out.stdout)
    if not m:
        raise RuntimeError("wrk failed: %s\n%s" % (out.stdout, out.stderr))
    r = json.loads(m.group(1))
    r["rps"] = r["requests"] / (r["duration_us"] / 1e6)
    r["errors"] = r["err_connect"] + r["err_read"] + r["err_write"] + r["err_status"] + r["err_timeout"]
    r["connections"] = connections
    return r


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS for pid %d" % pid)


def cpu_seconds(pid):
    """utime + stime of a process (and its reaped children) in seconds."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / tick
