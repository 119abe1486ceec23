"""hetnet.onnx.frontend: Caffe2 NetDefs to ONNX, Caffe2's ``caffe2.python.onnx.frontend`` API:

    from hetnet.onnx import frontend
    model = frontend.caffe2_net_to_onnx_model(predict_net, init_net,
                                              {"data": (onnx.TensorProto.FLOAT, (1, 3, 224, 224))})
    onnx.checker.check_model(model)

The C++ exporter (onnx/onnx_export.h) does the work: it runs the init net on CPU for the weights
(they become initializers) and the predict net once on zeros of the value_info shapes to learn the
dtypes and shapes of every blob, so the exported model has fixed input shapes. Operators with no
ONNX export are listed together in one hetnet error (kind "unsupported").
"""
import numpy as np
import onnx

from hetnet import _C

__all__ = ["Caffe2Frontend", "caffe2_net_to_onnx_model", "caffe2_net_to_onnx_graph"]

DEFAULT_OPSET = 17  # the newest ai.onnx opset the exporter is written and tested against


def _net_bytes(net, what):
    if net is None:
        return b""
    if isinstance(net, (bytes, bytearray)):
        return bytes(net)
    if hasattr(net, "SerializeToString"):
        return net.SerializeToString()
    if hasattr(net, "Proto"):  # a core.Net
        return net.Proto().SerializeToString()
    raise TypeError("{} must be a NetDef, a core.Net or serialized bytes, not {}".format(what, type(net).__name__))


def _elem_type(t):
    if isinstance(t, (int, np.integer)):
        return int(t)
    return int(onnx.helper.np_dtype_to_tensor_dtype(np.dtype(t)))


def _value_info_dict(value_info):
    out = {}
    for name, info in (value_info or {}).items():
        if len(info) != 2:
            raise ValueError("value_info[{!r}] must be (elem_type, shape), got {!r}".format(name, info))
        elem_type, shape = info
        out[str(name)] = (_elem_type(elem_type), [int(d) for d in shape])
    return out


class Caffe2Frontend(object):
    """Caffe2's frontend class: classmethods over the C++ exporter."""

    target_opset = DEFAULT_OPSET

    @classmethod
    def caffe2_net_to_onnx_model(cls, predict_net, init_net=None, value_info=None, opset=None):
        """NetDefs (+ {input: (onnx elem_type, shape)}) -> onnx.ModelProto."""
        if not _C.has_onnx_export:
            raise RuntimeError("this hetnet build has no ONNX export (built without libonnx-dev)")
        data = _C.onnx_export(_net_bytes(predict_net, "predict_net"), _net_bytes(init_net, "init_net"),
                              _value_info_dict(value_info), int(opset or cls.target_opset))
        return onnx.ModelProto.FromString(data)

    @classmethod
    def caffe2_net_to_onnx_graph(cls, predict_net, init_net=None, value_info=None, opset=None):
        """The GraphProto of caffe2_net_to_onnx_model (weights as initializers)."""
        return cls.caffe2_net_to_onnx_model(predict_net, init_net, value_info, opset).graph


caffe2_net_to_onnx_model = Caffe2Frontend.caffe2_net_to_onnx_model
caffe2_net_to_onnx_graph = Caffe2Frontend.caffe2_net_to_onnx_graph
