"""caffe2.proto: hetnet's generated protos (``caffe2_pb2`` is hetnet.proto.caffe2_pb2)."""
import sys

from hetnet.proto import caffe2_pb2

sys.modules[__name__ + ".caffe2_pb2"] = caffe2_pb2

__all__ = ["caffe2_pb2"]
