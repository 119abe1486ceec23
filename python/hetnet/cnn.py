"""CNNModelHelper, Caffe2's old-style model helper (caffe2.python.cnn): a ModelHelper whose layer
methods (FC, Conv, Relu, ...) call the brew helpers with the helper's order and cuDNN settings."""
import logging

from hetnet import brew, core
from hetnet.model_helper import ModelHelper
from hetnet.proto import caffe2_pb2

log = logging.getLogger(__name__)


class CNNModelHelper(ModelHelper):
    """A ModelHelper for convolutional nets (deprecated in Caffe2 in favour of ModelHelper + brew)."""

    def __init__(self, order="NCHW", name=None, use_cudnn=True, cudnn_exhaustive_search=False,
                 ws_nbytes_limit=None, init_params=True, skip_sparse_optim=False, param_model=None):
        log.warning("[====DEPRECATE WARNING====]: you are creating an object from CNNModelHelper class "
                    "which will be deprecated soon. Please use ModelHelper object with brew module.")
        cnn_arg_scope = {"order": order, "use_cudnn": use_cudnn,
                         "cudnn_exhaustive_search": cudnn_exhaustive_search}
        if ws_nbytes_limit:
            cnn_arg_scope["ws_nbytes_limit"] = ws_nbytes_limit
        super(CNNModelHelper, self).__init__(
            skip_sparse_optim=skip_sparse_optim, name="CNN" if name is None else name,
            init_params=init_params, param_model=param_model, arg_scope=cnn_arg_scope)
        self.order = order
        self.use_cudnn = use_cudnn
        self.cudnn_exhaustive_search = cudnn_exhaustive_search
        self.ws_nbytes_limit = ws_nbytes_limit
        if self.order != "NHWC" and self.order != "NCHW":
            raise ValueError("Cannot understand the CNN storage order %s." % self.order)

    # ---- layers (brew helpers) ----
    def Conv(self, *args, **kwargs):
        return brew.conv(self, *args, use_cudnn=self.use_cudnn, order=self.order,
                         cudnn_exhaustive_search=self.cudnn_exhaustive_search,
                         ws_nbytes_limit=self.ws_nbytes_limit, **kwargs)

    def FC(self, *args, **kwargs):
        return brew.fc(self, *args, **kwargs)

    def Dropout(self, *args, **kwargs):
        return brew.dropout(self, *args, use_cudnn=self.use_cudnn, **kwargs)

    def Softmax(self, *args, **kwargs):
        return brew.softmax(self, *args, use_cudnn=self.use_cudnn, **kwargs)

    def SpatialBN(self, *args, **kwargs):
        return brew.spatial_bn(self, *args, order=self.order, **kwargs)

    def Relu(self, *args, **kwargs):
        return brew.relu(self, *args, order=self.order, use_cudnn=self.use_cudnn, **kwargs)

    def Sigmoid(self, *args, **kwargs):
        return brew.sigmoid(self, *args, order=self.order, use_cudnn=self.use_cudnn, **kwargs)

    def Tanh(self, *args, **kwargs):
        return brew.tanh(self, *args, order=self.order, use_cudnn=self.use_cudnn, **kwargs)

    def Concat(self, *args, **kwargs):
        return brew.concat(self, *args, order=self.order, **kwargs)

    def DepthConcat(self, *args, **kwargs):
        """The old name for Concat."""
        return self.Concat(*args, **kwargs)

    def Sum(self, *args, **kwargs):
        return brew.sum(self, *args, **kwargs)

    def Accuracy(self, *args, **kwargs):
        return brew.accuracy(self, *args, **kwargs)

    def Iter(self, *args, **kwargs):
        return brew.iter(self, *args, **kwargs)

    def MaxPool(self, *args, **kwargs):
        return brew.max_pool(self, *args, use_cudnn=self.use_cudnn, order=self.order, **kwargs)

    def AveragePool(self, *args, **kwargs):
        return brew.average_pool(self, *args, use_cudnn=self.use_cudnn, order=self.order, **kwargs)

    def LRN(self, blob_in, blob_out, **kwargs):
        """LRN with Caffe2's outputs (blob_out and the scale blob '_<blob_out>_scale')."""
        if self.use_cudnn:
            kwargs.setdefault("engine", "CUDNN")
        return self.net.LRN(blob_in, [blob_out, "_" + str(blob_out) + "_scale"], order=self.order,
                            **kwargs)[0]

    def Transpose(self, blob_in, blob_out, **kwargs):
        if self.use_cudnn:
            kwargs.setdefault("engine", "CUDNN")
        return self.net.Transpose(blob_in, blob_out, **kwargs)

    # ---- initializers and devices ----
    @property
    def XavierInit(self):
        return ("XavierFill", {})

    def ConstantInit(self, value):
        return ("ConstantFill", dict(value=value))

    @property
    def MSRAInit(self):
        return ("MSRAFill", {})

    @property
    def ZeroInit(self):
        return ("ConstantFill", {})

    @property
    def CPU(self):
        option = caffe2_pb2.DeviceOption()
        option.device_type = caffe2_pb2.CPU
        return option

    @property
    def GPU(self, gpu_id=0):
        return core.DeviceOption(caffe2_pb2.CUDA, gpu_id)
