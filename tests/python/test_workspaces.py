"""Workspace switching, reset, nets in workspaces, benchmark."""
import numpy as np
import pytest

import hetnet
from hetnet import core


def test_switch_and_isolation(ws):
    ws.FeedBlob("a", np.ones(1, np.float32))
    assert ws.CurrentWorkspace() == "default"
    with pytest.raises(hetnet.NotFoundError):
        ws.SwitchWorkspace("other")
    ws.SwitchWorkspace("other", create_if_missing=True)
    assert ws.CurrentWorkspace() == "other"
    assert not ws.HasBlob("a")
    ws.FeedBlob("b", np.ones(1, np.float32))
    ws.SwitchWorkspace("default")
    assert ws.HasBlob("a") and not ws.HasBlob("b")
    assert "other" in ws.Workspaces()
    ws.SwitchWorkspace("other")
    assert ws.Blobs() == ["b"]
    ws.ResetWorkspace()
    assert ws.Blobs() == []


def test_reset_drops_blobs_and_nets(ws):
    net = core.Net("kept")
    net.Relu("x", "y")
    ws.FeedBlob("x", np.array([-1.0, 2.0], np.float32))
    ws.CreateNet(net)
    assert "kept" in ws.Nets()
    ws.ResetWorkspace()
    assert ws.Nets() == [] and ws.Blobs() == []


def test_create_run_net_and_overwrite(ws):
    net = core.Net("relu_net")
    net.Relu("x", "y")
    ws.FeedBlob("x", np.array([-1.0, 2.0], np.float32))
    assert ws.CreateNet(net) == "relu_net"
    ws.RunNet("relu_net", num_iter=3)
    ws.RunNet(net)
    np.testing.assert_array_equal(ws.FetchBlob("y"), [0.0, 2.0])
    with pytest.raises(hetnet.HetnetError):
        ws.CreateNet(net)  # already exists
    ws.CreateNet(net, overwrite=True)
    assert ws.GetNetDef("relu_net").op[0].type == "Relu"


def test_run_net_once_and_operator_once(ws):
    ws.FeedBlob("x", np.array([-3.0, 4.0], np.float32))
    ws.RunOperatorOnce(core.CreateOperator("Relu", "x", "y"))
    np.testing.assert_array_equal(ws.FetchBlob("y"), [0.0, 4.0])
    net = core.Net("once")
    net.Relu("x", "z")
    ws.RunNetOnce(net.Proto())
    assert ws.HasBlob("z") and "once" not in ws.Nets()


def test_benchmark_net(ws):
    net = core.Net("bench")
    y = net.Relu("x", "y")
    net.Relu(y, "z")
    ws.FeedBlob("x", np.random.randn(1000).astype(np.float32))
    ws.CreateNet(net)
    times = ws.BenchmarkNet("bench", 1, 5, True)
    assert len(times) == 3 and all(t >= 0 for t in times)
    assert len(ws.BenchmarkNet("bench", 0, 2, False)) == 1
    assert list(ws.BenchmarkNetByOpType("bench", 1, 2)) == ["Relu"]
