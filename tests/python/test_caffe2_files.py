"""Real Caffe2 files through workspace.Predictor (issue 13): a model-zoo-style init net that also
fills `data` with a placeholder, and a SqueezeNet-shaped predict net written field by field as
Caffe2's translator writes it (Conv/MaxPool args stride, pad, kernel; in-place Relu; Concat with
its `_<name>_dims` output and order; AveragePool with global_pooling 1 and kernel 0, stride 1,
pad 0 spelled out; legacy_pad 3), checked against an independent numpy reference."""
import numpy as np
import pytest

from hetnet import _C

pytestmark = pytest.mark.skipif(not _C.has_predictor, reason="waiting for core/predictor.h")

PLACEHOLDER_SHAPE = (1, 3, 9, 9)


def _arg(op, name, i=None, s=None):
    a = op.arg.add()
    a.name = name
    if i is not None:
        a.i = i
    if s is not None:
        a.s = s


def _op(net, type_, inputs, outputs):
    op = net.op.add()
    op.input.extend(inputs)
    op.output.extend(outputs)
    op.name = ""
    op.type = type_
    return op


def _fill(init, name, array):
    op = _op(init, "GivenTensorFill", [], [name])
    a = op.arg.add()
    a.name = "shape"
    a.ints.extend(array.shape)
    a = op.arg.add()
    a.name = "values"
    a.floats.extend(array.astype(np.float32).ravel().tolist())


def make_zoo_squeezenet(seed=0):
    """(init NetDef, predict NetDef, {weight name: array}) as the zoo and its translator write them."""
    from caffe2.proto import caffe2_pb2
    rng = np.random.RandomState(seed)
    init, predict = caffe2_pb2.NetDef(), caffe2_pb2.NetDef()
    init.name, predict.name = "squeezenet_init", "squeezenet"
    weights = {"data": rng.uniform(-1, 1, PLACEHOLDER_SHAPE).astype(np.float32)}
    _fill(init, "data", weights["data"])
    predict.external_input.append("data")

    def conv(inp, out, cin, cout, k, stride, pad):
        w = rng.uniform(-0.5, 0.5, (cout, cin, k, k)).astype(np.float32)
        b = rng.uniform(-0.1, 0.1, (cout,)).astype(np.float32)
        weights[out + "_w"], weights[out + "_b"] = w, b
        _fill(init, out + "_w", w)
        _fill(init, out + "_b", b)
        op = _op(predict, "Conv", [inp, out + "_w", out + "_b"], [out])
        _arg(op, "stride", i=stride)
        _arg(op, "pad", i=pad)
        _arg(op, "kernel", i=k)
        predict.external_input.extend([out + "_w", out + "_b"])

    def relu(blob):
        _op(predict, "Relu", [blob], [blob])

    conv("data", "conv1", 3, 4, 3, 2, 0)
    relu("conv1")
    op = _op(predict, "MaxPool", ["conv1"], ["pool1"])
    _arg(op, "stride", i=2)
    _arg(op, "pad", i=0)
    _arg(op, "kernel", i=3)
    _arg(op, "legacy_pad", i=3)
    conv("pool1", "fire2/squeeze1x1", 4, 2, 1, 1, 0)
    relu("fire2/squeeze1x1")
    conv("fire2/squeeze1x1", "fire2/expand1x1", 2, 3, 1, 1, 0)
    relu("fire2/expand1x1")
    conv("fire2/squeeze1x1", "fire2/expand3x3", 2, 3, 3, 1, 1)
    relu("fire2/expand3x3")
    op = _op(predict, "Concat", ["fire2/expand1x1", "fire2/expand3x3"], ["fire2/concat", "_fire2/concat_dims"])
    _arg(op, "order", s=b"NCHW")
    conv("fire2/concat", "conv10", 6, 5, 1, 1, 0)
    relu("conv10")
    op = _op(predict, "AveragePool", ["conv10"], ["pool10"])
    _arg(op, "stride", i=1)
    _arg(op, "pad", i=0)
    _arg(op, "kernel", i=0)
    _arg(op, "global_pooling", i=1)
    _arg(op, "legacy_pad", i=3)
    _op(predict, "Softmax", ["pool10"], ["softmaxout"])
    predict.external_output.append("softmaxout")
    return init, predict, weights


# ---- an independent numpy reference ----

def _conv(x, w, b, stride, pad):
    x = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, _, h, wd = x.shape
    m, _, k, _ = w.shape
    oh, ow = (h - k) // stride + 1, (wd - k) // stride + 1
    y = np.zeros((n, m, oh, ow))
    for i in range(oh):
        for j in range(ow):
            patch = x[:, :, i * stride:i * stride + k, j * stride:j * stride + k]
            y[:, :, i, j] = np.einsum("nchw,mchw->nm", patch, w)
    return y + b[None, :, None, None]


def _maxpool_ceil(x, k, stride):  # CAFFE_LEGACY_POOLING without padding: ceil mode, windows clipped
    n, c, h, w = x.shape
    oh, ow = -(-(h - k) // stride) + 1, -(-(w - k) // stride) + 1
    y = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            y[:, :, i, j] = x[:, :, i * stride:min(i * stride + k, h), j * stride:min(j * stride + k, w)].max(axis=(2, 3))
    return y


def reference(weights, data):
    W = weights
    relu = lambda v: np.maximum(v, 0)  # noqa: E731
    x = relu(_conv(data, W["conv1_w"], W["conv1_b"], 2, 0))
    x = _maxpool_ceil(x, 3, 2)
    s = relu(_conv(x, W["fire2/squeeze1x1_w"], W["fire2/squeeze1x1_b"], 1, 0))
    e1 = relu(_conv(s, W["fire2/expand1x1_w"], W["fire2/expand1x1_b"], 1, 0))
    e3 = relu(_conv(s, W["fire2/expand3x3_w"], W["fire2/expand3x3_b"], 1, 1))
    x = relu(_conv(np.concatenate([e1, e3], axis=1), W["conv10_w"], W["conv10_b"], 1, 0))
    x = x.mean(axis=(2, 3), keepdims=True)
    flat = x.reshape(x.shape[0], -1)
    e = np.exp(flat - flat.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).reshape(x.shape)


def _image(shape, seed):
    return np.random.RandomState(seed).uniform(-1, 1, shape).astype(np.float32)


@pytest.fixture
def zoo_files(tmp_path):
    init, predict, weights = make_zoo_squeezenet()
    (tmp_path / "init_net.pb").write_bytes(init.SerializeToString())
    (tmp_path / "predict_net.pb").write_bytes(predict.SerializeToString())
    return tmp_path, init, predict, weights


def test_reference_is_not_trivial():
    _, _, weights = make_zoo_squeezenet()
    a = reference(weights, weights["data"])
    b = reference(weights, _image(PLACEHOLDER_SHAPE, 1))
    assert a.shape == (1, 5, 1, 1)
    assert np.abs(a - b).max() > 1e-3  # feeding data must change the answer


def test_tutorial_code_with_serialized_bytes(zoo_files, ws):
    path, _, _, weights = zoo_files
    from caffe2.python import workspace
    INIT_NET, PREDICT_NET = str(path / "init_net.pb"), str(path / "predict_net.pb")
    img = _image(PLACEHOLDER_SHAPE, 1)
    # Caffe2's "Loading Pre-Trained Models" tutorial:
    with open(INIT_NET, "rb") as f:
        init_net = f.read()
    with open(PREDICT_NET, "rb") as f:
        predict_net = f.read()
    p = workspace.Predictor(init_net, predict_net)
    results = p.run({'data': img})
    results = np.asarray(results)
    preds = np.squeeze(results)
    np.testing.assert_allclose(preds, reference(weights, img).ravel(), rtol=1e-5, atol=2e-6)
    assert preds.shape == (5,) and int(np.argmax(preds)) == int(np.argmax(reference(weights, img)))
    assert not ws.HasBlob("data") and not ws.HasBlob("conv1_w")  # the predictor's own workspace


@pytest.mark.parametrize("form", ["bytes", "netdef", "bytearray"])
def test_list_and_dict_forms(zoo_files, form):
    path, init, predict, weights = zoo_files
    from caffe2.python import workspace
    if form == "bytes":
        p = workspace.Predictor((path / "init_net.pb").read_bytes(), (path / "predict_net.pb").read_bytes())
    elif form == "bytearray":
        p = workspace.Predictor(bytearray(init.SerializeToString()), memoryview(predict.SerializeToString()))
    else:
        p = workspace.Predictor(init, predict)
    assert p.input_names == []
    assert p.filled_input_names == list(predict.external_input)
    assert p.positional_input_names[0] == "data"
    assert p.output_names == ["softmaxout"]

    x = _image(PLACEHOLDER_SHAPE, 2)
    x_before = x.copy()
    want = reference(weights, x)
    want_placeholder = reference(weights, weights["data"])
    assert np.abs(want - want_placeholder).max() > 1e-3

    (by_list,) = p.run([x])
    (by_dict,) = p.run({"data": x})
    np.testing.assert_allclose(by_list, want, rtol=1e-5, atol=2e-6)
    np.testing.assert_array_equal(by_list, by_dict)
    np.testing.assert_array_equal(x, x_before)
    # Feeding `data` replaced the placeholder for those runs only.
    (again,) = p.run({})
    np.testing.assert_allclose(again, want_placeholder, rtol=1e-5, atol=2e-6)
    (empty_list,) = p.run([])
    np.testing.assert_array_equal(empty_list, again)

    # Another batch and image size than the placeholder's.
    big = _image((2, 3, 11, 11), 3)
    (out,) = p.run([big])
    assert out.shape == (2, 5, 1, 1)
    np.testing.assert_allclose(out, reference(weights, big), rtol=1e-5, atol=2e-6)

    import hetnet
    with pytest.raises(hetnet.HetnetError, match="at most"):
        p.run([x] * (len(predict.external_input) + 1))


def test_replacing_a_weight_is_per_run(zoo_files):
    _, init, predict, weights = zoo_files
    from caffe2.python import workspace
    p = workspace.Predictor(init, predict)
    x = _image(PLACEHOLDER_SHAPE, 4)
    bias = np.array([0, 2, 0, 0, 0], np.float32)
    changed = dict(weights, conv10_b=bias)
    (got,) = p.run({"data": x, "conv10_b": bias})
    np.testing.assert_allclose(got, reference(changed, x), rtol=1e-5, atol=2e-6)
    assert np.abs(reference(changed, x) - reference(weights, x)).max() > 1e-3
    (got,) = p.run({"data": x})
    np.testing.assert_allclose(got, reference(weights, x), rtol=1e-5, atol=2e-6)


def test_unfilled_inputs_come_first_in_the_list_form(ws):
    # Weights listed before `data`: the list form gives the inputs the init net did not fill.
    from caffe2.proto import caffe2_pb2
    from caffe2.python import workspace
    init, predict = caffe2_pb2.NetDef(), caffe2_pb2.NetDef()
    init.name, predict.name = "i", "p"
    _fill(init, "w", np.array([2.0, 3.0], np.float32))
    predict.external_input.extend(["w", "x"])
    predict.external_output.append("y")
    _op(predict, "Mul", ["x", "w"], ["y"])
    p = workspace.Predictor(init.SerializeToString(), predict.SerializeToString())
    assert p.input_names == ["x"] and p.positional_input_names == ["x"] and p.filled_input_names == ["w"]
    (y,) = p.run([np.array([1.0, -1.0], np.float32)])
    np.testing.assert_array_equal(y, [2.0, -3.0])
    (y,) = p.run({"x": np.array([1.0, 1.0], np.float32), "w": np.array([5.0, 7.0], np.float32)})
    np.testing.assert_array_equal(y, [5.0, 7.0])
    (y,) = p.run({"x": np.array([1.0, 1.0], np.float32)})
    np.testing.assert_array_equal(y, [2.0, 3.0])
    import hetnet
    with pytest.raises(hetnet.HetnetError, match="1 input"):
        p.run([np.ones(2, np.float32), np.ones(2, np.float32)])


def test_bad_arguments():
    from caffe2.python import workspace
    import hetnet
    init, predict, _ = make_zoo_squeezenet()
    with pytest.raises(hetnet.HetnetError, match="init NetDef"):
        workspace.Predictor(b"\xff\xff\xff not a netdef", predict.SerializeToString())
    with pytest.raises(TypeError, match="serialized bytes"):
        workspace.Predictor(str(init), predict)
    with pytest.raises(TypeError, match="NetDef"):
        workspace.Predictor(init, 42)


def test_global_average_pool_translator_args_in_a_plain_net(ws):
    from caffe2.python import core, workspace
    x = _image((2, 3, 4, 5), 5)
    workspace.FeedBlob("x", x)
    op = core.CreateOperator("AveragePool", ["x"], ["y"], global_pooling=1, kernel=0, stride=1, pad=0, legacy_pad=3)
    workspace.RunOperatorOnce(op)
    np.testing.assert_allclose(workspace.FetchBlob("y"), x.mean(axis=(2, 3), keepdims=True), rtol=1e-6)
    op = core.CreateOperator("MaxPool", ["x"], ["z"], global_pooling=1, kernels=[0, 0], strides=[1, 1],
                             pads=[0, 0, 0, 0])
    workspace.RunOperatorOnce(op)
    np.testing.assert_array_equal(workspace.FetchBlob("z"), x.max(axis=(2, 3), keepdims=True))
    import hetnet
    with pytest.raises(hetnet.HetnetError, match="global_pooling takes no stride or pad"):
        workspace.RunOperatorOnce(core.CreateOperator("AveragePool", ["x"], ["w"], global_pooling=1, stride=2))
