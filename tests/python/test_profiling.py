"""Profiling from Python: BenchmarkNet's per-op times come from the C++ profiler (and it prints the
per-op-type summary), ProfileNet returns the summary and writes a Chrome trace lane by lane."""
import json

import numpy as np

from hetnet import core


def _wide_net(ws, net_type, branches=4, depth=2):
    net = core.Net("wide_" + net_type)
    net.Proto().type = net_type
    net.Proto().num_workers = 2
    rng = np.random.RandomState(0)
    ws.FeedBlob("x", rng.randn(32, 64).astype(np.float32))
    for b in range(branches):
        prev = "x"
        for d in range(depth):
            p = "b{}_{}".format(b, d)
            ws.FeedBlob(p + "_w", (0.1 * rng.randn(64, 64)).astype(np.float32))
            ws.FeedBlob(p + "_b", np.zeros(64, np.float32))
            net.FC([prev, p + "_w", p + "_b"], p + "_y")
            net.Relu(p + "_y", p + "_y")
            prev = p + "_y"
    ws.CreateNet(net)
    return net


def test_benchmark_net_uses_profiler_and_prints_summary(ws, capsys):
    net = _wide_net(ws, "dag")
    times = ws.BenchmarkNet(net.Proto().name, 1, 3, True)
    assert len(times) == 1 + 16
    assert all(t >= 0 for t in times)
    out = capsys.readouterr().out
    assert "| op type | ops | ms/run | share |" in out
    assert "| FC | 8 |" in out and "| Relu | 8 |" in out
    assert "copies" in out


def test_profile_net_summary_and_trace(ws, tmp_path):
    for net_type in ("simple", "dag"):
        net = _wide_net(ws, net_type)
        trace = tmp_path / (net_type + ".json")
        r = ws.ProfileNet(net.Proto().name, 1, 2, str(trace))
        assert set(r["type_ms"]) == {"FC", "Relu"}
        assert len(r["op_ms"]) == 16
        assert r["copy_share"] == 0.0
        assert r["wall_ms"] > 0
        events = json.load(open(str(trace)))["traceEvents"]
        ops = [e for e in events if e["ph"] == "X"]
        assert len(ops) == 2 * 16
        lanes = {e["args"]["name"] for e in events if e.get("name") == "thread_name"}
        if net_type == "simple":
            assert lanes == {"main thread"}
        else:
            assert lanes <= {"worker 0", "worker 1"} and lanes
