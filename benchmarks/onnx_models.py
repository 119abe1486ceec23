"""ONNX files for the side-by-side benchmarks, built with onnx.helper and random weights (no download):
an MLP, LeNet, ResNet-18 and ResNet-50 (torchvision's layer layout, batch norm in inference form),
and two workloads of issue 16 that are not models: 1,000 tiny ops (per-op overhead) and one Add of
16M floats (memory bandwidth). Every model has one input "data" (batch dimension "N") and one
output "prob"; MAX_BATCH caps the batch of a workload whose size is not per image."""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class GraphBuilder:
    def __init__(self, seed=0):
        self.rng = np.random.RandomState(seed)
        self.nodes, self.inits, self.n = [], [], 0

    def name(self, what):
        self.n += 1
        return "%s_%d" % (what, self.n)

    def weight(self, what, arr):
        n = self.name(what)
        self.inits.append(numpy_helper.from_array(arr.astype(np.float32), n))
        return n

    def op(self, type_, inputs, **attrs):
        out = self.name(type_.lower())
        self.nodes.append(helper.make_node(type_, inputs, [out], **attrs))
        return out

    def conv(self, x, cin, cout, k, stride=1, pad=0, bias=True):
        w = self.weight("w", self.rng.randn(cout, cin, k, k) * np.sqrt(2.0 / (cin * k * k)))
        ins = [x, w] + ([self.weight("b", self.rng.randn(cout) * 0.01)] if bias else [])
        return self.op("Conv", ins, kernel_shape=[k, k], strides=[stride, stride], pads=[pad] * 4)

    def bn(self, x, c):
        scale = self.weight("scale", 1.0 + 0.1 * self.rng.randn(c))
        shift = self.weight("shift", 0.1 * self.rng.randn(c))
        mean = self.weight("mean", 0.1 * self.rng.randn(c))
        var = self.weight("var", 1.0 + 0.1 * self.rng.rand(c))
        return self.op("BatchNormalization", [x, scale, shift, mean, var], epsilon=1e-5)

    def gemm(self, x, cin, cout):
        w = self.weight("fc_w", self.rng.randn(cout, cin) * np.sqrt(2.0 / cin))
        b = self.weight("fc_b", self.rng.randn(cout) * 0.01)
        return self.op("Gemm", [x, w, b], transB=1)

    def model(self, out, input_shape, out_dim, name, opset=17, softmax=True):
        self.nodes.append(helper.make_node("Softmax" if softmax else "Identity", [out], ["prob"],
                                           **({"axis": -1} if softmax else {})))
        graph = helper.make_graph(
            self.nodes, name, [helper.make_tensor_value_info("data", TensorProto.FLOAT, ["N"] + list(input_shape))],
            [helper.make_tensor_value_info("prob", TensorProto.FLOAT, ["N", out_dim])], self.inits)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="hetnet-bench")
        m.ir_version = 8  # the IR version of opset 17; onnx 1.23's default (14) is newer than onnxruntime reads
        onnx.checker.check_model(m)
        return m


def mlp(sizes=(784, 512, 512, 10)):
    g = GraphBuilder(1)
    x = "data"
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        x = g.gemm(x, a, b)
        if i + 2 < len(sizes):
            x = g.op("Relu", [x])
    return g.model(x, [sizes[0]], sizes[-1], "mlp"), [sizes[0]]


def lenet():
    g = GraphBuilder(2)
    x = g.conv("data", 1, 20, 5)
    x = g.op("MaxPool", [x], kernel_shape=[2, 2], strides=[2, 2])
    x = g.conv(x, 20, 50, 5)
    x = g.op("MaxPool", [x], kernel_shape=[2, 2], strides=[2, 2])
    x = g.op("Flatten", [x], axis=1)
    x = g.op("Relu", [g.gemm(x, 800, 500)])
    return g.model(g.gemm(x, 500, 10), [1, 28, 28], 10, "lenet"), [1, 28, 28]


def _basic_block(g, x, cin, cout, stride):
    y = g.op("Relu", [g.bn(g.conv(x, cin, cout, 3, stride, 1, bias=False), cout)])
    y = g.bn(g.conv(y, cout, cout, 3, 1, 1, bias=False), cout)
    if stride != 1 or cin != cout:
        x = g.bn(g.conv(x, cin, cout, 1, stride, 0, bias=False), cout)
    return g.op("Relu", [g.op("Add", [y, x])]), cout


def _bottleneck(g, x, cin, width, stride):
    cout = width * 4
    y = g.op("Relu", [g.bn(g.conv(x, cin, width, 1, 1, 0, bias=False), width)])
    y = g.op("Relu", [g.bn(g.conv(y, width, width, 3, stride, 1, bias=False), width)])
    y = g.bn(g.conv(y, width, cout, 1, 1, 0, bias=False), cout)
    if stride != 1 or cin != cout:
        x = g.bn(g.conv(x, cin, cout, 1, stride, 0, bias=False), cout)
    return g.op("Relu", [g.op("Add", [y, x])]), cout


def resnet(depth):
    blocks = {18: ([2, 2, 2, 2], _basic_block, 1), 50: ([3, 4, 6, 3], _bottleneck, 4)}[depth]
    counts, block, expansion = blocks
    g = GraphBuilder(depth)
    x = g.op("Relu", [g.bn(g.conv("data", 3, 64, 7, 2, 3, bias=False), 64)])
    x = g.op("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    c = 64
    for stage, n in enumerate(counts):
        for i in range(n):
            x, c = block(g, x, c, 64 * 2 ** stage, 2 if (i == 0 and stage > 0) else 1)
    x = g.op("Flatten", [g.op("GlobalAveragePool", [x])], axis=1)
    return g.model(g.gemm(x, 512 * expansion, 1000), [3, 224, 224], 1000, "resnet%d" % depth), [3, 224, 224]


def tiny_ops(count=1000, width=16):
    """count ops on a [N, width] tensor: Add of a constant and Relu in turn (the last is the output's
    Identity): the runtime's cost per operator, not its kernels."""
    g = GraphBuilder(3)
    x = "data"
    for i in range(count - 1):
        x = g.op("Add", [x, g.weight("c", g.rng.randn(width) * 0.01)]) if i % 2 == 0 else g.op("Relu", [x])
    return g.model(x, [width], width, "tiny_ops", softmax=False), [width]


def add16m(n=16 * 1024 * 1024):
    """One Add of two 16M-float tensors (the input and a constant): memory bandwidth."""
    g = GraphBuilder(4)
    x = g.op("Add", ["data", g.weight("c", g.rng.rand(n))])
    return g.model(x, [n], n, "add16m", softmax=False), [n]


MODELS = {"mlp": mlp, "lenet": lenet, "resnet18": lambda: resnet(18), "resnet50": lambda: resnet(50),
          "tiny_ops": tiny_ops, "add16m": add16m}
MAX_BATCH = {"add16m": 1}  # batch 32 of 16M floats would be 2 GiB per tensor
# The batches issue 16 names for each workload (the benchmarks' default --batches).
ISSUE_BATCHES = {"mlp": (1, 64), "lenet": (1, 64), "resnet18": (1, 8), "resnet50": (1, 8), "tiny_ops": (1,),
                 "add16m": (1,)}


def batches(name, wanted):
    """The batches to time `name` at: those in `wanted` ("1,8"; empty for ISSUE_BATCHES) up to MAX_BATCH."""
    chosen = [int(b) for b in wanted.split(",")] if wanted else list(ISSUE_BATCHES.get(name, (1,)))
    return [b for b in chosen if b <= MAX_BATCH.get(name, b)]
