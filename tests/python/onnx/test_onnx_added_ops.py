"""Converters added for ONNX coverage (issue 15), on inputs the conformance cases do not try: integer
wrap-around of int8 / uint8 / int16 arithmetic computed in int32, Max / Min / Clip of narrow types,
CumSum / OneHot / ScatterElements / GatherND with run-time axes and negative indices, ArgMax's
select_last_index with ties, Range with run-time inputs. Expected values come from onnxruntime on the
same model (numpy where onnxruntime lacks the kernel)."""
import numpy as np
import onnx
import onnx.helper as oh
import onnxruntime
import pytest
from onnx import TensorProto, numpy_helper

import hetnet
from hetnet.onnx.backend import HetnetBackend

_NP_TO_ONNX = {np.dtype(k): v for k, v in [(np.float32, TensorProto.FLOAT), (np.float64, TensorProto.DOUBLE),
                                           (np.int8, TensorProto.INT8), (np.uint8, TensorProto.UINT8),
                                           (np.int16, TensorProto.INT16), (np.uint16, TensorProto.UINT16),
                                           (np.int32, TensorProto.INT32), (np.int64, TensorProto.INT64),
                                           (np.bool_, TensorProto.BOOL), (np.float16, TensorProto.FLOAT16)]}


def _Model(node, inputs, opset=18, consts=None):
    """One-node model over the given {name: array} graph inputs and {name: array} initializers."""
    consts = consts or {}
    ins = [oh.make_tensor_value_info(n, _NP_TO_ONNX[a.dtype], list(a.shape)) for n, a in inputs.items()]
    outs = [onnx.ValueInfoProto(name=o) for o in node.output]  # types left to the runtimes
    graph = oh.make_graph([node], "g", ins, outs, initializer=[numpy_helper.from_array(v, k) for k, v in consts.items()])
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", opset)])
    model.ir_version = 8  # onnxruntime here reads IR <= 13
    return model


def _Check(node, inputs, opset=18, consts=None, exact=True):
    model = _Model(node, inputs, opset, consts)
    got = HetnetBackend.run_model(model, list(inputs.values()))
    sess = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want = sess.run(None, inputs)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        if exact:
            np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)
    return got


@pytest.mark.parametrize("op", ["Add", "Sub", "Mul"])
@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16])
def test_narrow_integer_arithmetic_wraps_like_numpy(op, dtype):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(0)
    a = rng.integers(info.min, info.max, size=(3, 5), endpoint=True).astype(dtype)
    b = rng.integers(info.min, info.max, size=(5,), endpoint=True).astype(dtype)
    (got,) = HetnetBackend.run_model(_Model(oh.make_node(op, ["a", "b"], ["c"]), {"a": a, "b": b}), [a, b])
    with np.errstate(over="ignore"):
        want = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply}[op](a, b)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.float16])
def test_narrow_max_min_clip(dtype):
    rng = np.random.default_rng(1)
    a = (rng.standard_normal((4, 3)) * 50).astype(dtype)
    b = (rng.standard_normal((3,)) * 50).astype(dtype)
    _Check(oh.make_node("Max", ["a", "b"], ["c"]), {"a": a, "b": b})
    _Check(oh.make_node("Min", ["a", "b", "a"], ["c"]), {"a": a, "b": b})
    lo, hi = np.array(-10, dtype) if dtype != np.uint8 else np.array(3, dtype), np.array(20, dtype)
    _Check(oh.make_node("Clip", ["a", "lo", "hi"], ["c"]), {"a": a, "lo": lo, "hi": hi})
    _Check(oh.make_node("Clip", ["a", "", "hi"], ["c"]), {"a": a, "hi": hi}, consts={})


def test_comparisons_of_int8_and_float16():
    a = np.array([[-128, 0, 5], [127, -1, 5]], np.int8)
    b = np.array([5, 0, -128], np.int8)
    for op in ["Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual"]:
        _Check(oh.make_node(op, ["a", "b"], ["c"]), {"a": a, "b": b})
    h = np.array([0.5, -2, 65504, np.inf], np.float16)
    _Check(oh.make_node("Less", ["a", "b"], ["c"]), {"a": h, "b": h[::-1].copy()})


def test_cumsum_runtime_axis_and_flags():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 7
    for axis in [0, 1, -1]:
        for excl in [0, 1]:
            for rev in [0, 1]:
                _Check(oh.make_node("CumSum", ["x", "axis"], ["y"], exclusive=excl, reverse=rev),
                       {"x": x, "axis": np.array(axis, np.int64)})
    i = np.array([[100, 100, 100], [-5, 7, 1]], np.int32)
    _Check(oh.make_node("CumSum", ["x", "axis"], ["y"]), {"x": i, "axis": np.array(1, np.int32)})


def test_onehot_scatter_gather_negative_indices():
    idx = np.array([[0, -1, 3], [5, -6, 2]], np.int64)  # 5 and -6 are outside [-5, 5): all off
    _Check(oh.make_node("OneHot", ["i", "d", "v"], ["y"], axis=1),
           {"i": idx, "d": np.array(5, np.int64), "v": np.array([2, 9], np.float32)})
    data = np.arange(12, dtype=np.float32).reshape(3, 4)
    sidx = np.array([[-1, 0], [2, -4]], np.int64)
    upd = np.array([[10, 20], [30, 40]], np.float32)
    for red in ["none", "add", "mul", "max", "min"]:
        _Check(oh.make_node("ScatterElements", ["x", "i", "u"], ["y"], axis=1, reduction=red),
               {"x": data, "i": sidx, "u": upd})
    _Check(oh.make_node("GatherND", ["x", "i"], ["y"]), {"x": data, "i": np.array([[-1, 2], [0, -4]], np.int64)})
    nd = np.array([[-1], [0]], np.int64)
    _Check(oh.make_node("ScatterND", ["x", "i", "u"], ["y"], reduction="add"),
           {"x": data, "i": nd, "u": np.ones((2, 4), np.float32)})


def test_scatter_refuses_out_of_range_index():
    data = np.zeros((2, 3), np.float32)
    model = _Model(oh.make_node("ScatterElements", ["x", "i", "u"], ["y"], axis=1),
                   {"x": data, "i": np.array([[3]], np.int64), "u": np.ones((1, 1), np.float32)})
    with pytest.raises(hetnet.InvalidArgumentError, match=r"ScatterElements.*holds 3"):
        HetnetBackend.run_model(model, [data, np.array([[3]], np.int64), np.ones((1, 1), np.float32)])


def test_argmax_select_last_index_with_ties():
    x = np.array([[1, 3, 3, 0], [2, 2, 2, 2], [5, 1, 5, 4]], np.float32)
    for axis in [0, 1, -1]:
        for keep in [0, 1]:
            for op in ["ArgMax", "ArgMin"]:
                _Check(oh.make_node(op, ["x"], ["y"], axis=axis, keepdims=keep, select_last_index=1), {"x": x})


def test_range_runtime_inputs():
    for s, l, d, t in [(1, 10, 3, np.int32), (10, -3, -4, np.int64), (0.5, 2.0, 0.25, np.float32), (3, 3, 1, np.int64)]:
        _Check(oh.make_node("Range", ["s", "l", "d"], ["y"]),
               {"s": np.array(s, t), "l": np.array(l, t), "d": np.array(d, t)}, exact=False)


def test_unary_math_and_bitwise():
    x = np.linspace(-0.9, 0.9, 7).astype(np.float32)
    for op in ["Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Atanh"]:
        _Check(oh.make_node(op, ["x"], ["y"]), {"x": x}, exact=False)
    r = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 1.2, -1.7], np.float32)
    for op in ["Round", "Ceil", "Floor"]:
        _Check(oh.make_node(op, ["x"], ["y"]), {"x": r})
    a = np.array([[-128, 127, 0x55], [1, -1, 0]], np.int8)
    b = np.array([0x0F, -16, 0x33], np.int8)
    for op in ["BitwiseAnd", "BitwiseOr", "BitwiseXor"]:
        _Check(oh.make_node(op, ["a", "b"], ["c"]), {"a": a, "b": b})
    _Check(oh.make_node("BitwiseNot", ["a"], ["c"]), {"a": a})


def test_slice_squeeze_unsqueeze_split_with_runtime_inputs():
    x = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    i64 = lambda *v: np.array(v, np.int64)  # noqa: E731
    for starts, ends, axes, steps in [((0, -1), (3, -100), (0, 2), (2, -2)), ((-2,), (100,), (-2,), (1,)),
                                      ((4, 1), (0, 0), (2, 1), (-1, 1)), ((0,), (1,), (0,), (5,))]:
        _Check(oh.make_node("Slice", ["x", "s", "e", "a", "p"], ["y"]),
               {"x": x, "s": i64(*starts), "e": i64(*ends), "a": i64(*axes), "p": i64(*steps)})
    _Check(oh.make_node("Slice", ["x", "s", "e"], ["y"]), {"x": x, "s": i64(1, 1), "e": i64(3, -1)})
    # constant steps other than 1 also go to OnnxSlice
    _Check(oh.make_node("Slice", ["x", "s", "e", "", "p"], ["y"]), {"x": x, "s": i64(-1), "e": i64(-100)},
           consts={"p": i64(-1)})
    s = np.ones((1, 3, 1, 2), np.int32)
    _Check(oh.make_node("Squeeze", ["x", "a"], ["y"]), {"x": s, "a": i64(-2, 0)})
    _Check(oh.make_node("Unsqueeze", ["x", "a"], ["y"]), {"x": x, "a": i64(-1, 1)})
    _Check(oh.make_node("Split", ["x", "sp"], ["y0", "y1", "y2"], axis=2), {"x": x, "sp": i64(1, 0, 4)})


def _NumpyPad(x, pads, mode, value=0):
    """np.pad by the positive pads, then the negative ones crop (onnxruntime refuses reflect pads past
    the edge and leaves garbage for wrap with cropping, so numpy is the reference here)."""
    r = x.ndim
    grow = [(max(pads[i], 0), max(pads[i + r], 0)) for i in range(r)]
    kw = {"constant_values": value} if mode == "constant" else {}
    y = np.pad(x, grow, mode=mode, **kw)
    crop = tuple(slice(max(-pads[i], 0), y.shape[i] - max(-pads[i + r], 0)) for i in range(r))
    return y[crop]


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge", "wrap"])
def test_pad_modes_runtime_pads_crop_and_axes(mode):
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    i64 = lambda *v: np.array(v, np.int64)  # noqa: E731
    pads = [1, -1, 5, 0, 2, -2]
    model = _Model(oh.make_node("Pad", ["x", "p", "v"], ["y"], mode=mode),
                   {"x": x, "p": i64(*pads), "v": np.array(1.5, np.float32)})
    (got,) = HetnetBackend.run_model(model, [x, i64(*pads), np.array(1.5, np.float32)])
    np.testing.assert_array_equal(got, _NumpyPad(x, pads, mode, 1.5))
    _Check(oh.make_node("Pad", ["x", "p", "", "a"], ["y"], mode=mode), {"x": x, "p": i64(1, 2), "a": i64(-2)})
    # constant pads that PadImage cannot take (the C dim, int data) also go to OnnxPad
    xi = np.arange(12, dtype=np.int32).reshape(1, 2, 2, 3)
    _Check(oh.make_node("Pad", ["x", "p"], ["y"], mode=mode), {"x": xi}, consts={"p": i64(0, 1, 0, 1, 0, 0, 1, 2)})


@pytest.mark.parametrize("eq, shapes", [("ij,jk->ik", [(3, 4), (4, 2)]), ("...ii->...i", [(2, 3, 3)]),
                                        ("bij,bkj->bik", [(2, 3, 4), (2, 5, 4)]), ("ij", [(3, 4)]),
                                        ("ii", [(4, 4)]), ("i,j->ij", [(3,), (4,)]), ("...j,j", [(2, 3), (3,)])])
def test_einsum_against_onnxruntime(eq, shapes):
    rng = np.random.default_rng(2)
    inputs = {"x%d" % i: rng.standard_normal(s).astype(np.float32) for i, s in enumerate(shapes)}
    _Check(oh.make_node("Einsum", list(inputs), ["y"], equation=eq), inputs, exact=False)


def test_batchnorm_training_mode_matches_onnx_reference():
    """training_mode=1: batch statistics and momentum-updated running mean / var (ONNX's reference
    evaluator as the expectation), with a momentum and epsilon the conformance cases do not use."""
    import onnx.reference
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 4, 2, 5)).astype(np.float32)
    s, b = rng.standard_normal(4).astype(np.float32), rng.standard_normal(4).astype(np.float32)
    mean, var = rng.standard_normal(4).astype(np.float32), rng.uniform(0.5, 2, 4).astype(np.float32)
    node = oh.make_node("BatchNormalization", ["x", "s", "b", "mean", "var"], ["y", "rm", "rv"], training_mode=1,
                        momentum=0.7, epsilon=1e-3)
    inputs = {"x": x, "s": s, "b": b, "mean": mean, "var": var}
    model = _Model(node, inputs, opset=15)
    got = HetnetBackend.run_model(model, list(inputs.values()))
    want = onnx.reference.ReferenceEvaluator(model).run(None, inputs)
    for g, w in zip(got, want):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
