"""hetnet: a Caffe2-compatible operator-graph runtime.

Modules follow caffe2.python: ``workspace``, ``core``, ``scope``, ``model_helper``, ``brew``,
``net_drawer``; protos in ``hetnet.proto.caffe2_pb2``. The ``caffe2`` package re-exports these
same module objects for code written against Caffe2.
"""
from hetnet import _C  # noqa: F401  (loads libhetnet)
from hetnet._errors import (HetnetError, RunError, InvalidArgumentError, NotFoundError,  # noqa: F401
                            UnsupportedError, OutOfMemoryError, DeadlineExceededError, IoError)
from hetnet.proto import caffe2_pb2  # noqa: F401
from hetnet import scope, core, workspace, model_helper, brew, net_drawer  # noqa: F401,E402
