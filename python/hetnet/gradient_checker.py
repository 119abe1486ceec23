"""Finite-difference checks of an operator's gradient ops (caffe2.python.gradient_checker).

The loss is sum over the checked outputs of ||output||^2 / 2, so each output's gradient is the
output itself; the analytic gradient comes from the op's registered gradient (C++ or Python,
core.GradientRegistry), the estimate from central differences. Runs in its own workspace."""
import numpy as np

from hetnet import core, workspace
from hetnet.proto import caffe2_pb2


class _TempWorkspace(object):
    def __init__(self, name):
        self.name = str(name)

    def __enter__(self):
        self.old = workspace.CurrentWorkspace()
        workspace.SwitchWorkspace(self.name, True)
        workspace.ResetWorkspace()

    def __exit__(self, *exc):
        workspace.ResetWorkspace()
        workspace.SwitchWorkspace(self.old)
        return False


class GradientChecker(object):
    def __init__(self, stepsize, threshold, device_option=None, workspace_name="gradient_check",
                 input_device_options=None):
        self._stepsize = stepsize
        self._threshold = threshold
        self._device_option = device_option or caffe2_pb2.DeviceOption()
        self._workspace_name = workspace_name
        self._input_device_options = input_device_options or {}

    def _Feed(self, name, value, input_device_options):
        option = input_device_options.get(name, self._device_option)
        workspace.FeedBlob(name, value, option)

    def GetLossAndGrad(self, op, grad_ops, inputs, input_names, input_to_check, grad_name,
                       outputs_with_grads, input_device_options):
        for name, value in zip(input_names, inputs):
            self._Feed(name, value, input_device_options)
        workspace.RunOperatorOnce(op)
        loss = 0.0
        for idx, out in enumerate(op.output):
            value = workspace.FetchBlob(out)
            if idx in outputs_with_grads:
                loss += float(np.sum(value.astype(np.float64) ** 2) / 2.0)
                grad = value
            else:
                grad = np.zeros_like(value)
            workspace.FeedBlob(out + "_grad", grad, self._device_option)
        grad = None
        if grad_ops is not None:
            workspace.RunOperatorsOnce(grad_ops)
            grad = workspace.FetchBlob(grad_name)
        return loss, grad

    def CheckSimple(self, op, inputs, input_to_check, outputs_with_grads, grad_ops=None,
                    input_device_options=None, ensure_outputs_are_inferred=False):
        """(ok, analytic gradient, estimated gradient) of input `input_to_check` of op."""
        input_device_options = dict(self._input_device_options, **(input_device_options or {}))
        op = _WithDevice(op, self._device_option)
        g_input = None
        if grad_ops is None:
            grad_ops, g_input = core.GradientRegistry.GetGradientForOp(op, [s + "_grad" for s in op.output])
        grad_ops = [_WithDevice(g, self._device_option) if not g.HasField("device_option") else g
                    for g in grad_ops]
        grad_name = g_input[input_to_check] if g_input is not None else op.input[input_to_check] + "_grad"
        if grad_name is None:
            raise ValueError("input {} ('{}') of {} gets no gradient".format(
                input_to_check, op.input[input_to_check], op.type))
        # C order: the perturbation below writes through x.reshape(-1), which is a copy (and the
        # steps are lost) for a transposed view such as an NHWC input made with swapaxes.
        inputs = [np.array(x, copy=True, order="C") for x in inputs]
        with _TempWorkspace(self._workspace_name):
            _, grad = self.GetLossAndGrad(op, grad_ops, inputs, op.input, input_to_check, grad_name,
                                          outputs_with_grads, input_device_options)
            x = inputs[input_to_check]
            estimate = np.zeros(x.shape, dtype=np.float64)
            flat = x.reshape(-1)
            for i in range(flat.size):
                original = flat[i]
                flat[i] = original + self._stepsize
                pos, _ = self.GetLossAndGrad(op, None, inputs, op.input, input_to_check, grad_name,
                                             outputs_with_grads, input_device_options)
                flat[i] = original - self._stepsize
                neg, _ = self.GetLossAndGrad(op, None, inputs, op.input, input_to_check, grad_name,
                                             outputs_with_grads, input_device_options)
                flat[i] = original
                estimate.reshape(-1)[i] = (pos - neg) / (2 * self._stepsize)
        estimate = estimate.astype(grad.dtype) if grad is not None else estimate
        if grad is None or grad.shape != estimate.shape:
            return False, grad, estimate
        fail = ~np.isclose(grad, estimate, atol=self._threshold, rtol=self._threshold)
        if np.any(fail):
            idx = np.flatnonzero(fail)
            print("Gradient check of {} input {} failed at {} of {} elements; first: analytic {} vs "
                  "estimated {}".format(op.type, op.input[input_to_check], idx.size, fail.size,
                                        grad.reshape(-1)[idx[0]], estimate.reshape(-1)[idx[0]]))
            return False, grad, estimate
        return True, grad, estimate


def _WithDevice(op, device_option):
    copy = caffe2_pb2.OperatorDef()
    copy.CopyFrom(op)
    if device_option is not None:
        copy.device_option.CopyFrom(device_option)
    return copy
