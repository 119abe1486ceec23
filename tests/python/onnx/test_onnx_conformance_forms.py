"""ONNX forms the conformance cases needed (issue 15), on inputs the cases do not try: ConvTranspose over 3 spatial
dims and with dilations (strides, pads, output_padding, group, auto_pad, output_shape), MatMul whose batch dims
broadcast by stretching size-1 dims, MatMulInteger (per-tensor / per-row / per-column zero points, int8 and uint8),
ConvInteger and QLinearConv (per-channel weight zero points and scales, groups, dilations, 1-D to 3-D),
Equal on strings, Upsample-9 / Resize-10 with scales computed at run time. Expected values come from onnxruntime
on the same model, and numpy (string Equal, MatMulInteger)."""
import numpy as np
import onnx.helper as oh
import onnxruntime
import pytest

import hetnet
from hetnet.onnx.backend import HetnetBackend
from test_onnx_added_ops import _Model

RNG = np.random.default_rng(15)


def _Compare(node, inputs, opset=18, exact=False, tol=1e-5):
    model = _Model(node, inputs, opset)
    got = HetnetBackend.run_model(model, list(inputs.values()))
    want = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, inputs)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
        if exact:
            np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


def _F(*shape):
    return RNG.uniform(-1, 1, size=shape).astype(np.float32)


CONV_TRANSPOSE = [  # (x shape, w shape, attributes)
    ((1, 2, 3, 4, 2), (2, 3, 3, 2, 2), {}),
    ((2, 2, 3, 3, 2), (2, 1, 2, 3, 2), dict(strides=[2, 1, 2], dilations=[1, 2, 2], pads=[1, 0, 0, 0, 1, 1])),
    ((1, 4, 2, 3, 3), (4, 2, 2, 2, 3), dict(group=2, strides=[2, 2, 1], output_padding=[1, 0, 0])),
    ((1, 1, 3, 2, 3), (1, 2, 3, 3, 2), dict(auto_pad="SAME_UPPER", strides=[2, 1, 2])),
    ((1, 1, 2, 3, 2), (1, 1, 2, 2, 2), dict(output_shape=[5, 6, 4], strides=[2, 2, 2])),
    ((1, 2, 4, 4), (2, 2, 3, 2), dict(dilations=[2, 3], strides=[2, 1], pads=[1, 2, 0, 1])),
    ((2, 2, 3, 5), (2, 1, 2, 2), dict(dilations=[3, 2], auto_pad="SAME_LOWER", strides=[2, 2])),
    ((1, 1, 5), (1, 2, 3), dict(dilations=[2], strides=[2], output_padding=[1])),
]


@pytest.mark.parametrize("x_shape,w_shape,attrs", CONV_TRANSPOSE)
@pytest.mark.parametrize("bias", [False, True])
def test_conv_transpose_nd_and_dilations_match_onnxruntime(x_shape, w_shape, attrs, bias):
    inputs = {"x": _F(*x_shape), "w": _F(*w_shape)}
    if bias:
        inputs["b"] = _F(w_shape[1] * attrs.get("group", 1))
    _Compare(oh.make_node("ConvTranspose", list(inputs), ["y"], **attrs), inputs)


@pytest.mark.parametrize("a_shape,b_shape", [((2, 1, 3, 4), (1, 5, 4, 2)), ((3, 1, 2, 4), (2, 4, 5)),
                                             ((1, 3, 1, 2, 4), (2, 1, 5, 4, 3)), ((4,), (2, 1, 4, 3)),
                                             ((2, 1, 3, 4), (4,))])
def test_matmul_batch_dims_stretch_as_numpy(a_shape, b_shape):
    inputs = {"a": _F(*a_shape), "b": _F(*b_shape)}
    _Compare(oh.make_node("MatMul", ["a", "b"], ["y"]), inputs)
    got = HetnetBackend.run_model(_Model(oh.make_node("MatMul", ["a", "b"], ["y"]), inputs), list(inputs.values()))[0]
    np.testing.assert_allclose(got, np.matmul(inputs["a"], inputs["b"]), rtol=1e-5, atol=1e-5)


def _Bytes(dtype, *shape):
    info = np.iinfo(dtype)
    return RNG.integers(info.min, info.max, size=shape, endpoint=True).astype(dtype)


MATMUL_INTEGER = [  # (a dtype, a shape, b dtype, b shape, a_zero_point shape or None, b_zero_point shape or None)
    (np.uint8, (4, 3), np.uint8, (3, 2), (), (1,)),
    (np.uint8, (2, 5), np.uint8, (5, 3), None, None),
    (np.int8, (3, 4), np.uint8, (4, 5), (3,), (5,)),
    (np.int8, (2, 1, 3, 4), np.int8, (1, 2, 4, 2), (), ()),
    (np.uint8, (2, 3, 8), np.int8, (8, 4), (2, 3, 1), (4,)),
    (np.uint8, (7,), np.uint8, (7,), (), ()),
    (np.uint8, (64, 300), np.uint8, (300, 5), (), ()),  # sums past int16
]


def _MatMulIntegerRef(a, b, a_zp, b_zp):
    """numpy: (a - a_zp) @ (b - b_zp) in int64, wrapped to int32; a 1-D a_zp of A's row count is per row."""
    a, b = a.astype(np.int64), b.astype(np.int64)
    if a_zp is not None:
        z = a_zp.astype(np.int64)
        a = a - (z[:, None] if z.ndim == 1 and a.ndim >= 2 else z)
    if b_zp is not None:
        b = b - b_zp.astype(np.int64)
    return np.matmul(a, b).astype(np.int32)


@pytest.mark.parametrize("at,ash,bt,bsh,azs,bzs", MATMUL_INTEGER)
def test_matmul_integer_matches_numpy_and_onnxruntime(at, ash, bt, bsh, azs, bzs):
    inputs = {"a": _Bytes(at, *ash), "b": _Bytes(bt, *bsh)}
    names = ["a", "b"]
    if azs is not None:
        inputs["a_zp"] = _Bytes(at, *azs)
    names.append("a_zp" if azs is not None else "")
    if bzs is not None:
        inputs["b_zp"] = _Bytes(bt, *bzs)
        names.append("b_zp")
    node = oh.make_node("MatMulInteger", names, ["y"])
    got = HetnetBackend.run_model(_Model(node, inputs, 10), list(inputs.values()))[0]
    want = _MatMulIntegerRef(inputs["a"], inputs["b"], inputs.get("a_zp"), inputs.get("b_zp"))
    assert got.dtype == np.int32 and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    try:
        _Compare(node, inputs, opset=10, exact=True)
    except (onnxruntime.capi.onnxruntime_pybind11_state.NotImplemented,
            onnxruntime.capi.onnxruntime_pybind11_state.Fail):
        pass  # onnxruntime's CPU kernel lacks this dtype / per-row zero point; numpy above is the reference


CONV_INTEGER = [  # (x dtype, x shape, w dtype, w shape, w_zero_point shape or None, attributes)
    (np.uint8, (1, 1, 3, 3), np.uint8, (1, 1, 2, 2), None, dict(pads=[1, 1, 1, 1])),
    (np.uint8, (2, 4, 5, 6), np.uint8, (6, 2, 3, 2), (6,), dict(group=2, strides=[2, 1], dilations=[1, 2],
                                                                 pads=[1, 0, 2, 1])),
    (np.int8, (1, 2, 7), np.int8, (3, 2, 3), (), dict(auto_pad="SAME_UPPER", strides=[2])),
    # 3-D with one weight zero point: the reference evaluator reshapes a per-channel one to [M, 1, 1, 1] (4-D only)
    (np.uint8, (1, 2, 3, 4, 3), np.int8, (2, 2, 2, 2, 2), (), dict(pads=[0, 1, 0, 1, 0, 1])),
]


@pytest.mark.parametrize("xt,xs,wt,ws_,wzs,attrs", CONV_INTEGER)
def test_conv_integer_matches_the_reference_evaluator(xt, xs, wt, ws_, wzs, attrs):
    """Against onnx's reference evaluator (onnxruntime's ConvInteger takes uint8 only and per-tensor zero points)."""
    from onnx.reference import ReferenceEvaluator
    inputs = {"x": _Bytes(xt, *xs), "w": _Bytes(wt, *ws_), "x_zp": _Bytes(xt)}
    names = ["x", "w", "x_zp"]
    if wzs is not None:
        inputs["w_zp"] = _Bytes(wt, *wzs)
        names.append("w_zp")
    model = _Model(oh.make_node("ConvInteger", names, ["y"], **attrs), inputs, 10)
    got = HetnetBackend.run_model(model, list(inputs.values()))[0]
    want = ReferenceEvaluator(model).run(None, inputs)[0]
    assert got.dtype == np.int32 and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_conv_integer_3d_per_channel_zero_points_equal_a_float_conv_of_the_differences():
    """Per-channel weight zero points in 3-D: onnxruntime's float Conv of (x - x_zp) and (w - w_zp[:, None, ...])
    (exact in float32: the sums stay below 2^24) is the reference."""
    x, w = _Bytes(np.uint8, 1, 2, 3, 4, 3), _Bytes(np.int8, 3, 2, 2, 2, 2)
    x_zp, w_zp = _Bytes(np.uint8), _Bytes(np.int8, 3)
    attrs = dict(pads=[0, 1, 0, 1, 0, 1], strides=[1, 2, 1])
    inputs = {"x": x, "w": w, "x_zp": x_zp, "w_zp": w_zp}
    model = _Model(oh.make_node("ConvInteger", list(inputs), ["y"], **attrs), inputs, 10)
    got = HetnetBackend.run_model(model, list(inputs.values()))[0]
    xf = (x.astype(np.int64) - x_zp).astype(np.float32)
    wf = (w.astype(np.int64) - w_zp.astype(np.int64).reshape(3, 1, 1, 1, 1)).astype(np.float32)
    conv = _Model(oh.make_node("Conv", ["x", "w"], ["y"], **attrs), {"x": xf, "w": wf})
    want = onnxruntime.InferenceSession(conv.SerializeToString(), providers=["CPUExecutionProvider"]).run(
        None, {"x": xf, "w": wf})[0]
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, want.astype(np.int32))


QLINEAR_CONV = [  # (x dtype, x shape, w dtype, w shape, per-channel weight scale / zero point, bias, attributes)
    (np.uint8, (1, 2, 5, 5), np.uint8, (3, 2, 3, 3), False, True, dict(pads=[1, 1, 1, 1])),
    (np.uint8, (2, 4, 6, 5), np.int8, (4, 2, 2, 3), True, True, dict(group=2, strides=[2, 1], dilations=[1, 2])),
    (np.int8, (1, 3, 4, 4), np.int8, (2, 3, 2, 2), True, False, dict(auto_pad="SAME_UPPER")),
    (np.int8, (1, 2, 9), np.int8, (3, 2, 3), False, True, dict(strides=[2], pads=[1, 0])),
]


@pytest.mark.parametrize("xt,xs,wt,ws_,per_channel,bias,attrs", QLINEAR_CONV)
def test_qlinear_conv_matches_the_reference_evaluator(xt, xs, wt, ws_, per_channel, bias, attrs):
    """Against onnx's reference evaluator (per-channel weight scales in 2-D only: it reshapes them for 4-D y)."""
    from onnx.reference import ReferenceEvaluator
    m = ws_[0]
    inputs = {"x": _Bytes(xt, *xs), "x_scale": np.array(0.05, np.float32), "x_zp": _Bytes(xt),
              "w": _Bytes(wt, *ws_),
              "w_scale": RNG.uniform(0.01, 0.03, size=(m,) if per_channel else ()).astype(np.float32),
              "w_zp": _Bytes(wt, *((m,) if per_channel else ())),
              "y_scale": np.array(7.5, np.float32), "y_zp": _Bytes(xt)}
    if bias:
        inputs["B"] = RNG.integers(-3000, 3000, size=(m,)).astype(np.int32)
    model = _Model(oh.make_node("QLinearConv", list(inputs), ["y"], **attrs), inputs, 10)
    got = HetnetBackend.run_model(model, list(inputs.values()))[0]
    want = ReferenceEvaluator(model).run(None, inputs)[0]
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    assert len(np.unique(got)) > 3  # not all saturated


def test_matmul_integer_refuses_a_zero_point_of_another_shape():
    inputs = {"a": _Bytes(np.uint8, 2, 3), "b": _Bytes(np.uint8, 3, 4), "a_zp": _Bytes(np.uint8, 3)}
    model = _Model(oh.make_node("MatMulInteger", ["a", "b", "a_zp"], ["y"]), inputs, 10)
    with pytest.raises(hetnet.InvalidArgumentError, match="zero point 'a_zp' has shape \\[3\\]"):
        HetnetBackend.run_model(model, list(inputs.values()))


def test_equal_on_strings_matches_numpy():
    from onnx import TensorProto
    x = np.array([["a", "bb", ""], ["ccc", "a", "é"]], dtype=object)
    for y in (np.array(["a", "a", ""], dtype=object), np.array([["ccc"], ["é"]], dtype=object), x.copy()):
        node = oh.make_node("Equal", ["x", "y"], ["z"])
        graph = oh.make_graph([node], "g", [oh.make_tensor_value_info("x", TensorProto.STRING, list(x.shape)),
                                            oh.make_tensor_value_info("y", TensorProto.STRING, list(y.shape))],
                              [oh.make_tensor_value_info("z", TensorProto.BOOL, None)])
        model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", 19)])
        got = HetnetBackend.run_model(model, [x, y])[0]
        np.testing.assert_array_equal(got, x == y)


@pytest.mark.parametrize("op,opset", [("Upsample", 9), ("Resize", 10)])
@pytest.mark.parametrize("mode,scales", [("nearest", [1, 1, 2, 3]), ("nearest", [1, 2, 1.5, 2.5]),
                                         ("linear", [1, 1, 2, 3]), ("linear", [1, 1, 1.5, 2.5]),
                                         ("nearest", [1, 1, 0.5, 2]), ("linear", [1, 1, 0.75, 2])])
def test_upsample_and_resize10_take_scales_at_run_time(op, opset, mode, scales):
    if op == "Upsample" and min(scales) < 1:
        pytest.skip("Upsample's scales are >= 1")
    inputs = {"x": _F(1, 2, 4, 6), "scales": np.array(scales, dtype=np.float32)}
    _Compare(oh.make_node(op, ["x", "scales"], ["y"], mode=mode), inputs, opset=opset)


def test_dilated_conv_transpose_exports_its_dilations(ws):
    """A Caffe2 ConvTranspose with dilations exports them (onnxruntime and hetnet's importer agree with hetnet)."""
    import os
    import sys
    from hetnet import _C, core
    if not getattr(_C, "has_onnx_export", False):
        pytest.skip("this build has no ONNX export (libonnx-dev)")
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from test_onnx_export import _init, _net, _op_types, export_and_compare
    params = {"wt": _F(2, 3, 3, 2), "bt": _F(3)}
    ops = [core.CreateOperator("ConvTranspose", ["x", "wt", "bt"], ["ct"], kernels=[3, 2], strides=[2, 1],
                               dilations=[2, 3], pads=[1, 0, 2, 1], adjs=[1, 0])]
    m = export_and_compare(_net("ct", ops, ["x"] + list(params), ["ct"]), _init(params), {"x": _F(2, 2, 4, 5)},
                           round_trip=True)
    assert _op_types(m) == ["ConvTranspose"]
    assert [a.ints for a in m.graph.node[0].attribute if a.name == "dilations"] == [[2, 3]]


@pytest.mark.parametrize("shape,axes", [((2, 3, 4, 5), None), ((2, 3, 4, 5), [1]), ((3, 4, 6), [0, 2]),
                                        ((2, 3, 4, 5), [0, 1, 2, 3])])
def test_mean_variance_normalization_matches_onnxruntime(shape, axes):
    inputs = {"x": _F(*shape) * 3 + 1}
    attrs = {} if axes is None else {"axes": axes}
    _Compare(oh.make_node("MeanVarianceNormalization", ["x"], ["y"], **attrs), inputs, opset=13, tol=1e-4)


MAX_UNPOOL = [  # (x shape, attributes, output_shape or None); the pools cover x, so the inferred shape is x's
    ((1, 1, 4, 4), dict(kernel_shape=[2, 2], strides=[2, 2]), None),
    ((2, 3, 5, 4), dict(kernel_shape=[3, 2], strides=[2, 2], pads=[1, 0, 1, 0]), None),
    ((2, 3, 4, 6), dict(kernel_shape=[2, 2], strides=[2, 2]), (2, 3, 7, 8)),
    ((1, 2, 4, 4), dict(kernel_shape=[2, 2], strides=[2, 2]), (2, 3, 5, 4)),  # larger N and C too
    ((2, 2, 9), dict(kernel_shape=[3], strides=[2]), (2, 2, 10)),
    ((1, 2, 4, 5, 4), dict(kernel_shape=[2, 2, 2], strides=[2, 1, 2]), None),
]


@pytest.mark.parametrize("x_shape,attrs,output_shape", MAX_UNPOOL)
def test_max_unpool_of_max_pool_indices_matches_the_reference_evaluator(x_shape, attrs, output_shape):
    """MaxPool's values and flat indices unpooled (into the inferred shape, or the leading corner of a larger
    output_shape), against onnx's reference evaluator."""
    from onnx import TensorProto
    from onnx.reference import ReferenceEvaluator
    x = _F(*x_shape)
    nodes = [oh.make_node("MaxPool", ["x"], ["v", "i"], **attrs)]
    ins = [oh.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))]
    feeds = {"x": x}
    unpool_in = ["v", "i"]
    if output_shape is not None:
        feeds["s"] = np.array(output_shape, np.int64)
        ins.append(oh.make_tensor_value_info("s", TensorProto.INT64, [len(output_shape)]))
        unpool_in.append("s")
    nodes.append(oh.make_node("MaxUnpool", unpool_in, ["y"], **attrs))
    graph = oh.make_graph(nodes, "g", ins, [oh.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", 22)])
    got = HetnetBackend.run_model(model, list(feeds.values()))[0]
    want = ReferenceEvaluator(model).run(None, feeds)[0]
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    assert np.count_nonzero(got) > 0


def test_max_unpool_refuses_indices_outside_the_output_and_a_small_output_shape():
    node = oh.make_node("MaxUnpool", ["x", "i", "s"], ["y"], kernel_shape=[2, 2], strides=[2, 2])
    inputs = {"x": _F(1, 1, 2, 2), "i": np.array([[[[0, 3], [8, 16]]]], np.int64),
              "s": np.array([1, 1, 4, 4], np.int64)}
    model = _Model(node, inputs, 22)
    with pytest.raises(hetnet.InvalidArgumentError, match="index 16 at 3 of 'i' is outside"):
        HetnetBackend.run_model(model, list(inputs.values()))
    inputs["i"] = np.array([[[[0, 3], [8, 15]]]], np.int64)
    inputs["s"] = np.array([1, 1, 3, 4], np.int64)
    with pytest.raises(hetnet.InvalidArgumentError, match="smaller than the inferred shape"):
        HetnetBackend.run_model(model, list(inputs.values()))


def _StftRef(signal, step, window, n, onesided):
    """numpy: frames of n samples every `step`, times the window, np.fft.fft in complex128."""
    x = signal[..., 0].astype(np.float64) + (1j * signal[..., 1] if signal.shape[-1] == 2 else 0)
    frames = 1 + (x.shape[1] - n) // step
    w = np.ones(n) if window is None else window.astype(np.float64)
    bins = n // 2 + 1 if onesided else n
    out = np.stack([np.fft.fft(x[:, f * step:f * step + n] * w, axis=1)[:, :bins] for f in range(frames)], axis=1)
    return np.stack((out.real, out.imag), axis=-1)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("comps,use_window,use_length,onesided,step", [
    (1, True, False, 1, 3), (1, False, True, 1, 5), (1, True, True, 0, 4), (2, True, False, 0, 2),
    (2, False, True, 0, 7)])
def test_stft_matches_numpy(dtype, comps, use_window, use_length, onesided, step):
    from onnx import TensorProto
    signal = RNG.uniform(-1, 1, size=(2, 40, comps)).astype(dtype)
    n = 12
    feeds = {"signal": signal, "frame_step": np.array(step, np.int64)}
    names = ["signal", "frame_step", "", ""]
    if use_window:
        feeds["window"] = RNG.uniform(0, 1, size=n).astype(dtype)
        names[2] = "window"
    if use_length:
        feeds["frame_length"] = np.array(n, np.int64)
        names[3] = "frame_length"
    elem = TensorProto.FLOAT if dtype == np.float32 else TensorProto.DOUBLE
    ins = [oh.make_tensor_value_info(k, elem if v.dtype == dtype else TensorProto.INT64, list(v.shape))
           for k, v in feeds.items()]
    node = oh.make_node("STFT", names, ["y"], onesided=onesided)
    graph = oh.make_graph([node], "g", ins, [oh.make_tensor_value_info("y", elem, None)])
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", 17)])
    got = HetnetBackend.run_model(model, list(feeds.values()))[0]
    want = _StftRef(signal, step, feeds.get("window"), n if (use_window or use_length) else 40, onesided)
    assert got.dtype == dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-5)


def test_stft_refuses_a_window_of_another_length_and_a_frame_longer_than_the_signal():
    from onnx import TensorProto
    feeds = {"signal": _F(1, 10, 1), "frame_step": np.array(2, np.int64), "window": _F(4),
             "frame_length": np.array(5, np.int64)}
    ins = [oh.make_tensor_value_info(k, TensorProto.FLOAT if v.dtype == np.float32 else TensorProto.INT64,
                                     list(v.shape)) for k, v in feeds.items()]
    graph = oh.make_graph([oh.make_node("STFT", list(feeds), ["y"])], "g", ins,
                          [oh.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", 17)])
    with pytest.raises(hetnet.InvalidArgumentError, match="window .* has shape \\[4\\] but the frame length is 5"):
        HetnetBackend.run_model(model, list(feeds.values()))
    feeds["window"], feeds["frame_length"] = _F(12), np.array(12, np.int64)
    with pytest.raises(hetnet.InvalidArgumentError, match="frame length 12 does not fit the signal"):
        HetnetBackend.run_model(model, list(feeds.values()))


@pytest.mark.parametrize("mels,dft,rate,lo,hi,edge_dtype,out_type", [
    (8, 16, 8192, 0, 4096, np.float32, 1), (20, 512, 16000, 30.5, 7600, np.float32, 1),
    (10, 64, 22050, 100, 11025, np.float64, 11), (3, 9, 100, 0, 50, np.float32, 11),
    (40, 1024, 44100, 0, 8000, np.float64, 1)])
def test_mel_weight_matrix_matches_the_reference_evaluator(mels, dft, rate, lo, hi, edge_dtype, out_type):
    from onnx.reference import ReferenceEvaluator
    feeds = {"m": np.array(mels, np.int64), "d": np.array(dft, np.int64), "r": np.array(rate, np.int64),
             "lo": np.array(lo, edge_dtype), "hi": np.array(hi, edge_dtype)}
    model = _Model(oh.make_node("MelWeightMatrix", list(feeds), ["y"], output_datatype=out_type), feeds, 17)
    got = HetnetBackend.run_model(model, list(feeds.values()))[0]
    want = ReferenceEvaluator(model).run(None, feeds)[0]
    assert got.dtype == want.dtype and got.shape == want.shape == (dft // 2 + 1, mels)
    np.testing.assert_array_equal(got, want)
    assert np.count_nonzero(got) >= mels


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
@pytest.mark.parametrize("axis", [0, 1, -2])
def test_softmax_over_a_non_last_axis_of_an_input_of_unknown_rank(op, axis):
    """The model declares no shape for x, so the axis cannot become the last by a transpose: the softmax is
    composed along it (exp(x - max) / sum), against numpy."""
    from onnx import TensorProto
    x = _F(2, 3, 4) * 10
    graph = oh.make_graph([oh.make_node(op, ["x"], ["y"], axis=axis)], "g",
                          [oh.make_tensor_value_info("x", TensorProto.FLOAT, None)],
                          [oh.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    got = HetnetBackend.run_model(oh.make_model(graph, opset_imports=[oh.make_opsetid("", 13)]), [x])[0]
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    want = e / e.sum(axis=axis, keepdims=True)
    np.testing.assert_allclose(got, np.log(want) if op == "LogSoftmax" else want, rtol=1e-5, atol=1e-6)
