"""core.GradientRegistry (Python-registered gradients used by autodiff), GetGradientForOp /
GetBackwardPass, and HypothesisTestCase's reference, device and gradient checks on our runtime."""
import unittest

import numpy as np
from hypothesis import given, settings
import hypothesis.strategies as st

from caffe2.proto import caffe2_pb2
from caffe2.python import core, workspace, test_util
import caffe2.python.hypothesis_test_util as hu


@core.GradientRegistry.RegisterGradient("Sqrt")
def AddSqrtGradient(op, g_output):
    """d sqrt(x) = dY * 0.5 / Y: Div then Scale (Sqrt has no C++ gradient in hetnet)."""
    tmp = "_" + op.input[0] + "_sqrt_tmp"
    ops = [
        core.CreateOperator("Div", [g_output[0], op.output[0]], [tmp]),
        core.CreateOperator("Scale", [tmp], [op.input[0] + "_grad"], scale=0.5),
    ]
    return [core.CopyDeviceOption(o, op) for o in ops], [op.input[0] + "_grad"]


class TestPythonGradient(test_util.TestCase):
    def test_registered_gradient_is_used_by_autodiff(self):
        net = core.Net("sqrt_net")
        y = net.Sqrt("x", "y")
        loss = net.AveragedLoss(y, "loss")
        grad_map = net.AddGradientOperators([loss])
        types = [op.type for op in net.Proto().op]
        self.assertEqual(types, ["Sqrt", "AveragedLoss", "ConstantFill", "AveragedLossGradient", "Div", "Scale"])
        self.assertEqual(str(grad_map["x"]), "x_grad")
        x = np.array([[1.0, 4.0], [9.0, 0.25]], dtype=np.float32)
        workspace.FeedBlob("x", x)
        workspace.RunNetOnce(net)
        # loss = mean(sqrt(x)) -> d/dx = 0.5 / sqrt(x) / n
        np.testing.assert_allclose(workspace.FetchBlob("x_grad"), 0.5 / np.sqrt(x) / x.size, rtol=1e-5)

    def test_get_gradient_for_op_and_backward_pass(self):
        op = core.CreateOperator("Sqrt", ["a"], ["b"])
        ops, g_input = core.GradientRegistry.GetGradientForOp(op, ["b_grad"])
        self.assertEqual([o.type for o in ops], ["Div", "Scale"])
        self.assertEqual(g_input, ["a_grad"])
        self.assertIs(core.GradientRegistry.gradient_registry_["Sqrt"], AddSqrtGradient)
        # a C++ gradient through the same entry point
        ops, g_input = core.GradientRegistry.GetGradientForOp(core.CreateOperator("Relu", ["a"], ["b"]), ["b_grad"])
        self.assertEqual([o.type for o in ops], ["ReluGradient"])
        # the backward pass of an op list, with a given output gradient
        fwd = [core.CreateOperator("Relu", ["in"], ["mid"]), core.CreateOperator("Sqrt", ["mid"], ["out"])]
        grad_ops, grad_map = core.GradientRegistry.GetBackwardPass(fwd, {"out": "out_grad"})
        self.assertEqual([o.type for o in grad_ops], ["Div", "Scale", "ReluGradient"])
        self.assertEqual(grad_map["in"], "in_grad")
        self.assertEqual(grad_map["mid"], "mid_grad")

    def test_python_gradient_errors_name_the_op(self):
        try:
            @core.GradientRegistry.RegisterGradient("Sqrt")  # replaces the good one for this test
            def BadGradient(op, g_output):  # wrong number of input gradients
                return [], []
            net = core.Net("bad")
            net.Sqrt("x", "y")
            net.AveragedLoss("y", "loss")
            with self.assertRaises(Exception) as e:
                net.AddGradientOperators(["loss"])
            self.assertIn("Sqrt", str(e.exception))
            self.assertIn("input gradients", str(e.exception))
        finally:
            core.GradientRegistry.RegisterGradient("Sqrt")(AddSqrtGradient)

    def test_data_type(self):
        self.assertEqual(core.DataType.FLOAT, caffe2_pb2.TensorProto.FLOAT)
        self.assertEqual(core.DataType.INT32, 2)
        self.assertEqual(core.DataType.INT64, 10)
        self.assertEqual(core.DataType.Name(core.DataType.DOUBLE), "DOUBLE")
        op = core.CreateOperator("Cast", ["x"], ["y"], to=core.DataType.INT32)
        workspace.FeedBlob("x", np.array([1.7, -2.2], dtype=np.float32))
        workspace.RunOperatorOnce(op)
        self.assertEqual(workspace.FetchBlob("y").dtype, np.int32)


class TestInferDevice(test_util.TestCase):
    def setUp(self):
        super(TestInferDevice, self).setUp()
        self.cuda_option = core.DeviceOption(workspace.GpuDeviceType, 1)
        self.cpu_option = caffe2_pb2.DeviceOption()

    def _test_op(self, op_name, in_option, out_option, op_option=None, inputs=None, outputs=None):
        op_option = op_option or self.cuda_option
        with core.DeviceScope(op_option):
            op = core.CreateOperator(op_name, inputs or ["blob_1"], outputs or ["blob_2"])
        input_dev, output_dev = core.InferOpBlobDevices(op)
        for d in input_dev:
            self.assertEqual(d, in_option)
        for d in output_dev:
            self.assertEqual(d, out_option)

    def test_infer_device(self):
        self._test_op("FC", self.cuda_option, self.cuda_option, inputs=["data", "fc_w", "fc_b"], outputs=["fc_1"])

    def test_infer_device_cross_device(self):
        self._test_op("CopyGPUToCPU", self.cuda_option, self.cpu_option)
        self._test_op("CopyCPUToGPU", self.cpu_option, self.cuda_option)

    def test_as_dict(self):
        op = core.CreateOperator("CopyGPUToCPU", ["g"], ["c"], device_option=self.cuda_option)
        ins, outs = core.InferOpBlobDevicesAsDict(op)
        self.assertEqual(ins, {"g": self.cuda_option})
        self.assertEqual(outs, {"c": self.cpu_option})


class TestOperatorChecks(hu.HypothesisTestCase):
    @given(X=hu.tensor(min_dim=1, max_dim=3, max_value=4), **hu.gcs)
    @settings(max_examples=5, deadline=None)
    def test_relu(self, X, gc, dc):
        X[np.abs(X) < 0.1] = 0.5  # keep away from the kink for the finite differences
        op = core.CreateOperator("Relu", ["X"], ["Y"])
        self.assertReferenceChecks(gc, op, [X], lambda x: (np.maximum(x, 0),))
        self.assertDeviceChecks(dc, op, [X], [0])
        self.assertGradientChecks(gc, op, [X], 0, [0])

    @given(X=hu.tensor(min_dim=1, max_dim=2, max_value=3,
                       elements=hu.floats(min_value=0.5, max_value=2.0)), **hu.gcs_cpu_only)
    @settings(max_examples=4, deadline=None)
    def test_python_gradient_passes_gradient_check(self, X, gc, dc):
        op = core.CreateOperator("Sqrt", ["X"], ["Y"])
        self.assertReferenceChecks(
            gc, op, [X], lambda x: (np.sqrt(x),), output_to_grad="Y",
            grad_reference=lambda g, outs, ins: (g * 0.5 / outs[0],))
        self.assertGradientChecks(gc, op, [X], 0, [0], stepsize=1e-2, threshold=1e-2)

    @given(xs=hu.tensors(n=2, min_dim=1, max_dim=2, max_value=4), **hu.gcs)
    @settings(max_examples=4, deadline=None)
    def test_mul_both_inputs(self, xs, gc, dc):
        op = core.CreateOperator("Mul", ["A", "B"], ["C"])
        self.assertReferenceChecks(gc, op, xs, lambda a, b: (a * b,))
        for i in range(2):
            self.assertGradientChecks(gc, op, xs, i, [0])

    def test_wrong_reference_fails(self):
        op = core.CreateOperator("Relu", ["X"], ["Y"])
        X = np.array([1.0, -1.0], dtype=np.float32)
        with self.assertRaises(AssertionError):
            self.assertReferenceChecks(hu.cpu_do, op, [X], lambda x: (x,))

    def test_wrong_gradient_fails(self):
        op = core.CreateOperator("Negative", ["X"], ["Y"])
        X = np.array([1.0, -2.0, 3.0], dtype=np.float32)
        self.assertGradientChecks(hu.cpu_do, op, [X], 0, [0])  # the registered (C++) gradient
        wrong = [core.CreateOperator("Copy", ["Y_grad"], ["X_grad"])]  # d(-x) is -dY, not dY
        with self.assertRaises(AssertionError):
            self.assertGradientChecks(hu.cpu_do, op, [X], 0, [0], grad_ops=wrong)

    def test_run_op_raises(self):
        op = core.CreateOperator("FC", ["X", "W", "b"], ["Y"])
        self.assertRunOpRaises(hu.cpu_do, op, [np.ones((2, 3), np.float32), np.ones((4, 5), np.float32),
                                               np.ones(4, np.float32)])


if __name__ == "__main__":
    unittest.main()
