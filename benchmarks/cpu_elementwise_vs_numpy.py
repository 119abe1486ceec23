"""ns/element of hetnet CPU operators against numpy on 64x1024 and 1024x1024 float32 inputs
(benchmarks/RESULTS.md, "CPU elementwise kernels"). Usage:
  PYTHONPATH=build/python python3 benchmarks/cpu_elementwise_vs_numpy.py [op names to keep]
hetnet: best of 3 workspace.BenchmarkNet means of a one-op net; numpy: best of 3 means of the
same number of calls. HETNET_INTRA_OP_THREADS=1 pins the OpenMP team to one thread."""
import sys, time, numpy as np
from caffe2.python import core, workspace

def np_time(f, iters):
    f(); t = time.perf_counter()
    for _ in range(iters): f()
    return (time.perf_counter() - t) / iters * 1e3

def bench(name, op_type, inputs, np_fn, iters, **kw):
    workspace.ResetWorkspace()
    names = []
    for i, v in enumerate(inputs):
        workspace.FeedBlob("in%d" % i, v); names.append("in%d" % i)
    net = core.Net("b")
    net.Proto().op.extend([core.CreateOperator(op_type, names, ["out"], **kw)])
    workspace.CreateNet(net)
    ms = min(workspace.BenchmarkNet(net.Name(), 3, iters, False)[0] for _ in range(3))
    nms = min(np_time(lambda: np_fn(*inputs), iters) for _ in range(3))
    n = inputs[0].size if inputs[0].size >= inputs[-1].size else inputs[-1].size
    print("%-28s %8d  hetnet %7.3f ns/el  numpy %7.3f ns/el  ratio %6.2f" % (name, n, ms * 1e6 / n, nms * 1e6 / n, ms / nms), flush=True)

rng = np.random.RandomState(0)
only = sys.argv[1:] or None
for shape in [(64, 1024), (1024, 1024)]:
    x = rng.randn(*shape).astype(np.float32)
    xp = (np.abs(x) + 0.1).astype(np.float32)
    y = rng.randn(*shape).astype(np.float32)
    row = rng.randn(shape[1]).astype(np.float32)
    col = rng.randn(shape[0], 1).astype(np.float32)
    it = 200 if x.size < 100000 else 30
    cases = [
        ("Exp", "Exp", [x], np.exp, {}),
        ("Log", "Log", [xp], np.log, {}),
        ("Sqrt", "Sqrt", [xp], np.sqrt, {}),
        ("Abs", "Abs", [x], np.abs, {}),
        ("Negative", "Negative", [x], np.negative, {}),
        ("Sqr", "Sqr", [x], np.square, {}),
        ("Pow e=2.5", "Pow", [xp], lambda a: np.power(a, np.float32(2.5)), {"exponent": 2.5}),
        ("Pow e=2", "Pow", [x], lambda a: np.power(a, np.float32(2)), {"exponent": 2.0}),
        ("Sign", "Sign", [x], np.sign, {}),
        ("Relu", "Relu", [x], lambda a: np.maximum(a, 0), {}),
        ("LeakyRelu", "LeakyRelu", [x], lambda a: np.where(a > 0, a, a * np.float32(0.01)), {}),
        ("Clip", "Clip", [x], lambda a: np.clip(a, -1, 1), {"min": -1.0, "max": 1.0}),
        ("Scale", "Scale", [x], lambda a: a * np.float32(0.5), {"scale": 0.5}),
        ("Add", "Add", [x, y], np.add, {}),
        ("Sub", "Sub", [x, y], np.subtract, {}),
        ("Mul", "Mul", [x, y], np.multiply, {}),
        ("Div", "Div", [x, xp], np.divide, {}),
        ("Add row bcast legacy", "Add", [x, row], np.add, {"broadcast": 1}),
        ("Mul row bcast legacy", "Mul", [x, row], np.multiply, {"broadcast": 1}),
        ("Add col bcast numpy", "Add", [x, col], np.add, {}),
        ("Mul row bcast numpy", "Mul", [x, row.reshape(1, -1)], np.multiply, {}),
        ("Div col bcast numpy", "Div", [x, np.abs(col) + 1], np.divide, {}),
        ("Softmax", "Softmax", [x], lambda a: (lambda e: e / e.sum(1, keepdims=True))(np.exp(a - a.max(1, keepdims=True))), {}),
        ("ReduceSum last", "ReduceSum", [x], lambda a: a.sum(-1), {"axes": [1], "keepdims": 0}),
        ("ReduceMean last", "ReduceMean", [x], lambda a: a.mean(-1), {"axes": [1], "keepdims": 0}),
        ("Sigmoid", "Sigmoid", [x], lambda a: 1 / (1 + np.exp(-a)), {}),
    ]
    for c in cases:
        if only and c[0].split()[0] not in only: continue
        try:
            bench(c[0], c[1], c[2], c[3], it, **c[4])
        except Exception as e:
            print("%-28s error %s" % (c[0], str(e)[:100]))
    if not only or "SpatialBN" in only:
        N, C, H, W = (4, 16, 32, 32) if x.size < 100000 else (8, 64, 32, 64)
        xb = rng.randn(N, C, H, W).astype(np.float32)
        s, b, m = [rng.rand(C).astype(np.float32) + 0.5 for _ in range(3)]
        v = rng.rand(C).astype(np.float32) + 0.5
        def bn(a, s, b, m, v):
            k = s / np.sqrt(v + 1e-5)
            return a * k[:, None, None] + (b - m * k)[:, None, None]
        try:
            bench("SpatialBN test NCHW", "SpatialBN", [xb, s, b, m, v], bn, it, is_test=1, epsilon=1e-5)
        except Exception as e:
            print("SpatialBN error", str(e)[:200])
