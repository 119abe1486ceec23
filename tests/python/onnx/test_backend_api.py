"""hetnet.onnx.backend (and caffe2.python.onnx.backend) as ONNX's Backend API: prepare / run /
run_model / run_node / supports_device, devices and per-node device maps, errors. Expected values
come from numpy or from onnxruntime on the same model."""
import numpy as np
import onnx
import onnx.helper as oh
import onnxruntime
import pytest
from onnx import TensorProto, numpy_helper
from onnx.backend.base import Backend, BackendRep

import hetnet
from hetnet import workspace
from hetnet.onnx import backend
from hetnet.onnx.backend import HetnetBackend
from hetnet.proto import caffe2_pb2

NUM_GPUS = workspace.NumCudaDevices() if workspace.has_gpu_support else 0
needs_gpu = pytest.mark.skipif(NUM_GPUS < 1, reason="no CUDA device here (hetnet CUDA build: %s)"
                               % bool(hetnet._C.has_cuda_support()))
needs_two_gpus = pytest.mark.skipif(NUM_GPUS < 2, reason="needs 2 CUDA devices, %d here" % NUM_GPUS)


def _Mlp(w_value, b_value, ir_version=None, weights_as_inputs=False):
    """y = Relu(x @ W + b) (MatMul, Add, Relu), W and b initializers; nodes named mm, add, relu."""
    nodes = [oh.make_node("MatMul", ["x", "W"], ["h"], name="mm"),
             oh.make_node("Add", ["h", "b"], ["z"], name="add"),
             oh.make_node("Relu", ["z"], ["y"], name="relu")]
    inputs = [oh.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])]
    if weights_as_inputs:  # IR 3 style: initializers are listed as graph inputs too
        inputs += [oh.make_tensor_value_info("W", TensorProto.FLOAT, [4, 3]),
                   oh.make_tensor_value_info("b", TensorProto.FLOAT, [3])]
    graph = oh.make_graph(nodes, "mlp", inputs, [oh.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3])],
                          initializer=[numpy_helper.from_array(w_value, "W"),
                                       numpy_helper.from_array(b_value, "b")])
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", 13)])
    if ir_version is not None:
        model.ir_version = ir_version
    return model


def _Weights(seed):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((4, 3)).astype(np.float32), rng.standard_normal(3).astype(np.float32)


def _NumpyMlp(x, w, b):
    return np.maximum(x @ w + b, 0)


def test_backend_classes():
    assert issubclass(HetnetBackend, Backend)
    rep = backend.prepare(_Mlp(*_Weights(0)))
    assert isinstance(rep, BackendRep)
    assert rep.input_names == ["x"] and rep.output_names == ["y"]
    assert [op.type for op in rep.predict_net.op]  # the imported NetDef is visible, as in Caffe2
    assert {"W", "b"} <= {o for op in rep.init_net.op for o in op.output}


def test_prepare_run_list_dict_and_names():
    w, b = _Weights(1)
    x = np.random.default_rng(2).standard_normal((5, 4)).astype(np.float32)
    rep = HetnetBackend.prepare(_Mlp(w, b), device="CPU")
    expected = _NumpyMlp(x, w, b)
    for outputs in (rep.run([x]), rep.run((x,)), rep.run({"x": x}), rep.run(x)):
        assert len(outputs) == 1
        np.testing.assert_allclose(outputs[0], expected, rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(outputs["y"], outputs[0])
    # Runs again with another batch size: nothing is fixed at prepare.
    x2 = x[:2]
    np.testing.assert_allclose(rep.run([x2])[0], _NumpyMlp(x2, w, b), rtol=1e-5, atol=1e-6)


def test_run_matches_onnxruntime():
    rng = np.random.default_rng(3)
    w = rng.standard_normal((6, 3, 3, 3)).astype(np.float32)
    node = oh.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1], strides=[2, 2])
    graph = oh.make_graph([node, oh.make_node("Relu", ["y"], ["r"])], "conv",
                          [oh.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 9, 9])],
                          [oh.make_tensor_value_info("r", TensorProto.FLOAT, None)],
                          initializer=[numpy_helper.from_array(w, "w")])
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", 13)])
    model.ir_version = 8  # onnxruntime 1.30 reads IR <= 13; onnx 1.23 writes 14
    x = rng.standard_normal((2, 3, 9, 9)).astype(np.float32)
    ours = backend.run_model(model, [x])[0]
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(ours, session.run(None, {"x": x})[0], rtol=1e-4, atol=1e-5)


def test_run_model_bytes_and_path(tmp_path):
    w, b = _Weights(4)
    model = _Mlp(w, b)
    x = np.ones((1, 4), np.float32)
    expected = _NumpyMlp(x, w, b)
    np.testing.assert_allclose(backend.run_model(model.SerializeToString(), [x])[0], expected, rtol=1e-5)
    # A file with its weights in an external-data file next to it (the model's directory is base_dir).
    path = tmp_path / "mlp.onnx"
    onnx.save_model(model, str(path), save_as_external_data=True, all_tensors_to_one_file=True,
                    location="weights.bin", size_threshold=0)
    assert (tmp_path / "weights.bin").exists()
    np.testing.assert_allclose(backend.run_model(str(path), [x])[0], expected, rtol=1e-5)


def test_weights_listed_as_inputs_ir3():
    w, b = _Weights(5)
    rep = backend.prepare(_Mlp(w, b, ir_version=3, weights_as_inputs=True))
    x = np.full((2, 4), 0.5, np.float32)
    assert rep.input_names == ["x"]
    np.testing.assert_allclose(rep.run([x])[0], _NumpyMlp(x, w, b), rtol=1e-5)
    # All graph inputs given: the weights are replaced for that run only.
    w2, b2 = _Weights(6)
    np.testing.assert_allclose(rep.run([x, w2, b2])[0], _NumpyMlp(x, w2, b2), rtol=1e-5)
    np.testing.assert_allclose(rep.run([x])[0], _NumpyMlp(x, w, b), rtol=1e-5)


def test_reps_own_their_workspaces():
    """Two models with the same blob names and different weights, run interleaved."""
    (w1, b1), (w2, b2) = _Weights(7), _Weights(8)
    rep1, rep2 = backend.prepare(_Mlp(w1, b1)), backend.prepare(_Mlp(w2, b2))
    x = np.random.default_rng(9).standard_normal((3, 4)).astype(np.float32)
    for _ in range(2):
        np.testing.assert_allclose(rep1.run([x])[0], _NumpyMlp(x, w1, b1), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(rep2.run([x])[0], _NumpyMlp(x, w2, b2), rtol=1e-5, atol=1e-6)
    assert "W" not in workspace.Blobs()  # nothing leaked into the current workspace


def test_run_errors():
    rep = backend.prepare(_Mlp(*_Weights(10)))
    with pytest.raises(ValueError, match="2 inputs given"):
        rep.run([np.ones((1, 4), np.float32), np.ones((1, 4), np.float32)])
    with pytest.raises(ValueError, match="not graph inputs"):
        rep.run({"nope": np.ones((1, 4), np.float32)})
    with pytest.raises(hetnet.HetnetError):  # wrong inner dimension for MatMul
        rep.run([np.ones((1, 5), np.float32)])


def test_run_node():
    rng = np.random.default_rng(11)
    a, b = rng.standard_normal((2, 3)).astype(np.float32), rng.standard_normal((2, 3)).astype(np.float32)
    out = backend.run_node(oh.make_node("Add", ["a", "b"], ["c"]), [a, b])
    np.testing.assert_allclose(out["c"], a + b, rtol=1e-6)
    np.testing.assert_allclose(out[0], a + b, rtol=1e-6)
    out = HetnetBackend.run_node(oh.make_node("Relu", ["a"], ["r"]), {"a": a},
                                 outputs_info=[(np.float32, (2, 3))], opset_version=6)
    np.testing.assert_array_equal(out["r"], np.maximum(a, 0))
    with pytest.raises(ValueError, match="takes 2 inputs"):
        backend.run_node(oh.make_node("Add", ["a", "b"], ["c"]), [a])


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.int8, np.uint8,
                                   np.int16, np.uint16, np.float16, np.bool_])
def test_inputs_fed_with_their_dtype(dtype):
    x = (np.arange(6).reshape(2, 3) % 3).astype(dtype)
    y = backend.run_node(oh.make_node("Identity", ["x"], ["y"]), [x])[0]
    assert y.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(y, x)


def test_supports_device():
    assert backend.supports_device("CPU")
    assert HetnetBackend.supports_device("CUDA") == (NUM_GPUS >= 1)
    assert HetnetBackend.supports_device("CUDA:0") == (NUM_GPUS >= 1)
    assert HetnetBackend.supports_device("CUDA:1") == (NUM_GPUS >= 2)
    for unknown in ("TPU", "GPU", "CUDA:x", "CPU:1", ""):
        assert not HetnetBackend.supports_device(unknown)


def test_device_options():
    assert backend.DeviceOption("CPU").device_type == caffe2_pb2.CPU
    cuda1 = backend.DeviceOption("CUDA:1")
    assert (cuda1.device_type, cuda1.device_id) == (caffe2_pb2.CUDA, 1)
    assert backend.DeviceOption("CUDA").device_id == 0


def test_unknown_and_absent_devices():
    model = _Mlp(*_Weights(12))
    with pytest.raises(ValueError, match="unknown device 'TPU'"):
        backend.prepare(model, device="TPU")
    with pytest.raises(ValueError, match="unknown device 'GPU:0'"):
        backend.prepare(model, node_devices={"relu": "GPU:0"})
    with pytest.raises(hetnet.UnsupportedError, match="CUDA:%d" % (NUM_GPUS + 7)):
        backend.prepare(model, device="CUDA:%d" % (NUM_GPUS + 7))


def test_unsupported_ops_listed_in_one_error():
    nodes = [oh.make_node("Frobnicate", ["x"], ["a"], domain="com.example"),
             oh.make_node("Relu", ["a"], ["b"]),
             oh.make_node("Defrobnicate", ["b"], ["y"], domain="com.example")]
    graph = oh.make_graph(nodes, "bad", [oh.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                          [oh.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", 13), oh.make_opsetid("com.example", 1)])
    with pytest.raises(hetnet.UnsupportedError) as info:
        backend.prepare(model)
    assert "Frobnicate" in str(info.value) and "Defrobnicate" in str(info.value)


def test_node_device_map_in_imported_net():
    """Placement only (nothing runs, so no GPU is needed): the map overrides the model's device."""
    model = _Mlp(*_Weights(13))
    _, predict = HetnetBackend.onnx_graph_to_caffe2_net(model, device="CUDA:0", node_devices={"relu": "CPU"})
    types = {op.output[0]: op.device_option.device_type for op in predict.op}
    assert types["y"] == caffe2_pb2.CPU
    assert types["h"] == caffe2_pb2.CUDA and types["z"] == caffe2_pb2.CUDA
    _, predict = HetnetBackend.onnx_graph_to_caffe2_net(model, device="CPU")
    assert all(op.device_option.device_type == caffe2_pb2.CPU for op in predict.op)


def test_node_device_map_cpu_run():
    w, b = _Weights(14)
    x = np.ones((2, 4), np.float32)
    rep = backend.prepare(_Mlp(w, b), device="CPU", node_devices={"add": "CPU"})
    np.testing.assert_allclose(rep.run([x])[0], _NumpyMlp(x, w, b), rtol=1e-5)


@needs_gpu
@pytest.mark.parametrize("device", ["CUDA", "CUDA:0"])
def test_gpu_run(device):
    w, b = _Weights(15)
    x = np.random.default_rng(16).standard_normal((8, 4)).astype(np.float32)
    np.testing.assert_allclose(backend.run_model(_Mlp(w, b), [x], device=device)[0],
                               _NumpyMlp(x, w, b), rtol=1e-4, atol=1e-5)


@needs_gpu
def test_gpu_mixed_with_cpu_node():
    w, b = _Weights(17)
    x = np.random.default_rng(18).standard_normal((8, 4)).astype(np.float32)
    rep = backend.prepare(_Mlp(w, b), device="CUDA", node_devices={"add": "CPU"})
    np.testing.assert_allclose(rep.run([x])[0], _NumpyMlp(x, w, b), rtol=1e-4, atol=1e-5)


@needs_two_gpus
def test_second_gpu():
    w, b = _Weights(19)
    x = np.ones((3, 4), np.float32)
    rep = backend.prepare(_Mlp(w, b), device="CUDA:1", node_devices={"relu": "CUDA:0"})
    np.testing.assert_allclose(rep.run([x])[0], _NumpyMlp(x, w, b), rtol=1e-4, atol=1e-5)


def test_caffe2_names():
    import caffe2.python.onnx.backend as c2backend
    from caffe2.python.onnx.backend_rep import Caffe2Rep
    assert issubclass(c2backend.Caffe2Backend, Backend)
    assert Caffe2Rep is hetnet.onnx.backend_rep.HetnetBackendRep
    w, b = _Weights(20)
    x = np.full((1, 4), 2.0, np.float32)
    rep = c2backend.prepare(_Mlp(w, b))
    assert isinstance(rep, Caffe2Rep)
    np.testing.assert_allclose(rep.run([x])[0], _NumpyMlp(x, w, b), rtol=1e-5)
    np.testing.assert_allclose(c2backend.run_model(_Mlp(w, b), [x])[0], _NumpyMlp(x, w, b), rtol=1e-5)
    assert c2backend.supports_device("CPU")
    init, predict = c2backend.Caffe2Backend.onnx_graph_to_caffe2_net(_Mlp(w, b))
    assert isinstance(predict, caffe2_pb2.NetDef) and list(predict.external_output) == ["y"]


def test_string_tensors_come_back_as_str():
    """ONNX strings are UTF-8 str (numpy_helper); hetnet fetches bytes: the rep decodes them."""
    graph = oh.make_graph([], "passthrough", [oh.make_tensor_value_info("s", TensorProto.STRING, [3])],
                          [oh.make_tensor_value_info("s", TensorProto.STRING, [3])])
    words = np.array(["a", "é", ""], dtype=object)
    out = backend.run_model(oh.make_model(graph), [words])[0]
    assert out.dtype == object and list(out) == list(words) and all(isinstance(v, str) for v in out)
