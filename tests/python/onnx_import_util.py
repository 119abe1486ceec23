"""Helpers shared by test_onnx_import.py and test_onnx_import_ops.py: models built with onnx.helper,
run through hetnet's importer and Predictor and through onnxruntime (CPU), compared within 1e-5."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from hetnet import _C  # noqa: E402
from hetnet._predictor import Predictor  # noqa: E402
from hetnet.proto import caffe2_pb2  # noqa: E402

if not hasattr(_C, "onnx_import"):
    pytest.skip("hetnet built without ONNX", allow_module_level=True)

RNG = np.random.default_rng(1234)


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def make_model(nodes, inputs, outputs, inits=(), opset=13, name="g"):
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
        [helper.make_tensor_value_info(n, t, s) for n, t, s in
         ((o + (TensorProto.FLOAT,))[:2] + (None,) if len(o) == 1 else o for o in outputs)],
        [numpy_helper.from_array(v, k) for k, v in dict(inits).items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8 if opset <= 17 else 10
    if all(o.type.tensor_type.HasField("shape") for o in model.graph.output):
        onnx.checker.check_model(model)
    return model


def out(name, shape=None, dtype=TensorProto.FLOAT):
    return (name, dtype, shape)


def run_hetnet(model, feeds, **kwargs):
    r = _C.onnx_import(model.SerializeToString(), **kwargs)
    pred = Predictor(r["init_net"], r["predict_net"])
    results = pred.run(feeds)
    return dict(zip(pred.output_names, results)), r


def run_ort(model, feeds):
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, feeds)))


def check(model, feeds, atol=1e-5):
    ours, info = run_hetnet(model, feeds)
    ref = run_ort(model, feeds)
    assert set(ours) == set(ref)
    for k in ref:
        assert ours[k].shape == ref[k].shape, k
        assert ours[k].dtype == ref[k].dtype, k
        np.testing.assert_allclose(ours[k], ref[k], rtol=1e-5, atol=atol, err_msg=k)
    return info


def predict_ops(info):
    net = caffe2_pb2.NetDef()
    net.ParseFromString(info["predict_net"])
    return [op.type for op in net.op]
