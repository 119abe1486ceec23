"""tools/trace_overlap.py on synthetic traces in hetnet's Chrome trace format."""
import json
import os
import subprocess
import sys

TOOL = os.path.join(os.path.dirname(__file__), "..", "..", "tools", "trace_overlap.py")


def _trace(ops):
    """ops: (host start, host dur, device start, device dur) per GPU op of one run."""
    events = [{"name": "thread_name", "ph": "M", "pid": 0, "tid": 0, "args": {"name": "main thread cuda:0"}},
              {"name": "thread_name", "ph": "M", "pid": 0, "tid": 1, "args": {"name": "main thread"}}]
    for i, (hs, hd, ds, dd) in enumerate(ops):
        events.append({"name": "Conv", "cat": "op", "ph": "X", "ts": ds, "dur": dd, "pid": 0, "tid": 0,
                       "args": {"op": i, "run": 0}})
        events.append({"name": "Conv (launch)", "cat": "launch", "ph": "X", "ts": hs, "dur": hd, "pid": 0, "tid": 1,
                       "args": {"op": i, "run": 0}})
    return {"traceEvents": events}


def _run(tmp_path, ops):
    path = tmp_path / "t.json"
    path.write_text(json.dumps(_trace(ops)))
    return subprocess.run([sys.executable, TOOL, str(path)], capture_output=True, text=True)


def test_host_ahead_issues_onto_a_busy_device(tmp_path):
    # Launches of 10 us, kernels of 100 us queued back to back: only the first op finds the device idle.
    ops = [(10 * i, 10, 5 + 100 * i, 100) for i in range(4)]
    out = _run(tmp_path, ops)
    assert out.returncode == 0, out.stderr
    assert "| 0 | 4 | 0 | 40.0 | 400.0 | 405.0 |" in out.stdout


def test_host_waiting_for_the_device_issues_onto_an_idle_one(tmp_path):
    # Each launch begins after the previous kernel ended: launches plus kernels, one after the other.
    ops = [(110 * i, 10, 110 * i + 8, 100) for i in range(4)]
    out = _run(tmp_path, ops)
    assert "| 0 | 4 | 3 | 40.0 | 400.0 | 438.0 |" in out.stdout


def test_a_trace_without_gpu_ops_says_so(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": []}))
    out = subprocess.run([sys.executable, TOOL, str(path)], capture_output=True, text=True)
    assert out.returncode == 1 and "no GPU ops" in out.stdout
