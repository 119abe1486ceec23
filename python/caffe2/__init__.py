"""Compatibility package: ``caffe2.python.*`` and ``caffe2.proto.caffe2_pb2`` are hetnet's modules."""
