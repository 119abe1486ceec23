"""ModelHelper and brew build Caffe2's NetDefs (ops without kernels are checked as NetDefs only)."""
import numpy as np
import pytest

from hetnet import brew, core, model_helper
from hetnet.proto import caffe2_pb2


def _args(op):
    out = {}
    for a in op.arg:
        for field in ("f", "i", "s"):
            if a.HasField(field):
                out[a.name] = getattr(a, field)
        if a.ints:
            out[a.name] = list(a.ints)
    return out


def test_model_helper_nets_and_forwarding():
    m = model_helper.ModelHelper(name="mh")
    assert m.net.Name() == "mh" and m.param_init_net.Name() == "mh_init"
    y = m.Relu("x", "y")
    assert str(y) == "y" and m.net.Proto().op[0].type == "Relu"
    with pytest.raises(AttributeError) as info:
        m.Rleu("x", "y")
    assert "Relu" in str(info.value)
    grad_map = m.AddGradientOperators(["y"])  # training: see test_training.py
    assert str(grad_map["x"]) == "x_grad"


def test_fc_params_and_init_ops():
    m = model_helper.ModelHelper(name="fcnet")
    out = brew.fc(m, "data", "fc1", dim_in=100, dim_out=10)
    assert str(out) == "fc1"
    init = m.param_init_net.Proto().op
    assert [(op.type, list(op.output)) for op in init] == [("XavierFill", ["fc1_w"]),
                                                           ("ConstantFill", ["fc1_b"])]
    assert _args(init[0])["shape"] == [10, 100] and _args(init[1])["shape"] == [10]
    fc = m.net.Proto().op[0]
    assert fc.type == "FC" and list(fc.input) == ["data", "fc1_w", "fc1_b"]
    assert _args(fc) == {"order": b"NCHW", "use_cudnn": 1, "cudnn_exhaustive_search": 0}
    assert [str(p) for p in m.GetParams()] == ["fc1_w", "fc1_b"]
    assert [str(p) for p in m.weights] == ["fc1_w"] and [str(p) for p in m.biases] == ["fc1_b"]


def test_fc_custom_init_and_name_scope():
    m = model_helper.ModelHelper(name="scoped")
    with core.NameScope("gpu_0"):
        brew.fc(m, "data", "fc", 4, 2, weight_init=("ConstantFill", {"value": 0.5}))
        assert [str(p) for p in m.GetParams()] == ["gpu_0/fc_w", "gpu_0/fc_b"]
    init = m.param_init_net.Proto().op
    assert init[0].type == "ConstantFill" and _args(init[0])["value"] == 0.5
    assert list(m.net.Proto().op[0].output) == ["gpu_0/fc"]
    assert m.GetParams("other") == []


def test_init_params_false_adds_no_init_ops():
    m = model_helper.ModelHelper(name="noinit", init_params=False)
    brew.fc(m, "data", "fc", 4, 2)
    assert len(m.param_init_net.Proto().op) == 0
    assert [str(p) for p in m.params] == ["fc_w", "fc_b"]


def test_conv_pool_netdefs():
    m = model_helper.ModelHelper(name="convnet")
    brew.conv(m, "data", "conv1", dim_in=3, dim_out=16, kernel=5, stride=2)
    brew.max_pool(m, "conv1", "pool1", kernel=2, stride=2)
    brew.average_pool(m, "pool1", "pool2", kernel=2)
    conv, maxp, avgp = m.net.Proto().op
    assert conv.type == "Conv" and conv.engine == "CUDNN"
    assert list(conv.input) == ["data", "conv1_w", "conv1_b"]
    assert _args(conv)["kernel"] == 5 and _args(conv)["stride"] == 2
    assert _args(conv)["exhaustive_search"] == 0 and _args(conv)["order"] == b"NCHW"
    assert _args(m.param_init_net.Proto().op[0])["shape"] == [16, 3, 5, 5]
    assert (maxp.type, avgp.type) == ("MaxPool", "AveragePool")
    nhwc = model_helper.ModelHelper(name="nhwc", arg_scope={"order": "NHWC", "use_cudnn": False})
    brew.conv(nhwc, "data", "c", 3, 8, kernel=[3, 1], no_bias=True, group=1)
    op = nhwc.net.Proto().op[0]
    assert list(op.input) == ["data", "c_w"] and op.engine == ""
    assert _args(op)["kernel_h"] == 3 and _args(op)["kernel_w"] == 1
    assert _args(nhwc.param_init_net.Proto().op[0])["shape"] == [8, 3, 1, 3]


def test_spatial_bn_params_like_caffe2():
    m = model_helper.ModelHelper(name="bn")
    out = brew.spatial_bn(m, "x", "bn", dim_in=8, epsilon=1e-3)
    assert str(out) == "bn"
    op = m.net.Proto().op[0]
    assert list(op.input) == ["x", "bn_s", "bn_b", "bn_rm", "bn_riv"]
    assert list(op.output) == ["bn", "bn_rm", "bn_riv", "bn_sm", "bn_siv"]
    init = {o.output[0]: _args(o)["value"] for o in m.param_init_net.Proto().op}
    assert init == {"bn_s": 1.0, "bn_b": 0.0, "bn_rm": 0.0, "bn_riv": 1.0}
    assert [str(p) for p in m.GetParams()] == ["bn_s", "bn_b"]
    assert [str(p) for p in m.GetComputedParams()] == ["bn_rm", "bn_riv"]
    brew.spatial_bn(m, "x", "bn_test", 8, is_test=True)
    assert list(m.net.Proto().op[1].output) == ["bn_test"]


def test_activation_dropout_concat_sum_accuracy_softmax():
    m = model_helper.ModelHelper(name="misc", arg_scope={"use_cudnn": False})
    brew.relu(m, "a", "r")
    brew.sigmoid(m, "a", "s")
    brew.tanh(m, "a", "t")
    brew.softmax(m, "a", "sm")
    d = brew.dropout(m, "a", "d", ratio=0.5, is_test=0)
    c = brew.concat(m, ["r", "s"], "cat", axis=1)
    brew.sum(m, ["r", "s"], "total")
    brew.accuracy(m, ["sm", "label"], "acc")
    types = [op.type for op in m.net.Proto().op]
    assert types == ["Relu", "Sigmoid", "Tanh", "Softmax", "Dropout", "Concat", "Sum", "Accuracy"]
    ops = m.net.Proto().op
    assert list(ops[4].output) == ["d", "_d_mask"] and ops[4].engine == "DEFAULT" and str(d) == "d"
    assert list(ops[5].output) == ["cat", "_cat_concat_dims"] and str(c) == "cat"
    assert "order" not in _args(ops[5])
    with pytest.raises(AssertionError):
        brew.dropout(m, "a", "d2")


def test_arg_scope():
    m = model_helper.ModelHelper(name="scopes", arg_scope={"use_cudnn": False})
    with brew.arg_scope([brew.relu], order="NHWC"):
        with brew.arg_scope(brew.relu, use_cudnn=True):
            brew.relu(m, "x", "y")
        brew.relu(m, "x", "z")
    brew.relu(m, "x", "w")
    ops = m.net.Proto().op
    assert _args(ops[0])["order"] == b"NHWC" and ops[0].engine == "CUDNN"
    assert _args(ops[1])["order"] == b"NHWC" and ops[1].engine == ""
    assert _args(ops[2])["order"] == b"NCHW"


def test_fc_net_runs_when_kernels_exist(ws):
    from conftest import require_operators
    require_operators("FC", "XavierFill", "ConstantFill")
    m = model_helper.ModelHelper(name="runfc", arg_scope={"use_cudnn": False})
    brew.fc(m, "data", "fc1", 6, 3)
    ws.FeedBlob("data", np.ones((2, 6), np.float32))
    ws.RunNetOnce(m.param_init_net)
    ws.RunNetOnce(m.net)
    out = ws.FetchBlob("fc1")
    w = ws.FetchBlob("fc1_w")
    # Against float64: an output near 0 is a sum that cancels, so float32's rounding is absolute.
    np.testing.assert_allclose(out, np.ones((2, 6)) @ w.T.astype(np.float64), rtol=1e-5, atol=1e-6)


def test_brew_iter_counts_runs_on_cpu_even_under_a_gpu_scope():
    """Caffe2's brew.iter / CNNModelHelper.Iter: an int64 CPU counter, +1 per run."""
    from hetnet import brew, cnn, core, model_helper, workspace
    from hetnet.proto import caffe2_pb2
    workspace.ResetWorkspace()
    model = model_helper.ModelHelper(name="iter_model")
    with core.DeviceScope(core.DeviceOption(caffe2_pb2.CUDA, 0)):
        it = brew.iter(model, "ITER")
    fill = model.param_init_net.Proto().op[-1]
    assert fill.type == "ConstantFill" and fill.device_option.device_type == caffe2_pb2.CPU
    assert model.net.Proto().op[-1].device_option.device_type == caffe2_pb2.CPU
    workspace.RunNetOnce(model.param_init_net)
    workspace.CreateNet(model.net)
    workspace.RunNet(model.net.Proto().name, 3)
    value = workspace.FetchBlob(str(it))
    assert value.dtype == np.int64 and value.tolist() == [3]
    legacy = cnn.CNNModelHelper(name="legacy_iter")
    legacy.Iter("LEGACY_ITER")
    assert [op.type for op in legacy.net.Proto().op] == ["Iter"]


def test_net_append_net_appends_ops_and_external_blobs():
    from hetnet import core, workspace
    from hetnet.proto import caffe2_pb2
    a = core.Net("append_a")
    a.AddExternalInput("x")
    a.Relu("x", "y")
    b = core.Net("append_b")
    b.AddExternalInput("y")
    b.Sigmoid("y", "z")
    b.AddExternalOutput("z")
    a.AppendNet(b, device_option=core.DeviceOption(caffe2_pb2.CPU, 0))
    assert [op.type for op in a.Proto().op] == ["Relu", "Sigmoid"]
    assert list(a.Proto().external_input) == ["x"] and list(a.Proto().external_output) == ["z"]
    workspace.ResetWorkspace()
    workspace.FeedBlob("x", np.array([-1.0, 2.0], dtype=np.float32))
    workspace.RunNetOnce(a)
    np.testing.assert_allclose(workspace.FetchBlob("z"), 1 / (1 + np.exp(-np.array([0.0, 2.0]))), rtol=1e-6)
