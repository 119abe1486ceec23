"""uint32, uint64 and bfloat16 (ml_dtypes' numpy type, as onnx.numpy_helper uses) through the Python
bridge and the CPU kernels, against numpy / ml_dtypes as the reference."""
import ml_dtypes
import numpy as np
import pytest

from hetnet import core
from hetnet.proto import caffe2_pb2

BF16 = np.dtype(ml_dtypes.bfloat16)


def _RandomFloats(n, seed):
    """float32 values over every exponent (denormals included) plus the special ones."""
    bits = np.random.default_rng(seed).integers(0, 2**32, size=n, dtype=np.uint64).astype(np.uint32)
    f = bits.view(np.float32)
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-40, 3.4028235e38, 1.00390625,
                         1.01171875], dtype=np.float32)
    return np.concatenate([f, specials])


@pytest.mark.parametrize("dtype", [np.uint32, np.uint64])
def test_unsigned_round_trip_keeps_the_top_bit(ws, dtype):
    top = np.iinfo(dtype).max
    arr = np.array([[0, 1, top], [top - 1, top // 2 + 1, 7]], dtype=dtype)
    ws.FeedBlob("u", arr)
    out = ws.FetchBlob("u")
    assert out.dtype == arr.dtype
    np.testing.assert_array_equal(out, arr)
    assert ws.BlobInfo("u")["dtype"] == np.dtype(dtype).name
    ws.DeserializeBlob("v", ws.SerializeBlob("u"))
    np.testing.assert_array_equal(ws.FetchBlob("v"), arr)


def test_bfloat16_round_trip_is_bit_exact(ws):
    with np.errstate(invalid="ignore"):  # NaN payloads
        arr = _RandomFloats(1000, 1).astype(BF16).reshape(10, -1)
    ws.FeedBlob("b", arr)
    out = ws.FetchBlob("b")
    assert out.dtype == BF16
    np.testing.assert_array_equal(out.view(np.uint16), arr.view(np.uint16))
    ws.DeserializeBlob("c", ws.SerializeBlob("b"))
    np.testing.assert_array_equal(ws.FetchBlob("c").view(np.uint16), arr.view(np.uint16))


def test_cast_to_and_from_bfloat16_matches_ml_dtypes(ws):
    f = _RandomFloats(20000, 2)
    ws.FeedBlob("f", f)
    ws.RunOperatorOnce(core.CreateOperator("Cast", ["f"], ["b"], to=caffe2_pb2.TensorProto.BFLOAT16))
    got = ws.FetchBlob("b")
    with np.errstate(invalid="ignore"):
        want = f.astype(BF16)
    nan = np.isnan(f)
    assert np.isnan(got[nan].astype(np.float32)).all()
    np.testing.assert_array_equal(got[~nan].view(np.uint16), want[~nan].view(np.uint16))
    ws.RunOperatorOnce(core.CreateOperator("Cast", ["b"], ["back"], to=caffe2_pb2.TensorProto.FLOAT))
    np.testing.assert_array_equal(ws.FetchBlob("back"), got.astype(np.float32))


@pytest.mark.parametrize("dtype", [np.uint32, np.uint64])
@pytest.mark.parametrize("op,fn", [("Add", np.add), ("Sub", np.subtract), ("Mul", np.multiply)])
def test_unsigned_arithmetic_wraps_as_numpy(ws, dtype, op, fn):
    rng = np.random.default_rng(3)
    info = np.iinfo(dtype)
    a = rng.integers(0, info.max, size=(3, 4), dtype=dtype, endpoint=True)
    b = rng.integers(0, info.max, size=(4,), dtype=dtype, endpoint=True)
    ws.FeedBlob("a", a)
    ws.FeedBlob("b", b)
    ws.RunOperatorOnce(core.CreateOperator(op, ["a", "b"], ["c"]))
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(ws.FetchBlob("c"), fn(a, b))


def test_cast_from_int64_to_unsigned_wraps_as_numpy_astype(ws):
    x = np.array([-1, 0, 2**40 + 3, -(2**63)], dtype=np.int64)
    ws.FeedBlob("x", x)
    for to, dtype in [(caffe2_pb2.TensorProto.UINT32, np.uint32), (caffe2_pb2.TensorProto.UINT64, np.uint64)]:
        ws.RunOperatorOnce(core.CreateOperator("Cast", ["x"], ["y"], to=to))
        np.testing.assert_array_equal(ws.FetchBlob("y"), x.astype(dtype))


@pytest.mark.parametrize("raw", [True, False], ids=["raw_data", "typed_fields"])
@pytest.mark.parametrize("elem,values", [
    ("UINT64", np.array([2**63 + 5, 2**64 - 1, 3], np.uint64)),
    ("UINT32", np.array([2**32 - 1, 7, 0], np.uint32)),
    ("BFLOAT16", np.array([1.5, -2.25, 3e38], np.float32))])
def test_onnx_initializers_of_the_new_types(elem, values, raw):
    """An ONNX initializer of each type (raw_data or ONNX's typed field) imports bit-exactly: Add with
    an input of the same type for the unsigned ones (wrapping), Concat for bfloat16."""
    from onnx import TensorProto, helper, numpy_helper
    from hetnet.onnx import backend
    elem_type = getattr(TensorProto, elem)
    arr = values.astype(BF16) if elem == "BFLOAT16" else values
    if raw:
        init = numpy_helper.from_array(arr, "c")
    else:  # uint64_data for the unsigned types, 16-bit patterns in int32_data for bfloat16
        init = helper.make_tensor("c", elem_type, arr.shape, values.tolist())
    bf16 = elem == "BFLOAT16"
    node = helper.make_node("Concat", ["x", "c"], ["y"], axis=0) if bf16 else helper.make_node("Add", ["x", "c"], ["y"])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", elem_type, [3])],
                              [helper.make_tensor_value_info("y", elem_type, None)], [init])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    x = arr[::-1].copy()
    y = backend.run_model(model, [x])[0]
    with np.errstate(over="ignore"):
        want = np.concatenate([x, arr]) if bf16 else x + arr
    assert y.dtype == want.dtype
    np.testing.assert_array_equal(y.view(np.uint8), want.view(np.uint8))


@pytest.mark.parametrize("dtype", [BF16, np.dtype(np.float16)], ids=["bfloat16", "float16"])
@pytest.mark.parametrize("op,fn", [("Add", np.add), ("Sub", np.subtract), ("Mul", np.multiply), ("Div", np.divide),
                                   ("GT", np.greater), ("EQ", np.equal), ("LE", np.less_equal)])
def test_sixteen_bit_float_binary_ops_match_numpy(ws, dtype, op, fn):
    """CPU Add/Sub/Mul/Div and comparisons on float16 / bfloat16 (numpy broadcasting) against numpy
    (ml_dtypes for bfloat16), which also computes through float32 and rounds once."""
    rng = np.random.default_rng(5)
    a = (rng.standard_normal((3, 4)) * 100).astype(dtype)
    b = (rng.standard_normal((4,)) * 3).astype(dtype)
    b[0] = a[0, 0]  # an equal pair
    ws.FeedBlob("a", a)
    ws.FeedBlob("b", b)
    ws.RunOperatorOnce(core.CreateOperator(op, ["a", "b"], ["c"]))
    got = ws.FetchBlob("c")
    want = fn(a, b)
    assert got.dtype == want.dtype
    if want.dtype == np.bool_:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))


@pytest.mark.parametrize("dtype", [BF16, np.dtype(np.float16)], ids=["bfloat16", "float16"])
def test_einsum_on_sixteen_bit_floats_rounds_the_float64_sum_once(ws, dtype):
    rng = np.random.default_rng(9)
    a = rng.standard_normal((2, 3, 5)).astype(dtype)
    b = rng.standard_normal((2, 5, 4)).astype(dtype)
    ws.FeedBlob("a", a)
    ws.FeedBlob("b", b)
    ws.RunOperatorOnce(core.CreateOperator("Einsum", ["a", "b"], ["c"], equation="bij,bjk->bik"))
    got = ws.FetchBlob("c")
    want = np.einsum("bij,bjk->bik", a.astype(np.float64), b.astype(np.float64)).astype(np.float32).astype(dtype)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))


@pytest.mark.parametrize("dtype", [BF16, np.dtype(np.float16)], ids=["bfloat16", "float16"])
def test_unique_on_sixteen_bit_floats_matches_numpy(ws, dtype):
    x = np.array([2.5, -1.0, 2.5, 0.125, -1.0, 7.0, 0.125, 2.5], np.float32).astype(dtype)
    ws.FeedBlob("x", x)
    ws.RunOperatorOnce(core.CreateOperator("Unique", ["x"], ["y", "i", "inv", "n"]))
    y, first, inverse, counts = np.unique(x.astype(np.float32), return_index=True, return_inverse=True,
                                          return_counts=True)
    assert ws.FetchBlob("y").dtype == dtype
    np.testing.assert_array_equal(ws.FetchBlob("y").astype(np.float32), y)
    np.testing.assert_array_equal(ws.FetchBlob("i"), first)
    np.testing.assert_array_equal(ws.FetchBlob("inv"), inverse)
    np.testing.assert_array_equal(ws.FetchBlob("n"), counts)
