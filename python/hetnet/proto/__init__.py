"""Protocol buffers of hetnet, generated from proto/caffe2.proto (Caffe2's wire format).

As in Caffe2, ``caffe2_pb2.CPU``, ``CUDA``, ... alias the ``DeviceTypeProto`` values.
"""
from . import caffe2_pb2

for _short, _proto in (("CPU", "PROTO_CPU"), ("CUDA", "PROTO_CUDA"), ("MKLDNN", "PROTO_MKLDNN"),
                       ("OPENGL", "PROTO_OPENGL"), ("OPENCL", "PROTO_OPENCL"), ("IDEEP", "PROTO_IDEEP"),
                       ("HIP", "PROTO_HIP"), ("COMPILE_TIME_MAX_DEVICE_TYPES",
                                              "PROTO_COMPILE_TIME_MAX_DEVICE_TYPES")):
    setattr(caffe2_pb2, _short, getattr(caffe2_pb2, _proto))

__all__ = ["caffe2_pb2"]
