"""ai.onnx.preview.training Adagrad, Momentum (standard, nesterov) and Adam: the first update (T = 0,
no bias correction, beta taken as 1) and a later one (T = 3), float32 and float64, one and two
tensors, against onnx's reference evaluator; refusals name the node and blob."""
import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import hetnet.onnx.backend as backend

STATES = {"Adagrad": ["H"], "Momentum": ["V"], "Adam": ["V", "H"]}
ATTRS = {"Adagrad": dict(decay_factor=0.1, epsilon=1e-5, norm_coefficient=0.001),
         "Momentum": dict(alpha=0.9, beta=0.5, mode="standard", norm_coefficient=0.01),
         "Nesterov": dict(alpha=0.9, beta=0.5, mode="nesterov", norm_coefficient=0.01),
         "Adam": dict(alpha=0.9, beta=0.99, epsilon=1e-4, norm_coefficient=0.001, norm_coefficient_post=0.01)}


def _model(op, n, np_dtype, attrs):
    dt = TensorProto.FLOAT if np_dtype == np.float32 else TensorProto.DOUBLE
    groups = ["X", "G"] + STATES[op]
    ins = ["R", "T"] + ["%s%d" % (g, i) for g in groups for i in range(n)]
    outs = ["%s%d_new" % (g, i) for g in ["X"] + STATES[op] for i in range(n)]
    node = helper.make_node(op, ins, outs, domain="ai.onnx.preview.training", **attrs)
    vi = helper.make_tensor_value_info
    inputs = [vi("R", dt, []), vi("T", TensorProto.INT64, [])] + [vi(name, dt, [3]) for name in ins[2:]]
    g = helper.make_graph([node], "opt", inputs, [vi(o, dt, [3]) for o in outs])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21),
                                           helper.make_opsetid("ai.onnx.preview.training", 1)])
    return m, ins


@pytest.mark.parametrize("kind", ["Adagrad", "Momentum", "Nesterov", "Adam"])
@pytest.mark.parametrize("t", [0, 3])
@pytest.mark.parametrize("np_dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 2])
def test_against_reference(kind, t, np_dtype, n):
    op = "Momentum" if kind == "Nesterov" else kind
    m, names = _model(op, n, np_dtype, ATTRS[kind])
    rng = np.random.RandomState(t + n)
    feeds = {"R": np.array(0.1, np_dtype), "T": np.array(t, np.int64)}
    for name in names[2:]:
        feeds[name] = (np.abs(rng.randn(3)) if name[0] in "HV" else rng.randn(3)).astype(np_dtype)
    want = ReferenceEvaluator(m).run(None, feeds)
    got = backend.prepare(m).run([feeds[k] for k in names])
    for w, g in zip(want, got):
        assert g.dtype == np_dtype
        np.testing.assert_allclose(g, w, rtol=1e-5 if np_dtype == np.float32 else 1e-12, atol=1e-7)


def test_refusals():
    m, names = _model("Momentum", 1, np.float32, dict(alpha=0.9, beta=0.5, mode="heavy_ball"))
    with pytest.raises(Exception) as e:
        backend.prepare(m).run([np.array(0.1, np.float32), np.array(1, np.int64)] + [np.ones(3, np.float32)] * 3)
    assert "mode 'heavy_ball'" in str(e.value)
    m, names = _model("Adagrad", 1, np.float32, {})
    rep = backend.prepare(m)
    with pytest.raises(Exception) as e:
        rep.run([np.array(0.1, np.float32), np.array(1, np.int64), np.ones(3, np.float32), np.ones(2, np.float32),
                 np.ones(3, np.float32)])
    assert "has shape [2]" in str(e.value) and "OnnxAdagrad" in str(e.value)
