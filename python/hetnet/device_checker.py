"""Runs one operator on several devices and compares the outputs (caffe2.python.device_checker)."""
import numpy as np

from hetnet import workspace
from hetnet.proto import caffe2_pb2


class DeviceChecker(object):
    def __init__(self, threshold, device_options):
        self._threshold = threshold
        self._device_options = device_options

    def CheckSimple(self, op, inputs, outputs_to_check, input_device_options=None):
        """True when every device's outputs outputs_to_check match the first device's."""
        input_device_options = input_device_options or {}
        old_ws = workspace.CurrentWorkspace()
        results = []
        try:
            workspace.SwitchWorkspace("_device_check_", True)
            for option in self._device_options:
                workspace.ResetWorkspace()
                run = caffe2_pb2.OperatorDef()
                run.CopyFrom(op)
                run.device_option.CopyFrom(option)
                for name, value in zip(op.input, inputs):
                    workspace.FeedBlob(name, value, input_device_options.get(name, option))
                workspace.RunOperatorOnce(run)
                results.append([workspace.FetchBlob(op.output[i]) for i in outputs_to_check])
        finally:
            workspace.ResetWorkspace()
            workspace.SwitchWorkspace(old_ws)
        ok = True
        for k in range(1, len(results)):
            for i, (first, other) in enumerate(zip(results[0], results[k])):
                if first.dtype.kind in "OSU":
                    same = np.array_equal(first, other)
                else:
                    same = first.shape == other.shape and np.allclose(
                        first, other, atol=self._threshold, rtol=self._threshold)
                if not same:
                    print("Device check of {}: output {} differs between {} and {}".format(
                        op.type, op.output[outputs_to_check[i]], self._device_options[0],
                        self._device_options[k]))
                    ok = False
        return ok
