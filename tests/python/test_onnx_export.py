"""ONNX export (issue 15 item 3): hetnet.onnx.frontend.caffe2_net_to_onnx_model and `hetnet export-onnx`.

Every exported model passes onnx.checker (full_check) and onnxruntime's outputs equal hetnet's
(rtol = atol = 1e-5) on random inputs; the expected values always come from hetnet running the same
NetDefs, never from constants written here.
"""
import os
import subprocess
import sys

import numpy as np
import pytest

from hetnet import _C

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

pytestmark = pytest.mark.skipif(not getattr(_C, "has_onnx_export", False),
                                reason="this build has no ONNX export (libonnx-dev)")

from hetnet import core, workspace  # noqa: E402
from hetnet.proto import caffe2_pb2  # noqa: E402

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FLOAT = 1  # onnx.TensorProto.FLOAT


def _net(name, ops, inputs, outputs):
    net = caffe2_pb2.NetDef()
    net.name = name
    net.op.extend(ops)
    net.external_input.extend(inputs)
    net.external_output.extend(outputs)
    return net


def _given(name, value):
    value = np.asarray(value)
    kind = {np.float32: "GivenTensorFill", np.int64: "GivenTensorInt64Fill", np.int32: "GivenTensorIntFill"}
    op_type = kind.get(value.dtype.type, "GivenTensorFill")
    return core.CreateOperator(op_type, [], [name], shape=list(value.shape), values=value.flatten().tolist())


def _init(params):
    return _net("init", [_given(k, v) for k, v in params.items()], [], list(params))


def _seeded(init):
    """The init net with a random_seed per operator: the exporter runs it once for the initializers and
    the comparison runs it again, so random fills must give the same values both times."""
    net = caffe2_pb2.NetDef()
    net.CopyFrom(init)
    for i, op in enumerate(net.op):
        op.device_option.random_seed = 1000 + i
    return net


def _hetnet_outputs(predict, init, feeds):
    workspace.ResetWorkspace()
    workspace.RunNetOnce(init)
    for k, v in feeds.items():
        workspace.FeedBlob(k, v)
    workspace.RunNetOnce(predict)
    return [workspace.FetchBlob(o) for o in predict.external_output]


def _onnx_elem(arr):
    return int(onnx.helper.np_dtype_to_tensor_dtype(arr.dtype))


def export_and_compare(predict, init, feeds, opset=17, rtol=1e-5, atol=1e-5, round_trip=False):
    """Exports, checks the model, runs onnxruntime and hetnet on `feeds`; returns the model. With
    round_trip, the model also goes back through hetnet's importer (hetnet.onnx.backend) and runs."""
    from hetnet.onnx import frontend
    init = _seeded(init)
    value_info = {k: (_onnx_elem(v), v.shape) for k, v in feeds.items()}
    model = frontend.caffe2_net_to_onnx_model(predict, init, value_info, opset=opset)
    onnx.checker.check_model(model, full_check=True)
    assert model.opset_import[0].version == opset
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    got = session.run(None, feeds)
    want = _hetnet_outputs(predict, init, feeds)
    assert [o.name for o in model.graph.output] == list(predict.external_output)
    for name, g, w in zip(predict.external_output, got, want):
        assert g.dtype == w.dtype, name
        assert g.shape == w.shape, name
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=name)
    if round_trip:
        from hetnet.onnx import backend
        inputs = [feeds[i.name] for i in model.graph.input if i.name in feeds]  # IR 3 lists weights too
        back = backend.prepare(model, device="CPU").run(inputs)
        for name, g, w in zip(predict.external_output, back, want):
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg="round trip " + name)
    return model


def _rand(*shape, seed=0, low=-1.0, high=1.0):
    return np.random.RandomState(seed).uniform(low, high, size=shape).astype(np.float32)


def _op_types(model):
    return [n.op_type for n in model.graph.node]


# ---- whole nets ----

def test_mlp_fc_relu_softmax(ws):
    from hetnet import brew, model_helper
    model = model_helper.ModelHelper(name="mlp")
    h = brew.fc(model, "data", "hidden", dim_in=20, dim_out=16)
    h = brew.relu(model, h, h)  # in place: two ONNX values for one blob
    logits = brew.fc(model, h, "logits", dim_in=16, dim_out=5)
    brew.softmax(model, logits, "softmax")
    model.net.AddExternalOutput("softmax")
    m = export_and_compare(model.net.Proto(), model.param_init_net.Proto(), {"data": _rand(4, 20)}, round_trip=True)
    assert _op_types(m) == ["Gemm", "Relu", "Gemm", "Softmax"]
    assert {i.name for i in m.graph.initializer} >= {"hidden_w", "hidden_b", "logits_w", "logits_b"}


def _lenet(model, channels=1):
    from hetnet import brew
    c1 = brew.conv(model, "data", "conv1", dim_in=channels, dim_out=6, kernel=5)
    p1 = brew.max_pool(model, c1, "pool1", kernel=2, stride=2)
    c2 = brew.conv(model, p1, "conv2", dim_in=6, dim_out=8, kernel=5)
    p2 = brew.max_pool(model, c2, "pool2", kernel=2, stride=2)
    f3 = brew.fc(model, p2, "fc3", dim_in=8 * 4 * 4, dim_out=32)
    f3 = brew.relu(model, f3, f3)
    pred = brew.fc(model, f3, "pred", dim_in=32, dim_out=10)
    return brew.softmax(model, pred, "softmax")


@pytest.mark.parametrize("opset", [7, 9, 11, 13, 17])
def test_lenet_cnn_random_weights(ws, opset):
    from hetnet import model_helper
    model = model_helper.ModelHelper(name="lenet")
    _lenet(model)
    model.net.AddExternalOutput("softmax")
    m = export_and_compare(model.net.Proto(), model.param_init_net.Proto(), {"data": _rand(3, 1, 28, 28)},
                           opset=opset, round_trip=True)
    assert _op_types(m).count("Conv") == 2 and _op_types(m).count("MaxPool") == 2


def test_bn_concat_reshape_transpose_broadcast_add(ws):
    C = 4
    rs = np.random.RandomState(1)
    params = {"scale": rs.uniform(0.5, 1.5, C), "bias": rs.randn(C), "mean": rs.randn(C),
              "var": rs.uniform(0.5, 2.0, C), "b": rs.randn(C), "w": rs.randn(6, C, 3, 3) * 0.2}
    params = {k: np.asarray(v, np.float32) for k, v in params.items()}
    ops = [
        core.CreateOperator("SpatialBN", ["x", "scale", "bias", "mean", "var"], ["bn"], is_test=1, epsilon=1e-3),
        core.CreateOperator("Add", ["bn", "b"], ["biased"], broadcast=1, axis=1),
        core.CreateOperator("Conv", ["biased", "w"], ["conv"], kernel_h=3, kernel_w=3, pad_t=1, pad_l=0, pad_b=1,
                            pad_r=2, stride_h=1, stride_w=2),
        core.CreateOperator("Concat", ["conv", "conv"], ["cat", "split_info"], axis=1),
        core.CreateOperator("Reshape", ["cat"], ["flat", "old_shape"], shape=[0, -1]),
        core.CreateOperator("Transpose", ["flat"], ["t"], axes=[1, 0]),
        core.CreateOperator("Concat", ["t", "t", "t"], ["stacked", "_info"], axis=0, add_axis=1),
    ]
    predict = _net("mixed", ops, ["x"] + list(params), ["stacked", "cat"])
    m = export_and_compare(predict, _init(params), {"x": _rand(2, C, 5, 7)}, round_trip=True)
    assert "BatchNormalization" in _op_types(m) and "Unsqueeze" in _op_types(m)
    # The legacy-broadcast bias became a reshaped initializer: the one Reshape is the net's own.
    assert _op_types(m).count("Reshape") == 1 and "b" not in {i.name for i in m.graph.initializer}


@pytest.mark.parametrize("opset", [9, 11, 13, 17])
def test_softmax_axes_and_opsets(ws, opset):
    ops = [core.CreateOperator("Softmax", ["x"], ["s1"]),  # axis 1 of 4-D: coerced to 2-D
           core.CreateOperator("Softmax", ["x"], ["s2"], axis=3),
           core.CreateOperator("Softmax", ["x"], ["s3"], axis=2),
           core.CreateOperator("Clip", ["s3"], ["c"], min=0.02, max=0.5),
           core.CreateOperator("Squeeze", ["c"], ["sq"], dims=[0]),
           core.CreateOperator("ExpandDims", ["sq"], ["ex"], dims=[3])]
    predict = _net("softmax", ops, ["x"], ["s1", "s2", "s3", "c", "sq", "ex"])
    export_and_compare(predict, _net("init", [], [], []), {"x": _rand(1, 3, 4, 5, high=3)}, opset=opset,
                       round_trip=True)


def test_conv_argument_forms_and_pooling(ws):
    rs = np.random.RandomState(2)
    params = {"w1": rs.randn(4, 3, 3, 3), "b1": rs.randn(4), "wg": rs.randn(4, 2, 3, 3), "wt": rs.randn(4, 3, 2, 2),
              "bt": rs.randn(3)}
    params = {k: np.asarray(v * 0.3, np.float32) for k, v in params.items()}
    ops = [
        core.CreateOperator("Conv", ["x", "w1", "b1"], ["c1"], kernel=3, pad=1, stride=2),
        core.CreateOperator("Conv", ["x", "w1"], ["c2"], kernels=[3, 3], pads=[0, 1, 2, 1], strides=[1, 2],
                            dilations=[2, 1]),
        core.CreateOperator("Conv", ["c1", "wg"], ["c3"], kernel=3, group=2, legacy_pad=2),  # SAME
        core.CreateOperator("Conv", ["x", "w1"], ["c4"], kernel=3, legacy_pad=1, dilation=2),  # VALID
        core.CreateOperator("ConvTranspose", ["c1", "wt", "bt"], ["ct"], kernel=2, stride=2, pad=0, adj=1),
        core.CreateOperator("MaxPool", ["x"], ["mp"], kernel=3, stride=2, pad=1),
        core.CreateOperator("AveragePool", ["x"], ["ap"], kernel_h=2, kernel_w=3, pads=[1, 1, 0, 1]),
        core.CreateOperator("AveragePool", ["x"], ["ap2"], kernel=3, pad=1, count_include_pad=1),
        core.CreateOperator("AveragePool", ["c1"], ["gap"], global_pooling=1),
        core.CreateOperator("MaxPool", ["c1"], ["gmp"], global_pooling=1),
        core.CreateOperator("LRN", ["x"], ["lrn", "lrn_scale"], size=3, alpha=1e-2, beta=0.75, bias=2.0),
    ]
    outs = ["c1", "c2", "c3", "c4", "ct", "mp", "ap", "ap2", "gap", "gmp", "lrn"]
    predict = _net("convs", ops, ["x"] + list(params), outs)
    m = export_and_compare(predict, _init(params), {"x": _rand(2, 3, 9, 11)}, round_trip=True)
    assert {"GlobalAveragePool", "GlobalMaxPool", "ConvTranspose", "LRN"} <= set(_op_types(m))


def test_activations_and_math(ws):
    params = {"slope": np.array([0.1, 0.2, 0.3], np.float32), "one_slope": np.array([0.25], np.float32)}
    ops = [core.CreateOperator(t, ["x"], [t.lower()]) for t in ("Relu", "Sigmoid", "Tanh", "Abs", "Negative", "Sqr",
                                                                "Exp", "Sign")]
    ops += [core.CreateOperator("LeakyRelu", ["x"], ["lrelu"], alpha=0.3),
            core.CreateOperator("PRelu", ["x", "slope"], ["prelu"]),
            core.CreateOperator("PRelu", ["x", "one_slope"], ["prelu1"]),
            core.CreateOperator("Abs", ["x"], ["ax"]),
            core.CreateOperator("Log", ["ax"], ["log"]),
            core.CreateOperator("Sqrt", ["ax"], ["sqrt"]),
            core.CreateOperator("Pow", ["ax"], ["pow"], exponent=1.5),
            core.CreateOperator("Scale", ["x"], ["scaled"], scale=-2.5),
            core.CreateOperator("Dropout", ["x"], ["drop", "mask"], is_test=1, ratio=0.5),
            core.CreateOperator("Sum", ["x", "relu", "sigmoid"], ["sum"]),
            core.CreateOperator("Cast", ["x"], ["as_int"], to=2),  # INT32
            core.CreateOperator("Cast", ["x"], ["as_double"], to=13),
            core.CreateOperator("GT", ["x", "sigmoid"], ["gt"]),
            core.CreateOperator("LE", ["x", "tanh"], ["le"]),
            core.CreateOperator("NE", ["x", "relu"], ["ne"]),
            core.CreateOperator("ReduceMean", ["x"], ["rmean"], axes=[1, 3], keepdims=0),
            core.CreateOperator("ReduceSum", ["x"], ["rsum"], axes=[2]),
            core.CreateOperator("Flatten", ["x"], ["flat"], axis=2)]
    outs = [o for op in ops for o in op.output if o not in ("mask", "ax")]
    predict = _net("math", ops, ["x"] + list(params), outs)
    x = _rand(2, 3, 4, 5, high=2) * 3
    for opset in (11, 12, 13, 17):
        export_and_compare(predict, _init(params), {"x": x}, opset=opset)
    # Below opset 11 ONNX has no floating-point Equal (NE) and below 9 no Sign: refused, both named.
    from hetnet.onnx import frontend
    with pytest.raises(Exception) as e:
        frontend.caffe2_net_to_onnx_model(predict, _init(params), {"x": (FLOAT, x.shape)}, opset=8)
    assert "NE (floating-point Equal needs opset 11)" in str(e.value)
    assert "Sign (Sign needs opset 9)" in str(e.value)


def test_matmul_fc_axis_split_and_legacy_broadcast(ws):
    rs = np.random.RandomState(3)
    params = {"B": rs.randn(5, 6), "W": rs.randn(7, 3, 2), "bW": rs.randn(7), "row": rs.randn(5), "cols": rs.randn(4, 1),
              "M": rs.randn(2, 6, 3)}
    params = {k: np.asarray(v, np.float32) for k, v in params.items()}
    ops = [
        core.CreateOperator("MatMul", ["a", "B"], ["ab"], trans_a=1),  # a [5, 4] -> [4, 5] x [5, 6]
        core.CreateOperator("MatMul", ["ab", "B"], ["abT"], trans_b=1),
        core.CreateOperator("FC", ["x", "W", "bW"], ["fc"], axis=2, axis_w=1),  # x [2, 4, 3, 2] -> [2, 4, 7]
        core.CreateOperator("Mul", ["abT", "row"], ["scaled_rows"], broadcast=1),  # suffix-aligned
        core.CreateOperator("Sub", ["abT", "cols"], ["minus_cols"], broadcast=1, axis=0),
        core.CreateOperator("Div", ["fc", "bW"], ["div"], broadcast=1, axis=2),
        core.CreateOperator("Split", ["fc"], ["s1", "s2"], axis=2, split=[3, 4]),
        core.CreateOperator("BatchMatMul", ["M", "M"], ["bmm"], trans_b=1),
    ]
    predict = _net("matmul", ops, ["a", "x"] + list(params), ["ab", "abT", "fc", "scaled_rows", "minus_cols", "div",
                                                              "s1", "s2", "bmm"])
    for opset in (9, 13, 17):  # Split's sizes: an attribute before 13, an input from 13
        export_and_compare(predict, _init(params), {"a": _rand(5, 4), "x": _rand(2, 4, 3, 2, seed=4)}, opset=opset,
                           round_trip=True)


def test_channel_shuffle_resize_like_half_casts_weighted_sum_copies(ws):
    params = {"w0": np.array([0.5], np.float32), "w1": np.array([-2.0], np.float32)}
    ops = [core.CreateOperator("ChannelShuffle", ["x"], ["shuffled"], group=3),
           core.CreateOperator("ChannelShuffle", ["x"], ["shuffled_nhwc"], group=2, order="NHWC"),
           core.CreateOperator("Reshape", ["x"], ["flat", "_old"], shape=[-1]),
           core.CreateOperator("ResizeLike", ["flat", "x"], ["resized"]),
           core.CreateOperator("FloatToHalf", ["x"], ["half"]),
           core.CreateOperator("HalfToFloat", ["half"], ["back"]),
           core.CreateOperator("WeightedSum", ["x", "w0", "shuffled", "w1"], ["wsum"]),
           core.CreateOperator("CopyCPUToGPU", ["wsum"], ["on_gpu"]),
           core.CreateOperator("CopyGPUToCPU", ["on_gpu"], ["copied"])]
    predict = _net("misc", ops, ["x"] + list(params), ["shuffled", "shuffled_nhwc", "resized", "half", "back",
                                                         "copied"])
    export_and_compare(predict, _init(params), {"x": _rand(2, 6, 3, 4)}, round_trip=True)


def test_softmax_with_loss_forms(ws):
    rs = np.random.RandomState(5)
    probs = rs.uniform(0, 1, (6, 4)).astype(np.float32)
    params = {"label": rs.randint(0, 4, size=(6,)).astype(np.int32), "w": rs.uniform(0.5, 2, 6).astype(np.float32),
              "probs": probs / probs.sum(axis=1, keepdims=True)}
    init = _net("init", [core.CreateOperator("GivenTensorIntFill", [], ["label"], shape=[6],
                                             values=params["label"].tolist()),
                         _given("w", params["w"]), _given("probs", params["probs"])], [], list(params))
    ops = [core.CreateOperator("SoftmaxWithLoss", ["x", "label"], ["p1", "loss1"]),
           core.CreateOperator("SoftmaxWithLoss", ["x", "label", "w"], ["p2", "loss2"], scale=0.5),
           core.CreateOperator("SoftmaxWithLoss", ["x", "probs"], ["p3", "loss3"], label_prob=1),
           core.CreateOperator("SoftmaxWithLoss", ["x4", "label"], ["p4", "loss4"], axis=1)]
    predict = _net("losses", ops, ["x", "x4"] + list(params), ["p1", "loss1", "loss2", "p3", "loss3", "p4", "loss4"])
    for opset in (11, 17):
        export_and_compare(predict, init, {"x": _rand(6, 4) * 4, "x4": _rand(6, 2, 2, seed=3) * 4}, opset=opset)


def test_mixed_devices_example_net(ws):
    """python/examples/mixed_devices_run.py's net (FC on CPU, the rest on a GPU, soft placement here):
    the exporter runs every operator on CPU and drops the devices."""
    from caffe2.python import model_helper
    m = model_helper.ModelHelper(name="mixed devices run")
    with core.DeviceScope(core.DeviceOption(1, 0)):
        with core.DeviceScope(core.DeviceOption(caffe2_pb2.CPU, -1)):
            m.param_init_net.XavierFill([], "fc_w", shape=[10, 100])
            m.param_init_net.ConstantFill([], "fc_b", shape=[10, ])
            fc_1 = m.net.FC(["data", "fc_w", "fc_b"], "fc1")
        pred = m.net.Sigmoid(fc_1, "pred")
        m.net.SoftmaxWithLoss([pred, "label"], ["softmax", "loss"])
    m.net.AddExternalOutput("softmax")
    m.net.AddExternalOutput("loss")
    m.net.Proto().arg.add(name="soft_placement", i=1)
    feeds = {"data": _rand(16, 100), "label": np.random.RandomState(0).randint(0, 10, size=(16,)).astype(np.int32)}
    model = export_and_compare(m.net.Proto(), m.param_init_net.Proto(), feeds)
    assert model.graph.input[1].type.tensor_type.elem_type == 6  # INT32 label


def test_in_place_rewrites_get_single_assignment_names(ws):
    ops = [core.CreateOperator("Relu", ["x"], ["y"]),
           core.CreateOperator("Sigmoid", ["y"], ["y"]),
           core.CreateOperator("Scale", ["y"], ["y"], scale=3.0)]
    predict = _net("inplace", ops, ["x"], ["y"])
    m = export_and_compare(predict, _net("init", [], [], []), {"x": _rand(3, 4)}, round_trip=True)
    produced = [o for n in m.graph.node for o in n.output]
    assert len(produced) == len(set(produced)) and produced[-1] == "y"


# ---- errors ----

def test_unsupported_operators_are_listed_in_one_error(ws):
    from hetnet.onnx import frontend
    params = {"w": _rand(2, 3, 3, 3)}
    ops = [core.CreateOperator("Conv", ["x", "w"], ["c"], kernel=3, legacy_pad=3),
           core.CreateOperator("Dropout", ["c"], ["d", "mask"], ratio=0.5),  # training mode
           core.CreateOperator("SumSqrElements", ["d"], ["s"]),
           core.CreateOperator("Concat", ["d", "d"], ["cat", "info"], axis=1),
           core.CreateOperator("Relu", ["info"], ["info_relu"])]
    predict = _net("bad", ops, ["x", "w"], ["s", "cat", "info_relu"])
    with pytest.raises(Exception) as e:
        frontend.caffe2_net_to_onnx_model(predict, _init(params), {"x": (FLOAT, (1, 3, 8, 8))})
    assert getattr(e.value, "kind", None) == "unsupported"
    text = str(e.value)
    for part in ("SumSqrElements (no exporter)", "legacy_pad CAFFE_LEGACY_POOLING", "is_test=0", "split_info"):
        assert part in text, text
    # Relu of the int32 split_info cannot run: later operators are named as unchecked.
    assert "operator #4 on were not checked" in text, text


def test_missing_value_info_is_an_error(ws):
    from hetnet.onnx import frontend
    predict = _net("n", [core.CreateOperator("Relu", ["x"], ["y"])], ["x"], ["y"])
    with pytest.raises(Exception, match="neither in value_info nor filled"):
        frontend.caffe2_net_to_onnx_model(predict, None, {})
    # An external input no operator reads (a deploy net's "label") needs no value_info.
    predict.external_input.append("label")
    m = frontend.caffe2_net_to_onnx_model(predict, None, {"x": (FLOAT, [2])})
    assert [i.name for i in m.graph.input] == ["x"]
    with pytest.raises(Exception, match="too many elements(.|\n)*zero input 'x'"):
        frontend.caffe2_net_to_onnx_model(predict, None, {"x": (FLOAT, [1 << 40, 1 << 40])})
    with pytest.raises(Exception, match="element type 99"):
        frontend.caffe2_net_to_onnx_model(predict, None, {"x": (99, [2])})
    passthrough = _net("p", [core.CreateOperator("Relu", ["x"], ["y"])], ["x"], ["y", "x"])
    with pytest.raises(Exception, match="'x' is not written by any operator"):
        frontend.caffe2_net_to_onnx_model(passthrough, None, {"x": (FLOAT, [2])})


# ---- examples, the command line, Caffe2's module name ----

def _subprocess_env():
    from conftest import subprocess_env
    return subprocess_env()


def _hetnet_bin():
    import hetnet
    build_dir = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(hetnet.__file__))))
    path = os.environ.get("HETNET_BIN") or os.path.join(build_dir, "bin", "hetnet")  # <build>/python/hetnet
    if not os.path.exists(path):
        pytest.fail("the hetnet command is not built at " + path)
    return path


def _load_nets(directory):
    nets = []
    for name in ("predict_net.pb", "init_net.pb"):
        net = caffe2_pb2.NetDef()
        with open(os.path.join(directory, name), "rb") as f:
            net.ParseFromString(f.read())
        nets.append(net)
    return nets


def test_export_mlp_example_and_cli(ws, tmp_path):
    subprocess.run([sys.executable, os.path.join(REPO_ROOT, "python", "examples", "export_mlp.py"), str(tmp_path)],
                   check=True, env=_subprocess_env(), capture_output=True)
    predict, init = _load_nets(tmp_path)
    data = np.load(tmp_path / "data.npy")
    export_and_compare(predict, init, {"data": data})
    out = tmp_path / "mlp.onnx"
    res = subprocess.run([_hetnet_bin(), "export-onnx", "--init", str(tmp_path / "init_net.pb"), "--predict",
                          str(tmp_path / "predict_net.pb"), "--input", "data:float32:{},{}".format(*data.shape),
                          "-o", str(out)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    model = onnx.load(str(out))
    onnx.checker.check_model(model, full_check=True)
    got = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"]).run(None, {"data": data})[0]
    np.testing.assert_allclose(got, np.load(tmp_path / "expected_softmax.npy"), rtol=1e-5, atol=1e-5)
    bad = subprocess.run([_hetnet_bin(), "export-onnx", "--predict", str(tmp_path / "predict_net.pb"),
                          "--input", "data:complex:1", "-o", str(out)], capture_output=True, text=True)
    assert bad.returncode == 2 and "unknown dtype 'complex'" in bad.stderr
    unsupported = subprocess.run([_hetnet_bin(), "export-onnx", "--predict", str(tmp_path / "predict_net.pb"),
                                  "--init", str(tmp_path / "init_net.pb"), "--input", "data:float32:2,64",
                                  "--opset", "5", "-o", str(out)], capture_output=True, text=True)
    assert unsupported.returncode == 1 and "opset 5 is not supported" in unsupported.stderr


@pytest.mark.parametrize("arch", ["lenet", "mlp"])
def test_trained_fashion_mnist(ws, tmp_path, arch):
    data_dir = "/usr/share/datasets/fashion-mnist"
    if not os.path.isdir(data_dir):
        pytest.skip("dataset-fashion-mnist is not installed")
    script = os.path.join(REPO_ROOT, "python", "examples", "train_fashion_mnist.py")
    subprocess.run([sys.executable, script, "--arch", arch, "--epochs", "1", "--max-iters", "20",
                    "--train-subset", "1280", "--out", str(tmp_path)], check=True, env=_subprocess_env(),
                   capture_output=True, timeout=600)
    predict, init = _load_nets(tmp_path)
    import importlib.util
    spec = importlib.util.spec_from_file_location("train_fashion_mnist", script)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    x = example.load_fashion_mnist(data_dir)[2][:16].astype(np.float32)
    x = x.reshape((16, 1, 28, 28) if arch == "lenet" else (16, 784))
    export_and_compare(predict, init, {"data": x})


def test_caffe2_module_name(ws):
    from caffe2.python.onnx import frontend as c2_frontend
    from hetnet.onnx import frontend
    assert c2_frontend.caffe2_net_to_onnx_model is frontend.caffe2_net_to_onnx_model
    predict = _net("n", [core.CreateOperator("Relu", ["x"], ["y"])], ["x"], ["y"])
    graph = c2_frontend.caffe2_net_to_onnx_graph(predict, None, {"x": (FLOAT, [2, 3])})
    assert [n.op_type for n in graph.node] == ["Relu"]
