"""Property-based operator tests as Caffe2 wrote them (caffe2.python.hypothesis_test_util):
HypothesisTestCase with assertDeviceChecks / assertGradientChecks / assertReferenceChecks run
on hetnet's runtime, the device-option strategies (gcs, gcs_cpu_only, gcs_gpu_only, ...) and the
tensor strategies (dims, arrays, tensor, tensors, ...). Needs PyPI `hypothesis`.

Device lists tell the truth: without a usable GPU (workspace.has_gpu_support False) the GPU
lists are empty, so `gcs_gpu_only` tests are skipped (hypothesis cannot draw from an empty list;
HypothesisTestCase turns that into a skip)."""
import contextlib
import copy
import os
import struct
import unittest

import hypothesis
import hypothesis.extra.numpy
import hypothesis.strategies as st
import numpy as np

from hetnet import core, workspace, test_util
from hetnet import device_checker, gradient_checker
from hetnet.proto import caffe2_pb2


def is_sandcastle():
    return os.getenv("SANDCASTLE") == "1" or os.getenv("TW_JOB_USER") == "sandcastle"


def is_travis():
    return "TRAVIS" in os.environ


def to_float32(x):
    return struct.unpack("f", struct.pack("f", float(x)))[0]


# hypothesis' cache goes to the temp folder, not into the checkout (unless the user chose a place).
if not os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
    import hypothesis.configuration
    import tempfile
    hypothesis.configuration.set_hypothesis_home_dir(
        os.path.join(tempfile.gettempdir(), "hetnet-hypothesis"))

_hypothesis_settings = dict(
    sandcastle=dict(derandomize=True, suppress_health_check=list(hypothesis.HealthCheck),
                    database=None, max_examples=50, deadline=None, print_blob=True),
    dev=dict(suppress_health_check=list(hypothesis.HealthCheck), database=None, max_examples=10,
             deadline=None),
    debug=dict(suppress_health_check=list(hypothesis.HealthCheck), database=None, max_examples=1000,
               deadline=None, verbosity=hypothesis.Verbosity.verbose),
)
for _name, _kw in _hypothesis_settings.items():
    hypothesis.settings.register_profile("caffe2_" + _name, **_kw)
    hypothesis.settings.register_profile(_name, **_kw)
hypothesis.settings.load_profile(
    "sandcastle" if is_sandcastle() else os.getenv("CAFFE2_HYPOTHESIS_PROFILE", "dev"))


def floats(*args, **kwargs):
    width = kwargs.pop("width", 32)
    return st.floats(*args, width=width, **kwargs)


def dims(min_value=1, max_value=5):
    return st.integers(min_value=min_value, max_value=max_value)


def elements_of_type(dtype=np.float32, filter_=None):
    elems = None
    if dtype is np.float16:
        elems = floats(min_value=-1.0, max_value=1.0, width=16)
    elif dtype is np.float32:
        elems = floats(min_value=-1.0, max_value=1.0)
    elif dtype is np.float64:
        elems = st.floats(min_value=-1.0, max_value=1.0)
    elif dtype is np.int32:
        elems = st.integers(min_value=0, max_value=2 ** 31 - 1)
    elif dtype is np.int64:
        elems = st.integers(min_value=0, max_value=2 ** 63 - 1)
    elif dtype is bool or dtype is np.bool_:
        elems = st.booleans()
    else:
        raise ValueError("Unexpected dtype without elements provided")
    return elems if filter_ is None else elems.filter(filter_)


def arrays(dims, dtype=np.float32, elements=None, unique=False):
    if elements is None:
        elements = elements_of_type(dtype)
    return hypothesis.extra.numpy.arrays(dtype, dims, elements=elements, unique=unique)


def tensor(min_dim=1, max_dim=4, dtype=np.float32, elements=None, unique=False, **kwargs):
    dims_ = st.lists(dims(**kwargs), min_size=min_dim, max_size=max_dim)
    return dims_.flatmap(lambda d: arrays(d, dtype, elements, unique=unique))


def tensor1d(min_len=1, max_len=64, dtype=np.float32, elements=None):
    return tensor(1, 1, dtype, elements, min_value=min_len, max_value=max_len)


def tensors(n, min_dim=1, max_dim=4, dtype=np.float32, elements=None, **kwargs):
    """n arrays of one common random shape."""
    dims_ = st.lists(dims(**kwargs), min_size=min_dim, max_size=max_dim)
    return dims_.flatmap(lambda d: st.lists(arrays(d, dtype, elements), min_size=n, max_size=n))


def tensors1d(n, min_len=1, max_len=64, dtype=np.float32, elements=None):
    return tensors(n, 1, 1, dtype, elements, min_value=min_len, max_value=max_len)


def segment_ids(size, is_sorted):
    if size == 0:
        return st.just(np.empty(shape=[0], dtype=np.int32))
    if is_sorted:
        return arrays([size], dtype=np.int32, elements=st.booleans()).map(
            lambda x: np.cumsum(x, dtype=np.int32) - x[0])
    return arrays([size], dtype=np.int32, elements=st.integers(min_value=0, max_value=2 * size))


def lengths(size, min_segments=None, max_segments=None, **kwargs):
    if min_segments is None:
        min_segments = 0
    if max_segments is None:
        max_segments = size
    assert min_segments >= 0 and min_segments <= max_segments
    if size == 0 and max_segments == 0:
        return st.just(np.empty(shape=[0], dtype=np.int32))
    assert max_segments > 0, "size is not 0, need at least one segment"
    return st.integers(min_value=max(1, min_segments), max_value=max_segments).flatmap(
        lambda num_borders: hypothesis.extra.numpy.arrays(
            np.int32, num_borders, elements=st.integers(min_value=0, max_value=size))
    ).map(lambda x: np.append(x, np.array([0, size], dtype=np.int32))).map(sorted).map(np.diff)


# ---- device options ----

cpu_do = caffe2_pb2.DeviceOption()
cuda_do = caffe2_pb2.DeviceOption(device_type=caffe2_pb2.CUDA)
hip_do = caffe2_pb2.DeviceOption(device_type=caffe2_pb2.HIP)
gpu_do = caffe2_pb2.DeviceOption(device_type=workspace.GpuDeviceType)
# Lists of GPU options are empty without a usable GPU (workspace.has_gpu_support is False).
_cuda_do_list = [cuda_do] if workspace.has_cuda_support else []
_hip_do_list = [hip_do] if workspace.has_hip_support else []
_gpu_do_list = [gpu_do] if workspace.has_gpu_support else []
_device_options_no_hip = [cpu_do] + _cuda_do_list
device_options = _device_options_no_hip + _hip_do_list
expanded_device_options = [cpu_do] + [
    caffe2_pb2.DeviceOption(device_type=workspace.GpuDeviceType, device_id=i)
    for i in range(workspace.NumGpuDevices())]


def device_checker_device_options():
    return st.just(device_options)


def gradient_checker_device_option():
    return st.sampled_from(device_options)


gcs = dict(gc=gradient_checker_device_option(), dc=device_checker_device_options())
gcs_cpu_only = dict(gc=st.sampled_from([cpu_do]), dc=st.just([cpu_do]))
gcs_cuda_only = dict(gc=st.sampled_from(_cuda_do_list), dc=st.just(_cuda_do_list))
gcs_gpu_only = dict(gc=st.sampled_from(_gpu_do_list), dc=st.just(_gpu_do_list))
gcs_no_hip = dict(gc=st.sampled_from(_device_options_no_hip), dc=st.just(_device_options_no_hip))


def expected_device_options(*device_options_list):
    """A sampled_from of the given device options that exist on this machine (CPU always)."""
    available = [o for o in device_options_list
                 if o.device_type == caffe2_pb2.CPU or
                 (core.IsGPUDeviceType(o.device_type) and workspace.has_gpu_support and
                  o.device_type == workspace.GpuDeviceType)]
    return st.sampled_from(available)


@contextlib.contextmanager
def temp_workspace(name=b"temp_ws"):
    old_ws_name = workspace.CurrentWorkspace()
    workspace.SwitchWorkspace(name.decode() if isinstance(name, bytes) else name, True)
    try:
        yield
    finally:
        workspace.ResetWorkspace()
        workspace.SwitchWorkspace(old_ws_name)


def runOpOnInput(device_option, op, inputs, input_device_options=None):
    op = copy.deepcopy(op)
    op.device_option.CopyFrom(device_option)
    input_device_options = input_device_options or {}
    with temp_workspace():
        for n, b in zip(op.input, inputs):
            workspace.FeedBlob(n, b, device_option=input_device_options.get(n, device_option))
        workspace.RunOperatorOnce(op)
        return [workspace.FetchBlob(o) for o in op.output]


class HypothesisTestCase(test_util.TestCase):
    """A TestCase with Caffe2's operator checks, run on hetnet's runtime."""

    def run(self, result=None):
        # A strategy over an empty list (GPU options without a GPU) cannot draw: skip, as
        # Caffe2's GPU tests were skipped where no GPU was found.
        method = getattr(self, self._testMethodName)
        wrapped = getattr(method, "hypothesis", None)
        if wrapped is not None:
            try:
                kwargs_strategies = getattr(method.hypothesis, "_given_kwargs", None) or {}
            except Exception:
                kwargs_strategies = {}
            for value in kwargs_strategies.values():
                if _is_empty_sampled_from(value):
                    setattr(self, self._testMethodName, _skipped("no device of this kind on this machine"))
                    break
        return super(HypothesisTestCase, self).run(result)

    def assertDeviceChecks(self, device_options, op, inputs, outputs_to_check,
                           input_device_options=None, threshold=0.01):
        dc = device_checker.DeviceChecker(threshold, device_options=device_options)
        self.assertTrue(dc.CheckSimple(op, inputs, outputs_to_check, input_device_options))

    def assertGradientChecks(self, device_option, op, inputs, outputs_to_check, outputs_with_grads,
                             grad_ops=None, threshold=0.005, stepsize=0.05, input_device_options=None,
                             ensure_outputs_are_inferred=False):
        gc = gradient_checker.GradientChecker(
            stepsize=stepsize, threshold=threshold, device_option=device_option,
            workspace_name="gradient_check_" + str(device_option.device_type),
            input_device_options=input_device_options)
        res, grad, grad_estimated = gc.CheckSimple(
            op, inputs, outputs_to_check, outputs_with_grads, grad_ops=grad_ops,
            input_device_options=input_device_options,
            ensure_outputs_are_inferred=ensure_outputs_are_inferred)
        self.assertEqual(grad.shape, grad_estimated.shape)
        self.assertTrue(res, "Gradient check failed for input " + str(op.input[outputs_to_check]))

    def _assertGradReferenceChecks(self, op, inputs, ref_outputs, output_to_grad, grad_reference,
                                   threshold=1e-4):
        grad_blob_name = output_to_grad + "_grad"
        grad_ops, grad_map = core.GradientRegistry.GetBackwardPass([op], {output_to_grad: grad_blob_name})
        output_grad = workspace.FetchBlob(output_to_grad)
        grad_ref_outputs = grad_reference(output_grad, ref_outputs, inputs)
        workspace.FeedBlob(grad_blob_name, workspace.FetchBlob(output_to_grad))
        workspace.RunOperatorsOnce(grad_ops)
        self.assertEqual(len(grad_ref_outputs), len(inputs))
        for n, ref in zip(op.input, grad_ref_outputs):
            grad_name = grad_map.get(n)
            if not grad_name:
                self.assertIsNone(ref)
            else:
                vals = workspace.FetchBlob(str(grad_name))
                np.testing.assert_allclose(vals, ref, atol=threshold, rtol=threshold,
                                           err_msg="Gradient {} is not matching the reference".format(grad_name))

    def assertReferenceChecks(self, device_option, op, inputs, reference, input_device_options=None,
                              threshold=1e-4, output_to_grad=None, grad_reference=None, atol=None,
                              outputs_to_check=None, ensure_outputs_are_inferred=False):
        """Runs op on device_option and compares its outputs with reference(*inputs) (a tuple or
        list of arrays); with grad_reference, also the gradient of output_to_grad."""
        op = copy.deepcopy(op)
        op.device_option.CopyFrom(device_option)
        input_device_options = input_device_options or {}
        with temp_workspace():
            if len(op.input) > len(inputs):
                raise ValueError("must supply an input for each input on the op: %s vs %s" %
                                 (op.input, inputs))
            for n, b in zip(op.input, inputs):
                workspace.FeedBlob(n, b, device_option=input_device_options.get(n, device_option))
            net = core.Net("opnet")
            net.Proto().op.extend([op])
            workspace.RunNetOnce(net)
            reference_outputs = reference(*inputs)
            if not isinstance(reference_outputs, (tuple, list)):
                raise RuntimeError("You are providing a wrong reference implementation. A proper one "
                                   "should return a tuple/list of numpy arrays.")
            if not outputs_to_check:
                self.assertEqual(len(reference_outputs), len(op.output))
                outputs_to_check = list(range(len(op.output)))
            outs = []
            for output_index, ref in zip(outputs_to_check, reference_outputs):
                output_blob_name = op.output[output_index]
                output = workspace.FetchBlob(output_blob_name)
                if output.dtype.kind in ("S", "O"):
                    np.testing.assert_array_equal(output, ref)
                else:
                    np.testing.assert_allclose(
                        output, ref, atol=threshold if atol is None else atol, rtol=threshold,
                        err_msg="Output {} is not matching the reference".format(output_blob_name))
                outs.append(output)
            if grad_reference is not None:
                assert output_to_grad is not None, \
                    "If grad_reference is set, output_to_grad has to be set as well"
                with core.DeviceScope(device_option):
                    self._assertGradReferenceChecks(op, inputs, reference_outputs, output_to_grad,
                                                    grad_reference, threshold=threshold)
            return outs

    def assertValidationChecks(self, device_option, op, inputs, validator, input_device_options=None,
                               as_kwargs=True, init_net=None):
        if as_kwargs:
            assert len(set(list(op.input) + list(op.output))) == len(op.input) + len(op.output), \
                "in-place ops are not supported in as_kwargs mode"
        op = copy.deepcopy(op)
        op.device_option.CopyFrom(device_option)
        input_device_options = input_device_options or {}
        with temp_workspace():
            for n, b in zip(op.input, inputs):
                workspace.FeedBlob(n, b, device_option=input_device_options.get(n, device_option))
            if init_net:
                workspace.RunNetOnce(init_net)
            workspace.RunOperatorOnce(op)
            outputs = [workspace.FetchBlob(n) for n in op.output]
            if as_kwargs:
                validator(**dict(zip(list(op.input) + list(op.output), inputs + outputs)))
            else:
                validator(inputs=inputs, outputs=outputs)

    def assertRunOpRaises(self, device_option, op, inputs, input_device_options=None,
                          exception=(Exception,), regexp=None):
        op = copy.deepcopy(op)
        op.device_option.CopyFrom(device_option)
        input_device_options = input_device_options or {}
        with temp_workspace():
            for n, b in zip(op.input, inputs):
                workspace.FeedBlob(n, b, device_option=input_device_options.get(n, device_option))
            if regexp is None:
                self.assertRaises(exception, workspace.RunOperatorOnce, op)
            else:
                self.assertRaisesRegex(exception, regexp, workspace.RunOperatorOnce, op)


def _is_empty_sampled_from(strategy):
    """True for st.sampled_from([]) (hypothesis' lazy wrapper looked through)."""
    function = getattr(strategy, "function", None)
    args = getattr(strategy, "_LazyStrategy__args", None)
    if function is not None and args is not None:
        if getattr(function, "__name__", "") == "sampled_from" and len(args) == 1:
            try:
                return len(args[0]) == 0
            except TypeError:
                return False
    return False


def _skipped(reason):
    def skipped(*args, **kwargs):
        raise unittest.SkipTest(reason)
    return skipped
