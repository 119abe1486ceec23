"""InjectCrossDeviceCopies (hetnet::CrossDeviceCopyPass) and placement options from Python."""
import pytest

from hetnet import core, workspace
from hetnet.proto import caffe2_pb2


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
    import hetnet
    net = core.Net("overwrite")
    with core.DeviceScope(GPU0):
        net.Relu("x", "y")
    with core.DeviceScope(CPU):
        net.Relu("w", "y")
    with pytest.raises(hetnet.InvalidArgumentError):
        core.InjectCrossDeviceCopies(net)


def test_placement_options_round_trip():
    before = workspace.GetPlacementOptions()
    try:
        workspace.SetPlacementOptions(soft_placement=True)
        assert workspace.GetPlacementOptions()["soft_placement"] is True
    finally:
        workspace.SetPlacementOptions(**before)
    assert workspace.GetPlacementOptions() == before


def test_placement_report_is_the_same_from_python_cpp_and_cli(ws, tmp_path):
    """Python prints the C++ report text; `hetnet inspect --placement` prints the same."""
    import os
    import subprocess
    from hetnet import _C
    net = _seed_net()
    report = workspace.PlacementReport(net, soft_placement=True)
    text = workspace.FormatPlacementReport(report)
    assert "soft placement" in text or "CopyCPUToGPU" in text
    assert text.startswith("Placement of net '{}'".format(net.Name()))
    assert "digraph" in workspace.PlacementDot(report)
    path = tmp_path / "inject.pb"
    path.write_bytes(net.Proto().SerializeToString())
    build = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(_C.__file__))))
    cli = os.path.join(build, "bin", "hetnet")
    assert os.path.exists(cli), "hetnet CLI not built at " + cli
    out = subprocess.run([cli, "inspect", "--soft-placement", "--placement", str(path)],
                         capture_output=True, text=True, check=True).stdout
    assert text in out
