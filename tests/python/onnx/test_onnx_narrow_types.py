"""ONNX's narrow element types (float8 E4M3FN/E4M3FNUZ/E5M2/E5M2FNUZ/E8M0, float4 E2M1, int4, uint4,
int2, uint2) in hetnet tensors (core/narrow_types.h): Cast, QuantizeLinear and DequantizeLinear
compared, value by value, with ml_dtypes (what onnx.numpy_helper uses) and ONNX's reference
evaluator, over every bit pattern and over a sweep of float32 values that covers rounding ties,
subnormals, overflow, infinities and NaN; initializers in ONNX's packed layouts; the refusal to write
a narrow tensor to a Caffe2 TensorProto."""
import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from hetnet.onnx.backend import HetnetBackend

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the references overflow on purpose

FLOAT8 = ["FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ"]
NARROW_FLOATS = FLOAT8 + ["FLOAT4E2M1", "FLOAT8E8M0"]
NARROW_INTS = ["INT4", "UINT4", "INT2", "UINT2"]


def NpType(name):
    return helper.tensor_dtype_to_np_dtype(getattr(TensorProto, name))


def Model(nodes, inputs, outputs, initializers=(), opset=25):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def RunCast(x, to_name, **attrs):
    to = getattr(TensorProto, to_name)
    from_type = helper.np_dtype_to_tensor_dtype(x.dtype)
    model = Model([helper.make_node("Cast", ["x"], ["y"], to=to, **attrs)],
                  [helper.make_tensor_value_info("x", from_type, x.shape)],
                  [helper.make_tensor_value_info("y", to, x.shape)])
    return HetnetBackend.run_model(model, [x])[0], model


def Bits(a):
    return np.ascontiguousarray(a).view(np.uint8)


def SweepFloat32():
    """Every float16 value (as float32, ties of the 8- and 4-bit formats included), random float32
    bit patterns, and the specials."""
    halfs = np.arange(0, 1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16).astype(np.float32)
    rng = np.random.default_rng(7)
    rand = rng.integers(0, 1 << 32, size=20000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 448, 464, 465, 240, 57344, 61440, 6, 7,
                        1e-30, -1e-30, 3.4e38], np.float32)
    return np.concatenate([halfs, rand, special])


@pytest.mark.parametrize("name", NARROW_FLOATS + NARROW_INTS)
def test_every_bit_pattern_casts_to_float_as_ml_dtypes(name):
    dtype = NpType(name)
    width = 8 if name.startswith("FLOAT8") else (4 if name in ("FLOAT4E2M1", "INT4", "UINT4") else 2)
    x = np.arange(1 << width, dtype=np.uint8).view(dtype)
    got, _ = RunCast(x, "FLOAT")
    want = x.astype(np.float32)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    np.testing.assert_array_equal(Bits(got[ok]), Bits(want[ok]))  # -0.0 included


@pytest.mark.parametrize("saturate", [1, 0])
@pytest.mark.parametrize("name", FLOAT8 + ["FLOAT4E2M1"])
def test_float32_sweep_casts_as_onnx_reference(name, saturate):
    x = SweepFloat32()
    got, model = RunCast(x, name, saturate=saturate)
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    assert got.dtype == want.dtype
    bad = np.nonzero(Bits(got) != Bits(want))[0]
    assert bad.size == 0, "%d of %d differ, e.g. x=%r: hetnet %r, reference %r" % (
        bad.size, x.size, x[bad[:4]], Bits(got)[bad[:4]], Bits(want)[bad[:4]])


@pytest.mark.parametrize("round_mode", ["up", "down", "nearest"])
@pytest.mark.parametrize("saturate", [1, 0])
def test_float32_sweep_casts_to_e8m0_as_onnx_reference(round_mode, saturate):
    x = SweepFloat32()
    got, _ = RunCast(x, "FLOAT8E8M0", saturate=saturate, round_mode=round_mode)
    want = numpy_helper.to_float8e8m0(x, saturate=bool(saturate), round_mode=round_mode)
    np.testing.assert_array_equal(Bits(got), Bits(want))


@pytest.mark.parametrize("name", NARROW_INTS)
def test_integers_and_floats_wrap_into_narrow_integers_as_numpy(name):
    dtype = NpType(name)
    ints = np.arange(-300, 300, dtype=np.int64)
    got, _ = RunCast(ints, name)
    np.testing.assert_array_equal(Bits(got), Bits(ints.astype(dtype)))
    floats = np.concatenate([np.linspace(-20, 20, 161).astype(np.float32), [np.nan, np.inf, -np.inf]]).astype(np.float32)
    got, _ = RunCast(floats, name)
    np.testing.assert_array_equal(Bits(got), Bits(floats.astype(dtype)))


@pytest.mark.parametrize("name", FLOAT8 + ["FLOAT4E2M1"] + NARROW_INTS)
def test_quantize_and_dequantize_match_the_onnx_reference(name):
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((4, 6)) * 5).astype(np.float32)
    scale = np.array([0.5, 0.25, 2.0, 1.0], np.float32)
    t = getattr(TensorProto, name)
    zero = np.zeros(4, np.float32).astype(NpType(name))
    if name in NARROW_INTS:
        lo, hi = ml_dtypes.iinfo(NpType(name)).min, ml_dtypes.iinfo(NpType(name)).max
        zero = np.array([lo, hi, 0, 1 if hi >= 1 else 0], np.int64).astype(NpType(name))
    q = Model([helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], axis=0)],
              [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape),
               helper.make_tensor_value_info("s", TensorProto.FLOAT, scale.shape),
               helper.make_tensor_value_info("z", t, zero.shape)],
              [helper.make_tensor_value_info("y", t, x.shape)])
    got = HetnetBackend.run_model(q, [x, scale, zero])[0]
    want = ReferenceEvaluator(q).run(None, {"x": x, "s": scale, "z": zero})[0]
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(Bits(got), Bits(want))
    dq = Model([helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], axis=0)],
               [helper.make_tensor_value_info("q", t, x.shape),
                helper.make_tensor_value_info("s", TensorProto.FLOAT, scale.shape),
                helper.make_tensor_value_info("z", t, zero.shape)],
               [helper.make_tensor_value_info("y", TensorProto.FLOAT, x.shape)])
    got = HetnetBackend.run_model(dq, [want, scale, zero])[0]
    ref = ReferenceEvaluator(dq).run(None, {"q": want, "s": scale, "z": zero})[0]
    np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("raw", [True, False])
@pytest.mark.parametrize("name", ["FLOAT8E4M3FN", "FLOAT8E5M2FNUZ", "FLOAT4E2M1", "INT4", "UINT4", "INT2", "UINT2"])
def test_packed_initializers_import_with_their_values(name, raw):
    """ONNX packs 4-bit values two and 2-bit values four to a byte (raw_data, or one byte per int32 in
    int32_data); an odd count leaves the last byte half used."""
    dtype = NpType(name)
    values = np.array([-3, -1.5, 0, 0.5, 1, 2, 3, -2, 1], np.float32)
    if name in NARROW_INTS:
        values = np.array([-2, -1, 0, 1, 1, 0, -1, -2, 1] if name.startswith("INT") else [0, 1, 2, 3, 3, 2, 1, 0, 1],
                          np.float32)
    narrow = values.astype(dtype)
    init = numpy_helper.from_array(narrow, "w") if raw else helper.make_tensor(
        "w", getattr(TensorProto, name), narrow.shape, narrow.tolist(), raw=False)
    assert init.HasField("raw_data") == raw
    model = Model([helper.make_node("Cast", ["w"], ["y"], to=TensorProto.FLOAT)], [],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, narrow.shape)], initializers=[init])
    got = HetnetBackend.run_model(model, [])[0]
    np.testing.assert_array_equal(got, narrow.astype(np.float32))


def test_narrow_tensors_are_refused_by_caffe2_serialization():
    from hetnet import workspace
    workspace.ResetWorkspace()
    workspace.FeedBlob("f8", np.array([1, 2, 448], np.float32).astype(ml_dtypes.float8_e4m3fn))
    back = workspace.FetchBlob("f8")
    assert back.dtype == ml_dtypes.float8_e4m3fn
    np.testing.assert_array_equal(back.astype(np.float32), [1, 2, 448])
    with pytest.raises(Exception, match="caffe2.proto has no data_type for float8_e4m3fn"):
        workspace.SerializeBlob("f8")
    workspace.FeedBlob("ok", np.ones(2, np.float32))  # the workspace stays usable
    assert workspace.SerializeBlob("ok")
