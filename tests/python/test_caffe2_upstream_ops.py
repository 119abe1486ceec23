"""Operators and test helpers that Caffe2's own tests (data_parallel_model_test.py,
spatial_bn_op_test.py, channel_*_stats_op_test.py; see docs/caffe2_upstream_tests.md) need:
NHWC2NCHW / NCHW2NHWC, FlattenToVec, SumElements, SpatialBN's multi-batch in-place form and its
empty-batch gradient, the gradient checker on transposed (non-contiguous) inputs, and the
caffe2.python.hip_test_util / serialized_test modules."""
import numpy as np
import pytest
from hypothesis import given, settings
import hypothesis.strategies as st

import hetnet
from caffe2.proto import caffe2_pb2
from caffe2.python import core, workspace
import caffe2.python.hip_test_util as hiputl
import caffe2.python.hypothesis_test_util as hu
import caffe2.python.serialized_test.serialized_test_util as serial
from hetnet import gradient_checker


def run(op_type, inputs, outputs, **kwargs):
    workspace.RunOperatorOnce(core.CreateOperator(op_type, list(inputs), list(outputs), **kwargs))
    return [workspace.FetchBlob(o) for o in outputs]


def feed(**blobs):
    for name, value in blobs.items():
        workspace.FeedBlob(name, value)


def grad_check(op, inputs, index, stepsize=0.05, threshold=0.005):
    checker = gradient_checker.GradientChecker(stepsize=stepsize, threshold=threshold, device_option=hu.cpu_do,
                                               workspace_name="upstream_grad_check")
    ok, grad, estimate = checker.CheckSimple(op, inputs, index, [0])
    return ok, grad, estimate


@pytest.fixture(autouse=True)
def clean_workspace():
    workspace.ResetWorkspace()
    yield
    workspace.ResetWorkspace()


@pytest.mark.parametrize("shape", [(2, 3, 4), (2, 3, 4, 5), (1, 2, 3, 4, 5)])
def test_order_switch_values_round_trip_and_dtypes(shape):
    x = np.random.RandomState(0).randn(*shape).astype(np.float32)
    feed(X=x, I=np.arange(x.size, dtype=np.int32).reshape(shape))
    nchw, = run("NHWC2NCHW", ["X"], ["Y"])
    axes = [0, len(shape) - 1] + list(range(1, len(shape) - 1))
    np.testing.assert_array_equal(nchw, np.transpose(x, axes))
    back, = run("NCHW2NHWC", ["Y"], ["Z"])
    np.testing.assert_array_equal(back, x)
    ints, = run("NHWC2NCHW", ["I"], ["J"])
    assert ints.dtype == np.int32
    np.testing.assert_array_equal(ints, np.transpose(workspace.FetchBlob("I"), axes))


def test_order_switch_gradients_are_each_other_and_check_numerically():
    for op_type, other in (("NHWC2NCHW", "NCHW2NHWC"), ("NCHW2NHWC", "NHWC2NCHW")):
        op = core.CreateOperator(op_type, ["X"], ["Y"])
        grad_ops, _ = core.GradientRegistry.GetGradientForOp(op, ["Y_grad"])
        assert [g.type for g in grad_ops] == [other]
        x = np.random.RandomState(1).rand(2, 3, 2, 4).astype(np.float32)
        ok, _, estimate = grad_check(op, [x], 0)
        assert ok and np.abs(estimate).max() > 0.5


def test_order_switch_rejects_fewer_than_three_dims():
    feed(X=np.zeros((2, 3), np.float32))
    with pytest.raises(hetnet.InvalidArgumentError, match="at least 3 dims"):
        run("NHWC2NCHW", ["X"], ["Y"])


def test_flatten_to_vec_values_in_place_and_gradient_shape():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    feed(X=x)
    y, = run("FlattenToVec", ["X"], ["Y"])
    assert y.shape == (24,)
    np.testing.assert_array_equal(y, x.reshape(-1))
    same, = run("FlattenToVec", ["X"], ["X"])
    assert same.shape == (24,)
    op = core.CreateOperator("FlattenToVec", ["A"], ["B"])
    grad_ops, _ = core.GradientRegistry.GetGradientForOp(op, ["B_grad"])
    assert [(g.type, list(g.input), list(g.output)) for g in grad_ops] == [("ResizeLike", ["B_grad", "A"], ["A_grad"])]
    ok, grad, _ = grad_check(op, [np.random.RandomState(2).rand(3, 2, 2).astype(np.float32)], 0)
    assert ok and grad.shape == (3, 2, 2)


@pytest.mark.parametrize("average", [False, True])
def test_sum_elements_value_empty_input_and_gradient(average):
    x = np.random.RandomState(3).rand(3, 5).astype(np.float32)
    feed(X=x, E=np.zeros((0, 4), np.float32))
    s, = run("SumElements", ["X"], ["S"], average=average)
    assert s.shape == ()
    np.testing.assert_allclose(s, x.mean() if average else x.sum(), rtol=1e-5)
    e, = run("SumElements", ["E"], ["SE"], average=average)
    assert e == 0
    op = core.CreateOperator("SumElements", ["X"], ["S"], average=average)
    ok, grad, _ = grad_check(op, [x], 0)
    assert ok
    # The checker's loss is sum(S^2) / 2, so dS = S and dX = S (/ numel with average) everywhere.
    np.testing.assert_allclose(grad, np.full(x.shape, s / x.size if average else s), rtol=1e-5)


def test_sum_elements_rejects_non_float():
    feed(X=np.ones(3, np.int32))
    with pytest.raises(hetnet.UnsupportedError, match="only float32"):
        run("SumElements", ["X"], ["S"])


def _multi_batch_inputs(N, C=3, H=2, W=2, seed=4):
    rs = np.random.RandomState(seed)
    return dict(X=rs.randn(N, C, H, W).astype(np.float32), scale=rs.randn(C).astype(np.float32),
                bias=rs.randn(C).astype(np.float32), mean=rs.randn(C).astype(np.float32),
                var=rs.rand(C).astype(np.float32), batch_mean=(rs.rand(C) - 0.5).astype(np.float32),
                batch_var=(rs.rand(C) + 1.0).astype(np.float32))


def test_spatial_bn_multi_batch_in_place_matches_separate_outputs():
    ins = _multi_batch_inputs(4)
    names = ["X", "scale", "bias", "mean", "var", "batch_mean", "batch_var"]
    results = []
    for outs in (["Y", "mean", "var", "saved_mean", "saved_var"], ["Y", "mean", "var", "batch_mean", "batch_var"]):
        feed(**ins)
        results.append(run("SpatialBN", names, outs, is_test=False, epsilon=1e-3, momentum=0.8, num_batches=2))
    for separate, in_place in zip(*results):
        np.testing.assert_allclose(in_place, separate, rtol=1e-6)
    M = 2 * 4 * 2 * 2
    np.testing.assert_allclose(results[1][3], ins["batch_mean"] / M, rtol=1e-6)


def test_spatial_bn_multi_batch_in_place_needs_float_sums():
    ins = _multi_batch_inputs(2)
    ins["batch_mean"] = ins["batch_mean"].astype(np.float64)
    ins["batch_var"] = ins["batch_var"].astype(np.float64)
    feed(**ins)
    with pytest.raises(hetnet.InvalidArgumentError, match="in place, inputs 5 and 6"):
        run("SpatialBN", ["X", "scale", "bias", "mean", "var", "batch_mean", "batch_var"],
            ["Y", "mean", "var", "batch_mean", "batch_var"], is_test=False, num_batches=2)


def test_spatial_bn_gradient_of_an_empty_batch():
    rs = np.random.RandomState(5)
    C = 3
    feed(X=np.zeros((0, C, 2, 2), np.float32), dY=np.zeros((0, C, 2, 2), np.float32),
         scale=rs.randn(C).astype(np.float32), mean=rs.randn(C).astype(np.float32),
         rstd=rs.rand(C).astype(np.float32), G=rs.randn(C).astype(np.float32), B=rs.randn(C).astype(np.float32))
    base = ["X", "scale", "dY", "mean", "rstd", "G", "B"]
    # Caffe2's form: no samples at all, so dscale and dbias are zero (its early return for N == 0).
    dx, dscale, dbias = run("SpatialBNGradient", base, ["dX", "dscale", "dbias"], num_batches=2)
    assert dx.shape == (0, C, 2, 2)
    np.testing.assert_array_equal(dscale, 0)
    np.testing.assert_array_equal(dbias, 0)
    # hetnet's count input: this device is empty but the others are not, so G / num_batches stays.
    feed(count=np.array([8.0], np.float32))
    _, dscale, dbias = run("SpatialBNGradient", base + ["count"], ["dX", "dscale", "dbias"], num_batches=2)
    np.testing.assert_allclose(dscale, workspace.FetchBlob("G") / 2, rtol=1e-6)
    np.testing.assert_allclose(dbias, workspace.FetchBlob("B") / 2, rtol=1e-6)


def test_gradient_checker_perturbs_transposed_inputs():
    x = np.random.RandomState(6).rand(2, 3, 4, 5).astype(np.float32).swapaxes(1, 2).swapaxes(2, 3)
    assert not x.flags["C_CONTIGUOUS"]
    ok, grad, estimate = grad_check(core.CreateOperator("Scale", ["X"], ["Y"], scale=3.0), [x], 0)
    assert ok
    # Loss sum(Y^2) / 2 with Y = 3 X: the finite differences see 9 X (zeros if the steps were lost).
    np.testing.assert_allclose(estimate, 9 * x, rtol=1e-2, atol=1e-3)
    op = core.CreateOperator("SpatialBN", ["X", "scale", "bias", "mean", "var"],
                             ["Y", "mean", "var", "saved_mean", "saved_var"], order="NHWC", is_test=False,
                             epsilon=1e-2)
    rs = np.random.RandomState(7)
    ins = [x - 0.5, rs.rand(3).astype(np.float32) + 0.5, rs.rand(3).astype(np.float32),
           rs.randn(3).astype(np.float32), rs.rand(3).astype(np.float32) + 0.5]
    assert grad_check(op, ins, 0)[0]


def test_hip_test_util_sees_hip_options_only():
    hip = caffe2_pb2.DeviceOption(device_type=caffe2_pb2.HIP)
    assert not hiputl.run_in_hip(hu.cpu_do, [hu.cpu_do])
    assert hiputl.run_in_hip(hip, [hu.cpu_do])
    assert hiputl.run_in_hip(hu.cpu_do, [hu.cpu_do, hip])


class TestSerializedShim(serial.SerializedTestCase):
    @serial.given(n=st.integers(1, 3), c=st.integers(1, 4), **hu.gcs_cpu_only)
    @settings(max_examples=3, deadline=None)
    def test_reference_check_runs_and_can_fail(self, n, c, gc, dc):
        op = core.CreateOperator("ChannelStats", ["X"], ["sum", "sumsq"])
        x = np.random.rand(n, c, 2, 3).astype(np.float32)
        self.assertReferenceChecks(gc, op, [x], lambda X: (X.sum(axis=(0, 2, 3)), (X ** 2).sum(axis=(0, 2, 3))))
        with self.assertRaises(AssertionError):
            self.assertReferenceChecks(gc, op, [x], lambda X: (X.sum(axis=(0, 2, 3)) + 1, (X ** 2).sum(axis=(0, 2, 3))))
