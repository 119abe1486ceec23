"""The Fashion-MNIST example, kept short: its --gpu NetDef (layers on GPU 0, data/loss on CPU) with
soft placement off/on, a couple of hundred iterations on a subset (the loss decreases), and the
exported init/predict nets reproducing Python's predictions exactly through `hetnet run`. Also the
memory report from Python and `hetnet inspect --memory`."""
import glob
import os
import subprocess
import sys

import numpy as np
import pytest

from caffe2.proto import caffe2_pb2
from caffe2.python import brew, core, model_helper, workspace

from conftest import REPO_ROOT

sys.path.insert(0, os.path.join(REPO_ROOT, "python", "examples"))
import train_fashion_mnist as fm  # noqa: E402


def _cli():
    from hetnet import _C
    build = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(_C.__file__))))
    path = os.path.join(build, "bin", "hetnet")
    if not os.path.exists(path):
        pytest.skip("hetnet CLI not built at " + path)
    return path


def _have_data():
    return bool(glob.glob(os.path.join(fm.DATA_DIR, "train-images-idx3-ubyte*")))


def test_gpu_netdef_places_layers_on_gpu_and_loss_on_cpu(ws):
    model = fm.build_train_model("mlp", gpu=True)
    ops = model.net.Proto().op
    dev = lambda op: (op.device_option.device_type, op.device_option.device_id) \
        if op.HasField("device_option") else (0, 0)  # noqa: E731
    by_type = {}
    for op in ops:
        by_type.setdefault(op.type, set()).add(dev(op))
    assert by_type["FC"] == {(1, 0)}
    assert by_type["FCGradient"] == {(1, 0)}
    assert by_type["ReluGradient"] == {(1, 0)}
    assert by_type["MomentumSGDUpdate"] == {(1, 0)}
    assert by_type["WeightedSum"] == {(1, 0)}  # weight decay next to the weights
    assert by_type["SoftmaxWithLoss"] == {(0, 0)} and by_type["SoftmaxWithLossGradient"] == {(0, 0)}
    assert by_type["Iter"] == {(0, 0)}
    init_fc = [op for op in model.param_init_net.Proto().op if op.output[0] == "fc1_w"][0]
    assert dev(init_fc) == (1, 0)
    # soft placement on: every op runs (on CPU here), copies planned at the CPU/GPU boundary
    report = workspace.PlacementReport(model.net, soft_placement=True)
    assert len(report["ops"]) >= len(ops)
    if workspace.NumCudaDevices() == 0:
        assert any("soft" in op["reason"] for op in report["ops"])
        with pytest.raises(Exception, match="(?i)gpu|cuda"):
            workspace.PlacementReport(model.net, soft_placement=False)
    else:
        copies = {c["type"] for c in report["copies"]}
        assert "CopyCPUToGPU" in copies and "CopyGPUToCPU" in copies


@pytest.mark.skipif(not _have_data(), reason="dataset-fashion-mnist is not installed")
def test_short_training_and_exported_nets_through_hetnet_run(ws, tmp_path):
    train_x, train_y, test_x, test_y = fm.load_fashion_mnist()
    assert train_x.shape == (60000, 1, 28, 28) and test_x.shape == (10000, 1, 28, 28)
    data = (train_x[:3000], train_y[:3000], test_x[:1000], test_y[:1000])
    logs = []
    _, deploy, history, losses = fm.train(data, "mlp", epochs=10, batch_size=32, max_iters=200, log=logs.append)
    assert len(losses) == 200
    assert np.mean(losses[-30:]) < 0.7 * np.mean(losses[:10]), (losses[:10], losses[-30:])
    assert history[-1]["test_acc"] > 0.6
    assert "images/s" in logs[0]

    out = str(tmp_path / "export")
    fm.export(deploy, out)
    x = test_x[:16].reshape(16, 784).astype(np.float32)
    workspace.FeedBlob("data", x)
    workspace.RunNet(deploy.net.Proto().name)
    expected = workspace.FetchBlob("softmax")
    np.save(str(tmp_path / "x.npy"), x)
    # As exported (--no-optimize): the same bits; with the inference rewrite (packed FC weights):
    # the same values to float rounding.
    for flags in (["--no-optimize"], []):
        res = subprocess.run([_cli(), "run", "--init", os.path.join(out, "init_net.pb"), "--predict",
                              os.path.join(out, "predict_net.pb"), "--input", "data=" + str(tmp_path / "x.npy"),
                              "--output", "softmax=" + str(tmp_path / "out.npy")] + flags,
                             capture_output=True, text=True)
        assert res.returncode == 0, res.stderr
        got = np.load(str(tmp_path / "out.npy"))
        if flags:
            assert np.array_equal(got, expected)
        else:
            np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-7)

    res = subprocess.run([_cli(), "inspect", "--memory", os.path.join(out, "predict_net.pb"), "--init",
                          os.path.join(out, "init_net.pb"), "--shape", "data=16,784"], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    # data 16x784 + fc1 16x512 + fc2 16x256 + pred 16x10 + softmax 16x10 (the Relus are in place)
    assert "Memory required for data: {} bytes".format(4 * 16 * (784 + 512 + 256 + 10 + 10)) in res.stdout
    params = 4 * (784 * 512 + 512 + 512 * 256 + 256 + 256 * 10 + 10)
    assert "Memory required for parameters: {} bytes".format(params) in res.stdout


def test_memory_report_from_python(ws):
    model = model_helper.ModelHelper(name="mem")
    h = brew.fc(model, "data", "fc1", dim_in=20, dim_out=30)
    brew.relu(model, h, h)
    brew.fc(model, h, "pred", dim_in=30, dim_out=10)
    shapes = {"data": [8, 20], "fc1_w": [30, 20], "fc1_b": [30], "pred_w": [10, 30], "pred_b": [10]}
    r = workspace.MemoryReport(model, input_shapes=shapes)
    assert r["data_total"] == 4 * (8 * 20 + 8 * 30 + 8 * 10)
    assert r["param_total"] == 4 * (600 + 30 + 300 + 10)
    assert r["param_bytes"] == {(0, 0): r["param_total"]}
    assert "Memory required for data" in r["text"]
    workspace.RunNetOnce(model.param_init_net)
    workspace.FeedBlob("data", np.zeros((8, 20), np.float32))
    workspace.RunNetOnce(model.net)
    r2 = workspace.MemoryReport(model)
    assert r2["data_total"] == r["data_total"] and r2["param_total"] == r["param_total"]
    assert [b["shape"] for b in r2["blobs"] if b["name"] == "fc1"] == [[8, 30]]
    # RunNetOnce's operators are gone, and any copy of a weight that their kernels prepared with them.
    assert r2["prepared_total"] == 0 and r2["prepared_bytes"] == {}
    assert "prepared weight copies" not in r2["text"]
