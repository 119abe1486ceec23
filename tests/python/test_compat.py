"""The caffe2 package is hetnet's modules under Caffe2's names."""
import importlib

import hetnet


def test_caffe2_modules_are_hetnet_modules():
    from caffe2.python import workspace, core, model_helper, brew, scope, net_drawer
    from caffe2.proto import caffe2_pb2
    assert workspace is hetnet.workspace
    assert core is hetnet.core
    assert model_helper is hetnet.model_helper
    assert brew is hetnet.brew
    assert scope is hetnet.scope
    assert net_drawer is hetnet.net_drawer
    assert caffe2_pb2 is hetnet.proto.caffe2_pb2
    assert importlib.import_module("caffe2.python.workspace") is hetnet.workspace
    assert importlib.import_module("caffe2.proto.caffe2_pb2") is caffe2_pb2


def test_device_type_aliases_and_gpu_flags():
    from caffe2.proto import caffe2_pb2
    from caffe2.python import workspace
    assert caffe2_pb2.CPU == caffe2_pb2.PROTO_CPU == 0
    assert caffe2_pb2.CUDA == caffe2_pb2.PROTO_CUDA == 1
    assert caffe2_pb2.HIP == 6
    assert workspace.GpuDeviceType == 1
    assert workspace.has_hip_support is False
    # As Caffe2: GPU support means a CUDA build *and* at least one device (False without a GPU).
    assert workspace.has_gpu_support == workspace.has_cuda_support == \
        (bool(hetnet._C.has_cuda_support()) and hetnet._C.num_cuda_devices() > 0)
    assert workspace.NumCudaDevices() >= 0


def test_core_reexports_scopes():
    from caffe2.python import core, scope
    assert core.DeviceScope is scope.DeviceScope
    assert core.NameScope is scope.NameScope
