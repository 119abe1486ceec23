"""Offline placement planning from Python (issue 13 item 7): workspace.PlacementReport(net,
devices=[...]) plans the net for a machine with those devices, on any machine, without running it;
the same report as `hetnet inspect --placement --devices`."""
import os
import subprocess

import numpy as np
import pytest

import hetnet
from hetnet import model_helper, core
from hetnet.proto import caffe2_pb2

CPU, CUDA = (caffe2_pb2.CPU, 0), (caffe2_pb2.CUDA, 0)


def _mixed_model():
    """python/examples/mixed_devices_run.py's model: FC on CPU, Sigmoid and SoftmaxWithLoss on
    cuda:0, weights filled on CPU."""
    m = model_helper.ModelHelper(name="mixed devices run")
    with core.DeviceScope(core.DeviceOption(caffe2_pb2.CUDA, 0)):
        with core.DeviceScope(core.DeviceOption(caffe2_pb2.CPU, -1)):
            m.param_init_net.XavierFill([], "fc_w", shape=[10, 100])
            m.param_init_net.ConstantFill([], "fc_b", shape=[10, ])
            fc_1 = m.net.FC(["data", "fc_w", "fc_b"], "fc1")
        pred = m.net.Sigmoid(fc_1, "pred")
        m.net.SoftmaxWithLoss([pred, "label"], ["softmax", "loss"])
    return m


INPUT_SHAPES = {"data": [16, 100], "label": ([16], caffe2_pb2.TensorProto.INT32)}
WANT_OPS = [("FC", CPU), ("CopyCPUToGPU", CUDA), ("Sigmoid", CUDA), ("CopyCPUToGPU", CUDA),
            ("SoftmaxWithLoss", CUDA)]
WANT_COPIES = [("CopyCPUToGPU", "fc1", "fc1_gpu_0", CPU, CUDA, 16 * 10 * 4),
               ("CopyCPUToGPU", "label", "label_gpu_0", CPU, CUDA, 16 * 4)]


def _ops(report):
    return [(op["type"], tuple(op["device"])) for op in report["ops"]]


def _copies(report):
    return [(c["type"], c["src_blob"], c["dst_blob"], tuple(c["from"]), tuple(c["to"]), c["bytes"])
            for c in report["copies"]]


def _cli():
    from hetnet import _C
    build = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(_C.__file__))))
    cli = os.path.join(build, "bin", "hetnet")
    assert os.path.exists(cli), "hetnet CLI not built at " + cli
    return cli


def test_plan_for_cpu_and_cuda0_offline(ws):
    m = _mixed_model()
    report = ws.PlacementReport(m.net, devices=["cpu", "cuda:0"], init_net=m.param_init_net,
                                input_shapes=INPUT_SHAPES)
    assert _ops(report) == WANT_OPS
    assert _copies(report) == WANT_COPIES
    assert [op["index"] for op in report["ops"]] == [0, 1, 2, 3, 4]
    assert [c["op_index"] for c in report["copies"]] == [1, 3]
    assert report["ops"][2]["reason"] == "own device option"
    assert report["devices"] == ["cpu", "cuda:0"]
    assert "cpu -> cuda:0: 2 copies, 704 B" in ws.FormatPlacementReport(report)
    assert "640 B" in ws.PlacementDot(report)
    # Nothing ran and nothing was created: no weights, no net, no outputs in the workspace.
    assert not ws.HasBlob("fc_w") and not ws.HasBlob("fc1") and not ws.HasBlob("loss")
    assert ws.Nets() == []


def test_plan_takes_inputs_from_the_workspace(ws):
    """As net creation does: blobs already in the workspace give devices and shapes."""
    m = _mixed_model()
    ws.FeedBlob("data", np.zeros((16, 100), np.float32))
    ws.FeedBlob("label", np.zeros((16,), np.int32))
    ws.RunNetOnce(m.param_init_net)  # CPU fills: runs on any machine
    report = ws.PlacementReport(m.net, devices="cpu,cuda:0")
    assert _ops(report) == WANT_OPS
    assert _copies(report) == WANT_COPIES
    # Without anything known the copies are the same, their bytes unknown.
    ws.ResetWorkspace()
    report = ws.PlacementReport(m.net, devices=[core.DeviceOption(caffe2_pb2.CPU, -1),
                                                core.DeviceOption(caffe2_pb2.CUDA, 0)])
    assert _ops(report) == WANT_OPS
    assert [c[:5] for c in _copies(report)] == [c[:5] for c in WANT_COPIES]
    assert [c["bytes"] for c in report["copies"]] == [-1, -1]


def test_plan_for_cpu_only_refuses_or_soft_places(ws):
    m = _mixed_model()
    with pytest.raises(hetnet.UnsupportedError) as e:
        ws.PlacementReport(m.net, devices=["cpu"], soft_placement=False)
    msg = str(e.value)
    assert "#1 Sigmoid on cuda:0" in msg and "#2 SoftmaxWithLoss on cuda:0" in msg
    assert "planned offline for a machine with cpu;" in msg
    report = ws.PlacementReport(m.net, devices=["cpu"], soft_placement=True)
    assert _ops(report) == [("FC", CPU), ("Sigmoid", CPU), ("SoftmaxWithLoss", CPU)]
    assert report["copies"] == []
    assert [op["reason"] for op in report["ops"][1:]] == ["soft placement (cuda:0 not available)"] * 2


def test_plan_op_on_a_gpu_the_list_lacks():
    net = core.Net("two_gpus")
    with core.DeviceScope(core.DeviceOption(caffe2_pb2.CUDA, 1)):
        net.Relu("x", "y")
    from hetnet import workspace
    with pytest.raises(hetnet.UnsupportedError, match="#0 Relu on cuda:1"):
        workspace.PlacementReport(net, devices=["cpu", "cuda:0"], soft_placement=False)
    report = workspace.PlacementReport(net, devices=["cpu", "cuda:0", "cuda:1"],
                                       input_shapes={"x": [2, 3]})
    assert _copies(report) == [("CopyCPUToGPU", "x", "x_gpu_1", CPU, (caffe2_pb2.CUDA, 1), 24)]


@pytest.mark.parametrize("devices, message", [
    (["cpu", "gpu:0"], "unknown device 'gpu:0'"),
    (["cpu", "cuda:0", "cuda:0"], "'cuda:0' is listed twice"),
    (["cpu", "cuda:1"], "has cuda:1 but not cuda:0"),
    ([], "the device list is empty"),
])
def test_bad_device_lists(ws, devices, message):
    with pytest.raises(hetnet.InvalidArgumentError, match=message):
        ws.PlacementReport(_mixed_model().net, devices=devices)


def test_offline_arguments_need_devices(ws):
    m = _mixed_model()
    with pytest.raises(ValueError, match="devices"):
        ws.PlacementReport(m.net, init_net=m.param_init_net)
    with pytest.raises(TypeError, match="devices"):
        ws.PlacementReport(m.net, devices=["cpu", 0])


def test_python_and_cli_give_the_same_plan(ws, tmp_path):
    m = _mixed_model()
    report = ws.PlacementReport(m.net, devices=["cpu", "cuda:0"], init_net=m.param_init_net,
                                input_shapes=INPUT_SHAPES)
    predict, init = tmp_path / "predict.pb", tmp_path / "init.pb"
    predict.write_bytes(m.net.Proto().SerializeToString())
    init.write_bytes(m.param_init_net.Proto().SerializeToString())
    out = subprocess.run([_cli(), "inspect", "--placement", "--devices", "cpu,cuda:0", "--init", str(init),
                          "--shape", "data=16,100", "--shape", "label=16:int32", str(predict)],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "Offline plan for a machine with cpu, cuda:0 (nothing was run)" in out.stdout
    assert report["text"] in out.stdout
    assert "fc1 -> fc1_gpu_0  cpu -> cuda:0  640 B" in report["text"]
