"""OnnxDropout (ONNX Dropout with a run-time training_mode): the seeded mask is NumPy's
RandomState(seed).uniform draw compared with the ratio, the kept values are scaled by 1 / (1 - ratio),
inference is the identity, and bad inputs are refused naming the op and blob."""
import numpy as np
import pytest

from hetnet import core, workspace


def _run(x, ratio=None, training=None, seed=None, mask=True):
    workspace.ResetWorkspace()
    inputs = ["x"]
    workspace.FeedBlob("x", x)
    if ratio is not None:
        workspace.FeedBlob("r", ratio)
        inputs.append("r")
    if training is not None:
        workspace.FeedBlob("t", np.array(training))
        inputs.append("t")
    kwargs = {} if seed is None else {"seed": seed}
    outputs = ["y", "m"] if mask else ["y"]
    workspace.RunOperatorOnce(core.CreateOperator("OnnxDropout", inputs, outputs, **kwargs))
    return [workspace.FetchBlob(o) for o in outputs]


@pytest.mark.parametrize("seed,ratio", [(0, 0.5), (0, 0.75), (12345, 0.1), (2**32 - 1, 0.9)])
def test_seeded_mask_is_numpys_draw(seed, ratio):
    x = np.random.RandomState(7).randn(3, 4, 5).astype(np.float32)
    y, m = _run(x, np.float32(ratio), True, seed)
    want_mask = np.random.RandomState(seed).uniform(0.0, 1.0, x.shape) >= ratio
    np.testing.assert_array_equal(m, want_mask)
    np.testing.assert_allclose(y, x * want_mask / (1 - np.float32(ratio)), rtol=1e-6)


def test_generator_advances_between_runs_and_float64():
    x = np.ones((64,), np.float64)
    workspace.ResetWorkspace()
    workspace.FeedBlob("x", x)
    workspace.FeedBlob("r", np.float64(0.5))
    workspace.FeedBlob("t", np.array(True))
    net = core.Net("dropout_twice")
    net.OnnxDropout(["x", "r", "t"], ["y", "m"], seed=3)
    workspace.CreateNet(net)
    workspace.RunNet(net.Name())
    first = workspace.FetchBlob("m").copy()
    workspace.RunNet(net.Name())
    second = workspace.FetchBlob("m")
    draws = np.random.RandomState(3).uniform(0.0, 1.0, 128) >= 0.5
    np.testing.assert_array_equal(first, draws[:64])
    np.testing.assert_array_equal(second, draws[64:])
    assert workspace.FetchBlob("y").dtype == np.float64


def test_inference_and_edge_ratios():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y, m = _run(x, np.float32(0.5), False, seed=0)
    np.testing.assert_array_equal(y, x)
    assert m.all()
    y, m = _run(x)  # no ratio, no training_mode: inference
    np.testing.assert_array_equal(y, x)
    y, m = _run(x, np.float32(0.0), True, seed=1)
    np.testing.assert_array_equal(y, x)
    assert m.all()
    y, m = _run(x, np.float32(1.0), True, seed=1)
    np.testing.assert_array_equal(y, np.zeros_like(x))
    assert not m.any()


@pytest.mark.parametrize("case,message", [
    (dict(ratio=np.float32(1.5), training=True), "outside [0, 1]"),
    (dict(ratio=np.array([0.1, 0.2], np.float32), training=True), "ratio 'r' must be one"),
    (dict(ratio=np.float32(0.5), training=np.array([1, 0])), "training_mode 't' must be one bool"),
    (dict(ratio=np.float32(0.5), training=True, seed=-1), "seed -1 is out of range"),
])
def test_refusals_name_op_and_blob(case, message):
    with pytest.raises(Exception) as e:
        _run(np.ones((2, 2), np.float32), **case)
    assert message in str(e.value) and "OnnxDropout" in str(e.value)
    workspace.FeedBlob("after", np.ones(1, np.float32))  # the workspace stays usable
    assert workspace.FetchBlob("after")[0] == 1


def test_int_input_refused():
    with pytest.raises(Exception) as e:
        _run(np.ones((2, 2), np.int32), np.float32(0.5), True, seed=0)
    assert "float32 or float64" in str(e.value)
