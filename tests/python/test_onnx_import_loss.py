"""ONNX NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss imported onto hetnet's operators of the
same name, compared against onnxruntime over reductions, class weights, ignore_index, 2-D to 4-D
inputs, int32/int64 targets, float32/float64 and SCE's log_prob output; bad targets are errors.
Also GatherElements (what ONNX's expanded NLL uses): axes, negative indices, dtypes, bad indices."""
import numpy as np
import pytest

from onnx_import_util import helper, make_model, run_hetnet, run_ort, TensorProto

import hetnet

RNG = np.random.default_rng(11)
FLOATS = {np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE}


def loss_model(op, dtype, rank, weight, log_prob=False, target_type=TensorProto.INT64, **attrs):
    inputs = ["x", "t", "w"] if weight else ["x", "t"]
    outputs = ["y", "lp"] if log_prob else ["y"]
    model = make_model([helper.make_node(op, inputs, outputs, **attrs)], [], [(o,) for o in outputs], opset=22)
    model.graph.input.extend([helper.make_tensor_value_info("x", FLOATS[dtype], [None] * rank),
                              helper.make_tensor_value_info("t", target_type, [None] * (rank - 1))])
    if weight:
        model.graph.input.append(helper.make_tensor_value_info("w", FLOATS[dtype], [None]))
    for o in model.graph.output:
        o.type.tensor_type.elem_type = FLOATS[dtype]
    return model


def feeds(op, dtype, shape, weight, ignore_index=None, target_dtype=np.int64):
    C = shape[1]
    x = RNG.standard_normal(shape).astype(dtype)
    if op == "NegativeLogLikelihoodLoss":
        x = -np.abs(x)  # log-probabilities
    t = RNG.integers(0, C, (shape[0],) + shape[2:]).astype(target_dtype)
    if ignore_index is not None:
        t.flat[::3] = ignore_index
    f = {"x": x, "t": t}
    if weight:
        f["w"] = (RNG.random(C) + 0.5).astype(dtype)
    return f


def compare(model, f, rtol=1e-5):
    ours, _ = run_hetnet(model, f)
    ref = run_ort(model, f)
    assert set(ours) == set(ref)
    for k in ref:
        assert ours[k].shape == ref[k].shape, k
        assert ours[k].dtype == ref[k].dtype, k
        np.testing.assert_allclose(ours[k], ref[k], rtol=rtol, atol=1e-6, err_msg=k)


@pytest.mark.parametrize("op", ["NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"])
@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("shape", [(4, 5), (3, 4, 2), (2, 3, 2, 3)])
def test_losses_match_onnxruntime(op, reduction, shape):
    for dtype in (np.float32, np.float64):
        for weight in (False, True):
            for ii in (None, -1, 2):
                attrs = {"reduction": reduction}
                if ii is not None:
                    attrs["ignore_index"] = ii
                model = loss_model(op, dtype, len(shape), weight, **attrs)
                compare(model, feeds(op, dtype, shape, weight, ii))


def test_softmax_cross_entropy_log_prob_and_int32_targets():
    model = loss_model("SoftmaxCrossEntropyLoss", np.float32, 3, True, log_prob=True,
                       target_type=TensorProto.INT32, reduction="mean", ignore_index=1)
    compare(model, feeds("SoftmaxCrossEntropyLoss", np.float32, (3, 4, 5), True, 1, np.int32))
    x = np.array([[1000.0, 0.0, -1000.0]], np.float32)  # no overflow in the log-softmax
    ours, _ = run_hetnet(model, {"x": x[:, :, None], "t": np.array([[0]], np.int32), "w": np.ones(3, np.float32)})
    np.testing.assert_allclose(ours["lp"][0, :, 0], [0.0, -1000.0, -2000.0], rtol=1e-6)
    assert ours["y"] == pytest.approx(0.0, abs=1e-6)


@pytest.mark.parametrize("op", ["NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"])
def test_target_out_of_range_is_an_error(op):
    model = loss_model(op, np.float32, 2, False, reduction="sum", ignore_index=-100)
    f = feeds(op, np.float32, (3, 4), False)
    f["t"][1] = 4
    with pytest.raises(hetnet.InvalidArgumentError) as e:
        run_hetnet(model, f)
    for w in (op, "'t'", "holds 4", "[0, 4)"):
        assert w in str(e.value), str(e.value)
    f["t"][1] = -100  # the ignored index is fine anywhere
    compare(model, f)


def test_mismatched_target_shape_and_bad_reduction():
    model = loss_model("NegativeLogLikelihoodLoss", np.float32, 3, False, reduction="mean")
    f = {"x": -np.ones((2, 3, 4), np.float32), "t": np.zeros((2, 5), np.int64)}
    with pytest.raises(hetnet.InvalidArgumentError, match=r"NegativeLogLikelihoodLoss: input 1 \('t'\).*\[2, 4\]"):
        run_hetnet(model, f)
    model = loss_model("NegativeLogLikelihoodLoss", np.float32, 3, False, reduction="max")
    with pytest.raises(hetnet.InvalidArgumentError, match="reduction 'max'"):
        run_hetnet(model, {"x": f["x"], "t": np.zeros((2, 4), np.int64)})


def gather_elements_model(dtype, rank, axis, index_type=TensorProto.INT64):
    model = make_model([helper.make_node("GatherElements", ["x", "i"], ["y"], axis=axis)], [], [("y",)], opset=13)
    model.graph.input.extend([helper.make_tensor_value_info("x", dtype, [None] * rank),
                              helper.make_tensor_value_info("i", index_type, [None] * rank)])
    model.graph.output[0].type.tensor_type.elem_type = dtype
    return model


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_gather_elements_matches_onnxruntime(axis):
    x = RNG.standard_normal((3, 4, 5)).astype(np.float32)
    ishape = [2, 3, 4]
    ishape[axis] = 6  # along axis the indices may be longer than the data
    s = x.shape[axis]
    i = RNG.integers(-s, s, ishape).astype(np.int64)
    compare(gather_elements_model(TensorProto.FLOAT, 3, axis), {"x": x, "i": i})
    xi = RNG.integers(-100, 100, (3, 4, 5)).astype(np.int32)
    model = gather_elements_model(TensorProto.INT32, 3, axis, TensorProto.INT32)
    ours, _ = run_hetnet(model, {"x": xi, "i": i.astype(np.int32)})
    np.testing.assert_array_equal(ours["y"], run_ort(model, {"x": xi, "i": i.astype(np.int32)})["y"])


def test_gather_elements_bad_indices():
    model = gather_elements_model(TensorProto.FLOAT, 2, 1)
    x = np.ones((2, 3), np.float32)
    with pytest.raises(hetnet.InvalidArgumentError, match=r"GatherElements: input 1 \('i'\) holds 3 .*\[-3, 3\)"):
        run_hetnet(model, {"x": x, "i": np.array([[0, 3]], np.int64)})
    with pytest.raises(hetnet.InvalidArgumentError, match=r"GatherElements: input 1 \('i'\).*larger"):
        run_hetnet(model, {"x": x, "i": np.zeros((3, 1), np.int64)})
