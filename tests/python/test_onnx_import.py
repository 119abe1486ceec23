"""The ONNX importer's binding (hetnet._C.onnx_import), refusals and entry points: value infos and
options, one error listing every unsupported op, malformed files, short raw_data, external data
inside / outside the model's directory, `hetnet run` and `hetnet inspect` on .onnx files.
Operator numerics: test_onnx_import_ops.py."""
import os
import subprocess

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from onnx_import_util import check, make_model, out, predict_ops, rand, run_hetnet, run_ort  # noqa: E402,F401

import hetnet  # noqa: E402
from hetnet import _C  # noqa: E402
from hetnet.proto import caffe2_pb2  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
HETNET = os.path.join(HERE, "..", "..", "build", "bin", "hetnet")


def test_constants_of_every_type_and_initializer_dtypes():
    values = {
        "f16": np.array([1.5, -2.25], np.float16), "f64": np.array([0.1, -2.0, np.pi, 1e30 / 3], np.float64),
        "i8": np.array([-3, 7], np.int8), "u8": np.array([200, 1], np.uint8), "i16": np.array([-300, 5], np.int16),
        "i32": np.array([1 << 20, -1], np.int32), "i64": np.array([1 << 40, -7], np.int64),
        "bool": np.array([True, False]),
    }
    nodes = [helper.make_node("Constant", [], ["k"], value=numpy_helper.from_array(rand(2, 2), "k")),
             helper.make_node("Identity", ["k"], ["k_out"]),
             helper.make_node("Constant", [], ["kf"], value_float=2.5),
             helper.make_node("Identity", ["kf"], ["kf_out"]),
             helper.make_node("Constant", [], ["ki"], value_ints=[3, 4]),
             helper.make_node("Identity", ["ki"], ["ki_out"])]
    outputs = [out("k_out"), out("kf_out"), out("ki_out", None, TensorProto.INT64)]
    for name, v in values.items():
        nodes.append(helper.make_node("Identity", [name], [name + "_out"]))
        outputs.append(out(name + "_out", None, helper.np_dtype_to_tensor_dtype(v.dtype)))
    model = make_model(nodes, [], outputs, values)
    ours, _ = run_hetnet(model, {})
    ref = run_ort(model, {})
    for k in ref:
        assert ours[k].dtype == ref[k].dtype, k
        np.testing.assert_array_equal(ours[k], ref[k], err_msg=k)


def test_graph_input_that_is_an_initializer_is_a_weight():
    model = make_model([helper.make_node("Add", ["x", "w"], ["y"])], [("x", [2]), ("w", [2])], [out("y")],
                       {"w": np.array([1.0, 2.0], np.float32)})
    ours, info = run_hetnet(model, {"x": np.array([3.0, 4.0], np.float32)})
    assert [i[0] for i in info["inputs"]] == ["x"]
    np.testing.assert_allclose(ours["y"], [4.0, 6.0])


def test_device_option_and_net_name_are_applied():
    model = make_model([helper.make_node("Relu", ["x"], ["y"], name="relu1")], [("x", [2])], [out("y")])
    cuda = caffe2_pb2.DeviceOption(device_type=1, device_id=0).SerializeToString()
    r = _C.onnx_import(model.SerializeToString(), node_devices={"relu1": cuda}, net_name="mine")
    net = caffe2_pb2.NetDef()
    net.ParseFromString(r["predict_net"])
    assert net.name == "mine" and net.op[0].device_option.device_type == 1


# ---- refusals ----


def test_unsupported_ops_listed_in_one_error():
    model = make_model([
        helper.make_node("Bernoulli", ["x"], ["a"]),
        helper.make_node("ImageDecoder", ["a"], ["b"]),
        helper.make_node("Bernoulli", ["b"], ["c"]),
        helper.make_node("Multinomial", ["c"], ["d"]),
        helper.make_node("Relu", ["d"], ["y"]),
    ], [("x", [1, 1, 6, 6])], [out("y")])
    with pytest.raises(hetnet.UnsupportedError) as e:
        _C.onnx_import(model.SerializeToString())
    text = str(e.value)
    assert "3 unsupported operator(s)" in text
    assert text.count("Bernoulli (opset 13)") == 1
    assert "ImageDecoder (opset 13)" in text
    assert "Multinomial (opset 13)" in text
    assert "Relu" not in text


def test_other_domains_refused():
    node = helper.make_node("Foo", ["x"], ["y"], domain="com.example")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13),
                                                    helper.make_opsetid("com.example", 1)])
    with pytest.raises(hetnet.UnsupportedError, match=r"com.example::Foo \(opset 1\)"):
        _C.onnx_import(model.SerializeToString())


def test_malformed_files_refused():
    with pytest.raises(hetnet.InvalidArgumentError):
        _C.onnx_import(b"\xff\xff\xff not a model")
    with pytest.raises(hetnet.InvalidArgumentError, match="empty"):
        _C.onnx_import(b"")
    model = make_model([helper.make_node("Relu", ["x"], ["y"])], [("x", [2])], [out("y")])
    data = model.SerializeToString()
    with pytest.raises(hetnet.InvalidArgumentError):
        _C.onnx_import(data[: len(data) // 2])


def test_short_raw_data_refused():
    w = numpy_helper.from_array(rand(4, 4), "w")
    w.raw_data = w.raw_data[:-4]
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    with pytest.raises(hetnet.InvalidArgumentError, match=r"60 bytes of raw_data.*need 64"):
        _C.onnx_import(model.SerializeToString())
    # absurd dims with no data: refused before allocating anything
    w2 = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[1 << 40, 1 << 20], raw_data=b"")
    graph.initializer[0].CopyFrom(w2)
    with pytest.raises(hetnet.HetnetError):
        _C.onnx_import(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString())


def _external_model(location, offset=0):
    w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[2, 2])
    w.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", str(offset)), ("length", "16")):
        w.external_data.add(key=k, value=v)
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2])], [w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_external_data(tmp_path):
    model_dir = tmp_path / "model"
    model_dir.mkdir()
    w = np.array([[1, 2], [3, 4]], np.float32)
    (model_dir / "weights.bin").write_bytes(b"\0" * 8 + w.tobytes())
    (tmp_path / "outside.bin").write_bytes(w.tobytes())
    x = np.array([[1.0, -1.0]], np.float32)
    ours, _ = run_hetnet(_external_model("weights.bin", 8), {"x": x}, base_dir=str(model_dir))
    np.testing.assert_allclose(ours["y"], x @ w)
    with pytest.raises(hetnet.InvalidArgumentError, match="outside the model's directory"):
        _C.onnx_import(_external_model("../outside.bin").SerializeToString(), base_dir=str(model_dir))
    with pytest.raises(hetnet.InvalidArgumentError, match="relative path"):
        _C.onnx_import(_external_model(str(tmp_path / "outside.bin")).SerializeToString(), base_dir=str(model_dir))
    with pytest.raises(hetnet.InvalidArgumentError, match="exceeds the file"):
        _C.onnx_import(_external_model("weights.bin", 16).SerializeToString(), base_dir=str(model_dir))
    with pytest.raises(hetnet.InvalidArgumentError, match="no base directory"):
        _C.onnx_import(_external_model("weights.bin", 8).SerializeToString())


# ---- the command line ----

def _cli(*args):
    return subprocess.run([HETNET, *args], capture_output=True, text=True, timeout=60)


@pytest.mark.skipif(not os.path.exists(HETNET), reason="build/bin/hetnet not built")


def test_cli_run_and_inspect_onnx(tmp_path):
    model = make_model([
        helper.make_node("Gemm", ["x", "w", "b"], ["h"], transB=1),
        helper.make_node("Softmax", ["h"], ["y"]),
    ], [("x", ["N", 4])], [out("y", ["N", 3])], {"w": rand(3, 4), "b": rand(3)})
    path = tmp_path / "mlp.onnx"
    path.write_bytes(model.SerializeToString())
    x = rand(2, 4)
    np.save(tmp_path / "x.npy", x)
    r = _cli("run", str(path), "--input", "x=%s" % (tmp_path / "x.npy"), "--output",
             "y=%s" % (tmp_path / "y.npy"), "--soft-placement")
    assert r.returncode == 0, r.stderr
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), run_ort(model, {"x": x})["y"], rtol=1e-5, atol=1e-5)

    r = _cli("inspect", str(path), "--placement", "--memory", "--shape", "x=2,4")
    assert r.returncode == 0, r.stderr
    assert "FC" in r.stdout and "Softmax" in r.stdout and "external inputs: x, w, b" in r.stdout

    r = _cli("run", str(path), "--init", "other.pb")
    assert r.returncode == 2 and "--init is not used with an ONNX model" in r.stderr

    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not an onnx model at all")
    r = _cli("run", str(bad), "--input", "x=%s" % (tmp_path / "x.npy"))
    assert r.returncode == 1 and "ONNX" in r.stderr





def test_refusals_name_the_reason():
    model = make_model([
        helper.make_node("TopK", ["i", "k"], ["p", "pi"]),  # a float16 input
        helper.make_node("Bernoulli", ["x"], ["sl"]),  # no converter
        helper.make_node("ArgMax", ["u"], ["am"], select_last_index=1),  # u's shape is not declared
        helper.make_node("Cast", ["x"], ["mm"], to=TensorProto.FLOAT6E2M3),  # a type hetnet lacks
    ], [("x", [2, 3]), ("s", [1])], [out("p"), out("sl"), out("am"),
                                                                              out("mm")],
        {"e": np.array([5], np.int64), "a": np.array([0], np.int64), "st": np.array([2], np.int64),
         "k": np.array([1], np.int64)})
    model.graph.input.append(helper.make_tensor_value_info("i", TensorProto.FLOAT16, [2, 3]))
    model.graph.input.append(helper.make_tensor_value_info("u", TensorProto.FLOAT, None))
    with pytest.raises(hetnet.UnsupportedError) as e:
        _C.onnx_import(model.SerializeToString())
    text = str(e.value)
    assert "TopK (opset 13): only float32/64 and integer inputs are supported" in text
    assert "Bernoulli (opset 13)" in text
    assert "ArgMax (opset 13): select_last_index=1 needs the length of the axis" in text
    assert "Cast (opset 13): cast to FLOAT6E2M3 is not supported" in text


@pytest.mark.skipif(not os.path.exists(HETNET), reason="build/bin/hetnet not built")


def test_cli_inspect_onnx_declared_shapes_and_offline_gpu_plan(tmp_path):
    model = make_model([helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
                        helper.make_node("Relu", ["c"], ["y"])],
                       [("x", [2, 3, 8, 8])], [out("y", [2, 4, 8, 8])], {"w": rand(4, 3, 3, 3)})
    path = tmp_path / "conv.onnx"
    path.write_bytes(model.SerializeToString())
    r = _cli("inspect", str(path), "--memory")  # input shapes from the model, no --shape needed
    assert r.returncode == 0, r.stderr
    assert "x: float32[2, 3, 8, 8]" in r.stdout and "y: float32[2, 4, 8, 8]" in r.stdout
    r = _cli("inspect", str(path), "--devices", "cpu,cuda:0", "--device", "cuda:0")
    assert r.returncode == 0, r.stderr
    assert "CopyCPUToGPU" in r.stdout and "cpu -> cuda:0" in r.stdout
    r = _cli("inspect", str(path), "--device", "tpu")
    assert r.returncode == 2 and "expected cpu, cuda or cuda:N" in r.stderr


def test_opsets_newer_than_the_importer_knows_are_refused():
    model = make_model([helper.make_node("Relu", ["x"], ["y"])], [("x", [2])], [out("y", [2])])
    model.opset_import[0].version = 29
    with pytest.raises(hetnet.UnsupportedError, match=r"Relu \(opset 29\): newer than the newest opset"):
        _C.onnx_import(model.SerializeToString())
