"""ONNX NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss imported onto hetnet's operators of the
same name, compared against onnxruntime over reductions, class weights, ignore_index, 2-D to 4-D
inputs, int32/int64 targets, float32/float64 and SCE's log_prob output; bad targets are errors."""
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
