"""brew: helper functions that add layers (ops plus their parameters) to a ModelHelper, as in
caffe2.python.brew. Each helper gets the model's arg_scope (order, use_cudnn, ...) as default
keyword arguments (only those it names unless it takes **kwargs), then the enclosing
``brew.arg_scope`` values for it, then the call's own keyword arguments.

Helpers build NetDefs; whether hetnet has a kernel for an op is checked when the net is created,
so layers whose kernels do not exist yet (Conv, pooling, SpatialBN...) can still be built.
"""
import contextlib
import copy
import inspect
import threading

from hetnet import control_ops_util, core, scope
from hetnet.proto import caffe2_pb2
from hetnet.model_helper import ModelHelper, ParameterTags, update_initializer

_threadlocal = threading.local()


def _current_arg_scope():
    if not hasattr(_threadlocal, "scope"):
        _threadlocal.scope = {}
    return _threadlocal.scope


@contextlib.contextmanager
def arg_scope(single_helper_or_list, **kwargs):
    """Default keyword arguments for the given helpers inside the block (nested scopes merge)."""
    helpers = single_helper_or_list if isinstance(single_helper_or_list, (list, tuple)) \
        else [single_helper_or_list]
    old_scope = copy.deepcopy(_current_arg_scope())
    new_scope = copy.deepcopy(old_scope)
    for helper in helpers:
        name = helper if isinstance(helper, str) else helper.__name__
        assert name in _HELPERS, "{} is not a brew helper".format(name)
        new_scope.setdefault(name, {}).update(kwargs)
    _threadlocal.scope = new_scope
    try:
        yield
    finally:
        _threadlocal.scope = old_scope


def _op(model, op_type, inputs, outputs, **kwargs):
    return model.net._CreateAndAddToSelf(op_type, inputs, outputs, **kwargs)


def _engine(kwargs, use_cudnn):
    if use_cudnn:
        kwargs["engine"] = "CUDNN"


# ---- layers ----

def fc(model, blob_in, blob_out, dim_in, dim_out, weight_init=None, bias_init=None,
       WeightInitializer=None, BiasInitializer=None, **kwargs):
    """FC: weights <blob_out>_w [dim_out, dim_in] (XavierFill), bias <blob_out>_b (ConstantFill)."""
    WeightInitializer = update_initializer(WeightInitializer, weight_init, ("XavierFill", {}))
    BiasInitializer = update_initializer(BiasInitializer, bias_init, ("ConstantFill", {}))
    blob_out = blob_out or model.net.NextName()
    weight = model.create_param(str(blob_out) + "_w", [dim_out, dim_in], WeightInitializer,
                                ParameterTags.WEIGHT)
    bias = model.create_param(str(blob_out) + "_b", [dim_out, ], BiasInitializer, ParameterTags.BIAS)
    return _op(model, "FC", [blob_in, weight, bias], blob_out, **kwargs)


def conv(model, blob_in, blob_out, dim_in, dim_out, kernel, weight_init=None, bias_init=None,
         WeightInitializer=None, BiasInitializer=None, group=1, transform_inputs=None, use_cudnn=False,
         order="NCHW", cudnn_exhaustive_search=False, ws_nbytes_limit=None, float16_compute=False,
         **kwargs):
    """2-D convolution: weights <blob_out>_w, bias <blob_out>_b (unless no_bias)."""
    kernels = [kernel] * 2 if isinstance(kernel, int) else list(kernel)
    requested_engine = kwargs.get("engine")
    if requested_engine is not None and use_cudnn and requested_engine != "CUDNN":
        raise ValueError("When use_cudnn=True, the only engine you can specify is CUDNN")
    if use_cudnn:
        kwargs["engine"] = "CUDNN"
        kwargs["exhaustive_search"] = cudnn_exhaustive_search
        if ws_nbytes_limit:
            kwargs["ws_nbytes_limit"] = ws_nbytes_limit
    use_bias = not kwargs.pop("no_bias", False)
    blob_out = blob_out or model.net.NextName()
    weight_shape = [dim_out]
    if order == "NCHW":
        weight_shape += [int(dim_in / group)] + kernels
    else:
        weight_shape += kernels + [int(dim_in / group)]
    WeightInitializer = update_initializer(WeightInitializer, weight_init, ("XavierFill", {}))
    BiasInitializer = update_initializer(BiasInitializer, bias_init, ("ConstantFill", {}))
    weight = model.create_param(str(blob_out) + "_w", weight_shape, WeightInitializer,
                                ParameterTags.WEIGHT)
    inputs = [blob_in, weight]
    if use_bias:
        inputs.append(model.create_param(str(blob_out) + "_b", [dim_out, ], BiasInitializer,
                                         ParameterTags.BIAS))
    if transform_inputs is not None:
        transform_inputs(model, blob_out, inputs)
    if float16_compute:
        kwargs["float16_compute"] = True
    if group != 1:
        kwargs["group"] = group
    if isinstance(kernel, (list, tuple)):
        return _op(model, "Conv", inputs, blob_out, kernel_h=kernels[0], kernel_w=kernels[1],
                   order=order, **kwargs)
    return _op(model, "Conv", inputs, blob_out, kernel=kernel, order=order, **kwargs)


def relu(model, blob_in, blob_out, use_cudnn=False, order="NCHW", **kwargs):
    _engine(kwargs, use_cudnn)
    return _op(model, "Relu", blob_in, blob_out, order=order, **kwargs)


def sigmoid(model, blob_in, blob_out, use_cudnn=False, order="NCHW", **kwargs):
    _engine(kwargs, use_cudnn)
    return _op(model, "Sigmoid", blob_in, blob_out, order=order, **kwargs)


def tanh(model, blob_in, blob_out, use_cudnn=False, order="NCHW", **kwargs):
    _engine(kwargs, use_cudnn)
    return _op(model, "Tanh", blob_in, blob_out, order=order, **kwargs)


def softmax(model, blob_in, blob_out=None, use_cudnn=False, **kwargs):
    _engine(kwargs, use_cudnn)
    return _op(model, "Softmax", blob_in, blob_out, **kwargs)


def max_pool(model, blob_in, blob_out, use_cudnn=False, order="NCHW", **kwargs):
    _engine(kwargs, use_cudnn)
    return _op(model, "MaxPool", blob_in, blob_out, order=order, **kwargs)


def average_pool(model, blob_in, blob_out, use_cudnn=False, order="NCHW", **kwargs):
    _engine(kwargs, use_cudnn)
    return _op(model, "AveragePool", blob_in, blob_out, order=order, **kwargs)


def spatial_bn(model, blob_in, blob_out, dim_in, init_scale=1., init_bias=0., ScaleInitializer=None,
               BiasInitializer=None, RunningMeanInitializer=None, RunningVarianceInitializer=None,
               order="NCHW", **kwargs):
    """SpatialBN with params <out>_s, <out>_b and computed <out>_rm, <out>_riv; training mode also
    outputs <out>_sm and <out>_siv (saved mean / inverse std)."""
    blob_out = str(blob_out or model.net.NextName())
    ScaleInitializer = update_initializer(ScaleInitializer, ("ConstantFill", {"value": init_scale})
                                          if ScaleInitializer is None else None, None)
    BiasInitializer = update_initializer(BiasInitializer, ("ConstantFill", {"value": init_bias})
                                         if BiasInitializer is None else None, None)
    RunningMeanInitializer = update_initializer(
        RunningMeanInitializer, ("ConstantFill", {"value": 0.0}) if RunningMeanInitializer is None
        else None, None)
    RunningVarianceInitializer = update_initializer(
        RunningVarianceInitializer, ("ConstantFill", {"value": 1.0})
        if RunningVarianceInitializer is None else None, None)
    scale = model.create_param(blob_out + "_s", [dim_in], ScaleInitializer, ParameterTags.WEIGHT)
    bias = model.create_param(blob_out + "_b", [dim_in], BiasInitializer, ParameterTags.BIAS)
    running_mean = model.create_param(blob_out + "_rm", [dim_in], RunningMeanInitializer,
                                      ParameterTags.COMPUTED_PARAM)
    running_inv_var = model.create_param(blob_out + "_riv", [dim_in], RunningVarianceInitializer,
                                         ParameterTags.COMPUTED_PARAM)
    inputs = [blob_in, scale, bias, running_mean, running_inv_var]
    if kwargs.get("is_test"):
        return _op(model, "SpatialBN", inputs, [blob_out], order=order, **kwargs)
    outputs = [blob_out, running_mean, running_inv_var, blob_out + "_sm", blob_out + "_siv"]
    return _op(model, "SpatialBN", inputs, outputs, order=order, **kwargs)[0]


def dropout(model, blob_in, blob_out, use_cudnn=False, **kwargs):
    kwargs["engine"] = "CUDNN" if use_cudnn else "DEFAULT"
    assert "is_test" in kwargs, "Argument 'is_test' is required"
    return _op(model, "Dropout", blob_in, [blob_out, "_" + str(blob_out) + "_mask"], **kwargs)[0]


def concat(model, blobs_in, blob_out, **kwargs):
    if kwargs.get("order") and kwargs.get("axis"):
        kwargs.pop("order")  # the operator refuses both
    return _op(model, "Concat", blobs_in, [blob_out, "_" + str(blob_out) + "_concat_dims"],
               **kwargs)[0]


def sum(model, blob_in, blob_out, **kwargs):
    return _op(model, "Sum", blob_in, blob_out, **kwargs)


def accuracy(model, blob_in, blob_out, **kwargs):
    dev = kwargs["device_option"] if "device_option" in kwargs else scope.CurrentDeviceScope()
    is_cpu = dev is None or dev.device_type == caffe2_pb2.CPU
    if not is_cpu and kwargs.get("top_k", 1) > 1:  # top_k > 1 runs on CPU only
        pred_host = _op(model, "CopyGPUToCPU", blob_in[0], str(blob_in[0]) + "_host")
        label_host = _op(model, "CopyGPUToCPU", blob_in[1], str(blob_in[1]) + "_host")
        kwargs["device_option"] = core.DeviceOption(caffe2_pb2.CPU, 0)
        return _op(model, "Accuracy", [pred_host, label_host], blob_out, **kwargs)
    return _op(model, "Accuracy", blob_in, blob_out, **kwargs)


def iter(model, blob_out, **kwargs):  # noqa: A001 (Caffe2's name)
    """An int64 iteration counter: ConstantFill 0 on CPU in param_init_net, then Iter in net
    (Caffe2's brew.iter; the counter stays on CPU whatever the device scope)."""
    kwargs.pop("device_option", None)
    model.param_init_net.ConstantFill([], blob_out, shape=[1], value=0, dtype=core.DataType.INT64,
                                      device_option=core.DeviceOption(caffe2_pb2.CPU, 0), **kwargs)
    return model.net.Iter(blob_out, blob_out, device_option=core.DeviceOption(caffe2_pb2.CPU, 0),
                          **kwargs)


def image_input(model, blob_in, blob_out, order="NCHW", use_gpu_transform=False, **kwargs):
    """Caffe2's ImageInput reader op (NCHW: its NHWC output goes through NHWC2NCHW to blob_out[0]).
    hetnet has no ImageInput kernel (no image database readers), so such a net can be built,
    edited and exported (e.g. by ExtractPredictorNet) but not created."""
    assert "is_test" in kwargs, "Argument 'is_test' is required"
    blob_out = [str(b) for b in blob_out]
    if order == "NCHW" and not use_gpu_transform:
        outputs = list(_op(model, "ImageInput", blob_in, [blob_out[0] + "_nhwc"] + blob_out[1:], **kwargs))
        outputs[0] = _op(model, "NHWC2NCHW", outputs[0], blob_out[0])
        return tuple(outputs)
    if use_gpu_transform:
        kwargs["use_gpu_transform"] = 1
    return _op(model, "ImageInput", blob_in, blob_out, order=order, **kwargs)


def cond(model, cond_blob, external_blobs, then_model, else_model=None):
    """An If operator in model.net running then_model.net (else else_model.net) by the bool
    cond_blob; external_blobs are the outer blobs the branches may use (control_ops_util)."""
    control_ops_util.add_if_op(model.net, cond_blob, external_blobs, then_model.net,
                               else_model.net if else_model else None)


def loop(model, cond_blob, external_blobs, loop_model, cond_model=None):
    """A While operator in model.net running loop_model.net while cond_blob is true; cond_model.net
    (optional) recomputes cond_blob first each time."""
    control_ops_util.add_while_op(model.net, cond_blob, external_blobs, loop_model.net,
                                  cond_model.net if cond_model else None)


# ---- registry and argument merging ----

_HELPERS = {}


def _wrap(func):
    signature = inspect.signature(func)
    takes_kwargs = any(p.kind == p.VAR_KEYWORD for p in signature.parameters.values())

    def helper(*args, **kwargs):
        model = args[0] if args and isinstance(args[0], ModelHelper) else kwargs.get("model")
        if model is None:
            raise RuntimeError("The first input of helper function should be model. Or you can "
                               "provide it in kwargs as model=<your_model>.")
        new_kwargs = copy.deepcopy(model.arg_scope)
        if not takes_kwargs:
            new_kwargs = {k: v for k, v in new_kwargs.items() if k in signature.parameters}
        new_kwargs.update(_current_arg_scope().get(func.__name__, {}))
        new_kwargs.update(kwargs)
        return func(*args, **new_kwargs)

    helper.__name__ = func.__name__
    helper.__doc__ = func.__doc__
    return helper


def Register(helper):
    """Adds a helper function (model, ...) -> outputs to brew; a name already taken raises
    AttributeError, as Caffe2's."""
    if helper.__name__ in _HELPERS:
        raise AttributeError("Helper {} already exists. Please change your helper name.".format(
            helper.__name__))
    _HELPERS[helper.__name__] = helper
    globals()[helper.__name__] = _wrap(helper)
    return globals()[helper.__name__]


def has_helper(helper_or_name):
    name = helper_or_name if isinstance(helper_or_name, str) else helper_or_name.__name__
    return name in _HELPERS


for _helper in (fc, conv, relu, sigmoid, tanh, softmax, max_pool, average_pool, spatial_bn, dropout,
                concat, sum, accuracy, iter, image_input, cond, loop):
    Register(_helper)
del _helper
