"""ONNX reductions whose axes arrive at run time (a graph input, not an initializer): imported onto
hetnet's Reduce* ops with the axes as input 1, compared against onnxruntime over keepdims,
noop_with_empty_axes, negative, empty and reordered axes, several dtypes; bad axes (out of range,
repeated, wrong type or rank) are errors naming the operator and the axes blob."""
import numpy as np
import pytest

from onnx_import_util import helper, make_model, onnx, run_hetnet, run_ort, TensorProto

import hetnet

ONNX_TYPE = {np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE, np.int32: TensorProto.INT32,
             np.int64: TensorProto.INT64, np.bool_: TensorProto.BOOL}
# op -> (opset where axes became an input, dtypes to try)
OPS = {
    "ReduceSum": (13, [np.float32, np.float64, np.int32, np.int64]),
    "ReduceMean": (18, [np.float32, np.float64]),
    "ReduceMax": (18, [np.float32, np.float64, np.int32, np.int64]),
    "ReduceMin": (18, [np.float32, np.float64, np.int32, np.int64]),
    "ReduceProd": (18, [np.float32, np.float64, np.int32, np.int64]),
    "ReduceSumSquare": (18, [np.float32]),
    "ReduceL1": (18, [np.float32]),
    "ReduceL2": (18, [np.float32]),
    "ReduceLogSum": (18, [np.float32]),
    "ReduceLogSumExp": (18, [np.float32, np.float64]),
}
AXES = [[1], [-1], [0, 2], [2, 0], [-3, -1], [0, 1, 2], []]
RNG = np.random.default_rng(7)


def runtime_axes_model(op, dtype, rank=3, opset=18, axes_dtype=TensorProto.INT64, **attrs):
    node = helper.make_node(op, ["x", "axes"], ["y"], **attrs)
    model = make_model([node], [], [("y",)], opset=max(opset, OPS[op][0]))
    model.graph.input.extend([helper.make_tensor_value_info("x", ONNX_TYPE[dtype], [None] * rank),
                              helper.make_tensor_value_info("axes", axes_dtype, [None])])
    model.graph.output[0].type.tensor_type.elem_type = ONNX_TYPE[dtype]
    return model


def sample(op, dtype, shape=(2, 3, 4)):
    if dtype == np.bool_:
        return RNG.random(shape) > 0.5
    if np.issubdtype(dtype, np.integer):
        return RNG.integers(-3, 4, shape).astype(dtype)
    x = RNG.standard_normal(shape).astype(dtype)
    return np.abs(x) + 0.25 if op == "ReduceLogSum" else x  # log of a positive sum


def compare(model, feeds, rtol=1e-5):
    ours, _ = run_hetnet(model, feeds)
    ref = run_ort(model, feeds)
    assert ours["y"].shape == ref["y"].shape
    assert ours["y"].dtype == ref["y"].dtype
    np.testing.assert_allclose(ours["y"], ref["y"], rtol=rtol, atol=1e-6)


@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("keepdims", [0, 1])
def test_runtime_axes_match_onnxruntime(op, keepdims):
    for dtype in OPS[op][1]:
        model = runtime_axes_model(op, dtype, keepdims=keepdims)
        x = sample(op, dtype)
        for axes in AXES:
            compare(model, {"x": x, "axes": np.array(axes, np.int64)})


@pytest.mark.parametrize("op", sorted(OPS))
def test_noop_with_empty_axes(op):
    model = runtime_axes_model(op, np.float32, keepdims=0, noop_with_empty_axes=1)
    x = sample(op, np.float32)
    compare(model, {"x": x, "axes": np.array([], np.int64)})  # L1, L2, ... still apply abs, square, ...
    if op in ("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceLogSumExp"):
        ours, _ = run_hetnet(model, {"x": x, "axes": np.array([], np.int64)})
        np.testing.assert_allclose(ours["y"], x, rtol=1e-6)  # nothing reduced: y is x
    compare(model, {"x": x, "axes": np.array([1, -1], np.int64)})  # non-empty axes still reduce


def test_int32_axes_and_one_net_for_many_axes():
    model = runtime_axes_model("ReduceSum", np.float32, axes_dtype=TensorProto.INT32, keepdims=0, opset=13)
    x = sample("ReduceSum", np.float32, (3, 4, 5))
    ours, info = run_hetnet(model, {"x": x, "axes": np.array([0], np.int32)})
    np.testing.assert_allclose(ours["y"], x.sum(axis=0), rtol=1e-5)
    ours, _ = run_hetnet(model, {"x": x, "axes": np.array([2, 1], np.int32)})
    np.testing.assert_allclose(ours["y"], x.sum(axis=(1, 2)), rtol=1e-5)


def test_max_min_of_bool_and_nan():
    for op in ("ReduceMax", "ReduceMin"):
        model = runtime_axes_model(op, np.bool_, opset=20, keepdims=1)
        compare(model, {"x": sample(op, np.bool_), "axes": np.array([1], np.int64)})
        model = runtime_axes_model(op, np.float32, keepdims=0)
        x = sample(op, np.float32)
        x[0, 1, 2] = np.nan
        ours, _ = run_hetnet(model, {"x": x, "axes": np.array([2], np.int64)})
        want = np.max(x, axis=2) if op == "ReduceMax" else np.min(x, axis=2)  # numpy: NaN propagates
        np.testing.assert_array_equal(np.isnan(ours["y"]), np.isnan(want))
        np.testing.assert_allclose(ours["y"], want, rtol=1e-6)


def test_empty_set_reductions():
    x = np.zeros((2, 0, 4), np.float32)
    want = {"ReduceSum": 0.0, "ReduceProd": 1.0, "ReduceMax": -np.inf, "ReduceMin": np.inf,
            "ReduceLogSumExp": -np.inf}
    for op, value in want.items():
        ours, _ = run_hetnet(runtime_axes_model(op, np.float32, keepdims=1), {"x": x, "axes": np.array([1], np.int64)})
        assert ours["y"].shape == (2, 1, 4)
        np.testing.assert_array_equal(ours["y"], np.full((2, 1, 4), value, np.float32))


def test_log_sum_exp_does_not_overflow():
    model = runtime_axes_model("ReduceLogSumExp", np.float32, keepdims=0)
    x = np.array([[[1000.0, 1000.0], [-1000.0, 0.0]]], np.float32)
    ours, _ = run_hetnet(model, {"x": x, "axes": np.array([2], np.int64)})
    np.testing.assert_allclose(ours["y"], [[1000.0 + np.log(2.0), 0.0]], rtol=1e-6)


@pytest.mark.parametrize("axes, words", [
    ([3], ["axis 3", "out of range"]),
    ([-4], ["axis -4", "out of range"]),
    ([1, -2], ["axis -2", "repeats dim 1"]),
])
def test_bad_axes_name_op_and_blob(axes, words):
    model = runtime_axes_model("ReduceSum", np.float32, keepdims=1)
    with pytest.raises(hetnet.InvalidArgumentError) as e:
        run_hetnet(model, {"x": sample("ReduceSum", np.float32), "axes": np.array(axes, np.int64)})
    msg = str(e.value)
    for w in ["ReduceSum", "'axes'", "'x'"] + words:
        assert w in msg, msg


def test_axes_of_wrong_type_or_rank():
    model = runtime_axes_model("ReduceMax", np.float32, keepdims=1)
    with pytest.raises(hetnet.InvalidArgumentError, match=r"ReduceMax: input 1 \('axes'\).*2-D|must be 0-D or 1-D"):
        run_hetnet(model, {"x": sample("ReduceMax", np.float32), "axes": np.array([[1]], np.int64)})
    model = runtime_axes_model("ReduceMax", np.float32, keepdims=1, axes_dtype=TensorProto.FLOAT)
    with pytest.raises(hetnet.InvalidArgumentError, match=r"ReduceMax: input 1 \('axes'\).*float32"):
        run_hetnet(model, {"x": sample("ReduceMax", np.float32), "axes": np.array([1], np.float32)})


def test_constant_axes_still_become_an_argument():
    model = runtime_axes_model("ReduceProd", np.float32, keepdims=0)
    model.graph.initializer.append(onnx.numpy_helper.from_array(np.array([0, -1], np.int64), "axes"))
    del model.graph.input[1]
    x = sample("ReduceProd", np.float32)
    ours, info = run_hetnet(model, {"x": x})
    np.testing.assert_allclose(ours["y"], run_ort(model, {"x": x})["y"], rtol=1e-5)
    from hetnet.proto import caffe2_pb2
    net = caffe2_pb2.NetDef()
    net.ParseFromString(info["predict_net"])
    (op,) = [o for o in net.op if o.type == "ReduceProd"]
    assert list(op.input) == ["x"]
    assert [list(a.ints) for a in op.arg if a.name == "axes"] == [[0, -1]]


def test_integer_sum_and_product_wrap_like_numpy():
    # ONNX's reference (numpy) wraps on overflow; onnxruntime saturates the product, so numpy is the reference.
    x = np.array([[[2**20, 2**15, 3], [2**31 - 1, 2, 5]]], np.int32)
    for op, ref in (("ReduceProd", np.prod), ("ReduceSum", np.sum)):
        ours, _ = run_hetnet(runtime_axes_model(op, np.int32, keepdims=0), {"x": x, "axes": np.array([2], np.int64)})
        assert ours["y"].dtype == np.int32
        np.testing.assert_array_equal(ours["y"], ref(x, axis=2, dtype=np.int32))
