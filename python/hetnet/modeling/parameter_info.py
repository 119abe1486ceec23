"""ParameterTags and ParameterInfo, as in caffe2.python.modeling.parameter_info."""
import numpy as np

from hetnet import core


class ParameterTags(object):
    BIAS = "BIAS"
    WEIGHT = "WEIGHT"
    COMPUTED_PARAM = "COMPUTED_PARAM"


class ParameterInfo(object):
    """What a model knows about one parameter: its blob, shape, gradient and optimizer."""

    def __init__(self, param_id, param, key=None, shape=None, length=None, grad=None, blob_copy=None):
        assert isinstance(param, core.BlobReference)
        self.param_id = param_id
        self.name = str(param)
        self.blob = param
        self.key = key
        self.shape = shape
        self.size = None if shape is None else np.prod(shape)
        self.length = max(1, length if length is not None else 1)
        self.grad = grad
        self._cloned_init_net = None
        self.blob_copy = blob_copy  # {TensorProto DataType: BlobReference} copies in other precisions
        self._optimizer = None

    @property
    def parameter(self):
        return self.blob

    @property
    def optimizer(self):
        return self._optimizer

    @optimizer.setter
    def optimizer(self, value):
        assert self._optimizer is None, "optimizer has already been set"
        self._optimizer = value

    def grad_type(self):
        assert self.grad is not None, "Gradient is not set for parameter {}".format(self.name)
        return core.GradientSlice if isinstance(self.grad, core.GradientSlice) else core.BlobReference

    def cloned_init_net(self):
        raise NotImplementedError("ParameterInfo.cloned_init_net is not provided by hetnet")

    def __str__(self):
        return self.name
