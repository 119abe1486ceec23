"""ONNX Resize / Upsample onto ResizeInterp (linear, cubic, nearest beyond ResizeNearest's pixels),
CastLike (declared, undeclared -> the runtime CastLike op, types hetnet lacks) and BitShift, against
onnxruntime (and onnx's reference evaluator where onnxruntime differs or lacks the case)."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from onnx_import_util import predict_ops, rand, run_hetnet, run_ort  # noqa: E402

import hetnet  # noqa: E402
from hetnet import _C, core, workspace  # noqa: E402

F = TensorProto.FLOAT


def graph_model(nodes, inputs, outputs, inits=(), opset=19):
    """inputs / outputs: (name, elem_type, shape or None); inits: {name: array}."""
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(*i) for i in inputs],
                          [helper.make_tensor_value_info(*o) for o in outputs],
                          [numpy_helper.from_array(v, k) for k, v in dict(inits).items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8 if opset <= 17 else 10
    return m


def compare(model, feeds, ref="ort", atol=1e-5, op=None):
    ours, info = run_hetnet(model, feeds)
    theirs = run_ort(model, feeds) if ref == "ort" else dict(
        zip([o.name for o in model.graph.output], ReferenceEvaluator(model).run(None, feeds)))
    for k, v in theirs.items():
        assert ours[k].shape == v.shape, k
        assert ours[k].dtype == v.dtype, k
        np.testing.assert_allclose(ours[k], v, rtol=1e-5, atol=atol, err_msg=k)
    if op:
        assert op in predict_ops(info)
    return ours


def resize_model(x_shape, attrs, feeds, opset=19):
    """Resize(X, roi, scales, sizes) with the inputs in `feeds` (a subset of roi/scales/sizes) fed at
    run time."""
    ins = ["X"] + [w if w in feeds else "" for w in ("roi", "scales", "sizes")]
    while ins[-1] == "":
        ins.pop()
    types = {"roi": F, "scales": F, "sizes": TensorProto.INT64}
    inputs = [("X", F, list(x_shape))] + [(w, types[w], list(v.shape)) for w, v in feeds.items()]
    return graph_model([helper.make_node("Resize", ins, ["Y"], **attrs)], inputs, [("Y", F, None)], opset=opset)


def run_resize(x, attrs, ref="ort", atol=1e-5, **feeds):
    """Resize of x by the feeds (roi / scales / sizes arrays) in hetnet and in the reference."""
    model = resize_model(x.shape, attrs, feeds)
    return compare(model, dict(feeds, X=x), ref=ref, atol=atol, op="ResizeInterp")


CTMS = ["half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel", "half_pixel_symmetric"]


@pytest.mark.parametrize("mode", ["linear", "cubic"])
@pytest.mark.parametrize("ctm", CTMS)
@pytest.mark.parametrize("scales", [[1, 1, 1.7, 0.6], [1, 1, 0.5, 2.5], [1, 1, 3.0, 1.0]])
def test_resize_linear_cubic_scales_against_ort(mode, ctm, scales):
    x = rand(2, 3, 5, 7)
    # align_corners divides by scale * input length - 1, as the ONNX reference (whose results are the
    # conformance data) does; onnxruntime divides by the integer output length - 1 instead.
    ref = "onnx" if ctm == "align_corners" else "ort"
    run_resize(x, dict(mode=mode, coordinate_transformation_mode=ctm), ref=ref, scales=np.array(scales, np.float32))


# (onnxruntime 1.30 ignores a negative axis under not_larger / not_smaller: stretch only there.)
@pytest.mark.parametrize("policy,axes", [(p, a) for p in ("stretch", "not_larger", "not_smaller")
                                         for a in ([2, 3], [3, 2])] + [("stretch", [-1]), ("stretch", [-1, 2])])
def test_resize_sizes_axes_and_aspect_policy(policy, axes):
    x = rand(1, 2, 6, 4)
    sizes = np.array([9, 3][:len(axes)], np.int64)
    y = run_resize(x, dict(mode="linear", axes=axes, keep_aspect_ratio_policy=policy), sizes=sizes)
    if policy == "stretch":
        assert [y["Y"].shape[a] for a in axes] == list(sizes)


@pytest.mark.parametrize("a,exclude", [(-0.5, 1), (-0.75, 0), (-0.5, 0)])
def test_resize_cubic_coeff_and_exclude_outside(a, exclude):
    x = rand(1, 1, 6, 6)
    run_resize(x, dict(mode="cubic", cubic_coeff_a=a, exclude_outside=exclude),
               scales=np.array([1, 1, 0.8, 1.6], np.float32))


@pytest.mark.parametrize("mode", ["linear", "cubic"])
@pytest.mark.parametrize("scales", [[1, 1, 0.6, 0.35], [1, 1, 0.5, 1.5]])
def test_resize_antialias_against_reference(mode, scales):
    x = rand(1, 2, 9, 11)
    run_resize(x, dict(mode=mode, antialias=1), ref="onnx", scales=np.array(scales, np.float32))


def test_resize_tf_crop_and_resize_with_extrapolation():
    x = rand(1, 1, 6, 5)
    roi = np.array([0, 0, -0.2, 0.3, 1, 1, 0.9, 1.4], np.float32)
    y = run_resize(x, dict(mode="linear", coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=7.5),
                   ref="onnx", roi=roi, sizes=np.array([1, 1, 4, 6], np.int64))
    assert (y["Y"] == 7.5).any()  # some samples fall outside the input


@pytest.mark.parametrize("nearest_mode", ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"])
@pytest.mark.parametrize("ctm", ["half_pixel", "asymmetric", "align_corners"])
def test_resize_nearest_runtime_scales(nearest_mode, ctm):
    x = rand(1, 2, 4, 5)
    run_resize(x, dict(mode="nearest", nearest_mode=nearest_mode, coordinate_transformation_mode=ctm),
               ref="onnx" if ctm == "align_corners" else "ort", atol=0, scales=np.array([1, 1, 1.5, 0.7], np.float32))


def test_resize_5d_trilinear_and_3d():
    x = rand(1, 2, 3, 4, 5)
    run_resize(x, dict(mode="linear"), ref="onnx", scales=np.array([1, 1, 2, 0.5, 1.4], np.float32))
    run_resize(rand(2, 3, 8), dict(mode="cubic"), ref="onnx", scales=np.array([1, 1, 0.75], np.float32))


def test_upsample_9_and_resize_10_linear_are_asymmetric():
    x = rand(1, 1, 3, 4)
    s = np.array([1, 1, 2, 1.5], np.float32)
    for op, opset in (("Upsample", 9), ("Resize", 10)):
        model = graph_model([helper.make_node(op, ["X", "s"], ["Y"], mode="linear")], [("X", F, [1, 1, 3, 4])],
                            [("Y", F, None)], {"s": s}, opset=opset)
        compare(model, {"X": x}, op="ResizeInterp")


def test_resize_bad_inputs_name_the_op_and_blob():
    x, bad_scales, bad_sizes = rand(1, 1, 4, 4), np.ones(3, np.float32), np.array([1, 1, -2, 3], np.int64)
    model = resize_model(x.shape, dict(mode="linear"), {"scales": bad_scales})
    with pytest.raises(hetnet.InvalidArgumentError, match=r"ResizeInterp.*scales has 3 values; want 4"):
        run_hetnet(model, {"X": x, "scales": bad_scales})
    model = resize_model(x.shape, dict(mode="linear"), {"sizes": bad_sizes})
    with pytest.raises(hetnet.InvalidArgumentError, match="sizes must not be negative"):
        run_hetnet(model, {"X": x, "sizes": bad_sizes})
    model = resize_model(x.shape, dict(mode="area"), {"scales": bad_scales})
    with pytest.raises(hetnet.UnsupportedError, match="Resize.*mode 'area' is not supported"):
        _C.onnx_import(model.SerializeToString())


# CastLike ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("src,dst", [(np.float32, np.int32), (np.float32, np.float16), (np.int64, np.float32),
                                     (np.float64, np.uint8), (np.float32, np.bool_), (np.int32, np.float64)])
def test_castlike_undeclared_like_casts_at_run_time(src, dst):
    # 'like' is an intermediate (Identity's output) without value_info: its type is read at run time.
    tsrc, tdst = (helper.np_dtype_to_tensor_dtype(np.dtype(t)) for t in (src, dst))
    nodes = [helper.make_node("Identity", ["l"], ["like"]), helper.make_node("CastLike", ["x", "like"], ["y"])]
    model = graph_model(nodes, [("x", tsrc, [2, 3]), ("l", tdst, [1])], [("y", tdst, None)])
    x = (np.random.default_rng(5).standard_normal((2, 3)) * 40).astype(src)
    ours = compare(model, {"x": x, "l": np.zeros(1, dst)}, atol=0, op="CastLike")
    assert ours["y"].dtype == np.dtype(dst)


def test_castlike_declared_or_constant_like_is_a_cast():
    model = graph_model([helper.make_node("CastLike", ["x", "k"], ["y"])], [("x", F, [4])],
                        [("y", TensorProto.INT32, None)], {"k": np.zeros(1, np.int32)})
    ours = compare(model, {"x": np.array([1.5, -2.7, 3.2, 9], np.float32)}, atol=0, op="Cast")
    assert ours["y"].dtype == np.int32


def test_castlike_to_a_type_hetnet_lacks_says_which():
    model = graph_model([helper.make_node("CastLike", ["x", "like"], ["y"])],
                        [("x", F, [2]), ("like", TensorProto.FLOAT6E2M3, [1])],
                        [("y", TensorProto.FLOAT6E2M3, None)])
    with pytest.raises(hetnet.UnsupportedError, match=r"CastLike.*cast to FLOAT6E2M3 \(the type of input 'like'\)"):
        _C.onnx_import(model.SerializeToString())


def test_castlike_op_rejects_string_like():
    workspace.ResetWorkspace()
    workspace.FeedBlob("x", np.ones(2, np.float32))
    workspace.FeedBlob("s", np.array([b"a"], dtype=object))
    with pytest.raises(hetnet.InvalidArgumentError, match=r"CastLike: input 1 \('s'\) is string"):
        workspace.RunOperatorOnce(core.CreateOperator("CastLike", ["x", "s"], ["y"]))


# BitShift ---------------------------------------------------------------------------------------

def bitshift_model(direction, dtype, xs, ys, opset):
    t = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    return graph_model([helper.make_node("BitShift", ["x", "y"], ["z"], direction=direction)],
                       [("x", t, list(xs)), ("y", t, list(ys))], [("z", t, None)], opset=opset)


@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_bitshift_unsigned_broadcast(direction, dtype):
    rng = np.random.default_rng(7)
    info = np.iinfo(dtype)
    x = rng.integers(0, info.max, (3, 4), dtype=dtype, endpoint=True)
    y = rng.integers(0, info.bits - 1, (1, 4), dtype=dtype, endpoint=True)
    ref = "ort" if dtype == np.uint8 else "onnx"  # onnxruntime 1.30 has no uint16 BitShift
    compare(bitshift_model(direction, dtype, x.shape, y.shape, 11), {"x": x, "y": y}, ref=ref, atol=0, op="BitShift")


@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8])
def test_bitshift_signed_and_out_of_range_shifts_against_reference(direction, dtype):
    # opset 28: arithmetic right shifts, left shifts past the sign bit, shifts < 0 or >= the width.
    info = np.iinfo(dtype)
    x = np.array([info.min, -7 if info.min < 0 else 9, -1 if info.min < 0 else 1, 0, 5, info.max], dtype)
    y = np.array([1, 2, info.bits - 1, info.bits, info.bits + 3, 3], dtype)
    if info.min < 0:
        y[4] = -2
    z = compare(bitshift_model(direction, dtype, x.shape, y.shape, 28), {"x": x, "y": y}, ref="onnx", atol=0)
    assert z["z"][3] == 0  # shift >= width


def test_bitshift_bad_inputs_name_the_op_and_blob():
    x, y = np.ones(3, np.uint8), np.ones(3, np.int16)
    workspace.ResetWorkspace()
    workspace.FeedBlob("x", x)
    workspace.FeedBlob("y", y)
    with pytest.raises(hetnet.InvalidArgumentError, match=r"BitShift: input 0 \('x'\) is uint8 but input 1 \('y'\)"):
        workspace.RunOperatorOnce(core.CreateOperator("BitShift", ["x", "y"], ["z"], direction="LEFT"))
    workspace.FeedBlob("y", np.ones((2, 2), np.uint8))
    with pytest.raises(hetnet.InvalidArgumentError, match="BitShift.*do not broadcast"):
        workspace.RunOperatorOnce(core.CreateOperator("BitShift", ["x", "y"], ["z"], direction="LEFT"))
    model = bitshift_model("UP", np.uint8, [3], [3], 11)
    with pytest.raises(hetnet.InvalidArgumentError, match="BitShift.*LEFT or RIGHT"):
        _C.onnx_import(model.SerializeToString())
