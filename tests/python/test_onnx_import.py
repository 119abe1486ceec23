"""The ONNX importer (onnx/, hetnet._C.onnx_import) and `hetnet run/inspect model.onnx`: models built
with onnx.helper, run through hetnet's Predictor and compared with onnxruntime (CPU) within 1e-5;
refusals (unsupported ops, malformed files, short raw_data, external data outside the model's
directory) raise hetnet's error classes with messages that name the problem."""
import os
import subprocess

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import hetnet  # noqa: E402
from hetnet import _C  # noqa: E402
from hetnet._predictor import Predictor  # noqa: E402
from hetnet.proto import caffe2_pb2  # noqa: E402

if not hasattr(_C, "onnx_import"):
    pytest.skip("hetnet built without ONNX", allow_module_level=True)

HERE = os.path.dirname(os.path.abspath(__file__))
HETNET = os.path.join(HERE, "..", "..", "build", "bin", "hetnet")
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


# ---- numerics against onnxruntime ----

def test_mlp_gemm_variants():
    w1, b1 = rand(8, 4), rand(8)
    w2, b2 = rand(8, 6), rand(6)      # transB=0: folded into FC's [N, K] weight
    w3, c3 = rand(5, 6), rand(1, 5)   # transA=1 input, [1, N] bias scaled by beta
    model = make_model([
        helper.make_node("Gemm", ["x", "w1", "b1"], ["h1"], transB=1),
        helper.make_node("Relu", ["h1"], ["r1"]),
        helper.make_node("Gemm", ["r1", "w2", "b2"], ["h2"], alpha=0.5, beta=2.0),
        helper.make_node("Transpose", ["h2"], ["h2t"], perm=[1, 0]),
        helper.make_node("Gemm", ["h2t", "w3", "c3"], ["h3"], transA=1, transB=1, beta=0.25),
        helper.make_node("Softmax", ["h3"], ["y"], axis=1),
    ], [("x", [3, 4])], [out("y", [3, 5])], {"w1": w1, "b1": b1, "w2": w2, "b2": b2, "w3": w3, "c3": c3},
        opset=11)
    info = check(model, {"x": rand(3, 4)})
    assert predict_ops(info).count("FC") == 3
    assert info["inputs"] == [("x", caffe2_pb2.TensorProto.FLOAT, [3, 4])]
    assert info["outputs"] == [("y", caffe2_pb2.TensorProto.FLOAT, [3, 5])]
    assert info["opsets"] == {"": 11}


def test_gemm_with_runtime_operands_uses_matmul():
    model = make_model([helper.make_node("Gemm", ["a", "b", "c"], ["y"], transA=1, alpha=2.0, beta=0.5)],
                       [("a", [4, 3]), ("b", [4, 5]), ("c", [3, 5])], [out("y", [3, 5])])
    info = check(model, {"a": rand(4, 3), "b": rand(4, 5), "c": rand(3, 5)})
    assert "MatMul" in predict_ops(info) and "FC" not in predict_ops(info)


def test_matmul_2d_and_batched():
    model = make_model([helper.make_node("MatMul", ["a", "w"], ["y"]),
                        helper.make_node("MatMul", ["p", "q"], ["z"])],
                       [("a", [3, 4]), ("p", [2, 3, 4]), ("q", [2, 4, 5])],
                       [out("y", [3, 6]), out("z", [2, 3, 5])], {"w": rand(4, 6)})
    check(model, {"a": rand(3, 4), "p": rand(2, 3, 4), "q": rand(2, 4, 5)})


def test_lenet_like_convnet():
    inits = {"c1w": rand(4, 1, 3, 3) * 0.5, "c1b": rand(4), "c2w": rand(8, 2, 3, 3) * 0.5, "c2b": rand(8),
             "fw": rand(10, 8 * 3 * 2) * 0.2, "fb": rand(10)}
    model = make_model([
        helper.make_node("Conv", ["x", "c1w", "c1b"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "c2w", "c2b"], ["c2"], group=2, dilations=[1, 1], strides=[1, 1],
                         pads=[1, 0, 1, 0]),
        helper.make_node("Tanh", ["c2"], ["r2"]),
        helper.make_node("AveragePool", ["r2"], ["p2"], kernel_shape=[2, 2], strides=[2, 2], pads=[1, 1, 0, 0]),
        helper.make_node("Flatten", ["p2"], ["f"], axis=1),
        helper.make_node("Gemm", ["f", "fw", "fb"], ["logits"], transB=1),
        helper.make_node("LogSoftmax", ["logits"], ["y"], axis=1),
    ], [("x", ["N", 1, 12, 12])], [out("y")], inits, opset=11)
    check(model, {"x": rand(2, 1, 12, 12)})


def test_conv_auto_pad_dilation_no_bias_and_conv_transpose():
    model = make_model([
        helper.make_node("Conv", ["x", "w"], ["a"], auto_pad="SAME_UPPER", strides=[2, 2]),
        helper.make_node("Conv", ["x", "w"], ["b"], auto_pad="VALID", dilations=[2, 2]),
        helper.make_node("ConvTranspose", ["x", "wt", "bt"], ["c"], strides=[2, 2], pads=[1, 1, 1, 1],
                         output_padding=[1, 1]),
    ], [("x", [1, 2, 9, 9])], [out("a"), out("b"), out("c")],
        {"w": rand(3, 2, 3, 3), "wt": rand(2, 3, 3, 3), "bt": rand(3)})
    check(model, {"x": rand(1, 2, 9, 9)})


def test_batchnorm_and_lrn():
    c = 3
    inits = {"s": rand(c), "b": rand(c), "m": rand(c), "v": np.abs(rand(c)) + 0.5}
    model = make_model([
        helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["bn"], epsilon=1e-3),
        helper.make_node("LRN", ["bn"], ["y"], size=3, alpha=1e-3, beta=0.75, bias=2.0),
    ], [("x", [2, c, 4, 5])], [out("y")], inits, opset=15)
    check(model, {"x": rand(2, c, 4, 5)})


def test_pooling_modes():
    model = make_model([
        helper.make_node("MaxPool", ["x"], ["a"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
                         ceil_mode=1),
        helper.make_node("AveragePool", ["x"], ["b"], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
        helper.make_node("AveragePool", ["x"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=1),
        helper.make_node("MaxPool", ["x"], ["d"], kernel_shape=[2, 2], auto_pad="SAME_UPPER", strides=[2, 2]),
        helper.make_node("GlobalAveragePool", ["x"], ["e"]),
        helper.make_node("GlobalMaxPool", ["x"], ["f"]),
    ], [("x", [2, 3, 8, 8])], [out(n) for n in "abcdef"])
    check(model, {"x": rand(2, 3, 8, 8)})


@pytest.mark.parametrize("opset", [11, 13])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_softmax_by_opset(opset, axis):
    attrs = {} if axis is None else {"axis": axis}
    model = make_model([helper.make_node("Softmax", ["x"], ["y"], **attrs),
                        helper.make_node("LogSoftmax", ["x"], ["z"], **attrs)],
                       [("x", [2, 3, 4])], [out("y", [2, 3, 4]), out("z", [2, 3, 4])], opset=opset)
    check(model, {"x": rand(2, 3, 4)})


@pytest.mark.parametrize("opset", [11, 13])
def test_shape_ops(opset):
    inits = {"shape": np.array([0, -1, 2], np.int64)}

    def with_list(op, inp, outs, name, values, **attrs):
        """axes / split: an attribute before opset 13, a constant input from 13 on."""
        if opset < 13:
            return helper.make_node(op, [inp], outs, **{name: values}, **attrs)
        inits[outs[0] + "_" + name] = np.array(values, np.int64)
        return helper.make_node(op, [inp, outs[0] + "_" + name], outs, **attrs)

    model = make_model([
        helper.make_node("Reshape", ["x", "shape"], ["r"]),              # [2, 6, 2]
        helper.make_node("Transpose", ["r"], ["t"], perm=[0, 2, 1]),     # [2, 2, 6]
        helper.make_node("Flatten", ["t"], ["f"], axis=-1),              # [4, 6]
        helper.make_node("Concat", ["x", "x"], ["c"], axis=-1),          # [2, 3, 8]
        with_list("Split", "c", ["c1", "c2", "c3"], "split", [2, 2, 4], axis=2),
        with_list("Squeeze", "y1", ["s"], "axes", [1]),                  # [2, 5]
        with_list("Unsqueeze", "s", ["u"], "axes", [0, -1]),             # [1, 2, 5, 1]
        helper.make_node("Transpose", ["u"], ["ut"]),                    # reversed dims
    ], [("x", [2, 3, 4]), ("y1", [2, 1, 5])],
        [out(n) for n in ["r", "f", "c1", "c2", "c3", "u", "ut"]], inits, opset=opset)
    check(model, {"x": rand(2, 3, 4), "y1": rand(2, 1, 5)})


def test_elementwise_and_activations():
    model = make_model([
        helper.make_node("Add", ["a", "b"], ["add"]),
        helper.make_node("Sub", ["add", "b"], ["sub"]),
        helper.make_node("Mul", ["sub", "half"], ["mul"]),          # scalar constant: Scale
        helper.make_node("Div", ["mul", "b2"], ["div"]),
        helper.make_node("Abs", ["div"], ["abs"]),
        helper.make_node("Sqrt", ["abs"], ["sqrt"]),
        helper.make_node("Pow", ["sqrt", "three"], ["pow"]),
        helper.make_node("Exp", ["a"], ["exp"]),
        helper.make_node("Log", ["exp"], ["log"]),
        helper.make_node("Neg", ["log"], ["neg"]),
        helper.make_node("Reciprocal", ["b2"], ["rec"]),
        helper.make_node("Sigmoid", ["a"], ["sig"]),
        helper.make_node("LeakyRelu", ["a"], ["lrelu"], alpha=0.2),
        helper.make_node("PRelu", ["a4", "slope"], ["prelu"]),
        helper.make_node("Sum", ["a", "b", "add"], ["sum"]),
        helper.make_node("Mean", ["a", "b"], ["mean"]),
        helper.make_node("Clip", ["a", "lo", "hi"], ["clip"]),
        helper.make_node("Clip", ["a", "", "hi"], ["clip_hi"]),
        helper.make_node("Greater", ["a", "b"], ["gt"]),
        helper.make_node("LessOrEqual", ["a", "b"], ["le"]),
        helper.make_node("Cast", ["gt"], ["gt_f"], to=TensorProto.FLOAT),
        helper.make_node("Sign", ["a"], ["sign"]),
        helper.make_node("Identity", ["a"], ["ident"]),
        helper.make_node("Dropout", ["a"], ["drop"]),
    ], [("a", [3, 4]), ("b", [3, 4]), ("a4", [2, 3, 2, 2])],
        [out(n) for n in ["pow", "neg", "rec", "sig", "lrelu", "prelu", "sum", "mean", "clip", "clip_hi",
                          "gt_f", "sign", "ident", "drop"]] + [out("le", None, TensorProto.BOOL)],
        {"half": np.array(0.5, np.float32), "three": np.array(3.0, np.float32),
         "b2": np.abs(rand(3, 4)) + 0.5, "slope": rand(3, 1, 1), "lo": np.array(-0.5, np.float32),
         "hi": np.array(0.7, np.float32)})
    info = check(model, {"a": rand(3, 4), "b": rand(3, 4), "a4": rand(2, 3, 2, 2)})
    assert "Scale" in predict_ops(info)


def test_clip_attributes_at_opset_6():
    model = make_model([helper.make_node("Clip", ["a"], ["y"], min=-0.3, max=0.4)], [("a", [5])], [out("y")],
                       opset=6)
    model.ir_version = 3
    check(model, {"a": rand(5)})


@pytest.mark.parametrize("opset", [13, 18])
def test_reductions(opset):
    def reduce(op, name, axes, keepdims):
        if op == "ReduceSum" or opset >= 18:
            return helper.make_node(op, ["x", "ax_" + name], [name], keepdims=keepdims), {
                "ax_" + name: np.array(axes, np.int64)}
        return helper.make_node(op, ["x"], [name], axes=axes, keepdims=keepdims), {}
    n1, i1 = reduce("ReduceMean", "m", [1, -1], 1)
    n2, i2 = reduce("ReduceSum", "s", [0], 0)
    model = make_model([n1, n2], [("x", [2, 3, 4])], [out("m"), out("s")], {**i1, **i2}, opset=opset)
    check(model, {"x": rand(2, 3, 4)})


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
        helper.make_node("Erf", ["x"], ["a"]),
        helper.make_node("Softplus", ["a"], ["b"]),
        helper.make_node("Erf", ["b"], ["c"]),
        helper.make_node("MaxPool", ["c"], ["d"], kernel_shape=[2, 2], dilations=[2, 2]),
        helper.make_node("Relu", ["d"], ["y"]),
    ], [("x", [1, 1, 6, 6])], [out("y")])
    with pytest.raises(hetnet.UnsupportedError) as e:
        _C.onnx_import(model.SerializeToString())
    text = str(e.value)
    assert "3 unsupported operator(s)" in text
    assert text.count("Erf (opset 13)") == 1
    assert "Softplus (opset 13)" in text
    assert "MaxPool (opset 13): dilations other than 1" in text
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


# ---- the shape family (Shape, Gather, Slice, Expand, Where, ArgMax/ArgMin, ConstantOfShape) ----

def test_shape_folding_gather_slice_expand_where_argmax():
    i64 = lambda *v: np.array(v, np.int64)  # noqa: E731
    model = make_model([
        helper.make_node("Shape", ["x"], ["xs"]),                               # folded: [2, 3, 4]
        helper.make_node("Shape", ["n"], ["ns"]),                               # N symbolic: a Shape op
        helper.make_node("Shape", ["x"], ["xs_tail"], start=1),                 # [3, 4]
        helper.make_node("Gather", ["x", "idx"], ["g"], axis=1),
        helper.make_node("Gather", ["x", "idx0"], ["g0"], axis=-1),             # scalar index drops the axis
        helper.make_node("Slice", ["x", "st", "en", "ax"], ["sl"]),             # negative starts/ends, clamps
        helper.make_node("Slice", ["x", "st2", "en2"], ["sl2"]),                # leading axes, huge end
        helper.make_node("Expand", ["col", "eshape"], ["ex"]),
        helper.make_node("Greater", ["x", "zero"], ["pos"]),
        helper.make_node("Neg", ["x"], ["g_neg"]),
        helper.make_node("Where", ["pos", "x", "g_neg"], ["wh"]),
        helper.make_node("ArgMax", ["x"], ["am"], axis=2, keepdims=0),
        helper.make_node("ArgMin", ["x"], ["an"]),                              # ONNX default axis 0
        helper.make_node("ConstantOfShape", ["xs_tail"], ["ones"],
                         value=numpy_helper.from_array(np.array([1.5], np.float32))),
        helper.make_node("ConstantOfShape", ["ns"], ["zeros"],
                         value=numpy_helper.from_array(np.array([7], np.int64))),
    ], [("x", [2, 3, 4]), ("n", ["N", 2]), ("col", [3, 1])],
        [out("xs", None, TensorProto.INT64), out("ns", None, TensorProto.INT64), out("g"), out("g0"), out("sl"),
         out("sl2"), out("ex"), out("wh"), out("am", None, TensorProto.INT64), out("an", None, TensorProto.INT64),
         out("ones"), out("zeros", None, TensorProto.INT64)],
        {"idx": i64(2, 0, 2), "idx0": np.array(1, np.int64), "st": i64(-3, 1), "en": i64(-1, 100),
         "ax": i64(2, 1), "st2": i64(1), "en2": i64(1 << 62), "eshape": i64(2, 3, 4),
         "zero": np.array(0.0, np.float32)}, opset=18)
    info = check(model, {"x": rand(2, 3, 4), "n": rand(5, 2), "col": rand(3, 1)})
    ops = predict_ops(info)
    assert ops.count("Shape") == 1  # the Shapes of x are folded; the one of n is not


def test_dropout_mask_legacy_broadcast_matmul_vectors_uneven_split():
    model = make_model([
        helper.make_node("Dropout", ["x"], ["d", "mask"]),
        helper.make_node("MatMul", ["v", "v"], ["dot"]),
        helper.make_node("MatMul", ["v", "m"], ["vm"]),
        helper.make_node("Split", ["x"], ["p1", "p2", "p3"], axis=1, num_outputs=3),
    ], [("x", [2, 7]), ("v", [3]), ("m", [4, 3, 2])],
        [out("d"), out("mask", None, TensorProto.BOOL), out("dot"), out("vm"), out("p1"), out("p2"), out("p3")],
        opset=18)
    check(model, {"x": rand(2, 7), "v": rand(3), "m": rand(4, 3, 2)})
    legacy = make_model([helper.make_node("Add", ["a", "b"], ["y"], broadcast=1, axis=1),
                         helper.make_node("Mul", ["a", "c"], ["z"], broadcast=1)],
                        [("a", [2, 3, 4]), ("b", [3]), ("c", [4])], [out("y"), out("z")], opset=6)
    legacy.ir_version = 3
    a, b, c = rand(2, 3, 4), rand(3), rand(4)
    ours, _ = run_hetnet(legacy, {"a": a, "b": b, "c": c})
    np.testing.assert_allclose(ours["y"], a + b[None, :, None], rtol=1e-6)
    np.testing.assert_allclose(ours["z"], a * c, rtol=1e-6)


def test_refusals_name_the_reason():
    model = make_model([
        helper.make_node("Pow", ["x", "x"], ["p"]),
        helper.make_node("Slice", ["x", "s", "e", "a", "st"], ["sl"]),
        helper.make_node("ArgMax", ["x"], ["am"], select_last_index=1),
        helper.make_node("MatMul", ["b1", "b2"], ["mm"]),
    ], [("x", [2, 3]), ("s", [1]), ("b1", [3, 1, 2, 2]), ("b2", [1, 4, 2, 2])], [out("p"), out("sl"), out("am"),
                                                                              out("mm")],
        {"e": np.array([5], np.int64), "a": np.array([0], np.int64), "st": np.array([2], np.int64)})
    with pytest.raises(hetnet.UnsupportedError) as e:
        _C.onnx_import(model.SerializeToString())
    text = str(e.value)
    assert "Pow (opset 13): the exponent must be a one-element constant" in text
    assert "Slice (opset 13): starts (input 's') must be an initializer or Constant" in text
    assert "ArgMax (opset 13): select_last_index=1" in text
    assert "MatMul (opset 13): batch dims that broadcast by stretching" in text


def test_conv_and_pool_1d_same_lower_output_shape():
    model = make_model([
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[2, 1], strides=[2], dilations=[2]),
        helper.make_node("MaxPool", ["c"], ["p"], kernel_shape=[3], strides=[2], pads=[1, 1], ceil_mode=1),
        helper.make_node("AveragePool", ["x"], ["a"], kernel_shape=[2], auto_pad="SAME_LOWER"),
        helper.make_node("GlobalAveragePool", ["x"], ["g"]),
        helper.make_node("ConvTranspose", ["x", "wt"], ["t"], strides=[2], output_shape=[24]),
        helper.make_node("Conv", ["x4", "w4"], ["s"], auto_pad="SAME_LOWER", strides=[2, 2]),
        helper.make_node("ConvTranspose", ["x4", "wt4"], ["u"], auto_pad="SAME_UPPER", strides=[2, 2]),
        helper.make_node("ConvTranspose", ["x4", "wt4"], ["v"], strides=[3, 2], output_shape=[22, 14]),
    ], [("x", [2, 3, 11]), ("x4", [1, 2, 7, 6])], [out(n) for n in "cpagtsuv"],
        {"w": rand(4, 3, 3), "b": rand(4), "wt": rand(3, 2, 4), "w4": rand(3, 2, 4, 3), "wt4": rand(2, 2, 3, 3)})
    check(model, {"x": rand(2, 3, 11), "x4": rand(1, 2, 7, 6)})


def test_prelu_slope_broadcast_beyond_channels():
    model = make_model([helper.make_node("PRelu", ["x", "last"], ["a"]),      # along the last axis
                        helper.make_node("PRelu", ["x", "s"], ["b"])],        # a runtime slope
                       [("x", [2, 3, 4]), ("s", [3, 1])], [out("a"), out("b")], {"last": rand(4)})
    info = check(model, {"x": rand(2, 3, 4), "s": rand(3, 1)})
    assert "PRelu" not in predict_ops(info)


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


def test_composed_activations():
    model = make_model([
        helper.make_node("HardSigmoid", ["x"], ["hs"], alpha=0.3, beta=0.4),
        helper.make_node("HardSwish", ["x"], ["hw"]),
        helper.make_node("Elu", ["x"], ["elu"], alpha=0.7),
        helper.make_node("Celu", ["x"], ["celu"], alpha=1.5),
        helper.make_node("Selu", ["x"], ["selu"]),
        helper.make_node("Softsign", ["x"], ["ss"]),
        helper.make_node("ThresholdedRelu", ["x"], ["tr"], alpha=0.5),
    ], [("x", [3, 5])], [out(n) for n in ["hs", "hw", "elu", "celu", "selu", "ss", "tr"]], opset=18)
    x = rand(3, 5) * 4
    x[0, 0] = 100.0  # exp overflows on the branch Where does not take
    check(model, {"x": x})


def test_variadic_logic_and_reduction_compositions():
    bshape = [("a", [2, 3, 4]), ("b", [3, 1]), ("c", [4])]
    model = make_model([
        helper.make_node("Sum", ["a", "b", "c"], ["sum"]),
        helper.make_node("Mean", ["a", "b"], ["mean"]),
        helper.make_node("Max", ["a", "b", "c"], ["max"]),
        helper.make_node("Min", ["a", "c"], ["min"]),
        helper.make_node("Greater", ["a", "b"], ["p"]),
        helper.make_node("Less", ["a", "c"], ["q"]),
        helper.make_node("Not", ["p"], ["not"]),
        helper.make_node("And", ["p", "q"], ["and"]),
        helper.make_node("Or", ["p", "q"], ["or"]),
        helper.make_node("Xor", ["p", "q"], ["xor"]),
        helper.make_node("ReduceSumSquare", ["a", "ax"], ["rss"]),
        helper.make_node("ReduceL1", ["a", "ax"], ["rl1"], keepdims=0),
        helper.make_node("ReduceL2", ["a"], ["rl2"]),
        helper.make_node("ReduceLogSum", ["ea", "ax"], ["rls"]),
        helper.make_node("Exp", ["a"], ["ea"]),
    ], bshape, [out(n) for n in ["sum", "mean", "max", "min", "rss", "rl1", "rl2", "rls"]] +
        [out(n, None, TensorProto.BOOL) for n in ["not", "and", "or", "xor"]],
        {"ax": np.array([0, -1], np.int64)}, opset=18)
    # topological order: Exp before ReduceLogSum
    nodes = list(model.graph.node)
    del model.graph.node[:]
    model.graph.node.extend(nodes[:-2] + [nodes[-1], nodes[-2]])
    check(model, {"a": rand(2, 3, 4), "b": rand(3, 1), "c": rand(4)})


def test_castlike_takes_the_declared_type_of_its_target():
    graph = helper.make_graph(
        [helper.make_node("CastLike", ["x", "t"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3]),
         helper.make_tensor_value_info("t", TensorProto.INT32, [1])],
        [helper.make_tensor_value_info("y", TensorProto.INT32, [3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    model.ir_version = 9
    feeds = {"x": np.array([1.7, -2.2, 3.0], np.float32), "t": np.array([0], np.int32)}
    ours, _ = run_hetnet(model, feeds)
    ref = run_ort(model, feeds)
    assert ours["y"].dtype == ref["y"].dtype == np.int32
    np.testing.assert_array_equal(ours["y"], ref["y"])
