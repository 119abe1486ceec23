"""InjectCrossDeviceCopies (hetnet::CrossDeviceCopyPass) and placement options from Python."""
import pytest

from hetnet import core, workspace
from hetnet.proto import caffe2_pb2
from conftest import require_placement_pass

CPU = core.DeviceOption(caffe2_pb2.CPU, -1)
GPU1 = core.DeviceOption(caffe2_pb2.CUDA, 1)
GPU0 = core.DeviceOption(caffe2_pb2.CUDA, 0)


def _seed_net():
    net = core.Net("inject")
    with core.DeviceScope(GPU1):
        with core.DeviceScope(CPU):
            fc1 = net.FC(["data", "fc_w", "fc_b"], "fc1")
        pred = net.Sigmoid(fc1, "pred")
        net.SoftmaxWithLoss([pred, "label"], ["softmax", "loss"])
    return net


def test_inject_cross_device_copies_like_caffe2():
    require_placement_pass()
    new_net, blob_to_device = core.InjectCrossDeviceCopies(_seed_net())
    assert isinstance(new_net, core.Net)
    ops = new_net.Proto().op
    summary = [(op.type, list(op.input), list(op.output), op.device_option.device_type,
                op.device_option.device_id) for op in ops]
    assert summary[0][:3] == ("FC", ["data", "fc_w", "fc_b"], ["fc1"])
    assert summary[1] == ("CopyCPUToGPU", ["fc1"], ["fc1_gpu_1"], 1, 1)
    assert summary[2] == ("Sigmoid", ["fc1_gpu_1"], ["pred"], 1, 1)
    assert summary[3] == ("CopyCPUToGPU", ["label"], ["label_gpu_1"], 1, 1)
    assert summary[4] == ("SoftmaxWithLoss", ["pred", "label_gpu_1"], ["softmax", "loss"], 1, 1)
    assert blob_to_device["loss"].device_type == caffe2_pb2.CUDA
    assert blob_to_device["loss"].device_id == 1
    assert blob_to_device["fc1"].device_type == caffe2_pb2.CPU


def test_inject_reuses_copies_and_uses_given_input_devices():
    require_placement_pass()
    net = core.Net("reuse")
    with core.DeviceScope(GPU0):
        net.Relu("x", "a")
        net.Relu("x", "b")
    new_net, _ = core.InjectCrossDeviceCopies(net)
    types = [op.type for op in new_net.Proto().op]
    assert types == ["CopyCPUToGPU", "Relu", "Relu"]
    on_gpu, _ = core.InjectCrossDeviceCopies(net, blob_to_device={"x": GPU0})
    assert [op.type for op in on_gpu.Proto().op] == ["Relu", "Relu"]


def test_gpu_to_cpu_copy_named_cpu():
    require_placement_pass()
    net = core.Net("back")
    with core.DeviceScope(GPU0):
        y = net.Relu("x", "y")
    with core.DeviceScope(CPU):
        net.Relu(y, "z")
    new_net, _ = core.InjectCrossDeviceCopies(net, blob_to_device={"x": GPU0})
    copy = new_net.Proto().op[1]
    assert (copy.type, list(copy.output), copy.device_option.device_type) == \
        ("CopyGPUToCPU", ["y_cpu"], 1)


def test_overwrite_on_other_device_is_refused():
    require_placement_pass()
    import hetnet
    net = core.Net("overwrite")
    with core.DeviceScope(GPU0):
        net.Relu("x", "y")
    with core.DeviceScope(CPU):
        net.Relu("w", "y")
    with pytest.raises(hetnet.InvalidArgumentError):
        core.InjectCrossDeviceCopies(net)


def test_placement_options_round_trip():
    require_placement_pass()
    before = workspace.GetPlacementOptions()
    try:
        workspace.SetPlacementOptions(soft_placement=True)
        assert workspace.GetPlacementOptions()["soft_placement"] is True
    finally:
        workspace.SetPlacementOptions(**before)
    assert workspace.GetPlacementOptions() == before
